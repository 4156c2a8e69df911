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
  enum Kind { kReal, kWhole, kText, kResolution } kind;
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

}  // namespace infersim
