#include "studies/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "core/input_error.hpp"
#include "core/number_format.hpp"
#include "report/csv_field.hpp"
#include "scenario/scenario.hpp"

namespace infersim {
namespace {

using nlohmann::json;

// 15 significant digits: a double holds 15.9, so this drops the last bit or two
// of drift that START + i*STEP picks up, and keeps every value a person types.
double round_to_15_digits(double value) {
  char buffer[40];
  const auto written =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::general, 15);
  double rounded = value;
  std::from_chars(buffer, written.ptr, rounded);
  return rounded;
}

bool is_mode(const std::string& mode) {
  return mode == "recorded" || mode == "retimed" || mode == "synthetic";
}

const Figure* find_figure(const std::vector<Figure>& figures, const std::string& key) {
  for (const Figure& f : figures) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

// The first place where two JSON documents differ, as a dotted path.
std::string first_difference(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b,
                             const std::string& path) {
  if (a.is_object() && b.is_object()) {
    for (const auto& [key, value] : a.items()) {
      const std::string where = path.empty() ? key : path + "." + key;
      if (!b.contains(key)) return where;
      const std::string inner = first_difference(value, b.at(key), where);
      if (!inner.empty()) return inner;
    }
    for (const auto& [key, value] : b.items()) {
      if (!a.contains(key)) return path.empty() ? key : path + "." + key;
    }
    return "";
  }
  return a == b ? "" : (path.empty() ? "(the document)" : path);
}

std::vector<std::string> split_lines(const std::string& text, const std::string& where) {
  std::vector<std::string> lines;
  if (text.empty() || text.back() != '\n') {
    throw InputError(where, 0, "", "empty or cut short (no final newline)");
  }
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t end = text.find('\n', begin);
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

std::string shard_text(std::uint64_t k, std::uint64_t n) {
  return std::to_string(k) + "/" + std::to_string(n);
}

}  // namespace

json SweepAxis::setting_value(std::size_t i) const {
  const json& value = values[i];
  // As --speedup X sets the time scale: 1/X (check_sweep refuses X <= 0).
  if (reciprocal && value.is_number() && value.get<double>() > 0) return 1 / value.get<double>();
  return value;
}

bool SweepAxis::numeric() const {
  return std::all_of(values.begin(), values.end(), [](const json& v) { return v.is_number(); });
}

std::size_t Sweep::point_count() const {
  if (axes.empty()) return 0;
  std::size_t count = 1;
  for (const SweepAxis& axis : axes) {
    if (axis.values.empty()) return 0;
    if (count > std::numeric_limits<std::size_t>::max() / axis.values.size()) {
      return std::numeric_limits<std::size_t>::max();
    }
    count *= axis.values.size();
  }
  return count;
}

std::vector<std::size_t> Sweep::coordinates(std::size_t index) const {
  std::vector<std::size_t> out(axes.size());
  for (std::size_t a = axes.size(); a-- > 0;) {
    out[a] = index % axes[a].values.size();
    index /= axes[a].values.size();
  }
  return out;
}

Settings Sweep::point_settings(const Settings& base, std::size_t index) const {
  const std::vector<std::size_t> at = coordinates(index);
  Settings settings = base;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    if (axes[a].configures()) settings = axes[a].configurations[at[a]];
  }
  for (std::size_t a = 0; a < axes.size(); ++a) {
    if (axes[a].configures()) continue;
    set_setting(settings, axes[a].key, axes[a].setting_value(at[a]), "", "--" + axes[a].name);
  }
  settings.mode = sweep_run_mode(modes);
  validate_settings(settings, "");
  return settings;
}

nlohmann::ordered_json Sweep::to_json() const {
  nlohmann::ordered_json out;
  out["vary"] = nlohmann::ordered_json::array();
  for (const SweepAxis& axis : axes) {
    nlohmann::ordered_json entry;
    entry["knob"] = axis.name;
    entry["values"] = axis.values;
    if (!axis.documents.empty()) entry["settings"] = axis.documents;
    out["vary"].push_back(entry);
  }
  out["modes"] = modes;
  return out;
}

std::string sweep_run_mode(const std::vector<std::string>& modes) {
  if (modes.size() == 1 && modes.front() == "recorded") return "recorded";
  if (std::find(modes.begin(), modes.end(), "recorded") == modes.end()) return "synthetic";
  return "compare";
}

void check_sweep(const Sweep& sweep, const Settings& base) {
  if (sweep.axes.empty()) throw InputError("", 0, "--vary", "give at least one KNOB=VALUES");
  for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
    const SweepAxis& axis = sweep.axes[a];
    if (axis.values.empty()) throw InputError("", 0, "--vary " + axis.name, "no values");
    if (axis.configures() && axis.configurations.size() != axis.values.size()) {
      throw std::logic_error("check_sweep: a configuration a value");
    }
    for (std::size_t b = 0; b < a; ++b) {
      if (axis.configures() && sweep.axes[b].configures()) {
        throw InputError("", 0, "--vary " + axis.name,
                         "and --vary " + sweep.axes[b].name +
                             " both give whole configurations; vary one of them");
      }
      if (sweep.axes[b].name == axis.name || sweep.axes[b].key == axis.key) {
        throw InputError("", 0, "--vary " + axis.name,
                         "varied twice; give all its values in one --vary");
      }
    }
    // Each value alone first: the clearest message names the knob's flag.
    for (std::size_t i = 0; i < axis.values.size() && !axis.configures(); ++i) {
      if (axis.reciprocal && !(axis.values[i].is_number() && axis.values[i].get<double>() > 0)) {
        throw InputError("", 0, "--" + axis.name,
                         "must be greater than 0, got " + sweep_value_text(axis.values[i]));
      }
      Settings scratch = base;
      set_setting(scratch, axis.key, axis.setting_value(i), "", "--" + axis.name);
    }
  }
  const bool modes_ok =
      !sweep.modes.empty() && std::all_of(sweep.modes.begin(), sweep.modes.end(), is_mode);
  if (!modes_ok) {
    throw InputError("", 0, "--modes", "must be some of recorded, retimed and synthetic");
  }
  const std::size_t points = sweep.point_count();
  if (points > kMaxSweepPoints) {
    throw InputError("", 0, "--vary",
                     "the grid has more than " + std::to_string(kMaxSweepPoints) + " points");
  }
  // Then every point, for what only a combination can break (max power below
  // idle power, burstiness with Poisson arrivals).
  for (std::size_t i = 0; i < points; ++i)
    sweep.point_settings(base, i);
}

