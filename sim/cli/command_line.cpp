#include "cli/command_line.hpp"

#include <boost/program_options.hpp>

#include "cli/option_parsing.hpp"

#include <charconv>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <optional>
#include <set>

#include "calibration/hardware_model.hpp"
#include "calibration/hardware_runs.hpp"
#include "calibration/measured_comparison.hpp"
#include "calibration/measured_replay.hpp"
#include "calibration/measured_report.hpp"
#include "cli/calibrate_command.hpp"
#include "cli/capacity_command.hpp"
#include "cli/command_options.hpp"
#include "cli/data_files.hpp"
#include "cli/inspect_command.hpp"
#include "cli/merge_command.hpp"
#include "cli/presets_command.hpp"
#include "cli/run_options.hpp"
#include "cli/sweep_command.hpp"
#include "cli/validate_command.hpp"
#include "core/input_error.hpp"
#include "core/number_format.hpp"
#include "core/version.hpp"
#include "report/attribution.hpp"
#include "report/closed_loop_beside.hpp"
#include "report/console_report.hpp"
#include "report/figure_text.hpp"
#include "report/run_writer.hpp"
#include "scenario/scenario.hpp"
#include "scenario/settings.hpp"

namespace infersim {
namespace po = boost::program_options;
using nlohmann::json;

std::string utc_now_iso() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return stamp;
}

namespace {

constexpr const char* kRunUsage =
    "usage: infersim run [DEVICES [DURATION_S [SEED]]] [options]\n"
    "       infersim sweep | merge | capacity | validate | inspect | calibrate | presets "
    "[options]\n"
    "       infersim --version | --help\n"
    "\n"
    "commands:\n"
    "  run       replay a recorded trace on the edge model, beside Poisson arrivals at\n"
    "            its mean rate, and write a run folder\n"
    "  sweep     run a grid of knob values (or one shard of it) and write sweep.csv\n"
    "  merge     join the shards of a sweep into the sweep.csv the whole sweep writes\n"
    "  capacity  find the smallest knob value whose run meets a target, by bisection,\n"
    "            or the cheapest fleet of mixed GPUs that does (--vary fleet)\n"
    "  validate  check the engine against queueing theory (M/M/c, M/D/1)\n"
    "  inspect   profile a trace's workload (rate, burstiness, sizes, block reuse)\n"
    "  calibrate fit the cost knobs to a benchmark's per-request measurements (aiperf,\n"
    "            vLLM, CSV) and write a settings file\n"
    "  presets   derive a preset from a GPU's datasheet and a model's architecture, fit\n"
    "            the efficiency factors on measured runs, validate them leaving one out\n"
    "\n"
    "`infersim run --help` lists the run options; `infersim sweep --help` (merge,\n"
    "capacity) the others.\n";

// The mode flags are shorthands for --mode; at most one of them may be given.
std::optional<std::string> mode_from_flags(const po::variables_map& vm) {
  std::vector<std::string> given;
  for (const char* flag : {"mode", "compare", "recorded", "synthetic"}) {
    if (vm.count(flag)) given.push_back(std::string("--") + flag);
  }
  if (given.size() > 1) {
    throw InputError("", 0, given[1], "conflicts with " + given[0] + "; give one mode");
  }
  if (vm.count("compare")) return "compare";
  if (vm.count("recorded")) return "recorded";
  if (vm.count("synthetic")) return "synthetic";
  if (vm.count("mode")) return vm["mode"].as<std::string>();
  return std::nullopt;
}

// What a closed loop sends (MODEL.md section 4b).
std::string closed_loop_line(const Settings& s, const GeneratedRequests& generated) {
  std::string line = std::string(s.max_concurrency ? "Closed loop: " : "Benchmark client: ") +
                     std::to_string(generated.tasks.size()) + " requests ";
  if (s.dataset == "random") {
    const LengthRange in = length_range(s.random_input_len, s.random_range_ratio);
    const LengthRange out = length_range(s.random_output_len, s.random_range_ratio);
    line += "of vLLM's random dataset (input " + std::to_string(in.low) + " to " +
            std::to_string(in.high) + " tokens, output " + std::to_string(out.low) + " to " +
            std::to_string(out.high) + ", seed " + std::to_string(s.seed) + ")";
  } else {
    line += "of the trace in its order, its instants ignored";
  }
  line += s.max_concurrency ? ", at most " + std::to_string(*s.max_concurrency) + " in flight"
                            : ", no cap (a client a request)";
  if (s.num_warmups > 0) {
    line += ", after " + std::to_string(s.num_warmups) + " warm-ups (copies of the first)";
  }
  line += s.request_rate ? ", paced at " + shortest(*s.request_rate) + " requests/s"
                         : (s.max_concurrency ? ", unpaced" : ", all sent at once");
  return line + ".";
}

// Says on the console what each mode replays, as the scenario goes.
class ConsoleProgress : public ScenarioProgress {
 public:
  ConsoleProgress(std::ostream& out, const Settings& settings) : out_(out), settings_(settings) {}
  void replaying(const GeneratedRequests& generated) override {
    out_ << (settings_.client_loop() ? closed_loop_line(settings_, generated)
                                     : replay_line(generated))
         << '\n'
         << std::flush;
  }
  void drew(const ModeResult& synthetic, const TraceRates& rates) override {
    out_ << synthetic_line(synthetic, rates, settings_.synthetic_arrivals,
                           settings_.synthetic_sizes)
         << '\n';
  }
  void drew_retimed(const ModeResult& retimed, const TraceRates& rates) override {
    out_ << synthetic_line(retimed, rates, settings_.synthetic_arrivals, "recorded") << '\n';
  }

