#include "cli/sweep_command.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>

#include "cli/command_options.hpp"
#include "cli/option_parsing.hpp"
#include "core/input_error.hpp"
#include "core/number_format.hpp"
#include "report/run_folder.hpp"
#include "studies/progress_line.hpp"
#include "studies/sweep.hpp"
#include "studies/sweep_plots.hpp"

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
    "a row a point and mode, the varied knobs, then summary.csv's figures, and plots/\n"
    "(each main figure against the first knob; --plots none for none). A knob is named\n"
    "as its flag without the dashes (cores, decode-budget, replicas, ...); words and\n"
    "switches take lists (router=round-robin,prefix, prefix-caching=on,off), and\n"
    "speedup=1,2,4 replays the trace 1, 2 and 4 times as fast. preset=A,B runs each point\n"
    "on each preset (as --preset), settings=a.json,b.json on each settings file (as\n"
    "--settings; a fleet, a prefill/decode split): the command line's flags over each.\n"
    "--shard K/N runs the points whose index modulo N is K-1; `infersim merge` joins\n"
    "the shards and draws the plots. Sweeps write no requests.csv (run one point for that).\n";

double range_number(const KnobFlag& flag, const std::string& text, const std::string& label) {
  if (flag.kind == KnobFlag::kResolution) return parse_time_resolution(text, label);
  if (flag.kind == KnobFlag::kDuration) return parse_duration(text, label);
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
  axis.reciprocal = &flag == &speedup_knob();
  for (const std::string& text : texts)
    axis.values.push_back(flag_value(flag, text));
  return axis;
}

// preset=A,B or settings=a.json,b.json: a whole configuration a value.
SweepAxis configuration_axis(const std::string& name, const std::vector<std::string>& texts,
                             const Configure& configure, const json* documents) {
  SweepAxis axis;
  axis.name = name;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    axis.values.emplace_back(texts[i]);
    if (configure) {
      axis.configurations.push_back(
          configure(name, texts[i], documents != nullptr ? &(*documents)[i] : nullptr));
    }
  }
  return axis;
}