std::vector<double> range_values(double start, double stop, double step, const std::string& label) {
  if (!(step > 0)) {
    throw InputError("", 0, label, "STEP must be greater than 0, got " + shortest(step));
  }
  if (stop < start) {
    throw InputError("", 0, label, "STOP " + shortest(stop) + " is below START " + shortest(start));
  }
  // A value this close to STOP is STOP: relative 1e-9, but never a sizeable
  // part of a step.
  const double tolerance =
      std::min(step * 1e-3, 1e-9 * std::max({std::abs(start), std::abs(stop), step}));
  const std::string too_many =
      "more than " + std::to_string(kMaxSweepPoints) + " values; take a larger STEP";
  if ((stop - start) / step > static_cast<double>(kMaxSweepPoints)) {
    throw InputError("", 0, label, too_many);
  }
  std::vector<double> values;
  for (std::size_t i = 0;; ++i) {
    double value = start + static_cast<double>(i) * step;
    if (value > stop + tolerance) break;
    if (values.size() == kMaxSweepPoints) throw InputError("", 0, label, too_many);
    const bool last = std::abs(value - stop) <= tolerance;
    value = last ? stop : round_to_15_digits(value);
    values.push_back(value);
    if (last) break;
  }
  return values;
}

std::string sweep_value_text(const json& value) {
  if (value.is_number_unsigned()) return std::to_string(value.get<std::uint64_t>());
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  if (value.is_number()) return shortest(value.get<double>());
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "on" : "off";
  return value.dump();
}

