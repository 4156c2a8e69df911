#include "cli/sweep_command.hpp"

#include "cli/option_parsing.hpp"

#include <boost/program_options.hpp>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <exception>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "cli/run_options.hpp"
#include "core/cores.hpp"
#include "core/input_error.hpp"
#include "core/version.hpp"
#include "report/number_format.hpp"
#include "report/run_folder.hpp"
#include "scenario/capacity.hpp"
#include "scenario/scenario.hpp"
#include "scenario/settings.hpp"
#include "scenario/sweep.hpp"

namespace infersim {
namespace po = boost::program_options;
using nlohmann::json;

namespace {

constexpr const char* kSweepUsage =
    "usage: infersim sweep --vary KNOB=V1,V2,... | --vary KNOB=START:STOP:STEP [--vary ...]\n"
    "                      [--modes recorded,synthetic] [--shard K/N] [-j N] [run options]\n"
    "\n"
    "Runs every point of the grid (the cartesian product of the --vary lists, the first\n"
    "outermost; STOP is included) with every other knob as given, and writes sweep.csv:\n"
    "a row a point and mode, the varied knobs, then summary.csv's figures. A knob is\n"
    "named as its flag without the dashes (cores, decode-budget, time-scale, ...).\n"
    "--shard K/N runs the points whose index modulo N is K-1; `infersim merge` joins\n"
    "the shards. Sweeps write no requests.csv (run one point for that).\n";
constexpr const char* kMergeUsage =
    "usage: infersim merge --output DIR [--force] SHARD_DIR...\n"
    "\n"
    "Joins the folders of `infersim sweep --shard K/N` into the sweep.csv the whole sweep\n"
    "writes, after checking they are of one sweep and cover every point once.\n";
constexpr const char* kCapacityUsage =
    "usage: infersim capacity --target EXPR --vary KNOB [--min A --max B] [--tolerance T]\n"
    "                         [--modes recorded,synthetic] [run options]\n"
    "\n"
    "Finds, by bisection, the smallest KNOB value whose run meets the target, for each\n"
    "mode apart. EXPR is KEY OP NUMBER (OP one of >= <= > < ==) over summary.json's\n"
    "keys, several joined by ',' all holding: success_rate>=0.99,ttft_p99_s<=2.\n"
    "--min/--max default to 1 and 1024 for cores and are required for other knobs.\n";

constexpr const char* kDefaultModes = "recorded,synthetic";

std::string utc_now_iso() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return stamp;
}

std::string general(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

// --settings, the knob flags, --output and --force, as `run` has them.
void add_run_options(po::options_description& options) {
  options.add_options()("settings", po::value<std::string>(),
                        "settings file (JSON); flags override it")(
      "output", po::value<std::string>(),
      "output folder (default output/<YYYYmmdd-HHMMSS>-<kind>)")(
      "force", "write into --output even if it holds files")(
      "speedup", po::value<std::string>(), "replay X times as fast (the same as --time-scale 1/X)")(
      "filter", po::value<std::vector<std::string>>()->composing(),
      "keep only the CSV rows where COLUMN=VALUE (repeatable; all must hold)");
  for (const KnobFlag& flag : knob_flags()) {
    if (flag.kind == KnobFlag::kGoodput) {
      // As run takes it: --goodput ttft:500 e2el:2000, or the flag repeated.
      options.add_options()(
          flag.flag, po::value<std::vector<std::string>>()->multitoken()->composing(), flag.help);
    } else {
      options.add_options()(flag.flag, po::value<std::string>(), flag.help);
    }
  }
}

// The knobs --vary and capacity can vary: those that take one number.
bool is_numeric(const KnobFlag& flag) {
  return flag.kind == KnobFlag::kReal || flag.kind == KnobFlag::kWhole ||
         flag.kind == KnobFlag::kResolution;
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

// The base settings: defaults, the settings file, the knob flags. A settings
// file a sweep or capacity search wrote carries its definition in a `sweep` or
// `capacity` section; that section comes back in `section` (null if absent) and
// the rest applies as any settings file.
Settings base_settings(const po::variables_map& vm, const std::string& section_name,
                       json& section) {
  Settings settings;
  section = nullptr;
  if (vm.count("settings")) {
    const std::string path = text_of(vm, "settings");
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
  }
  for (const KnobFlag& flag : knob_flags()) {
    if (!vm.count(flag.flag)) continue;
    if (flag.kind == KnobFlag::kGoodput) {
      std::string words;
      for (const std::string& word : vm[flag.flag].as<std::vector<std::string>>())
        words += word + " ";
      set_knob(settings, flag, words);
      continue;
    }
    const std::string value = text_of(vm, flag.flag);
    if (std::string(flag.flag) == "per-request" && value != "none") {
      throw InputError("", 0, "--per-request",
                       "a sweep or capacity search writes no requests.csv (its runs keep only "
                       "their summaries); run one point with infersim run --per-request csv");
    }
    set_knob(settings, flag, value);
  }
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
  settings.per_request = "none";
  validate_settings(settings, "");
  return settings;
}

// A knob that takes numbers, by its flag's name; `label` names where it was given.
const KnobFlag& numeric_knob(const std::string& name, const std::string& label) {
  const KnobFlag* flag = find_knob_flag(name);
  std::vector<std::string> numeric;
  for (const KnobFlag& f : knob_flags()) {
    if (is_numeric(f)) numeric.push_back(f.flag);
  }
  if (flag == nullptr) {
    std::vector<std::string> all;
    for (const KnobFlag& f : knob_flags())
      all.push_back(f.flag);
    const auto near = nearest(name, all);
    throw InputError("", 0, label,
                     "unknown knob '" + name + "'" +
                         (near ? " (did you mean " + *near + "?)" : std::string()) +
                         "; a knob is named as its flag without the dashes");
  }
  if (!is_numeric(*flag)) {
    std::string list;
    for (const std::string& n : numeric)
      list += (list.empty() ? "" : ", ") + n;
    throw InputError("", 0, label, name + " is not a numeric knob; vary one of " + list);
  }
  return *flag;
}

void refuse_fixed_and_varied(const po::variables_map& vm, const KnobFlag& flag,
                             const std::string& by) {
  std::vector<std::string> setters = {flag.flag};
  if (flag.key == std::string("run.time_scale")) setters.emplace_back("speedup");  // 1/X
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

double range_number(const KnobFlag& flag, const std::string& text, const std::string& label) {
  if (flag.kind == KnobFlag::kResolution) return parse_time_resolution(text, label);
  double value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() ||
      !std::isfinite(value)) {
    throw InputError("", 0, label, "expected START:STOP:STEP numbers, got '" + text + "'");
  }
  return value;
}

SweepAxis axis_of(const KnobFlag& flag, const std::vector<std::string>& texts) {
  SweepAxis axis;
  axis.name = flag.flag;
  axis.key = flag.key;
  for (const std::string& text : texts)
    axis.values.push_back(flag_value(flag, text));
  return axis;
}

// KNOB=V1,V2,... or KNOB=START:STOP:STEP.
SweepAxis parse_vary(const std::string& spec) {
  const std::size_t eq = spec.find('=');
  if (eq == std::string::npos) {
    throw InputError("", 0, "--vary",
                     "expected KNOB=V1,V2,... or KNOB=START:STOP:STEP, got '" + spec + "'");
  }
  const std::string name = spec.substr(0, eq);
  const std::string values = spec.substr(eq + 1);
  const KnobFlag& flag = numeric_knob(name, "--vary");
  const std::string label = "--vary " + name;
  if (values.empty()) throw InputError("", 0, label, "no values");
  std::vector<std::string> texts;
  if (values.find(':') != std::string::npos) {
    const std::vector<std::string> parts = split(values, ':');
    if (parts.size() != 3) {
      throw InputError("", 0, label, "expected START:STOP:STEP, got '" + values + "'");
    }
    for (const double v :
         range_values(range_number(flag, parts[0], label), range_number(flag, parts[1], label),
                      range_number(flag, parts[2], label), label)) {
      // A whole knob's values as whole numbers: shortest() writes 1e+05.
      const bool whole = flag.kind == KnobFlag::kWhole && v == std::floor(v) && v >= 0 &&
                         v < 18446744073709551616.0;
      texts.push_back(whole ? std::to_string(static_cast<std::uint64_t>(v)) : shortest(v));
    }
  } else {
    texts = split(values, ',');
    for (const std::string& text : texts) {
      if (text.empty()) throw InputError("", 0, label, "an empty value in '" + values + "'");
    }
  }
  return axis_of(flag, texts);
}

std::vector<std::string> parse_modes(const std::string& text) {
  bool recorded = false, synthetic = false;
  for (const std::string& mode : split(text, ',')) {
    bool& seen = mode == "recorded" ? recorded : synthetic;
    if ((mode != "recorded" && mode != "synthetic") || seen) {
      throw InputError("", 0, "--modes",
                       "expected recorded, synthetic or recorded,synthetic; got '" + text + "'");
    }
    seen = true;
  }
  std::vector<std::string> modes;
  if (recorded) modes.emplace_back("recorded");
  if (synthetic) modes.emplace_back("synthetic");
  return modes;
}

std::string modes_text(const std::vector<std::string>& modes) {
  std::string out;
  for (const std::string& m : modes)
    out += (out.empty() ? "" : ",") + m;
  return out;
}

// The sweep a settings file wrote (its `sweep` section).
Sweep sweep_from_section(const json& section, const std::string& source) {
  const auto malformed = [&] {
    throw InputError(source, 0, "sweep",
                     "expected {\"vary\": [{\"knob\": K, \"values\": [...]}], \"modes\": [...]}");
  };
  if (!section.is_object() || !section.contains("vary") || !section["vary"].is_array() ||
      !section.contains("modes") || !section["modes"].is_array()) {
    malformed();
  }
  Sweep sweep;
  for (const json& entry : section["vary"]) {
    if (!entry.is_object() || !entry.contains("knob") || !entry["knob"].is_string() ||
        !entry.contains("values") || !entry["values"].is_array()) {
      malformed();
    }
    const KnobFlag& flag = numeric_knob(entry["knob"].get<std::string>(), source + ": sweep.vary");
    std::vector<std::string> texts;
    for (const json& value : entry["values"]) {
      if (!value.is_number()) malformed();
      texts.push_back(value.dump());
    }
    sweep.axes.push_back(axis_of(flag, texts));
  }
  std::string modes;
  for (const json& mode : section["modes"]) {
    if (!mode.is_string()) malformed();
    modes += (modes.empty() ? "" : ",") + mode.get<std::string>();
  }
  sweep.modes = parse_modes(modes);
  return sweep;
}

nlohmann::ordered_json settings_document(const Settings& settings, const LoadedTrace& loaded) {
  Settings effective = settings;
  effective.trace_sha256 = loaded.sha256;
  effective.trace_format = loaded.trace.format;
  return settings_to_json(effective);
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

}  // namespace

int run_sweep_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options("sweep options");
  options.add_options()("help,h", "show this help")(
      "vary", po::value<std::vector<std::string>>(),
      "KNOB=V1,V2,... or KNOB=START:STOP:STEP (repeatable; the first outermost)")(
      "modes", po::value<std::string>(), "recorded, synthetic or both (recorded,synthetic)")(
      "shard", po::value<std::string>(), "K/N: run the points whose index modulo N is K-1");
  add_jobs_option(options);
  add_run_options(options);
  const po::variables_map vm = parse_command(args, options, {}, "sweep");
  if (vm.count("help")) {
    out << kSweepUsage << '\n' << options;
    return 0;
  }

  json section;
  Settings base = base_settings(vm, "sweep", section);
  Sweep sweep;
  if (vm.count("vary")) {
    for (const std::string& spec : vm["vary"].as<std::vector<std::string>>()) {
      sweep.axes.push_back(parse_vary(spec));
    }
  } else if (!section.is_null()) {
    sweep = sweep_from_section(section, text_of(vm, "settings"));
  }
  if (vm.count("modes")) sweep.modes = parse_modes(text_of(vm, "modes"));
  for (const SweepAxis& axis : sweep.axes) {
    refuse_fixed_and_varied(vm, *find_knob_flag(axis.name), "--vary " + axis.name);
  }
  base.mode = sweep_run_mode(sweep.modes);
  check_sweep(sweep, base);
  const std::size_t points = sweep.point_count();
  const std::optional<SweepShard> shard =
      vm.count("shard") ? std::optional(parse_shard(text_of(vm, "shard"))) : std::nullopt;
  const std::vector<std::size_t> indices = shard_points(points, shard.value_or(SweepShard{}));
  const unsigned threads = threads_from(vm);

  // Everything that can fail on input fails before a folder exists.
  RunFolder folder = RunFolder::prepare(vm.count("output") ? text_of(vm, "output") : "", "sweep",
                                        vm.count("force"));
  const LoadedTrace loaded = load_and_warn(base, err);

  out << "Sweep: " << points << " points";
  for (const SweepAxis& axis : sweep.axes)
    out << (&axis == &sweep.axes.front() ? " (" : " x ") << axis.name << ": " << axis.values.size();
  out << "), modes " << modes_text(sweep.modes);
  if (shard)
    out << "; shard " << shard->index << "/" << shard->count << ": " << indices.size() << " points";
  const std::size_t pool = std::min<std::size_t>(threads, std::max<std::size_t>(1, indices.size()));
  out << ", on " << pool << (pool == 1 ? " thread.\n" : " threads.\n") << std::flush;
  const auto started = std::chrono::steady_clock::now();
  const std::vector<SweepPointResult> results =
      run_sweep(sweep, base, loaded.trace, indices, threads);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  constexpr std::size_t kMaxConsolePoints = 100;
  if (results.size() <= kMaxConsolePoints) {
    for (const SweepPointResult& point : results) {
      std::string values;
      const std::vector<std::size_t> at = sweep.coordinates(point.index);
      for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
        values += sweep.axes[a].name + "=" + sweep_value_text(sweep.axes[a].values[at[a]]) + " ";
      }
      for (const SweepModeSummary& mode : point.modes) {
        out << values << mode.mode << (mode.mode == "recorded" ? " " : "");
        for (const char* key : {"success_rate", "avg_wait_s", "ttft_p99_s", "utilization"}) {
          out << ' ' << figure_text(mode.summary, key);
        }
        out << '\n';
      }
    }
  }
  out << "Ran " << results.size() << " points in " << fixed(seconds, 3) << " s ("
      << fixed(seconds > 0 ? static_cast<double>(results.size()) / seconds : 0, 1)
      << " points/s).\n";

  nlohmann::ordered_json settings = settings_document(base, loaded);
  folder.create();
  write_file_atomically(folder.file("sweep.csv"), sweep_csv(sweep, base, results));
  if (shard) {
    write_file_atomically(folder.file("shard.json"),
                          shard_json(sweep, settings, *shard, indices).dump(2) + "\n");
  }
  settings["sweep"] = sweep.to_json();
  add_meta(settings);
  write_file_atomically(folder.file("settings.json"), settings.dump(2) + "\n");
  out << "Sweep folder: " << folder.path().string() << '\n';
  return 0;
}

int run_merge_command(const std::vector<std::string>& args, std::ostream& out, std::ostream&) {
  po::options_description options("merge options");
  options.add_options()("help,h", "show this help")(
      "output", po::value<std::string>(),
      "the merged folder (default output/<YYYYmmdd-HHMMSS>-sweep)")(
      "force", "write into --output even if it holds files")(
      "part", po::value<std::vector<std::string>>(), "a shard's folder (positional, repeatable)");
  po::positional_options_description positional;
  positional.add("part", -1);
  const po::variables_map vm = parse_command(args, options, positional, "merge");
  if (vm.count("help")) {
    out << kMergeUsage << '\n' << options;
    return 0;
  }
  if (!vm.count("part")) {
    throw InputError("", 0, "merge", "give the shard folders to merge; see infersim merge --help");
  }
  const std::vector<std::string> folders = vm["part"].as<std::vector<std::string>>();
  std::vector<SweepPart> parts;
  for (const std::string& folder : folders) {
    const std::filesystem::path dir(folder);
    if (!std::filesystem::exists(dir / "shard.json")) {
      throw InputError(folder, 0, "",
                       "no shard.json: not the folder of an infersim sweep --shard K/N");
    }
    SweepPart part;
    part.name = folder;
    std::ifstream in(dir / "shard.json", std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    try {
      part.shard = nlohmann::ordered_json::parse(text.str());
    } catch (const nlohmann::ordered_json::exception& e) {
      throw InputError((dir / "shard.json").string(), 0, "", std::string("not JSON: ") + e.what());
    }
    std::ifstream csv(dir / "sweep.csv", std::ios::binary);
    if (!csv) throw InputError((dir / "sweep.csv").string(), 0, "", "cannot read it");
    std::ostringstream rows;
    rows << csv.rdbuf();
    part.csv = rows.str();
    parts.push_back(std::move(part));
  }
  const std::string merged = merge_sweep_parts(parts);

  RunFolder folder = RunFolder::prepare(vm.count("output") ? text_of(vm, "output") : "", "sweep",
                                        vm.count("force"));
  // The sweep's settings.json: the base settings and the definition.
  nlohmann::ordered_json settings = parts.front().shard["settings"];
  settings["sweep"] = parts.front().shard["sweep"];
  add_meta(settings);
  folder.create();
  write_file_atomically(folder.file("sweep.csv"), merged);
  write_file_atomically(folder.file("settings.json"), settings.dump(2) + "\n");
  out << "Merged " << parts.size() << " shards of "
      << parts.front().shard["points"].get<std::size_t>()
      << " points: " << folder.file("sweep.csv").string() << '\n';
  return 0;
}

int run_capacity_command(const std::vector<std::string>& args, std::ostream& out,
                         std::ostream& err) {
  po::options_description options("capacity options");
  options.add_options()("help,h", "show this help")(
      "target", po::value<std::string>(),
      "KEY OP NUMBER[,...] over summary keys, e.g. success_rate>=0.99")(
      "vary", po::value<std::string>(), "the knob to size, e.g. cores")(
      "min", po::value<std::string>(), "smallest value searched (cores: 1)")(
      "max", po::value<std::string>(), "largest value searched (cores: 1024)")(
      "tolerance", po::value<std::string>(),
      "real knobs: stop when the bracket is within this fraction of the value (0.001)")(
      "modes", po::value<std::string>(), "recorded, synthetic or both (recorded,synthetic)");
  add_jobs_option(options);
  add_run_options(options);
  const po::variables_map vm = parse_command(args, options, {}, "capacity");
  if (vm.count("help")) {
    out << kCapacityUsage << '\n' << options;
    return 0;
  }

  json section;
  Settings base = base_settings(vm, "capacity", section);
  // A flag, else the capacity section of the settings file, else nothing.
  const auto given = [&](const char* name) -> std::optional<std::string> {
    if (vm.count(name)) return text_of(vm, name);
    if (section.is_object() && section.contains(name) && !section[name].is_null()) {
      const json& v = section[name];
      if (v.is_string()) return v.get<std::string>();
      if (v.is_array()) {
        std::string list;
        for (const json& item : v)
          list += (list.empty() ? "" : ",") +
                  (item.is_string() ? item.get<std::string>() : item.dump());
        return list;
      }
      return v.dump();
    }
    return std::nullopt;
  };

  const std::optional<std::string> knob_name = given("vary");
  if (!knob_name) throw InputError("", 0, "--vary", "name the knob to size, e.g. --vary cores");
  if (knob_name->find('=') != std::string::npos) {
    throw InputError("", 0, "--vary",
                     "capacity searches one knob by bisection: give --vary KNOB and its range "
                     "with --min and --max");
  }
  const KnobFlag& flag = numeric_knob(*knob_name, "--vary");
  refuse_fixed_and_varied(vm, flag, "--vary");
  const std::optional<std::string> target_text = given("target");
  if (!target_text) {
    throw InputError("", 0, "--target", "give the target, e.g. --target success_rate>=0.99");
  }

  CapacitySearch search;
  search.knob = flag.flag;
  search.key = flag.key;
  search.whole = flag.kind == KnobFlag::kWhole;
  search.target = parse_target(*target_text, summary_keys(base));
  const bool cores = search.knob == "cores";
  for (auto [name, bound, fallback] :
       {std::tuple{"min", &search.min, 1.0}, std::tuple{"max", &search.max, 1024.0}}) {
    const std::optional<std::string> text = given(name);
    if (!text && !cores) {
      throw InputError(
          "", 0, std::string("--") + name,
          "required for --vary " + search.knob + " (only cores has a default range, 1 to 1024)");
    }
    try {
      *bound = text ? flag_value(flag, *text).get<double>() : fallback;
      with_knob(base, search, *bound);
    } catch (const InputError& e) {
      throw InputError(std::string("--") + name + ": " + e.what());
    }
  }
  if (const auto tolerance = given("tolerance")) {
    const KnobFlag real{"tolerance", "", "", KnobFlag::kReal};
    search.tolerance = flag_value(real, *tolerance).get<double>();
  }
  check_capacity_search(search);
  const std::vector<std::string> modes = parse_modes(given("modes").value_or(kDefaultModes));
  base.mode = sweep_run_mode(modes);
  const unsigned threads = threads_from(vm);

  RunFolder folder = RunFolder::prepare(vm.count("output") ? text_of(vm, "output") : "", "capacity",
                                        vm.count("force"));
  const LoadedTrace loaded = load_and_warn(base, err);
  const auto value = [&](double v) { return capacity_value_text(search, v); };
  out << "Capacity: the smallest " << search.knob << " from " << value(search.min) << " to "
      << value(search.max) << " whose run meets " << search.target.text << ", "
      << (modes.size() > 1 ? "each mode searched apart" : modes.front()) << ".\n"
      << std::flush;

  // The modes' searches are independent: one thread each.
  std::vector<CapacityResult> results(modes.size());
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto search_mode = [&](std::size_t m) {
    try {
      results[m] = find_capacity(search, base, modes[m], loaded.trace);
    } catch (...) {
      const std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  for (std::size_t m = 1; m < modes.size(); ++m) {
    if (threads > 1) workers.emplace_back(search_mode, m);
  }
  search_mode(0);
  for (std::thread& t : workers)
    t.join();
  for (std::size_t m = 1; m < modes.size() && threads == 1; ++m)
    search_mode(m);
  if (failure) std::rethrow_exception(failure);

  nlohmann::ordered_json document;
  for (std::size_t m = 0; m < modes.size(); ++m) {
    const CapacityResult& r = results[m];
    const auto figures = [&](const CapacityProbe& p) {
      std::string text;
      for (const std::string& key : search.target.keys())
        text += (text.empty() ? "" : " ") + figure_text(p.summary, key);
      return text;
    };
    std::string mode = modes[m];
    mode.resize(10, ' ');
    out << mode;
    switch (r.outcome) {
      case CapacityResult::kFound:
        out << search.knob << "=" << value(r.answer->value) << "  " << figures(*r.answer)
            << "  | at " << search.knob << "=" << value(r.below->value) << ": "
            << figures(*r.below);
        break;
      case CapacityResult::kMinimumMeets:
        out << search.knob << "=" << value(r.answer->value) << "  " << figures(*r.answer) << "  | "
            << r.reason;
        break;
      case CapacityResult::kMaximumFails:
        out << "not found: " << r.reason << " (" << figures(*r.below) << ")";
        break;
    }
    out << "  (" << r.probes.size() << (r.probes.size() == 1 ? " run" : " runs") << ")\n";
    document[modes[m]] = capacity_to_json(search, r);
  }

  nlohmann::ordered_json settings = settings_document(base, loaded);
  settings["capacity"] = {{"target", search.target.text},
                          {"vary", search.knob},
                          {"min", capacity_value_json(search, search.min)},
                          {"max", capacity_value_json(search, search.max)},
                          {"tolerance", search.tolerance},
                          {"modes", modes}};
  add_meta(settings);
  folder.create();
  write_file_atomically(folder.file("capacity.json"), document.dump(2) + "\n");
  write_file_atomically(folder.file("settings.json"), settings.dump(2) + "\n");
  out << "Capacity folder: " << folder.path().string() << '\n';
  return 0;
}

}  // namespace infersim
