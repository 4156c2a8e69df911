#include "core/json_checks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/input_error.hpp"
#include "core/sim_time.hpp"

namespace infersim::json_check {

using nlohmann::json;

void bad(const std::string& source, const std::string& label, const std::string& what) {
  throw InputError(source, 0, label, what);
}

std::string shown(const json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

double number(const json& v, const std::string& source, const std::string& label) {
  if (!v.is_number()) bad(source, label, "expected a number, got " + shown(v));
  const double x = v.get<double>();
  if (!std::isfinite(x)) bad(source, label, "expected a finite number, got " + shown(v));
  return x;
}

double at_least(const json& v, double min, const std::string& source, const std::string& label) {
  const double x = number(v, source, label);
  if (x < min) bad(source, label, "must be at least " + json(min).dump() + ", got " + shown(v));
  return x;
}

double non_negative(const json& v, const std::string& source, const std::string& label) {
  return at_least(v, 0, source, label);
}

double positive(const json& v, const std::string& source, const std::string& label) {
  const double x = number(v, source, label);
  if (!(x > 0)) bad(source, label, "must be greater than 0, got " + shown(v));
  return x;
}

std::uint64_t whole(const json& v, std::uint64_t min, std::uint64_t max, const std::string& source,
                    const std::string& label) {
  if (v.is_number_unsigned()) {
    const auto x = v.get<std::uint64_t>();
    if (x >= min && x <= max) return x;
  } else if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
    const auto x = static_cast<std::uint64_t>(v.get<std::int64_t>());
    if (x >= min && x <= max) return x;
  } else if (v.is_number_float() && std::isfinite(v.get<double>()) &&
             v.get<double>() == std::floor(v.get<double>()) && v.get<double>() >= 0 &&
             v.get<double>() < 18446744073709551616.0) {
    // 8.0 is a whole number too
    const auto x = static_cast<std::uint64_t>(v.get<double>());
    if (x >= min && x <= max) return x;
  } else if (!v.is_number() || v.is_number_float()) {
    bad(source, label, "expected a whole number, got " + shown(v));
  }
  bad(source, label,
      "must be a whole number from " + std::to_string(min) + " to " + std::to_string(max) +
          ", got " + shown(v));
}

std::string text(const json& v, const std::string& source, const std::string& label) {
  if (!v.is_string()) bad(source, label, "expected a string, got " + shown(v));
  return v.get<std::string>();
}

double longest_duration(const json& v, const std::string& source, const std::string& label) {
  const double x = at_least(v, 0, source, label);
  if (x > kLongestDurationS) {
    bad(source, label,
        "must be at most 1e9 s (about 31.7 years, so that the run's instants stay on the "
        "nanosecond clock, which ends at 2^63 ns, about 292 years), got " +
            shown(v));
  }
  return x;
}

double seconds(const json& v, const std::string& source, const std::string& label) {
  const double x = at_least(v, 0, source, label);
  if (x * 1e9 >= 9.2e18) bad(source, label, shown(v) + " s does not fit the nanosecond clock");
  return x;
}

double bounded_amount(const json& v, const std::string& source, const std::string& label) {
  const double x = at_least(v, 0, source, label);
  if (x > 1e9) {
    bad(source, label,
        "must be at most 1e9 (a larger one carries the run's energy or cost past what a "
        "number holds), got " +
            shown(v));
  }
  return x;
}

}  // namespace infersim::json_check

namespace infersim {
namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::string> nearest(const std::string& word,
                                   const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  if (best && best_distance <= std::max<std::size_t>(2, word.size() / 3)) return best;
  return std::nullopt;
}

}  // namespace infersim