SweepShard parse_shard(const std::string& text) {
  const auto fail = [&] {
    throw InputError(
        "", 0, "--shard",
        "expected K/N with 1 <= K <= N (the K-th of N slices), e.g. 2/8; got '" + text + "'");
  };
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) fail();
  SweepShard shard;
  const char* end = text.data() + text.size();
  const auto k = std::from_chars(text.data(), text.data() + slash, shard.index);
  const auto n = std::from_chars(text.data() + slash + 1, end, shard.count);
  if (k.ec != std::errc() || k.ptr != text.data() + slash || n.ec != std::errc() || n.ptr != end ||
      shard.index < 1 || shard.index > shard.count) {
    fail();
  }
  return shard;
}

std::vector<std::size_t> shard_points(std::size_t point_count, SweepShard shard) {
  std::vector<std::size_t> points;
  for (std::uint64_t i = shard.index - 1; i < point_count; i += shard.count) {
    points.push_back(static_cast<std::size_t>(i));
  }
  return points;
}

std::vector<SweepPointResult> run_sweep(const Sweep& sweep, const Settings& base,
                                        const Trace& trace, const std::vector<std::size_t>& points,
                                        unsigned threads, const SweepPointDone& point_done) {
  std::vector<SweepPointResult> results(points.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::size_t done = 0;
  std::mutex done_mutex;
  auto worker = [&] {
    for (std::size_t i = next++; i < points.size() && !failed; i = next++) {
      try {
        const Settings settings = sweep.point_settings(base, points[i]);
        SweepPointResult& out = results[i];
        out.index = points[i];
        for (const std::string& name : sweep.modes) {
          const ModeResult mode = run_mode(settings, trace, name);
          out.modes.push_back({mode.mode, mode.summary, mode.ci95});
        }
        if (point_done) {
          const std::lock_guard lock(done_mutex);
          point_done(++done);
        }
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        failed = true;
      }
    }
  };
  const std::size_t pool = std::max<std::size_t>(1, std::min<std::size_t>(threads, points.size()));
  std::vector<std::thread> workers;
  for (std::size_t t = 1; t < pool; ++t)
    workers.emplace_back(worker);
  worker();
  for (std::thread& t : workers)
    t.join();
  if (failure) std::rethrow_exception(failure);
  return results;
}

std::vector<std::string> summary_keys(const Settings& settings) {
  const ModeResult empty = simulate(settings, "recorded", {}, SimTime::zero(), 0, false);
  std::vector<std::string> keys;
  for (const Figure& f : empty.summary.figures())
    keys.push_back(f.key);
  return keys;
}

std::vector<std::string> sweep_figure_keys(const Sweep& sweep, const Settings& base) {
  // The base as the first point runs it (a configuration axis's first
  // configuration, a closed loop's first cap), as settings.json writes it: a
  // rerun of that file finds the same columns in the same order.
  const Settings origin = sweep.point_settings(base, 0);
  std::vector<std::string> keys = summary_keys(origin);
  const std::vector<std::string> base_keys = keys;
  const auto add = [&](const std::vector<std::string>& more) {
    if (more == base_keys) return;  // the usual case, quickly
    for (const std::string& key : more) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
  };
  bool replicated = origin.replications > 1;
  for (const SweepAxis& axis : sweep.axes) {
    for (std::size_t i = 0; i < axis.values.size(); ++i) {
      Settings settings = axis.configures() ? axis.configurations[i] : origin;
      if (!axis.configures())
        set_setting(settings, axis.key, axis.setting_value(i), "", "--" + axis.name);
      add(summary_keys(settings));
    }
    for (const Settings& c : axis.configurations)
      replicated = replicated || c.replications > 1;
    // A varied replication count overrides the base one at every point.
    if (axis.key == "synthetic.replications") {
      replicated = std::any_of(axis.values.begin(), axis.values.end(),
                               [](const json& v) { return v.get<double>() > 1; });
    }
  }
  const bool drawn = std::any_of(sweep.modes.begin(), sweep.modes.end(),
                                 [](const std::string& m) { return m != "recorded"; });
  if (drawn && replicated) {
    const std::size_t plain = keys.size();
    for (std::size_t i = 0; i < plain; ++i)
      keys.push_back(keys[i] + "_ci95");
  }
  return keys;
}

std::string sweep_csv_header(const Sweep& sweep, const Settings& base) {
  std::string out = "mode";
  for (const SweepAxis& axis : sweep.axes)
    out += "," + csv_field(axis.name);
  for (const std::string& key : sweep_figure_keys(sweep, base))
    out += "," + key;
  out += '\n';
  return out;
}

void append_figure_fields(std::string& out, const std::vector<std::string>& keys,
                          const Summary& summary, const Summary* ci95) {
  for (const std::string& key : keys) {
    out += ',';
    const Figure* f = find_figure(summary.figures(), key);
    if (f == nullptr && ci95 != nullptr) f = find_figure(ci95->figures(), key);
    if (f == nullptr || !f->value) continue;
    // As summary.csv writes them (report/run_writer.cpp).
    if (f->integer) {
      append_integer(out, static_cast<std::int64_t>(*f->value));
    } else {
      append_shortest(out, *f->value);
    }
  }
}

std::string sweep_csv_rows(const Sweep& sweep, const std::vector<std::string>& figure_keys,
                           const SweepPointResult& point) {
  std::string values;
  const std::vector<std::size_t> at = sweep.coordinates(point.index);
  for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
    values += "," + csv_field(sweep_value_text(sweep.axes[a].values[at[a]]));
  }
  std::string out;
  for (const SweepModeSummary& mode : point.modes) {
    out += mode.mode;
    out += values;
    append_figure_fields(out, figure_keys, mode.summary, &mode.ci95);
    out += '\n';
  }
  return out;
}