// KNOB=V1,V2,... or KNOB=START:STOP:STEP.
SweepAxis parse_vary(const std::string& spec, const Configure& configure) {
  const std::size_t eq = spec.find('=');
  if (eq == std::string::npos) {
    throw InputError("", 0, "--vary",
                     "expected KNOB=V1,V2,... or KNOB=START:STOP:STEP, got '" + spec + "'");
  }
  const std::string name = spec.substr(0, eq);
  const std::string values = spec.substr(eq + 1);
  const std::string label = "--vary " + name;
  if (values.empty()) throw InputError("", 0, label, "no values");
  if (is_configuration_axis(name)) {
    const std::vector<std::string> texts = split(values, ',');
    for (const std::string& text : texts) {
      if (text.empty()) throw InputError("", 0, label, "an empty value in '" + values + "'");
    }
    return configuration_axis(name, texts, configure, nullptr);
  }
  const KnobFlag& flag = sweep_knob(name, "--vary");
  std::vector<std::string> texts;
  if (values.find(':') != std::string::npos) {
    if (!takes_number(flag)) {
      throw InputError("", 0, label,
                       "START:STOP:STEP is for a knob that takes numbers; give " + name +
                           "'s values apart by commas");
    }
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

std::string modes_text(const std::vector<std::string>& modes) {
  std::string out;
  for (const std::string& m : modes)
    out += (out.empty() ? "" : ",") + m;
  return out;
}

}  // namespace

Sweep sweep_from_section(const json& section, const std::string& source,
                         const Configure& configure) {
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
    const std::string name = entry["knob"].get<std::string>();
    if (is_configuration_axis(name)) {
      // A sweep's own settings.json holds each configuration whole.
      const json* documents = entry.contains("settings") ? &entry["settings"] : nullptr;
      std::vector<std::string> texts;
      for (const json& value : entry["values"]) {
        if (!value.is_string()) malformed();
        texts.push_back(value.get<std::string>());
      }
      if (documents != nullptr && (!documents->is_array() || documents->size() != texts.size() ||
                                   !std::all_of(documents->begin(), documents->end(),
                                                [](const json& d) { return d.is_object(); }))) {
        throw InputError(source, 0, "sweep.vary." + name + ".settings",
                         "expected a settings object a value");
      }
      if (documents == nullptr && name == "settings") {
        throw InputError(source, 0, "sweep.vary.settings",
                         "a settings file's sweep varies presets, not other settings files; vary "
                         "settings files on the command line (--vary settings=a.json,b.json)");
      }
      sweep.axes.push_back(configuration_axis(name, texts, configure, documents));
      continue;
    }
    const KnobFlag& flag = sweep_knob(name, source + ": sweep.vary");
    std::vector<std::string> texts;
    for (const json& value : entry["values"]) {
      // As sweep.csv shows them: a word, on or off, a number.
      if (!value.is_number() && !value.is_string() && !value.is_boolean()) malformed();
      texts.push_back(sweep_value_text(value));
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

std::vector<std::string> write_sweep_plots(const std::filesystem::path& folder, const Sweep& sweep,
                                           const std::string& csv, std::ostream& err) {
  std::vector<SweepPlotAxis> axes;
  for (const SweepAxis& axis : sweep.axes) {
    SweepPlotAxis a{axis.name, {}, axis.numeric()};
    for (const json& value : axis.values)
      a.values.push_back(sweep_value_text(value));
    axes.push_back(std::move(a));
  }
  const std::vector<PlotScript> scripts = sweep_plot_scripts(axes, sweep.modes, csv);
  write_plots(folder, scripts, err);
  std::vector<std::string> names;
  for (const PlotScript& p : scripts)
    names.push_back(p.name);
  return names;
}

int run_sweep_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options("sweep options");
  options.add_options()("help,h", "show this help")(
      "vary", po::value<std::vector<std::string>>(),
      "KNOB=V1,V2,... or KNOB=START:STOP:STEP (repeatable; the first outermost)")(
      "modes", po::value<std::string>(),
      "some of recorded, retimed (the recorded requests at synthetic instants) and synthetic "
      "(recorded,synthetic)")("shard", po::value<std::string>(),
                              "K/N: run the points whose index modulo N is K-1");
  add_jobs_option(options);
  add_run_options(options);
  add_name_option(options, "sweep");
  const po::variables_map vm = parse_command(args, options, {}, "sweep");
  if (vm.count("help")) {
    out << kSweepUsage << '\n' << options;
    return 0;
  }

  json section;
  Settings base = base_settings(vm, "sweep", section);
  const nlohmann::ordered_json base_trace = settings_to_json(base)["trace"];
  const Configure configure = [&](const std::string& axis, const std::string& value,
                                  const json* document) {
    const std::string by = "--vary " + axis + "=" + value;
    if (axis == "preset" && vm.count("preset")) {
      throw InputError("", 0, "--preset", "also varied by --vary preset; give one or the other");
    }
    if (axis == "settings" && vm.count("settings") && document == nullptr) {
      throw InputError("", 0, "--settings",
                       "also varied by --vary settings; give one or the other");
    }
    Settings settings =
        configuration_settings(vm, axis, value, document, document ? text_of(vm, "settings") : by);
    // A sweep reads one trace.
    if (settings_to_json(settings)["trace"] != base_trace) {
      throw InputError("", 0, by,
                       "reads another trace than the sweep's (" + base.trace_path +
                           "); a sweep reads one trace: sweep each trace apart");
    }
    return settings;
  };
  Sweep sweep;
  if (vm.count("vary")) {
    for (const std::string& spec : vm["vary"].as<std::vector<std::string>>()) {
      sweep.axes.push_back(parse_vary(spec, configure));
    }
  } else if (!section.is_null()) {
    sweep = sweep_from_section(section, text_of(vm, "settings"), configure);
  }
  if (vm.count("modes")) sweep.modes = parse_modes(text_of(vm, "modes"));
  // A closed loop runs the recorded mode alone (MODEL.md section 4b): the
  // base's, an axis's or a configuration's.
  bool closed = base.client_loop();
  for (const SweepAxis& axis : sweep.axes) {
    closed = closed || axis.key.starts_with("client.");
    for (const Settings& c : axis.configurations)
      closed = closed || c.client_loop();
  }
  if (closed && !vm.count("modes")) sweep.modes = {"recorded"};
  if (closed && sweep.modes != std::vector<std::string>{"recorded"}) {
    throw InputError("", 0, "--max-concurrency",
                     "a closed loop runs the recorded mode alone (MODEL.md section 4b), as does "
                     "any benchmark's client: the synthetic and retimed modes draw their own "
                     "instants; give --modes recorded");
  }
  std::vector<std::string> varied;
  for (const SweepAxis& axis : sweep.axes) {
    if (axis.configures()) continue;
    refuse_fixed_and_varied(vm, sweep_knob(axis.name, "--vary"), "--vary " + axis.name);
    varied.push_back(axis.key);
  }
  base.mode = sweep_run_mode(sweep.modes);
  check_sweep(sweep, base);
  refuse_other_kinds_knobs(vm, base, {}, varied);
  for (const SweepAxis& axis : sweep.axes) {
    for (const Settings& c : axis.configurations)
      refuse_other_kinds_knobs(vm, c, {}, varied);
  }
  const std::size_t points = sweep.point_count();
  const std::optional<SweepShard> shard =
      vm.count("shard") ? std::optional(parse_shard(text_of(vm, "shard"))) : std::nullopt;
  // A shard holds part of the grid: merge draws the plots of the whole.
  if (shard && vm.count("plots") && base.plots != "none") {
    throw InputError("", 0, "--plots",
                     "a shard draws no plots (it holds part of the grid); infersim merge draws "
                     "them for the whole sweep (give --plots none here, or leave it out)");
  }
  const bool plots = !shard && base.plots == "svg";
  const std::vector<std::size_t> indices = shard_points(points, shard.value_or(SweepShard{}));
  const unsigned threads = threads_from(vm);

  // Everything that can fail on input fails before a folder exists.
  RunFolder folder = RunFolder::prepare(vm.count("output") ? text_of(vm, "output") : "", "sweep",
                                        vm.count("force"), folder_name(vm));
  const LoadedTrace loaded = load_and_warn(base, err);

  out << "Sweep: " << points << " points";
  for (const SweepAxis& axis : sweep.axes)
    out << (&axis == &sweep.axes.front() ? " (" : " x ") << axis.name << ": " << axis.values.size();
  out << "), modes " << modes_text(sweep.modes);
  if (shard)
    out << "; shard " << shard->index << "/" << shard->count << ": " << indices.size() << " points";
  const std::size_t pool = std::min<std::size_t>(threads, std::max<std::size_t>(1, indices.size()));
  out << ", on " << pool << (pool == 1 ? " thread.\n" : " threads.\n");
  std::vector<std::string> error_lines = preset_error_lines(base);
  for (const SweepAxis& axis : sweep.axes) {
    for (const Settings& c : axis.configurations) {
      for (const std::string& line : preset_error_lines(c)) {
        if (std::find(error_lines.begin(), error_lines.end(), line) == error_lines.end())
          error_lines.push_back(line);
      }
    }
  }
  for (const std::string& line : error_lines)
    out << line << '\n';
  out << std::flush;
  const auto started = std::chrono::steady_clock::now();
  ProgressLine progress(err, writes_to_terminal(err), "sweep", "points", indices.size());
  const std::vector<SweepPointResult> results =
      run_sweep(sweep, base, loaded.trace, indices, threads,
                [&](std::size_t done) { progress.update(done); });
  progress.finish();
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
        // A batching server's cache, when the point ran one.
        for (const Figure& f : mode.summary.figures()) {
          if (f.key == "prefix_hit_rate" || f.key == "kv_peak_utilization") {
            out << ' ' << figure_text(mode.summary, f.key);
          }
        }
        out << '\n';
      }
    }
  }
  out << "Ran " << results.size() << " points in " << fixed(seconds, 3) << " s ("
      << fixed(seconds > 0 ? static_cast<double>(results.size()) / seconds : 0, 1)
      << " points/s).\n";

  // The base as its first point runs it: a run's settings, whatever the base
  // alone leaves to the axes (a closed loop's cap), that reruns the sweep.
  nlohmann::ordered_json settings = settings_document(sweep.point_settings(base, 0), loaded);
  // Each configuration whole, so that settings.json reruns the sweep: as its
  // first point runs it (the other axes at their first values).
  for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
    std::size_t stride = 1;
    for (std::size_t b = a + 1; b < sweep.axes.size(); ++b)
      stride *= sweep.axes[b].values.size();
    std::vector<nlohmann::ordered_json> documents;
    for (std::size_t i = 0; i < sweep.axes[a].configurations.size(); ++i)
      documents.push_back(settings_document(sweep.point_settings(base, i * stride), loaded));
    sweep.axes[a].documents = std::move(documents);
  }
  folder.create();
  const std::string csv = sweep_csv(sweep, base, results);
  write_file_atomically(folder.file("sweep.csv"), csv);
  if (shard) {
    write_file_atomically(folder.file("shard.json"),
                          shard_json(sweep, settings, *shard, indices).dump(2) + "\n");
  }
  settings["sweep"] = sweep.to_json();
  add_meta(settings);
  write_file_atomically(folder.file("settings.json"), settings.dump(2) + "\n");
  // A closed loop swept over its cap: the throughput-interactivity frontier.
  std::optional<PlotScript> frontier_plot;
  if (sweep_has_frontier(sweep) && !shard) {
    const std::vector<FrontierPoint> frontier = frontier_points(sweep, results);
    write_file_atomically(folder.file("frontier.csv"), frontier_csv(frontier));
    std::size_t on = 0;
    for (const FrontierPoint& p : frontier)
      on += p.pareto ? 1 : 0;
    out << "Frontier (frontier.csv): " << frontier.size() << " points, " << on
        << " on the frontier (no other point serves more tokens a second both per GPU and per "
           "user).\n";
    if (plots) frontier_plot = frontier_plot_script(frontier);
  }
  if (plots) {
    std::string names;
    for (const std::string& name : write_sweep_plots(folder.path(), sweep, csv, err))
      names += (names.empty() ? "" : ", ") + name;
    if (frontier_plot) {
      write_plots(folder.path(), {*frontier_plot}, err);
      names += (names.empty() ? "" : ", ") + frontier_plot->name;
    }
    if (!names.empty()) out << "Plots (plots/*.gp, *.svg): " << names << ".\n";
  }
  out << "Sweep folder: " << folder.path().string() << '\n';
  return 0;
}

}  // namespace infersim
