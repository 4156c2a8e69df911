#include "cli/calibrate_command.hpp"

#include <boost/program_options.hpp>

#include "cli/option_parsing.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>

#include "calibration/batching_calibration.hpp"
#include "calibration/calibration.hpp"
#include "calibration/hardware_model.hpp"
#include "calibration/hardware_runs.hpp"
#include "calibration/measured_replay.hpp"
#include "calibration/measured_report.hpp"
#include "calibration/measurement_reader.hpp"
#include "cli/command_options.hpp"
#include "cli/data_files.hpp"
#include "cli/run_options.hpp"
#include "core/input_error.hpp"
#include "core/version.hpp"
#include "report/run_folder.hpp"
#include "scenario/scenario.hpp"
#include "scenario/settings.hpp"

namespace infersim {
namespace po = boost::program_options;

namespace {

constexpr const char* kCalibrateUsage =
    "usage: infersim calibrate --from FILE --output SETTINGS.json [--mips-per-core M]\n"
    "                          [--format aiperf|vllm|csv|auto] [--force]\n"
    "       infersim calibrate --server batching --measured RUN_DIR|FILE --trace WORKLOAD\n"
    "                          [--output SETTINGS.json] [--preset NAME] [--settings FILE]\n"
    "                          [--figures-weight W] [--max-num-seqs N ...] [-j N] [--force]\n";

double parse_mips(const std::string& text) {
  double value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(value) ||
      !(value > 0)) {
    throw InputError("", 0, "--mips-per-core", "expected a number above 0, got '" + text + "'");
  }
  return value;
}

// `calibrate --server batching`: the step costs fitted to a measured run.
int run_batching_calibrate(const po::variables_map& vm, std::ostream& out, std::ostream& err) {
  if (vm.count("from") || vm.count("format") || vm.count("mips-per-core")) {
    throw InputError("", 0,
                     vm.count("from")     ? "--from"
                     : vm.count("format") ? "--format"
                                          : "--mips-per-core",
                     "fits the edge server; the batching server is fitted with --measured");
  }
  if (!vm.count("measured")) {
    throw InputError("", 0, "--measured",
                     "missing: name the measured run folder (requests.jsonl, meta.json) or the "
                     "measurement file");
  }
  if (!vm.count("trace")) {
    throw InputError("", 0, "--trace",
                     "missing: name the workload the run replayed (the token-id JSONL whose line "
                     "i is the run's bench-i)");
  }
  GivenKnobs given;  // the keys a file, and those a flag, sets
  Settings settings = settings_from_files(vm, given.files);
  settings.server_kind = "batching";
  for (const KnobFlag& flag : knob_flags()) {
    if (std::string(flag.key).rfind("batching.", 0) != 0 || !vm.count(flag.flag)) continue;
    set_knob(settings, flag, vm[flag.flag].as<std::string>());
    given.flags.insert(flag.key);
  }
  set_setting(settings, "trace.path", vm["trace"].as<std::string>(), "", "--trace");
  settings.trace_sha256.reset();
  validate_settings(settings, "");
  if (settings.fleet) {
    throw InputError(settings.fleet_source, 0, "batching.fleet",
                     "calibrate fits one engine's step costs: leave batching.fleet out");
  }
  const std::string measured = vm["measured"].as<std::string>();
  const std::string output =
      vm.count("output")
          ? vm["output"].as<std::string>()
          : "output/" + std::filesystem::path(measured).filename().string() + "-fit.json";
  std::error_code error;
  if (std::filesystem::exists(output, error) && !vm.count("force")) {
    throw InputError("", 0, "--output", output + " exists; give --force to overwrite it");
  }
  const unsigned threads = threads_from(vm);
  const double figures_weight = figures_weight_from(vm);

  const LoadedTrace workload = load_trace(settings);
  MeasuredSource source =
      load_measured_source(measured, workload.trace, workload.sha256, settings.batching, given);
  source.replay.figures_weight = figures_weight;
  // A GPU and a model the catalog knows (meta.json's device and model, --gpu,
  // or the preset's pair) give the KV blocks the GPU's memory holds, the
  // experts a MoE step reads and a physical start for the fit.
  if (source.run_folder) {
    const HardwareCatalog catalog = load_hardware(find_hardware_folder());
    const ModelSpec* model = catalog.model_by_id(source.engine.model);
    const GpuSpec* gpu = source.engine.device_name.empty()
                             ? nullptr
                             : catalog.gpu_by_device(source.engine.device_name);
    if (gpu == nullptr && vm.count("gpu")) gpu = &catalog.gpu(vm["gpu"].as<std::string>(), "--gpu");
    if (vm.count("preset")) {
      const PresetPair pair = preset_pair(vm["preset"].as<std::string>(), catalog);
      if (model == nullptr) model = pair.model;
      if (gpu == nullptr) gpu = pair.gpu;
    }
    if (model != nullptr && gpu != nullptr) {
      derive_at_run(source.engine, *gpu, *model, catalog, given);
    } else if (!source.engine.kv_blocks_known) {
      source.engine.assumptions.push_back(
          std::string("kv_blocks: the GPU is not known (") +
          (model == nullptr ? "meta.json's model is not in settings/hardware/models.json"
                            : "give --gpu, or a --preset") +
          "), so the fit bounds them from the run's own peak");
    }
  }
  BatchingFitOptions options;
  options.threads = threads;
  const BatchingFit fit = fit_batching(source.replay, source.engine, options);
  out << batching_fit_report(source, fit) << '\n';
  const MeasuredReport report =
      compare_replay(source.replay, replay_measured(source.replay, fit.knobs), source.engine);
  out << measured_table_text(report) << '\n' << measured_summary_text(report);

  // The file serves any trace: the format is found anew, no digest pinned
  // (meta says what it was fitted on).
  Settings fitted = batching_fit_settings(settings, fit);
  fitted.trace_sha256.reset();
  fitted.trace_format = "auto";
  // Fitted on a measured run: no preset's expected error applies to it.
  fitted.preset_errors.clear();
  nlohmann::ordered_json document = settings_to_json(fitted);
  document["meta"]["calibrated_on_trace"] = {{"path", workload.trace.path},
                                             {"format", workload.trace.format},
                                             {"sha256", workload.sha256}};
  document["meta"]["program"] = kProgramName;
  document["meta"]["version"] = kVersion;
  document["meta"]["calibrated_from"] = measured;
  document["meta"]["loss"] = fit.loss.total;
  if (figures_weight > 0) document["meta"]["figures_weight"] = figures_weight;
  document["meta"]["engine"] = source.engine.description;
  const std::filesystem::path parent = std::filesystem::path(output).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  write_file_atomically(output, document.dump(2) + "\n");
  out << "Settings: " << output << '\n';
  (void)err;
  return 0;
}

}  // namespace

