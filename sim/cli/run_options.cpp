#include "cli/run_options.hpp"

#include <charconv>
#include <cmath>
#include <deque>
#include <optional>

#include "core/input_error.hpp"

namespace infersim {

namespace {

KnobFlag::Kind flag_kind(KnobText text) {
  switch (text) {
    case KnobText::kWhole:
      return KnobFlag::kWhole;
    case KnobText::kText:
      return KnobFlag::kText;
    case KnobText::kResolution:
      return KnobFlag::kResolution;
    case KnobText::kDuration:
      return KnobFlag::kDuration;
    case KnobText::kPercentiles:
      return KnobFlag::kPercentiles;
    case KnobText::kGoodput:
      return KnobFlag::kGoodput;
    case KnobText::kSwitch:
      return KnobFlag::kSwitch;
    case KnobText::kWeights:
      return KnobFlag::kWeights;
    case KnobText::kReal:
      break;
  }
  return KnobFlag::kReal;
}

}  // namespace

const std::vector<KnobFlag>& knob_flags() {
  // Made once from the knobs' rows: the flag, its key, its help with the
  // default the settings start from.
  static std::deque<std::string> words;  // what the flags point to
  static const std::vector<KnobFlag> kFlags = [] {
    std::vector<KnobFlag> flags;
    const Settings defaults;
    for (const Knob<Settings>& row : settings_knobs()) {
      if (row.no_flag) continue;
      const std::string given =
          row.default_words.empty() ? knob_default_text(row.get(defaults)) : row.default_words;
      const std::string& flag = words.emplace_back(row.flag_or_key());
      const std::string& help =
          words.emplace_back(row.help_text + (given.empty() ? "" : " (" + given + ")"));
      flags.push_back({flag.c_str(), row.key.c_str(), help.c_str(), flag_kind(row.text)});
    }
    return flags;
  }();
  return kFlags;
}

nlohmann::json flag_value(const KnobFlag& flag, const std::string& text) {
  const std::string label = std::string("--") + flag.flag;
  switch (flag.kind) {
    case KnobFlag::kText:
      return text;
    case KnobFlag::kResolution:
      return parse_time_resolution(text, label);
    case KnobFlag::kDuration:
      return parse_duration(text, label);
    case KnobFlag::kPercentiles:
      return parse_percentiles(text, label);
    case KnobFlag::kGoodput:
      return parse_goodput(text, label);
    case KnobFlag::kWeights:
      return parse_weights(text, label);
    case KnobFlag::kSwitch:
      if (text == "on" || text == "true") return true;
      if (text == "off" || text == "false") return false;
      throw InputError("", 0, label, "expected on or off, got '" + text + "'");
    case KnobFlag::kWhole: {
      std::uint64_t value = 0;
      const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
      if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return value;
      // A negative whole number goes on to the knob's own check, which gives
      // its range.
      std::int64_t negative = 0;
      const auto n = std::from_chars(text.data(), text.data() + text.size(), negative);
      if (n.ec == std::errc() && n.ptr == text.data() + text.size()) return negative;
      throw InputError("", 0, label, "expected a whole number, got '" + text + "'");
    }
    case KnobFlag::kReal:
      break;
  }
  double value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(value)) {
    throw InputError("", 0, label, "expected a number, got '" + text + "'");
  }
  return value;
}

const KnobFlag* find_knob_flag(const std::string& name) {
  for (const KnobFlag& flag : knob_flags()) {
    if (name == flag.flag) return &flag;
  }
  return nullptr;
}

void set_knob(Settings& settings, const KnobFlag& flag, const std::string& text) {
  set_setting(settings, flag.key, flag_value(flag, text), "", std::string("--") + flag.flag);
}

namespace {

// "10ms" -> 0.01, "2" -> 2 (seconds); none when the text is not a finite number
// with an optional unit (ns, us, ms, s).
std::optional<double> seconds_with_unit(const std::string& text) {
  struct Unit {
    const char* suffix;
    double seconds;
  };
  static constexpr Unit kUnits[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}};
  std::string number = text;
  double scale = 1;
  for (const Unit& unit : kUnits) {
    const std::string suffix = unit.suffix;
    if (number.size() > suffix.size() && number.ends_with(suffix)) {
      number.resize(number.size() - suffix.size());
      scale = unit.seconds;
      break;
    }
  }
  double value = 0;
  const auto r = std::from_chars(number.data(), number.data() + number.size(), value);
  if (r.ec != std::errc() || r.ptr != number.data() + number.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value * scale;
}

}  // namespace