 private:
  std::ostream& out_;
  const Settings& settings_;
};

int run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options("run options");
  options.add_options()("help,h", "show this help")("settings", po::value<std::string>(),
                                                    "settings file (JSON); flags override it")(
      "mode", po::value<std::string>(),
      "compare (recorded and synthetic side by side), recorded or synthetic (compare)")(
      "compare", "the same as --mode compare")("recorded", "the same as --mode recorded")(
      "synthetic", po::value<std::string>()->implicit_value("mean"),
      "the same as --mode synthetic; =mean or =empirical sets --sizes")(
      "jobs,j", po::value<std::string>(),
      "threads for the synthetic replications (default: the cores this process may use); results "
      "do not "
      "depend on it")("output", po::value<std::string>(),
                      "run folder (default output/<YYYYmmdd-HHMMSS>-<mode>)")(
      "force", "write into --output even if it holds files")(
      "speedup", po::value<std::string>(), "replay X times as fast (the same as --time-scale 1/X)")(
      "filter", po::value<std::vector<std::string>>()->composing(),
      "keep only the CSV rows where COLUMN=VALUE (repeatable; all must hold)")(
      "measured", po::value<std::string>(),
      "the benchmark the trace was measured by (aiperf JSONL, vLLM JSON or CSV), matched to the "
      "replay by order: writes measured.csv and the TTFT and E2E mean absolute % errors; with "
      "--server batching also a measured run folder (requests.jsonl, meta.json), replayed at the "
      "engine's arrivals against --trace, its workload: the TTFT, TPOT and latency table")(
      "preset", po::value<std::string>(),
      "a model preset, settings/presets/NAME.json, under --settings and the flags");
  add_name_option(options, "<mode>");
  for (const KnobFlag& flag : knob_flags()) {
    if (flag.kind == KnobFlag::kGoodput) {
      // vLLM's form, --goodput ttft:500 e2el:2000, or the flag repeated.
      options.add_options()(
          flag.flag, po::value<std::vector<std::string>>()->multitoken()->composing(), flag.help);
      continue;
    }
    options.add_options()(flag.flag, po::value<std::string>(), flag.help);
  }
  po::positional_options_description positional;
  positional.add("devices", 1).add("duration", 1).add("seed", 1);