int run_calibrate_command(const std::vector<std::string>& args, std::ostream& out,
                          std::ostream& err) {
  po::options_description options("calibrate options");
  options.add_options()("help,h", "show this help")(
      "from", po::value<std::string>(),
      "the measurement: aiperf profile_export.jsonl, a vllm bench serve result JSON saved "
      "with --save-detailed, or CSV input_tokens,output_tokens,ttft_s,e2e_s")(
      "format", po::value<std::string>(), "aiperf, vllm, csv or auto (auto)")(
      "mips-per-core", po::value<std::string>(),
      "the speed the knobs are expressed at, MIPS (60000, the settings default)")(
      "output", po::value<std::string>(),
      "the settings file to write (batching: default output/<RUN_DIR's name>-fit.json)")(
      "force", "overwrite the settings file if it exists")(
      "measured", po::value<std::string>(),
      "batching: the measured run folder (requests.jsonl, meta.json, timeseries.csv) or an "
      "aiperf / vLLM bench / CSV measurement")(
      "trace", po::value<std::string>(),
      "batching: the workload the run replayed (token-id JSONL, line i = bench-i; for a "
      "measurement file, the trace it measured, matched by order)")(
      "settings", po::value<std::string>(), "batching: base settings file (JSON)")(
      "preset", po::value<std::string>(),
      "batching: a model preset (settings/presets/NAME.json) as the base")(
      "jobs,j", po::value<std::string>(), "batching: threads for the fit's starts")(
      "figures-weight", po::value<std::string>(),
      "batching: the loss's weight on the table's headline figures (TTFT, TPOT, latency: mean, "
      "median, p90, p99), beside the requests' own errors (0, none)")(
      "gpu", po::value<std::string>(),
      "batching: the run's GPU (settings/hardware/gpus.json) when meta.json does not record it: "
      "its memory gives the KV blocks");
  for (const KnobFlag& flag : knob_flags()) {
    if (std::string(flag.key).rfind("batching.", 0) == 0 || std::string(flag.flag) == "server") {
      options.add_options()(flag.flag, po::value<std::string>(), flag.help);
    }
  }

  const po::variables_map vm = parse_options(args, options, {}, {"calibrate", "", ""});
  const bool batching = vm.count("measured") > 0 ||
                        (vm.count("server") && vm["server"].as<std::string>() == "batching");
  if (vm.count("server") && vm["server"].as<std::string>() != "batching" &&
      vm["server"].as<std::string>() != "edge") {
    throw InputError("", 0, "--server", "must be edge or batching");
  }
  if (batching && !vm.count("help")) {
    if (vm.count("server") && vm["server"].as<std::string>() == "edge") {
      throw InputError("", 0, "--measured", "fits the batching server; --server edge takes --from");
    }
    return run_batching_calibrate(vm, out, err);
  }
  for (const char* flag : {"trace", "settings", "preset", "jobs", "figures-weight"}) {
    if (vm.count(flag)) {
      throw InputError("", 0, std::string("--") + flag,
                       "applies to the batching server (--server batching --measured ...)");
    }
  }
  for (const KnobFlag& flag : knob_flags()) {
    if (std::string(flag.key).rfind("batching.", 0) == 0 && vm.count(flag.flag)) {
      throw InputError("", 0, std::string("--") + flag.flag,
                       "applies to the batching server (--server batching --measured ...)");
    }
  }
  if (vm.count("help")) {
    out << kCalibrateUsage
        << "\nFits TTFT = a + b x input tokens by least squares and the mean decode time\n"
           "per token after the first, (e2e - ttft) / (output - 1); at M MIPS per core\n"
           "b x M is mi_per_context_token and the decode time x M mi_per_generated_token.\n"
           "The intercept beyond one decode step becomes a fixed-latency network hop. The\n"
           "settings file holds every key, at its default unless fitted.\n\n"
           "With --server batching it fits the batching server's step costs (c0, cp, cq, cd,\n"
           "ckv; and the KV blocks when the run does not record them) to a measured run by\n"
           "replaying it inside the fit, prints the fit and the measured-against-simulated\n"
           "table, and writes a settings file that `infersim run --settings` takes.\n\n"
        << options;
    return 0;
  }
  if (!vm.count("from")) throw InputError("", 0, "--from", "missing: name the measurement file");
  if (!vm.count("output")) {
    throw InputError("", 0, "--output", "missing: name the settings file to write");
  }
  const std::string from = vm["from"].as<std::string>();
  const std::string output = vm["output"].as<std::string>();
  const std::string format = vm.count("format") ? vm["format"].as<std::string>() : "auto";
  if (format != "auto" && format != "aiperf" && format != "vllm" && format != "csv") {
    throw InputError("", 0, "--format", "expected aiperf, vllm, csv or auto, got '" + format + "'");
  }
  const double mips = vm.count("mips-per-core") ? parse_mips(vm["mips-per-core"].as<std::string>())
                                                : Settings{}.mips_per_core;
  std::error_code error;
  if (std::filesystem::exists(output, error) && !vm.count("force")) {
    throw InputError("", 0, "--output", output + " exists; give --force to overwrite it");
  }

  const Measurement measurement = read_measurement(from, format);
  const Calibration calibration = calibrate(measurement, mips);
  out << calibration_report(measurement, calibration);
  for (const std::string& w : calibration.warnings)
    err << "warning: " << w << '\n';

  nlohmann::ordered_json document = settings_to_json(calibrated_settings(calibration));
  document["meta"]["program"] = kProgramName;
  document["meta"]["version"] = kVersion;
  document["meta"]["calibrated_from"] = from;
  write_file_atomically(output, document.dump(2) + "\n");
  out << "Settings: " << output << '\n';
  return 0;
}

}  // namespace infersim
