#include "cli/command_options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/command_line.hpp"
#include "cli/data_files.hpp"
#include "cli/option_parsing.hpp"
#include "core/cores.hpp"
#include "core/input_error.hpp"
#include "core/version.hpp"
#include "report/figure_text.hpp"

namespace infersim {
namespace po = boost::program_options;
using nlohmann::json;

namespace {

std::string general(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

// What a run writes beside its summary, which sweeps and capacity searches do
// not write: the flag is refused rather than ignored.
bool is_summary_only(const KnobFlag& flag) {
  return flag.flag == std::string("per-request");
}

// A word knob a sweep may vary: not one that reads the trace (a sweep reads
// one) nor one that picks the output files.
bool is_sweepable_word(const KnobFlag& flag) {
  const std::string key = flag.key;
  return flag.kind == KnobFlag::kText && !key.starts_with("trace.") &&
         !key.starts_with("output.") && !key.starts_with("report.");
}

bool is_sweepable(const KnobFlag& flag) {
  return takes_number(flag) || flag.kind == KnobFlag::kSwitch || is_sweepable_word(flag);
}

// The flag named, or the error naming the nearest; speedup among them.
const KnobFlag& known_knob(const std::string& name, const std::string& label) {
  if (name == speedup_knob().flag) return speedup_knob();
  const KnobFlag* flag = find_knob_flag(name);
  if (flag != nullptr) return *flag;
  std::vector<std::string> all;
  for (const KnobFlag& f : knob_flags())
    all.push_back(f.flag);
  all.emplace_back(speedup_knob().flag);
  const auto near = nearest(name, all);
  throw InputError("", 0, label,
                   "unknown knob '" + name + "'" +
                       (near ? " (did you mean " + *near + "?)" : std::string()) +
                       "; a knob is named as its flag without the dashes");
}

std::string names_of(bool (*keep)(const KnobFlag&)) {
  std::string list;
  for (const KnobFlag& f : knob_flags()) {
    if (keep(f)) list += (list.empty() ? "" : ", ") + std::string(f.flag);
  }
  return list;
}

}  // namespace

void add_run_options(po::options_description& options) {
  options.add_options()("settings", po::value<std::string>(),
                        "settings file (JSON); flags override it")(
      "output", po::value<std::string>(),
      "output folder (default output/<YYYYmmdd-HHMMSS>-<kind>)")(
      "force", "write into --output even if it holds files")(
      "speedup", po::value<std::string>(), "replay X times as fast (the same as --time-scale 1/X)")(
      "filter", po::value<std::vector<std::string>>()->composing(),
      "keep only the CSV rows where COLUMN=VALUE (repeatable; all must hold)")(
      "preset", po::value<std::string>(),
      "a model preset, settings/presets/NAME.json, under --settings and the flags");
  for (const KnobFlag& flag : knob_flags()) {
    if (flag.kind == KnobFlag::kGoodput) {
      // As run takes it: --goodput ttft:500 e2el:2000, or the flag repeated.
      options.add_options()(
          flag.flag, po::value<std::vector<std::string>>()->multitoken()->composing(), flag.help);
    } else if (is_summary_only(flag)) {
      options.add_options()(flag.flag, po::value<std::string>(),
                            "refused: each run keeps only its summary (no requests.csv)");
    } else {
      options.add_options()(flag.flag, po::value<std::string>(), flag.help);
    }
  }
}

void add_jobs_option(po::options_description& options) {
  options.add_options()(
      "jobs,j", po::value<std::string>(),
      "threads (default: the cores this process may use); results do not depend on it");
}

po::variables_map parse_command(const std::vector<std::string>& args,
                                const po::options_description& options,
                                const po::positional_options_description& positional,
                                const std::string& command) {
  return parse_options(
      args, options, positional,
      {command, "unexpected positional argument; see infersim " + command + " --help", ""});
}

std::string text_of(const po::variables_map& vm, const char* name) {
  return vm[name].as<std::string>();
}

unsigned threads_from(const po::variables_map& vm) {
  unsigned threads = usable_cores();
  if (vm.count("jobs")) {
    const KnobFlag jobs{"jobs", "", "", KnobFlag::kWhole};
    const std::uint64_t j = flag_value(jobs, text_of(vm, "jobs")).get<std::uint64_t>();
    if (j < 1 || j > 1024) throw InputError("", 0, "--jobs", "must be from 1 to 1024");
    threads = static_cast<unsigned>(j);
  }
  return threads;
}

double figures_weight_from(const po::variables_map& vm) {
  if (!vm.count("figures-weight")) return 0;
  const std::string text = text_of(vm, "figures-weight");
  double value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(value) ||
      value < 0) {
    throw InputError("", 0, "--figures-weight",
                     "expected a number of 0 or more, got '" + text + "'");
  }
  return value;
}

namespace {

// --preset NAME's file (or --vary preset=NAME's, `label` naming which): the
// batching section (BATCHING.md section 13.1), said to be set by the flag.
void apply_preset(Settings& settings, const std::string& name, const std::string& label) {
  const std::string path = find_preset_file(name, "", label);
  apply_settings_file(settings, path);
  const std::string by = label + (label == "--preset" ? " " : "=") + name;
  for (auto& [key, setter] : settings.set_by)
    if (setter == path) setter = by;
}

// A settings file a sweep or capacity search reads: its `section_name`
// section comes back in `section`, the rest applies as any settings file.
void apply_study_file(Settings& settings, const std::string& path, const std::string& section_name,
                      json& section) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  json document;
  try {
    if (!in) throw std::runtime_error("unreadable");
    document = json::parse(content.str());
  } catch (const std::exception&) {
    apply_settings_file(settings, path);  // throws the file's own error, line and all
    throw InputError(path, 0, "", "cannot read the settings file");
  }
  if (document.is_object()) {
    if (document.contains(section_name)) section = document[section_name];
    document.erase("sweep");
    document.erase("capacity");
  }
  apply_settings_json(settings, document, path);
  note_preset_errors(settings, document);
}

// The command line's knob flags over the files' settings; a study keeps only
// its runs' summaries.
void apply_study_flags(Settings& settings, const po::variables_map& vm,
                       const std::string& section_name) {
  load_fleet_presets(settings);
  for (const KnobFlag& flag : knob_flags()) {
    if (!vm.count(flag.flag)) continue;
    if (is_summary_only(flag)) {
      const std::string what = section_name == "sweep" ? "a sweep" : "a capacity search";
      throw InputError("", 0, std::string("--") + flag.flag,
                       what +
                           " writes no requests.csv (its runs keep only their summaries); run "
                           "one point with infersim run --per-request csv");
    }
    set_knob_from(settings, vm, flag);
  }
  apply_trace_flags(settings, vm);
  settings.per_request = "none";
}

}  // namespace