  const po::variables_map vm =
      parse_options(args, options, positional,
                    {"run", "at most three positional arguments: DEVICES DURATION_S SEED",
                     " (a positional argument sets it too)"});
  if (vm.count("help")) {
    out << "usage: infersim run [DEVICES [DURATION_S [SEED]]] [options]\n\n" << options;
    return 0;
  }

  GivenKnobs given;  // the keys a file, and those a flag, sets
  Settings settings = settings_from_files(vm, given.files);
  if (const auto mode = mode_from_flags(vm)) set_setting(settings, "run.mode", *mode, "", "--mode");
  if (vm.count("synthetic")) {
    set_setting(settings, "synthetic.sizes", vm["synthetic"].as<std::string>(), "", "--synthetic");
  }
  for (const KnobFlag& flag : knob_flags()) {
    if (!vm.count(flag.flag)) continue;
    given.flags.insert(flag.key);
    set_knob_from(settings, vm, flag);
  }
  apply_trace_flags(settings, vm);
  // A measured run names its own workload; the default trace is not it.
  if (vm.count("measured") && !vm.count("trace") && !given.files.count("trace.path")) {
    refuse_folder_without_requests(vm["measured"].as<std::string>());
    settings.trace_path = workload_of_run(vm["measured"].as<std::string>());
    settings.trace_sha256.reset();
    out << "Workload: " << settings.trace_path << " (the measured run's meta.json dataset_path)\n";
  }
  refuse_other_kinds_knobs(vm, settings, given.files, {});
  // A closed loop is one mode (MODEL.md section 4b): the recorded mode's
  // requests, sent by its clients.
  if (settings.client_loop() && settings.mode != "recorded") {
    if (mode_from_flags(vm) || given.files.count("run.mode")) {
      throw InputError("", 0, key_and_flag(settings.client_key()),
                       "a benchmark's client (a closed loop, or paced with no cap) runs one "
                       "mode, its requests sent by its clients; the " +
                           settings.mode +
                           " mode draws its own instants: leave the mode out or "
                           "give --recorded");
    }
    settings.mode = "recorded";
  }
  if (settings.client_loop() && vm.count("measured")) {
    throw InputError("", 0, key_and_flag(settings.client_key()),
                     "a measured run is replayed at the engine's own instants; a benchmark's "
                     "client sends its own: leave one out");
  }
  validate_settings(settings, "");
  find_trace(settings);
  const unsigned threads = threads_from(vm);

  // A measured run (or measurement) replayed on the batching server: the
  // recorded mode at the engine's arrivals, with no network (the measured
  // instants are the engine's).
  if (vm.count("measured")) refuse_folder_without_requests(vm["measured"].as<std::string>());
  if (vm.count("measured") && settings.fleet) {
    throw InputError(settings.fleet_source, 0, "batching.fleet",
                     "a measured run is replayed on the engine it ran on, not on a fleet: leave "
                     "batching.fleet out with --measured");
  }
  const bool measured_batching =
      vm.count("measured") && server_section(settings.server_kind) == "batching";
  if (vm.count("measured") && !measured_batching &&
      is_measured_run_folder(vm["measured"].as<std::string>())) {
    throw InputError("", 0, "--measured",
                     vm["measured"].as<std::string>() +
                         " is a measured run: it is replayed on the batching server (add --server "
                         "batching)");
  }
  if (measured_batching) {
    // The replay takes the engine's own arrivals, every measured request:
    // windowing or rescaling the trace would change the simulated side and
    // not the measured one (nor the table).
    const struct {
      const char* flag;
      const char* key;
      bool set;
    } reshaping[] = {
        {"speedup", "run.time_scale", settings.time_scale != 1},
        {"time-scale", "run.time_scale", settings.time_scale != 1},
        {"start-offset", "run.start_offset_s", settings.start_offset_s.has_value()},
        {"end-offset", "run.end_offset_s", settings.end_offset_s.has_value()},
        {"max-idle-gap", "run.max_idle_gap_s", settings.max_idle_gap_s.has_value()},
        {"time-resolution", "run.time_resolution_s", settings.time_resolution_s != 0},
        {"duration", "run.duration_s", settings.duration_s.has_value()},
    };
    for (const auto& r : reshaping) {
      if (!r.set) continue;
      const bool by_flag = vm.count(r.flag) > 0;
      if (!by_flag && (std::string(r.flag) == "speedup")) continue;  // said as --time-scale
      throw InputError("", 0, by_flag ? std::string("--") + r.flag : std::string(r.key),
                       "cannot apply to --measured: the replay takes every measured request at "
                       "the engine's own instants, and the measured side cannot be windowed or "
                       "rescaled to match; leave it out");
    }
    if (settings.mode == "synthetic") {
      throw InputError("", 0, "--measured",
                       "compares the recorded replay with its measurement; the synthetic mode has "
                       "none");
    }
    settings.mode = "recorded";
    if (!settings.hops.empty()) {
      settings.hops.clear();
      out << "Measured replay: the network hops are left out (the measured instants are the "
             "engine's).\n";
    }
  }

