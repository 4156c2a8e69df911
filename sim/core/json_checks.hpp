// A settings value read from JSON and checked: each function returns the value
// or throws InputError(source, 0, label, what) saying what was expected and
// what was given, so that a file and a flag give the same one-line error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace infersim::json_check {

[[noreturn]] void bad(const std::string& source, const std::string& label, const std::string& what);
// The value as JSON writes it, cut at 40 characters.
std::string shown(const nlohmann::json& value);

// A finite number.
double number(const nlohmann::json& v, const std::string& source, const std::string& label);
double at_least(const nlohmann::json& v, double min, const std::string& source,
                const std::string& label);
double non_negative(const nlohmann::json& v, const std::string& source, const std::string& label);
double positive(const nlohmann::json& v, const std::string& source, const std::string& label);
// A whole number in [min, max] (8.0 is one too).
std::uint64_t whole(const nlohmann::json& v, std::uint64_t min, std::uint64_t max,
                    const std::string& source, const std::string& label);
std::string text(const nlohmann::json& v, const std::string& source, const std::string& label);
// Seconds that fit the nanosecond clock.
double seconds(const nlohmann::json& v, const std::string& source, const std::string& label);
// Seconds of a duration a run adds to its instants (BATCHING.md section
// 13.1): at most kLongestDurationS.
double longest_duration(const nlohmann::json& v, const std::string& source,
                        const std::string& label);
// A power (W), a price ($ a GPU-hour) or a radio's energy a bit (nJ): at most
// 10^9, so that a run's energy and bill (their products with up to 2^63 ns and
// a million replicas) stay finite numbers, not infinities written as null.
double bounded_amount(const nlohmann::json& v, const std::string& source, const std::string& label);

using RealCheck = double (*)(const nlohmann::json&, const std::string&, const std::string&);

}  // namespace infersim::json_check

namespace infersim {

// The candidate nearest to `word` by edit distance, if close enough to be a
// plausible typo.
std::optional<std::string> nearest(const std::string& word,
                                   const std::vector<std::string>& candidates);

}  // namespace infersim