Settings settings_from_files(const po::variables_map& vm, std::set<std::string>& given) {
  Settings settings;
  const auto apply_file = [&](const std::string& path) {
    apply_settings_file(settings, path);
    for (const std::string& key : settings_file_keys(path))
      given.insert(key);
  };
  if (vm.count("preset")) {
    apply_preset(settings, text_of(vm, "preset"), "--preset");
    for (const std::string& key : settings_file_keys(find_preset_file(text_of(vm, "preset"))))
      given.insert(key);
  }
  if (vm.count("settings")) apply_file(find_settings_file(text_of(vm, "settings")));
  load_fleet_presets(settings);
  return settings;
}

void load_fleet_presets(Settings& settings) {
  for (const std::string& name : fleet_preset_names(settings)) {
    if (settings.fleet_presets.count(name)) continue;
    std::size_t first = 0;
    while ((*settings.fleet)[first].preset != name)
      ++first;
    const std::string path = find_preset_file(
        name, settings.fleet_source, "batching.fleet[" + std::to_string(first) + "].preset");
    std::ifstream in(path, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    const nlohmann::json preset = nlohmann::json::parse(content.str(), nullptr, false);
    if (!preset.is_object() || !preset.contains("batching") || !preset["batching"].is_object()) {
      throw InputError(path, 0, "batching",
                       "a preset holds a batching section; this file has none");
    }
    nlohmann::json knobs = preset["batching"];
    // A replica of the preset takes its tensor-parallel GPUs, unless the class
    // says otherwise.
    if (preset.contains("meta") && preset["meta"].is_object() &&
        preset["meta"].contains("tensor_parallel") && !knobs.contains("gpus")) {
      knobs["gpus"] = preset["meta"]["tensor_parallel"];
    }
    settings.fleet_presets[name] = knobs;
    note_preset_errors(settings, preset);
  }
}

void set_knob_from(Settings& settings, const po::variables_map& vm, const KnobFlag& flag) {
  if (flag.kind == KnobFlag::kGoodput) {
    std::string words;
    for (const std::string& word : vm[flag.flag].as<std::vector<std::string>>())
      words += word + " ";
    set_knob(settings, flag, words);
    return;
  }
  set_knob(settings, flag, text_of(vm, flag.flag));
}

void apply_trace_flags(Settings& settings, const po::variables_map& vm) {
  if (vm.count("speedup")) {
    if (vm.count("time-scale")) {
      throw InputError("", 0, "--speedup", "conflicts with --time-scale (it sets 1/X); give one");
    }
    const KnobFlag speedup{"speedup", "", "", KnobFlag::kReal};
    const double x = flag_value(speedup, text_of(vm, "speedup")).get<double>();
    if (!(x > 0)) throw InputError("", 0, "--speedup", "must be greater than 0");
    set_setting(settings, "run.time_scale", 1 / x, "", "--speedup");
  }
  if (vm.count("filter")) {
    set_setting(settings, "trace.filter", vm["filter"].as<std::vector<std::string>>(), "",
                "--filter");
  }
  // A trace named on the command line replaces the one a settings file pinned.
  if (vm.count("trace")) settings.trace_sha256.reset();
}

Settings base_settings(const po::variables_map& vm, const std::string& section_name,
                       json& section) {
  Settings settings;
  section = nullptr;
  if (vm.count("preset")) apply_preset(settings, text_of(vm, "preset"), "--preset");
  if (vm.count("settings")) {
    apply_study_file(settings, find_settings_file(text_of(vm, "settings")), section_name, section);
  }
  apply_study_flags(settings, vm, section_name);
  // A sweep checks each point with its axes' values (check_sweep): the base
  // alone may be no run, such as a closed loop's knobs whose cap an axis sets.
  if (section_name != "sweep") validate_settings(settings, "");
  find_trace(settings);
  return settings;
}

bool is_configuration_axis(const std::string& name) {
  return name == "preset" || name == "settings";
}

Settings configuration_settings(const po::variables_map& vm, const std::string& axis,
                                const std::string& value, const nlohmann::json* document,
                                const std::string& source) {
  Settings settings;
  json ignored;
  if (document != nullptr) {
    // As the sweep that wrote it ran it: the whole configuration.
    apply_settings_json(settings, *document, source);
    note_preset_errors(settings, *document);
  } else if (axis == "preset") {
    apply_preset(settings, value, "--vary preset");
    if (vm.count("settings")) {
      apply_study_file(settings, find_settings_file(text_of(vm, "settings")), "sweep", ignored);
    }
  } else {
    if (vm.count("preset")) apply_preset(settings, text_of(vm, "preset"), "--preset");
    apply_study_file(settings, find_settings_file(value), "sweep", ignored);
  }
  apply_study_flags(settings, vm, "sweep");
  find_trace(settings);
  return settings;
}

bool takes_number(const KnobFlag& flag) {
  return flag.kind == KnobFlag::kReal || flag.kind == KnobFlag::kWhole ||
         flag.kind == KnobFlag::kResolution || flag.kind == KnobFlag::kDuration;
}

const KnobFlag& speedup_knob() {
  static const KnobFlag kSpeedup{"speedup", "run.time_scale",
                                 "replay X times as fast: the time scale 1/X", KnobFlag::kReal};
  return kSpeedup;
}

const KnobFlag& sweep_knob(const std::string& name, const std::string& label) {
  const KnobFlag& flag = known_knob(name, label);
  if (!is_sweepable(flag)) {
    const std::string why =
        std::string(flag.key).starts_with("trace.")
            ? " is a trace knob, and a sweep reads one trace (sweep each trace apart)"
            : " is not a knob a sweep varies";
    throw InputError("", 0, label,
                     name + why + "; vary one of " + names_of(is_sweepable) + " or speedup");
  }
  return flag;
}

const KnobFlag& numeric_knob(const std::string& name, const std::string& label) {
  if (name == speedup_knob().flag) {
    throw InputError("", 0, label,
                     "capacity finds the smallest value that meets the target, and more speedup "
                     "only makes it harder: give --vary time-scale (the smallest time scale "
                     "that meets the target is 1 / the largest speedup)");
  }
  const KnobFlag& flag = known_knob(name, label);
  if (!takes_number(flag)) {
    throw InputError(
        "", 0, label,
        name + " is not a numeric knob; capacity bisects one of " + names_of(takes_number));
  }
  return flag;
}

void refuse_fixed_and_varied(const po::variables_map& vm, const KnobFlag& flag,
                             const std::string& by) {
  std::vector<std::string> setters = {flag.flag};
  // Both set the time scale (--speedup X as 1/X).
  if (flag.key == std::string("run.time_scale")) setters = {"time-scale", "speedup"};
  for (const std::string& setter : setters) {
    if (vm.count(setter)) {
      throw InputError("", 0, "--" + setter,
                       std::string("also varied by ") + by + "; give one or the other");
    }
  }
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t at = text.find(separator, begin);
    items.push_back(text.substr(begin, at == std::string::npos ? std::string::npos : at - begin));
    if (at == std::string::npos) return items;
    begin = at + 1;
  }
}