  // Everything that can fail on input fails before a folder exists.
  RunFolder folder = RunFolder::prepare(vm.count("output") ? vm["output"].as<std::string>() : "",
                                        settings.mode, vm.count("force") > 0, folder_name(vm));
  LoadedTrace loaded = load_trace(settings, threads);
  if (loaded.trace.out_of_order > 0) {
    err << "warning: " << settings.trace_path << ": " << loaded.trace.out_of_order
        << " lines were out of timestamp order; replayed in timestamp order (stable)\n";
  }
  std::optional<Measurement> measured;
  std::optional<MeasuredSource> source;
  if (measured_batching) {
    source = load_measured_source(vm["measured"].as<std::string>(), loaded.trace, loaded.sha256,
                                  settings.batching, given);
    // A preset derived from the catalog describes its GPU and model at
    // whatever deployment the run had.
    if (vm.count("preset") && source->run_folder) {
      const HardwareCatalog catalog = load_hardware(find_hardware_folder());
      const PresetPair pair = preset_pair(vm["preset"].as<std::string>(), catalog);
      if (pair.gpu != nullptr)
        derive_at_run(source->engine, *pair.gpu, *pair.model, catalog, given);
    }
    settings.batching = source->engine.knobs;
    // With replay_turns, the run itself takes a run folder's arrivals at the
    // engine's turns, so that its outputs are the schedule set against it.
    settings.batching.engine_turn_arrivals =
        settings.batching.replay_turns && source->replay.engine_turns;
    validate_settings(settings, "");
    out << trace_line(loaded.trace) << '\n';
    out << "Measured: " << source->replay.source << ", " << source->replay.measured.size()
        << " requests at the engine's arrivals; " << source->engine.description << ".\n";
    for (const std::string& f : source->engine.facts)
      out << "  engine     " << f << '\n';
    for (const std::string& a : source->engine.assumptions)
      out << "  assumed    " << a << '\n';
  } else if (vm.count("measured")) {
    measured = read_measured_for_replay(vm["measured"].as<std::string>(), settings, loaded.trace);
  }
  if (!source) out << trace_line(loaded.trace) << '\n';
  if (settings.fleet) {
    out << "Fleet: a class's knobs come from its own keys, else its preset, else the batching "
           "section, else the defaults; a fleet-wide knob from the section, else the classes' "
           "presets when they agree (BATCHING.md section 13.1)"
        << (vm.count("preset") ? "; --preset " + text_of(vm, "preset") + " sets the section"
                               : std::string())
        << ".\n";
    for (const std::string& line : fleet_knob_lines(settings))
      out << line << '\n';
  }
  // A derived preset used with nothing measured: how far it may be.
  if (!source) {
    for (const std::string& line : preset_error_lines(settings))
      out << line << '\n';
  }
  const bool per_request = settings.per_request == "csv";
  ConsoleProgress progress(out, settings);
  const ScenarioResult result =
      source ? run_scenario(settings, source->replay.trace, per_request, threads, &progress)
             : run_scenario_taking_records(settings, loaded.trace, per_request || measured, threads,
                                           &progress);
  out << '\n' << benchmark_block(result.modes());
  std::optional<MeasuredComparison> comparison;
  if (measured) {
    comparison = compare_with_measurement(*measured, *result.recorded);
    out << measured_line(*comparison) << '\n';
  }
  out << '\n' << figures_table(result.modes()) << '\n';
  if (result.retimed && result.recorded && result.synthetic) {
    out << attribution_table(attribute(*result.recorded, *result.retimed, *result.synthetic),
                             *result.recorded, *result.retimed, *result.synthetic)
        << '\n';
  }
  if (result.closed_loop) {
    out << '\n'
        << closed_loop_beside_text(*result.recorded, *result.closed_loop,
                                   result.synthetic ? &*result.synthetic : nullptr);
  }
  out << load_warnings(result.modes());
  std::optional<MeasuredReport> report;
  if (source) {
    report = compare_replay(source->replay, replay_measured(source->replay, settings.batching),
                            source->engine);
    out << '\n' << measured_table_text(*report) << '\n' << measured_summary_text(*report);
  }