std::string sweep_csv(const Sweep& sweep, const Settings& base,
                      const std::vector<SweepPointResult>& results) {
  std::string out = sweep_csv_header(sweep, base);
  const std::vector<std::string> keys = sweep_figure_keys(sweep, base);
  for (const SweepPointResult& point : results)
    out += sweep_csv_rows(sweep, keys, point);
  return out;
}

nlohmann::ordered_json shard_json(const Sweep& sweep, const nlohmann::ordered_json& settings,
                                  SweepShard shard, const std::vector<std::size_t>& points) {
  nlohmann::ordered_json out;
  out["shard"] = shard.index;
  out["shards"] = shard.count;
  out["points"] = sweep.point_count();
  out["indices"] = points;
  out["sweep"] = sweep.to_json();
  out["settings"] = settings;
  return out;
}

std::string merge_sweep_parts(const std::vector<SweepPart>& parts) {
  if (parts.empty()) throw InputError("", 0, "merge", "give the shard folders to merge");
  struct Read {
    std::uint64_t k = 0, n = 0, points = 0;
    std::vector<std::size_t> indices;
    std::size_t modes = 0;
    nlohmann::ordered_json identity;  // the sweep and the settings but for the trace's path
    std::vector<std::string> lines;
  };
  std::vector<Read> read;
  for (const SweepPart& part : parts) {
    const std::string where = part.name + "/shard.json";
    const nlohmann::ordered_json& doc = part.shard;
    const auto field = [&](const char* name) -> const nlohmann::ordered_json& {
      if (!doc.is_object() || !doc.contains(name)) {
        throw InputError(where, 0, name, "missing; not a shard written by infersim sweep --shard");
      }
      return doc.at(name);
    };
    Read r;
    const std::pair<const char*, std::uint64_t*> counts[] = {
        {"shard", &r.k}, {"shards", &r.n}, {"points", &r.points}};
    for (const auto& [name, target] : counts) {
      const nlohmann::ordered_json& value = field(name);
      if (!value.is_number_unsigned()) throw InputError(where, 0, name, "expected a whole number");
      *target = value.get<std::uint64_t>();
    }
    if (r.k < 1 || r.k > r.n || r.points > kMaxSweepPoints) {
      throw InputError(where, 0, "shard", "expected 1 <= shard <= shards");
    }
    const nlohmann::ordered_json& sweep = field("sweep");
    const nlohmann::ordered_json& settings = field("settings");
    if (!sweep.is_object() || !sweep.contains("modes") || !sweep.at("modes").is_array() ||
        sweep.at("modes").empty() || !settings.is_object()) {
      throw InputError(where, 0, "sweep", "malformed");
    }
    r.modes = sweep.at("modes").size();
    try {
      r.indices = field("indices").get<std::vector<std::size_t>>();
    } catch (const nlohmann::ordered_json::exception&) {
      throw InputError(where, 0, "indices", "expected a list of point indices");
    }
    if (r.indices != shard_points(r.points, {r.k, r.n})) {
      throw InputError(where, 0, "indices",
                       "are not the points of shard " + shard_text(r.k, r.n) + " of " +
                           std::to_string(r.points));
    }
    r.identity = {{"sweep", sweep}, {"settings", settings}};
    if (r.identity["settings"].contains("trace")) r.identity["settings"]["trace"].erase("path");
    r.lines = split_lines(part.csv, part.name + "/sweep.csv");
    if (r.lines.size() != 1 + r.indices.size() * r.modes) {
      throw InputError(part.name + "/sweep.csv", 0, "",
                       "holds " + std::to_string(r.lines.size() - 1) + " rows; shard.json says " +
                           std::to_string(r.indices.size()) + " points of " +
                           std::to_string(r.modes) + " modes");
    }
    read.push_back(std::move(r));
  }

  const Read& first = read.front();
  for (std::size_t p = 1; p < read.size(); ++p) {
    const Read& r = read[p];
    const std::string other = "not of the same sweep as " + parts.front().name + ": ";
    if (r.n != first.n || r.points != first.points) {
      throw InputError(parts[p].name, 0, "",
                       other + "shard " + shard_text(r.k, r.n) + " of " + std::to_string(r.points) +
                           " points against " + shard_text(first.k, first.n) + " of " +
                           std::to_string(first.points));
    }
    const std::string differs = first_difference(first.identity, r.identity, "");
    if (!differs.empty()) throw InputError(parts[p].name, 0, "", other + differs + " differs");
    if (r.lines.front() != first.lines.front()) {
      throw InputError(parts[p].name + "/sweep.csv", 0, "", other + "the header differs");
    }
  }

  // Which part holds each point; a point in two parts or in none is refused.
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> owner(first.points, kNone), position(first.points, 0);
  for (std::size_t p = 0; p < read.size(); ++p) {
    for (std::size_t i = 0; i < read[p].indices.size(); ++i) {
      const std::size_t index = read[p].indices[i];
      if (owner[index] != kNone) {
        throw InputError(parts[p].name, 0, "",
                         "point " + std::to_string(index) + " is also in " +
                             parts[owner[index]].name + " (shard " +
                             shard_text(read[p].k, read[p].n) + " given twice?)");
      }
      owner[index] = p;
      position[index] = i;
    }
  }
  std::vector<std::uint64_t> missing_shards;
  std::vector<std::size_t> missing_points;
  for (std::size_t index = 0; index < first.points; ++index) {
    if (owner[index] != kNone) continue;
    missing_points.push_back(index);
    const std::uint64_t k = index % first.n + 1;
    if (std::find(missing_shards.begin(), missing_shards.end(), k) == missing_shards.end()) {
      missing_shards.push_back(k);
    }
  }
  if (!missing_points.empty()) {
    std::sort(missing_shards.begin(), missing_shards.end());
    std::string shards, points;
    for (const std::uint64_t k : missing_shards)
      shards += (shards.empty() ? "" : ", ") + shard_text(k, first.n);
    for (std::size_t i = 0; i < missing_points.size() && i < 10; ++i) {
      points += (i == 0 ? "" : ", ") + std::to_string(missing_points[i]);
    }
    if (missing_points.size() > 10) points += ", ...";
    throw InputError("", 0, "merge",
                     std::to_string(missing_points.size()) + " of " + std::to_string(first.points) +
                         " points missing (indices " + points + "): run shard" +
                         (missing_shards.size() > 1 ? "s " : " ") + shards +
                         " with infersim sweep --shard, then merge again");
  }

  std::string out = first.lines.front() + "\n";
  for (std::size_t index = 0; index < first.points; ++index) {
    const Read& r = read[owner[index]];
    for (std::size_t m = 0; m < r.modes; ++m) {
      out += r.lines[1 + position[index] * r.modes + m];
      out += '\n';
    }
  }
  return out;
}

}  // namespace infersim