std::vector<std::string> parse_modes(const std::string& text) {
  // In this order, each at most once.
  const std::vector<std::string> known = {"recorded", "retimed", "synthetic"};
  std::vector<bool> seen(known.size(), false);
  for (const std::string& mode : split(text, ',')) {
    const auto at = std::find(known.begin(), known.end(), mode);
    if (at == known.end() || seen[static_cast<std::size_t>(at - known.begin())]) {
      throw InputError("", 0, "--modes",
                       "expected some of recorded, retimed and synthetic (recorded,synthetic by "
                       "default; retimed is the recorded requests at synthetic instants); got '" +
                           text + "'");
    }
    seen[static_cast<std::size_t>(at - known.begin())] = true;
  }
  std::vector<std::string> modes;
  for (std::size_t i = 0; i < known.size(); ++i) {
    if (seen[i]) modes.push_back(known[i]);
  }
  return modes;
}

nlohmann::ordered_json settings_document(const Settings& settings, const LoadedTrace& loaded) {
  Settings effective = settings;
  effective.trace_sha256 = loaded.sha256;
  effective.trace_format = loaded.trace.format;
  return settings_to_json(effective);
}

std::vector<std::string> preset_error_lines(const Settings& settings) {
  std::vector<std::string> lines;
  for (const auto& [name, e] : settings.preset_errors) {
    std::string classes;
    std::size_t count = 0;
    if (settings.fleet) {
      for (const FleetClassSettings& c : *settings.fleet) {
        if (c.preset != name) continue;
        classes += (classes.empty() ? "" : ", ") + c.name;
        ++count;
      }
    }
    const nlohmann::json& pct = e["pct"];
    lines.push_back(
        preset_error_line(name, count == 0 ? "" : (count == 1 ? "class " : "classes ") + classes,
                          pct.value("ttft", 0.0), pct.value("tpot", 0.0), pct.value("latency", 0.0),
                          e.value("from", std::string())));
  }
  return lines;
}