  Settings effective = settings;
  effective.trace_sha256 = loaded.sha256;
  effective.trace_format = loaded.trace.format;
  effective.timestamp_unit = loaded.trace.timestamp_unit;
  nlohmann::ordered_json document = settings_to_json(effective);
  document["meta"]["program"] = kProgramName;
  document["meta"]["version"] = kVersion;
  document["meta"]["written_at"] = utc_now_iso();
  if (source) document["meta"]["measured"] = vm["measured"].as<std::string>();
  if (source) document["meta"].erase("presets_expected_error");
  ReportOptions writing{settings.plots == "svg", &err};
  if (report) writing.sections.push_back(measured_section(*report));
  if (result.retimed) writing.retimed = &*result.retimed;
  if (result.closed_loop) {
    writing.sections.push_back(closed_loop_beside_section(
        *result.recorded, *result.closed_loop, result.synthetic ? &*result.synthetic : nullptr));
  }
  write_run(folder, document, result.modes(), per_request, writing);
  if (comparison) write_measured(folder, result, *comparison);
  out << "Run folder: " << folder.path().string() << '\n';
  return 0;
}

}  // namespace

int run_command_line(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      out << kRunUsage;
      return args.empty() ? 2 : 0;
    }
    if (args[0] == "--version") {
      out << kProgramName << ' ' << kVersion << '\n';
      return 0;
    }
    if (args[0] == "run") return run_command({args.begin() + 1, args.end()}, out, err);
    if (args[0] == "validate") {
      return run_validate_command({args.begin() + 1, args.end()}, out, err);
    }
    if (args[0] == "inspect") {
      return run_inspect_command({args.begin() + 1, args.end()}, out, err);
    }
    if (args[0] == "calibrate") {
      return run_calibrate_command({args.begin() + 1, args.end()}, out, err);
    }
    if (args[0] == "presets") {
      return run_presets_command({args.begin() + 1, args.end()}, out, err);
    }
    if (args[0] == "sweep") return run_sweep_command({args.begin() + 1, args.end()}, out, err);
    if (args[0] == "merge") return run_merge_command({args.begin() + 1, args.end()}, out, err);
    if (args[0] == "capacity") {
      return run_capacity_command({args.begin() + 1, args.end()}, out, err);
    }
    const auto near = nearest(args[0], {"run", "sweep", "merge", "capacity", "validate", "inspect",
                                        "calibrate", "presets", "--version", "--help"});
    err << "infersim: unknown command '" << args[0] << "'"
        << (near ? " (did you mean " + *near + "?)" : std::string()) << "\n"
        << kRunUsage;
    return 2;
  } catch (const InputError& e) {
    err << "infersim: " << e.what() << '\n';
    return 2;
  } catch (const OutputError& e) {
    err << "infersim: " << e.what() << '\n';
    return 1;
  } catch (const std::exception& e) {
    err << "infersim: internal error: " << e.what() << '\n';
    return 3;
  }
}

}  // namespace infersim
