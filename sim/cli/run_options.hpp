// The run command's knob flags: each sets one settings key, and the table says
// how its text becomes the key's value. Shared by `run`, `sweep` and `capacity`,
// so a knob is named the same everywhere (its flag without the dashes).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/settings.hpp"

namespace infersim {

struct KnobFlag {
  const char* flag;  // without the dashes, e.g. "mi-per-generated-token"
  const char* key;   // the settings key, e.g. "tokens.mi_per_generated_token"
  const char* help;
  // kDuration: seconds, or a number with a unit (600s, 600000ms); kPercentiles:
  // "50,90,99" as a list; kGoodput: vLLM's "ttft:500 e2el:2000" as an object of
  // bounds in ms ("none": null); kSwitch: on or off (true or false) as a JSON
  // boolean; kWeights: "queue:2,prefix:3" as an object of numbers by name.
  enum Kind {
    kReal,
    kWhole,
    kText,
    kResolution,
    kDuration,
    kPercentiles,
    kGoodput,
    kSwitch,
    kWeights
  } kind;
};

const std::vector<KnobFlag>& knob_flags();
// The flag of that name, or nullptr.
const KnobFlag* find_knob_flag(const std::string& name);

// The flag's text as the JSON value its key takes. Throws InputError naming
// --flag when the text is not of the flag's kind.
nlohmann::json flag_value(const KnobFlag& flag, const std::string& text);

// Sets the flag's key from its text (flag_value, then set_setting).
void set_knob(Settings& settings, const KnobFlag& flag, const std::string& text);

// "exact" -> 0; "1s", "10ms", "250us", "100ns" or a plain number of seconds.
// Throws InputError naming `label`.
double parse_time_resolution(const std::string& text, const std::string& label);

// "600", "600s", "600000ms", "250us" or "100ns" -> seconds (a bare number is
// seconds; the key checks the range). Throws InputError naming `label`.
double parse_duration(const std::string& text, const std::string& label);

// "50,90,99" -> [50, 90, 99]; the key checks the range. Throws InputError
// naming `label` for a word that is not a number.
nlohmann::json parse_percentiles(const std::string& text, const std::string& label);

// vLLM's goodput syntax: "ttft:500 tpot:50 e2el:2000" (words apart by spaces or
// commas, any subset, milliseconds) -> {"ttft_ms": 500, ...}; "none" -> null.
// aiperf's names for the same bounds are taken too: time_to_first_token,
// inter_token_latency (TPOT), request_latency.
// Throws InputError naming `label`.
nlohmann::json parse_goodput(const std::string& text, const std::string& label);

// "queue:2,prefix:3" (words apart by commas or spaces) -> {"queue": 2,
// "prefix": 3}; the knob checks the names and the numbers' range. Throws
// InputError naming `label` for a word that is not NAME:NUMBER.
nlohmann::json parse_weights(const std::string& text, const std::string& label);

}  // namespace infersim