void add_meta(nlohmann::ordered_json& document) {
  document["meta"]["program"] = kProgramName;
  document["meta"]["version"] = kVersion;
  document["meta"]["written_at"] = utc_now_iso();
}

LoadedTrace load_and_warn(const Settings& settings, std::ostream& err) {
  LoadedTrace loaded = load_trace(settings);
  if (loaded.trace.out_of_order > 0) {
    err << "warning: " << settings.trace_path << ": " << loaded.trace.out_of_order
        << " lines were out of timestamp order; replayed in timestamp order (stable)\n";
  }
  return loaded;
}

std::string figure_text(const Summary& summary, const std::string& key) {
  const std::optional<double> value = summary.get(key);
  return key + "=" + (value ? general(*value) : "null");
}

void refuse_other_kinds_knobs(const po::variables_map& vm, const Settings& settings,
                              const std::set<std::string>& file_keys,
                              const std::vector<std::string>& varied) {
  if (std::find(varied.begin(), varied.end(), "server.kind") != varied.end()) return;
  // The kind whose section holds `key`, when it is not this run's: its knobs
  // say nothing of this run.
  const auto owner = [&](const std::string& key) -> std::string {
    const std::string section = key.substr(0, key.find('.'));
    if (!section_of_another_kind(section, settings.server_kind)) return "";
    for (const ServerKind& k : server_kinds())
      if (k.section == section) return k.name;
    return "";
  };
  const auto why = [&](const std::string& kind) {
    return "applies to the " + kind + " server only, and this run's server is " +
           settings.server_kind + ": add --server " + kind;
  };
  for (const KnobFlag& flag : knob_flags()) {
    const std::string kind = owner(flag.key);
    if (!kind.empty() && vm.count(flag.flag)) {
      throw InputError("", 0, std::string("--") + flag.flag, why(kind));
    }
  }
  for (const std::string& key : varied) {
    const std::string kind = owner(key);
    if (kind.empty()) continue;
    std::string name = key;
    for (const KnobFlag& flag : knob_flags()) {
      if (flag.key == key) name = flag.flag;
    }
    throw InputError("", 0, "--vary " + name, why(kind));
  }
  // A file's key: blamed on that file, with what made the server another kind.
  const auto set_kind = settings.set_by.find("server.kind");
  const std::string kind_from =
      set_kind == settings.set_by.end() ? "the default" : set_kind->second;
  for (const std::string& key : file_keys) {
    const std::string kind = owner(key);
    if (kind.empty()) continue;
    const auto by = settings.set_by.find(key);
    const std::string from = by == settings.set_by.end() ? std::string() : by->second;
    const bool file = !from.empty() && !from.starts_with("--");
    throw InputError(file ? from : "", 0, file || from.empty() ? key : key + " (" + from + ")",
                     "applies to the " + kind + " server only, and server.kind is " +
                         settings.server_kind + " (set by " + kind_from + "): set server.kind to " +
                         kind);
  }
}

PresetPair preset_pair(const std::string& preset, const HardwareCatalog& catalog) {
  const std::string path = find_preset_file(preset);
  std::ifstream in(path);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (!doc.is_object() || !doc.contains("meta") || !doc["meta"].contains("hardware")) return {};
  const nlohmann::json& h = doc["meta"]["hardware"];
  return {&catalog.gpu(h.value("gpu", ""), path), &catalog.model(h.value("model", ""), path)};
}

}  // namespace infersim