double parse_time_resolution(const std::string& text, const std::string& label) {
  if (text == "exact") return 0;
  const std::optional<double> seconds = seconds_with_unit(text);
  if (!seconds || *seconds < 0) {
    throw InputError(
        "", 0, label,
        "expected exact, a duration such as 1s or 10ms, or seconds >= 0; got '" + text + "'");
  }
  return *seconds;
}

double parse_duration(const std::string& text, const std::string& label) {
  const std::optional<double> seconds = seconds_with_unit(text);
  if (!seconds) {
    throw InputError("", 0, label,
                     "expected seconds or a duration such as 600s or 600000ms, got '" + text + "'");
  }
  return *seconds;
}

}  // namespace infersim

namespace infersim {
namespace {

// The words of `text` apart by spaces, tabs or commas.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (const char c : text + " ") {
    if (c == ' ' || c == '\t' || c == ',') {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  return out;
}

std::optional<double> real_of(const std::string& text) {
  double value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

nlohmann::json parse_percentiles(const std::string& text, const std::string& label) {
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& word : words(text)) {
    const auto value = real_of(word);
    if (!value) {
      throw InputError("", 0, label,
                       "expected percentiles apart by commas such as 50,90,99; got '" + word + "'");
    }
    out.push_back(*value);
  }
  return out;
}

nlohmann::json parse_weights(const std::string& text, const std::string& label) {
  nlohmann::json out = nlohmann::json::object();
  const std::vector<std::string> given = words(text);
  if (given.empty()) throw InputError("", 0, label, "expected weights such as queue:2,prefix:3");
  for (const std::string& word : given) {
    const auto colon = word.find(':');
    const auto value = colon == std::string::npos ? std::nullopt : real_of(word.substr(colon + 1));
    if (!value || colon == 0) {
      throw InputError("", 0, label, "expected NAME:NUMBER such as prefix:3, got '" + word + "'");
    }
    out[word.substr(0, colon)] = *value;
  }
  return out;
}

nlohmann::json parse_goodput(const std::string& text, const std::string& label) {
  const std::vector<std::string> given = words(text);
  if (given.size() == 1 && given[0] == "none") return nullptr;
  if (given.empty()) {
    throw InputError("", 0, label, "expected bounds such as ttft:500 e2el:2000, or none");
  }
  // vLLM's names, then aiperf's for the same bounds (its inter-token latency is
  // (e2e - ttft) / (generated - 1), vLLM's TPOT).
  struct Name {
    const char* word;
    const char* bound;
  };
  static constexpr Name kNames[] = {
      {"ttft", "ttft"},
      {"tpot", "tpot"},
      {"e2el", "e2el"},
      {"time_to_first_token", "ttft"},
      {"inter_token_latency", "tpot"},
      {"request_latency", "e2el"},
  };
  nlohmann::json out = nlohmann::json::object();
  for (const std::string& word : given) {
    const auto colon = word.find(':');
    const std::string name = word.substr(0, colon);
    const auto value = colon == std::string::npos ? std::nullopt : real_of(word.substr(colon + 1));
    const Name* known = nullptr;
    std::vector<std::string> words;
    for (const Name& n : kNames) {
      if (name == n.word) known = &n;
      words.emplace_back(n.word);
    }
    if (known == nullptr) {
      const auto near = nearest(name, words);
      throw InputError("", 0, label,
                       "expected NAME:MS with NAME ttft, tpot or e2el (vLLM) or "
                       "time_to_first_token, inter_token_latency or request_latency (aiperf), "
                       "got '" +
                           word + "'" +
                           (near && colon != std::string::npos ? " (did you mean " + *near + "?)"
                                                               : std::string()));
    }
    if (!value) {
      throw InputError("", 0, label,
                       "expected " + name + ":MS, milliseconds as a number, got '" + word + "'");
    }
    const std::string key = std::string(known->bound) + "_ms";
    if (out.contains(key)) {
      throw InputError("", 0, label,
                       std::string(known->bound) + " is given twice" +
                           (name == known->bound ? "" : " (" + name + " is " + known->bound + ")"));
    }
    out[key] = *value;
  }
  return out;
}

}  // namespace infersim
