#include "model/step_table.hpp"

#include <algorithm>
#include <cmath>

#include "core/json_checks.hpp"

namespace infersim {

namespace {

// Section 5c's interpolation over the points `at` of the values value_at(i):
// the first's below the first, linear between neighbours, in proportion past
// the last.
template <class ValueAt>
double interpolate_points(const std::vector<double>& at, double x, ValueAt value_at) {
  if (x <= at.front()) return value_at(0);
  const std::size_t last = at.size() - 1;
  if (x >= at[last]) return value_at(last) * (x / at[last]);
  const std::size_t hi =
      static_cast<std::size_t>(std::upper_bound(at.begin(), at.end(), x) - at.begin());
  const std::size_t lo = hi - 1;
  const double w = (x - at[lo]) / (at[hi] - at[lo]);
  return value_at(lo) + (value_at(hi) - value_at(lo)) * w;
}

std::vector<double> sizes_of(const nlohmann::json& v, const std::string& source,
                             const std::string& label) {
  if (!v.is_array() || v.empty())
    json_check::bad(source, label, "expected a list of sizes, got " + json_check::shown(v));
  std::vector<double> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = label + "[" + std::to_string(i) + "]";
    out.push_back(json_check::positive(v[i], source, at));
    if (i > 0 && out[i] <= out[i - 1])
      json_check::bad(source, at,
                      "sizes must increase, got " + json_check::shown(v[i]) + " after " +
                          json_check::shown(v[i - 1]));
  }
  return out;
}

std::vector<double> seconds_of(const nlohmann::json& v, std::size_t count,
                               const std::string& source, const std::string& label) {
  if (!v.is_array() || v.size() != count)
    json_check::bad(
        source, label,
        "expected a list of " + std::to_string(count) + " seconds, got " + json_check::shown(v));
  std::vector<double> out;
  for (std::size_t i = 0; i < v.size(); ++i)
    out.push_back(json_check::non_negative(v[i], source, label + "[" + std::to_string(i) + "]"));
  return out;
}

const nlohmann::json& member(const nlohmann::json& v, const char* key, const std::string& source,
                             const std::string& label) {
  const auto it = v.find(key);
  if (it == v.end()) json_check::bad(source, label + "." + key, "missing");
  return *it;
}

// {"at": [...], "s": [...]}
StepCurve curve_of(const nlohmann::json& v, const std::string& source, const std::string& label) {
  if (!v.is_object())
    json_check::bad(source, label,
                    "expected {\"at\": [...], \"s\": [...]}, got " + json_check::shown(v));
  for (const auto& [key, value] : v.items()) {
    if (key != "at" && key != "s") json_check::bad(source, label + "." + key, "unknown key");
  }
  StepCurve c;
  c.at = sizes_of(member(v, "at", source, label), source, label + ".at");
  c.s = seconds_of(member(v, "s", source, label), c.at.size(), source, label + ".s");
  return c;
}

nlohmann::ordered_json curve_json(const StepCurve& c) {
  nlohmann::ordered_json out;
  out["at"] = c.at;
  out["s"] = c.s;
  return out;
}

}  // namespace

double StepCurve::value(double size) const {
  if (size <= 0 || at.empty()) return 0;
  return interpolate_points(at, size, [&](std::size_t i) { return s[i]; });
}

double StepGrid::value(double batch_size, double context_tokens) const {
  if (batch_size <= 0 || batch.empty()) return 0;
  const std::size_t columns = context.size();
  const auto row = [&](std::size_t i) {
    return interpolate_points(context, context_tokens,
                              [&](std::size_t j) { return s[i * columns + j]; });
  };
  return interpolate_points(batch, batch_size, row);
}

double StepTable::seconds(double tokens_in_step, double expert_tokens_in_step, double pairs,
                          double decodes, double context) const {
  double step_s = tokens.value(tokens_in_step);
  step_s += expert_tokens.value(expert_tokens_in_step);
  step_s += prefill_pairs.value(pairs);
  if (decodes > 0) step_s += decode.value(decodes, context / decodes);
  return step_s;
}

StepTable StepTable::from_json(const nlohmann::json& v, const std::string& source,
                               const std::string& label) {
  if (!v.is_object())
    json_check::bad(source, label, "expected an object of curves, got " + json_check::shown(v));
  StepTable t;
  for (const auto& [key, value] : v.items()) {
    const std::string at = label + "." + key;
    if (key == "tokens") {
      t.tokens = curve_of(value, source, at);
    } else if (key == "expert_tokens") {
      t.expert_tokens = curve_of(value, source, at);
    } else if (key == "prefill_pairs") {
      t.prefill_pairs = curve_of(value, source, at);
    } else if (key == "decode") {
      if (!value.is_object())
        json_check::bad(source, at,
                        "expected {\"batch\": [...], \"context\": [...], \"s\": [[...], ...]}, "
                        "got " +
                            json_check::shown(value));
      for (const auto& [inner, ignored] : value.items()) {
        if (inner != "batch" && inner != "context" && inner != "s")
          json_check::bad(source, at + "." + inner, "unknown key");
      }
      t.decode.batch = sizes_of(member(value, "batch", source, at), source, at + ".batch");
      t.decode.context = sizes_of(member(value, "context", source, at), source, at + ".context");
      const nlohmann::json& rows = member(value, "s", source, at);
      if (!rows.is_array() || rows.size() != t.decode.batch.size())
        json_check::bad(source, at + ".s",
                        "expected " + std::to_string(t.decode.batch.size()) +
                            " rows, one a batch size, got " + json_check::shown(rows));
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::vector<double> row = seconds_of(rows[i], t.decode.context.size(), source,
                                                   at + ".s[" + std::to_string(i) + "]");
        t.decode.s.insert(t.decode.s.end(), row.begin(), row.end());
      }
    } else {
      json_check::bad(source, at,
                      "unknown key; a step table holds tokens, expert_tokens, prefill_pairs and "
                      "decode");
    }
  }
  if (t.tokens.empty()) json_check::bad(source, label + ".tokens", "missing");
  if (t.prefill_pairs.empty()) json_check::bad(source, label + ".prefill_pairs", "missing");
  if (t.decode.empty()) json_check::bad(source, label + ".decode", "missing");
  return t;
}

nlohmann::ordered_json StepTable::to_json() const {
  nlohmann::ordered_json out;
  out["tokens"] = curve_json(tokens);
  if (!expert_tokens.empty()) out["expert_tokens"] = curve_json(expert_tokens);
  out["prefill_pairs"] = curve_json(prefill_pairs);
  nlohmann::ordered_json grid;
  grid["batch"] = decode.batch;
  grid["context"] = decode.context;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  const std::size_t columns = decode.context.size();
  for (std::size_t i = 0; i < decode.batch.size(); ++i) {
    rows.push_back(
        std::vector<double>(decode.s.begin() + static_cast<std::ptrdiff_t>(i * columns),
                            decode.s.begin() + static_cast<std::ptrdiff_t>((i + 1) * columns)));
  }
  grid["s"] = rows;
  out["decode"] = grid;
  return out;
}

}  // namespace infersim
