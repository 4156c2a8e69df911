#include "cli/presets_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "calibration/deployment_check.hpp"
#include "calibration/hardware_model.hpp"
#include "calibration/hardware_runs.hpp"
#include "calibration/kernel_step_cost.hpp"
#include "calibration/kernel_tables.hpp"
#include "calibration/measured_report.hpp"
#include "cli/command_options.hpp"
#include "cli/data_files.hpp"
#include "cli/option_parsing.hpp"
#include "core/input_error.hpp"
#include "report/run_folder.hpp"
#include "scenario/settings.hpp"

namespace infersim {

namespace po = boost::program_options;

namespace {

constexpr const char* kPresetsUsage =
    "usage: infersim presets derive --gpu GPU --model MODEL [--tp N] [--dp N] [--dtype bf16|fp8]\n"
    "                               [--max-num-seqs N] [--max-num-batched-tokens N]\n"
    "                               [--step-costs datasheet|tables [--overhead S]]\n"
    "       infersim presets derive --all --write DIR [--step-costs datasheet|tables]\n"
    "       infersim presets fit --measured RUN [--measured RUN ...] [--gpu GPU]\n"
    "                            [--form roofline|sum] [--replay-turns on|off] [--write FILE]\n"
    "                            [--figures-weight W] [-j N]\n"
    "       infersim presets predict --measured RUN [--measured RUN ...] [--gpu GPU]\n"
    "                            [--replay-turns on|off] [--write FILE]\n"
    "       infersim presets validate --measured RUN [--measured RUN ...] [--gpu GPU]\n"
    "                            [--form roofline|sum] [--replay-turns on|off]\n"
    "                            [--figures-weight W] [--step-costs datasheet|tables] [-j N]\n"
    "       infersim presets kernels [--gpu GPU]\n"
    "       infersim presets deployments --deployments CSV [--gpu GPU] [--model MODEL]\n"
    "                            (the catalog's names, or the file's own)\n"
    "                            [--step-costs datasheet|tables [--overhead S]]\n"
    "                            [--write FILE] [-j N]\n"
    "GPUs and models are those of settings/hardware/ (gpus.json, models.json); the\n"
    "factors are settings/hardware/efficiency.json's; predict --write writes the runs'\n"
    "errors as held-out evidence (settings/hardware/held_out.json). kernels reads the\n"
    "measured kernel tables of settings/kernels/ and tells how well they interpolate;\n"
    "--step-costs tables composes a step from them (BATCHING.md section 5c), the\n"
    "engine's fixed part a step --overhead seconds (0).\n"
    "deployments predicts each measured deployment of a CSV as AIConfigurator's\n"
    "silicon_sample_vllm.csv holds them (a closed loop of C clients at fixed lengths) on\n"
    "the preset derived for it, and tells the error of its mean TTFT and TPOT.\n";

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", v);
  return text;
}

std::int64_t whole_flag(const po::variables_map& vm, const char* flag, std::int64_t least) {
  const std::string text = vm[flag].as<std::string>();
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || v < least) {
    throw InputError(
        "", 0, std::string("--") + flag,
        "expected a whole number of at least " + std::to_string(least) + ", got '" + text + "'");
  }
  return v;
}

// --step-costs: the kernel tables' (section 5c) or the datasheet's.
bool step_costs_from_tables(const po::variables_map& vm) {
  if (!vm.count("step-costs")) return false;
  const std::string how = vm["step-costs"].as<std::string>();
  if (how != "tables" && how != "datasheet") {
    throw InputError("", 0, "--step-costs", "expected tables or datasheet, got '" + how + "'");
  }
  return how == "tables";
}

bool has_kernel_tables(const GpuSpec& gpu) {
  return std::filesystem::exists(std::filesystem::path(find_kernels_folder()) / gpu.name /
                                 "gemm.csv");
}

// The GPU's kernel tables of settings/kernels/, or an error naming --gpu.
KernelTables kernels_of(const GpuSpec& gpu) {
  const std::filesystem::path folder = std::filesystem::path(find_kernels_folder()) / gpu.name;
  if (!std::filesystem::exists(folder / "gemm.csv")) {
    throw InputError("", 0, "--step-costs",
                     "no kernel tables for " + gpu.name + " in " + find_kernels_folder() +
                         " (its presets keep the datasheet's step costs)");
  }
  return KernelTables::load(folder.string());
}

// --overhead: a step's fixed part beside the kernel tables, in seconds.
double overhead_of(const po::variables_map& vm) {
  if (!vm.count("overhead")) return 0;
  const std::string text = vm["overhead"].as<std::string>();
  std::size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(v >= 0 && v <= 1)) {
    throw InputError("", 0, "--overhead", "expected seconds from 0 to 1, got '" + text + "'");
  }
  return v;
}

int derive(const po::variables_map& vm, std::ostream& out) {
  const HardwareCatalog catalog = load_hardware(find_hardware_folder());
  if (vm.count("all")) {
    if (!vm.count("write")) throw InputError("", 0, "--write", "missing: --all writes a folder");
    const std::filesystem::path folder = vm["write"].as<std::string>();
    std::filesystem::create_directories(folder);
    for (const auto& [gname, gpu] : catalog.gpus) {
      if (step_costs_from_tables(vm) && !has_kernel_tables(gpu)) {
        out << gname << ": no kernel tables, none written\n";
        continue;
      }
      for (const auto& [mname, model] : catalog.models) {
        Deployment d;
        d.tensor_parallel = least_tensor_parallel(gpu, model, d);
        if (d.tensor_parallel == 0) continue;
        const bool tables = step_costs_from_tables(vm);
        const BatchingKnobs k = tables ? derive_table_knobs(gpu, model, d, catalog.efficiency,
                                                            kernels_of(gpu), overhead_of(vm))
                                       : derive_knobs(gpu, model, d, catalog.efficiency);
        const std::string path = (folder / (gname + "-" + mname + ".json")).string();
        write_file_atomically(path, preset_document(gpu, model, d, k, catalog).dump(2) + "\n");
        out << path << ": TP " << d.tensor_parallel << ", " << k.kv_blocks << " KV blocks\n";
      }
    }
    return 0;
  }
  for (const char* flag : {"gpu", "model"}) {
    if (!vm.count(flag)) throw InputError("", 0, std::string("--") + flag, "missing");
  }
  const GpuSpec& gpu = catalog.gpu(vm["gpu"].as<std::string>(), "--gpu");
  const ModelSpec& model = catalog.model(vm["model"].as<std::string>(), "--model");
  Deployment d;
  if (vm.count("max-num-seqs")) d.max_num_seqs = whole_flag(vm, "max-num-seqs", 1);
  if (vm.count("max-num-batched-tokens")) {
    d.max_num_batched_tokens = whole_flag(vm, "max-num-batched-tokens", 1);
  }
  if (vm.count("dp")) d.data_parallel = whole_flag(vm, "dp", 1);
  if (vm.count("dtype")) d.dtype = vm["dtype"].as<std::string>();
  d.tensor_parallel =
      vm.count("tp") ? whole_flag(vm, "tp", 1) : least_tensor_parallel(gpu, model, d);
  if (d.tensor_parallel == 0) {
    throw InputError("", 0, "--tp",
                     model.name + " leaves less than " + std::to_string(kLeastKvTokens) +
                         " tokens of KV cache on up to 8 " + gpu.name + "s");
  }
  const BatchingKnobs k =
      step_costs_from_tables(vm)
          ? derive_table_knobs(gpu, model, d, catalog.efficiency, kernels_of(gpu), overhead_of(vm))
          : derive_knobs(gpu, model, d, catalog.efficiency);
  const std::string text = preset_document(gpu, model, d, k, catalog).dump(2) + "\n";
  if (vm.count("write")) {
    write_file_atomically(vm["write"].as<std::string>(), text);
    out << vm["write"].as<std::string>() << '\n';
  } else {
    out << text;
  }
  return 0;
}

std::vector<HardwareRunSource> runs_of(const po::variables_map& vm,
                                       const HardwareCatalog& catalog) {
  if (!vm.count("measured")) {
    throw InputError("", 0, "--measured", "missing: name at least one measured run folder");
  }
  const std::optional<std::string> gpu =
      vm.count("gpu") ? std::optional<std::string>(vm["gpu"].as<std::string>()) : std::nullopt;
  bool roofline = catalog.efficiency.roofline;
  if (vm.count("form")) {
    const std::string form = vm["form"].as<std::string>();
    if (form != "roofline" && form != "sum") {
      throw InputError("", 0, "--form", "must be roofline or sum, not '" + form + "'");
    }
    roofline = form == "roofline";
  }
  bool turns = false;
  if (vm.count("replay-turns")) {
    const std::string text = vm["replay-turns"].as<std::string>();
    if (text != "on" && text != "off") {
      throw InputError("", 0, "--replay-turns", "expected on or off, got '" + text + "'");
    }
    turns = text == "on";
  }
  const double figures_weight = figures_weight_from(vm);
  std::vector<HardwareRunSource> runs;
  for (const std::string& dir : vm["measured"].as<std::vector<std::string>>()) {
    runs.push_back(load_hardware_run(dir, catalog, gpu, std::nullopt, roofline));
    // Every replay of the run: with the factors' costs and its own fit's.
    runs.back().knobs.replay_turns = turns;
    runs.back().source.engine.knobs.replay_turns = turns;
    runs.back().source.replay.figures_weight = figures_weight;
    if (step_costs_from_tables(vm)) {
      HardwareRunSource& r = runs.back();
      r.table = compose_step_table(kernels_of(r.gpu), r.gpu, r.model, r.deployment,
                                   gemm_table_dtype(r.deployment));
    }
  }
  return runs;
}

std::string factors_text(const Efficiency& e) {
  return "overhead " + number(e.overhead_s * 1e3) + " ms, weights " + number(e.weights) + ", kv " +
         number(e.kv) + ", compute " + number(e.compute) + ", attention " + number(e.attention) +
         ", link " + number(e.link);
}

int fit(const po::variables_map& vm, const std::vector<std::string>& args, std::ostream& out) {
  const HardwareCatalog catalog = load_hardware(find_hardware_folder());
  const std::vector<HardwareRunSource> runs = runs_of(vm, catalog);
  BatchingFitOptions options;
  options.threads = threads_from(vm);
  EfficiencyFit fit = fit_efficiency(hardware_runs(runs), options);
  fit.factors.roofline = runs.front().knobs.step_roofline;
  out << "Efficiency factors fitted on " << runs.size() << " run" << (runs.size() == 1 ? "" : "s")
      << " (" << fit.replays << " replays, " << number(fit.seconds)
      << " s): " << factors_text(fit.factors) << ".\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    out << "\n"
        << runs[i].name << " (" << runs[i].gpu.name << ", " << runs[i].model.name << ", TP "
        << runs[i].deployment.tensor_parallel << ", " << runs[i].knobs.replicas
        << " replica(s)), loss " << number(fit.losses[i].total) << " (in-sample):\n";
    out << measured_table_text(predict_run(runs[i], fit.factors));
  }
  if (vm.count("write")) {
    nlohmann::ordered_json doc;
    doc["meta"]["what"] =
        "Shares of the datasheet roofs a vLLM engine reaches, and its fixed overhead a step, "
        "fitted by infersim presets fit";
    std::string names;
    for (const HardwareRunSource& r : runs)
      names += (names.empty() ? "" : ", ") + r.name;
    doc["fitted_on"] = names;
    std::string command = "infersim presets";
    for (const std::string& a : args)
      command += " " + a;
    doc["command"] = command;
    doc["form"] = runs.front().knobs.step_roofline ? "roofline" : "sum";
    if (runs.size() >= 2) {
      // How far a run lands when the others alone fit the factors.
      const std::vector<LeaveOneOut> rows = leave_one_out(runs, fit.factors, options);
      const std::map<std::string, double> expected = expected_error_pct(rows);
      doc["expected_error_pct"] = expected;
      doc["expected_error_from"] =
          "leaving one run out: the mean |error| of each run's TTFT, TPOT and latency (mean, "
          "median, p90, p99) predicted from factors fitted on the others";
      // Each run's own, for the presets of its GPU and model family.
      std::vector<ErrorEvidence> by_run;
      for (std::size_t i = 0; i < rows.size(); ++i)
        by_run.push_back(
            {rows[i].run, runs[i].gpu.name, runs[i].model.name, error_pct_of(rows[i].predicted)});
      doc["expected_error_by_run"] = error_evidence_json(by_run);
      out << "\nLeaving one run out, mean |error|: TTFT " << number(expected.at("ttft"))
          << " %, TPOT " << number(expected.at("tpot")) << " %, latency "
          << number(expected.at("latency")) << " %.\n";
    }
    doc["factors"] = {{"overhead_s", fit.factors.overhead_s},
                      {"weights", fit.factors.weights},
                      {"kv", fit.factors.kv},
                      {"compute", fit.factors.compute},
                      {"attention", fit.factors.attention},
                      {"link", fit.factors.link}};
    write_file_atomically(vm["write"].as<std::string>(), doc.dump(2) + "\n");
    out << "\nFactors: " << vm["write"].as<std::string>() << '\n';
  }
  return 0;
}

// The catalog's factors (the presets') against runs nothing was fitted on.
int predict(const po::variables_map& vm, const std::vector<std::string>& args, std::ostream& out) {
  if (vm.count("figures-weight")) {
    throw InputError("", 0, "--figures-weight",
                     "applies to fit and validate (predict fits nothing)");
  }
  const HardwareCatalog catalog = load_hardware(find_hardware_folder());
  const std::vector<HardwareRunSource> runs = runs_of(vm, catalog);
  out << "Predicted from settings/hardware/efficiency.json ("
      << (catalog.efficiency_note.empty() ? "no note" : catalog.efficiency_note)
      << "): " << factors_text(catalog.efficiency) << ".\n";
  for (const HardwareRunSource& r : runs) {
    out << "\n"
        << r.name << " (" << r.gpu.name << ", " << r.model.name << ", TP "
        << r.deployment.tensor_parallel << ", KV blocks " << r.knobs.kv_blocks
        << (r.kv_blocks_recorded ? " as recorded; derived " : " derived; ") << r.kv_blocks_derived
        << "):\n"
        << measured_table_text(predict_run(r, catalog.efficiency));
  }
  if (vm.count("write")) {
    // Runs nothing was fitted on, as the presets' evidence (held_out.json).
    std::vector<ErrorEvidence> held;
    for (const HardwareRunSource& r : runs)
      held.push_back(
          {r.name, r.gpu.name, r.model.name, error_pct_of(predict_run(r, catalog.efficiency))});
    nlohmann::ordered_json doc;
    doc["meta"]["what"] =
        "Runs held out of every fit, predicted from efficiency.json's factors: the mean |error| "
        "in percent of each run's TTFT, TPOT and latency (mean, median, p90, p99); the expected "
        "error of a preset whose GPU and model family no fitted run covers";
    std::string command = "infersim presets";
    for (const std::string& a : args)
      command += " " + a;
    doc["meta"]["command"] = command;
    doc["runs"] = error_evidence_json(held);
    write_file_atomically(vm["write"].as<std::string>(), doc.dump(2) + "\n");
    out << "\nHeld-out evidence: " << vm["write"].as<std::string>() << '\n';
  }
  return 0;
}

int validate(const po::variables_map& vm, std::ostream& out) {
  const HardwareCatalog catalog = load_hardware(find_hardware_folder());
  const std::vector<HardwareRunSource> runs = runs_of(vm, catalog);
  if (runs.size() < 2) {
    throw InputError("", 0, "--measured", "leaving one run out needs at least two runs");
  }
  BatchingFitOptions options;
  options.threads = threads_from(vm);
  if (step_costs_from_tables(vm)) {
    std::vector<const HardwareRunSource*> all;
    for (const HardwareRunSource& r : runs)
      all.push_back(&r);
    const OverheadFit every = fit_step_overhead(all);
    const std::vector<LeaveOneOut> rows = leave_one_out_tables(runs, every.overhead_s, options);
    for (const LeaveOneOut& r : rows)
      out << r.run << ": the kernel tables and a step's fixed part fitted on the others: "
          << number(r.factors.overhead_s * 1e3) << " ms.\n";
    out << "\nPredicted from the kernel tables (settings/kernels/) with nothing fitted on the "
           "run, against the tables with the fixed part fitted on every run ("
        << number(every.overhead_s * 1e3) << " ms, in sample) and the in-sample fit:\n\n"
        << leave_one_out_table(rows, "fixed part fitted on every run (in sample)");
    return 0;
  }
  const std::vector<LeaveOneOut> rows = leave_one_out(runs, catalog.efficiency, options);
  for (const LeaveOneOut& r : rows)
    out << r.run << ": fitted on the others: " << factors_text(r.factors) << ".\n";
  out << "\nPredicted with nothing fitted on the run, against the preset's factors ("
      << (catalog.efficiency_note.empty() ? "settings/hardware/efficiency.json"
                                          : catalog.efficiency_note)
      << ") and the in-sample fit:\n\n"
      << leave_one_out_table(rows);
  return 0;
}

// The kernel tables of each GPU (or --gpu's): their rows and how well they
// interpolate, each measured point predicted with itself held out.
int kernels(const po::variables_map& vm, std::ostream& out) {
  const std::filesystem::path folder = find_kernels_folder();
  std::vector<std::string> gpus;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "gemm.csv"))
      gpus.push_back(entry.path().filename().string());
  }
  std::sort(gpus.begin(), gpus.end());
  if (vm.count("gpu")) {
    const std::string gpu = vm["gpu"].as<std::string>();
    if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end()) {
      std::string names;
      for (const std::string& g : gpus)
        names += (names.empty() ? "" : ", ") + g;
      throw InputError("", 0, "--gpu",
                       "no kernel tables for '" + gpu + "' in " + folder.string() +
                           "; there are tables for " + names);
    }
    gpus = {gpu};
  }
  out << "Kernel tables (" << folder.string()
      << "): each measured point predicted linearly from its two neighbours on one axis, "
         "itself held out (across twice the spacing the tables have), points under 5 us left "
         "out; |error| in %.\n";
  char line[160];
  std::snprintf(line, sizeof(line), "%-13s %-21s %-20s %8s %8s %8s\n", "gpu", "table", "axis",
                "points", "median", "p90");
  out << line;
  for (const std::string& gpu : gpus) {
    const KernelTables tables = KernelTables::load((folder / gpu).string());
    for (const HoldOutError& e : hold_out_errors(tables)) {
      if (e.points == 0) continue;
      std::snprintf(line, sizeof(line), "%-13s %-21s %-20s %8zu %8.2f %8.2f\n", gpu.c_str(),
                    e.table.c_str(), e.axis.c_str(), e.points, e.median_pct, e.p90_pct);
      out << line;
    }
  }
  return 0;
}

// Each measured deployment the catalog covers, predicted under its own load.
int deployments(const po::variables_map& vm, std::ostream& out) {
  if (!vm.count("deployments")) {
    throw InputError("", 0, "--deployments",
                     "missing: the measured deployments' CSV (AIConfigurator's "
                     "silicon_sample_vllm.csv)");
  }
  const HardwareCatalog catalog = load_hardware(find_hardware_folder());
  std::vector<DeploymentRow> rows = read_deployments(vm["deployments"].as<std::string>());
  const std::size_t read = rows.size();
  DeploymentOptions options;
  options.threads = threads_from(vm);
  if (step_costs_from_tables(vm)) {
    options.kernels_folder = find_kernels_folder();
    options.overhead_s = overhead_of(vm);
  }
  // --gpu and --model by the catalog's names, or the file's own.
  std::erase_if(rows, [&](const DeploymentRow& r) {
    const auto given = [&](const char* flag) { return vm[flag].as<std::string>(); };
    const bool gpu =
        !vm.count("gpu") || catalog_gpu_name(r.system) == given("gpu") || r.system == given("gpu");
    const bool model = !vm.count("model") ||
                       catalog_model_name(catalog, r.model_path) == given("model") ||
                       r.model_path == given("model");
    return !gpu || !model;
  });
  const DeploymentCheck check = check_deployments(rows, catalog, options);
  out << "Deployments: " << read << " rows read, " << rows.size() << " asked for, "
      << check.predicted.size()
      << " predicted (a closed loop of each row's clients, vLLM's random dataset at its "
         "lengths, MODEL.md section 4b; the presets' step costs are "
      << (options.kernels_folder.empty() ? std::string("the datasheet's")
                                         : "composed from the kernel tables, a step's fixed part " +
                                               number(options.overhead_s * 1e3) + " ms")
      << ", nothing fitted on a row). The measured output tok/s is C osl / (TTFT + (osl - 1) "
         "TPOT) of the measured means.\n";
  char line[200];
  std::snprintf(line, sizeof(line), "%-8s %-15s %-6s %-9s %5s  %-22s  %-22s  %s\n", "gpu", "model",
                "dtype", "kv", "rows", "TTFT |err| med/p90, bias", "TPOT |err| med/p90, bias",
                "output tok/s med, bias");
  out << line;
  for (const DeploymentGroup& g : deployment_groups(check)) {
    std::snprintf(line, sizeof(line),
                  "%-8s %-15s %-6s %-9s %5zu  %5.1f %6.1f %+8.1f %%  %5.1f %6.1f %+8.1f %%  "
                  "%5.1f %+8.1f %%\n",
                  g.gpu.c_str(), g.model.c_str(), g.precision.c_str(),
                  g.kv_bound ? "KV-bound" : "fits", g.rows, g.ttft.median, g.ttft.p90, g.ttft.bias,
                  g.tpot.median, g.tpot.p90, g.tpot.bias, g.output.median, g.output.bias);
    out << line;
  }
  for (const auto& [why, count] : check.uncovered)
    out << "  not predicted: " << count << (count == 1 ? " row, " : " rows, ") << why << '\n';
  if (vm.count("write")) {
    write_file_atomically(vm["write"].as<std::string>(), deployments_csv(check));
    out << "Rows: " << vm["write"].as<std::string>() << '\n';
  }
  return 0;
}

}  // namespace

int run_presets_command(const std::vector<std::string>& args, std::ostream& out,
                        std::ostream& err) {
  (void)err;
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    out << kPresetsUsage;
    return args.empty() ? 2 : 0;
  }
  const std::string verb = args[0];
  if (verb != "derive" && verb != "fit" && verb != "predict" && verb != "validate" &&
      verb != "kernels" && verb != "deployments") {
    throw InputError(
        "", 0, "presets",
        "expected derive, fit, predict, validate, kernels or deployments, not '" + verb + "'");
  }
  po::options_description options("presets options");
  options.add_options()("help,h", "show this help")("gpu", po::value<std::string>(),
                                                    "a GPU of settings/hardware/gpus.json")(
      "model", po::value<std::string>(), "derive: a model of settings/hardware/models.json")(
      "tp", po::value<std::string>(), "derive: GPUs a replica (the least that holds 32k tokens)")(
      "dp", po::value<std::string>(), "derive: replicas in lockstep sharing the experts (1)")(
      "dtype", po::value<std::string>(),
      "derive: the weights' format, bf16 or fp8 (vLLM's W8A8 on a GPU with FP8; bf16)")(
      "max-num-seqs", po::value<std::string>(), "derive: vLLM's (its default for the GPU)")(
      "max-num-batched-tokens", po::value<std::string>(), "derive: vLLM's (its default)")(
      "all", "derive: every GPU and model")("write", po::value<std::string>(),
                                            "the file (the folder with --all) to write")(
      "deployments", po::value<std::string>(), "deployments: the measured deployments' CSV")(
      "measured", po::value<std::vector<std::string>>(),
      "fit, predict, validate: a measured run folder")(
      "form", po::value<std::string>(), "fit, validate: roofline or sum (efficiency.json's)")(
      "overhead", po::value<std::string>(),
      "derive --step-costs tables: a step's fixed part beside the kernels, s (0)")(
      "step-costs", po::value<std::string>(),
      "validate: tables (composed from settings/kernels/, BATCHING.md section 5c) or datasheet "
      "(the efficiency factors'; datasheet)")(
      "replay-turns", po::value<std::string>(),
      "fit, predict, validate: on or off: the runs' arrivals taken at the engine's turns "
      "(BATCHING.md section 10b; off)")("jobs,j", po::value<std::string>(),
                                        "threads for the fits' starts")(
      "figures-weight", po::value<std::string>(),
      "fit, validate: the loss's weight on each run's headline figures (TTFT, TPOT, latency: "
      "mean, median, p90, p99), beside the requests' own errors (0, none)");
  const po::variables_map vm =
      parse_options({args.begin() + 1, args.end()}, options, {}, {"presets", "", ""});
  if (vm.count("help")) {
    out << kPresetsUsage << options;
    return 0;
  }
  // Each flag where it means something, never ignored.
  if (vm.count("step-costs") && verb != "derive" && verb != "validate" && verb != "deployments") {
    throw InputError("", 0, "--step-costs", "applies to derive, validate and deployments");
  }
  if (vm.count("overhead") && verb != "derive" && verb != "deployments") {
    throw InputError("", 0, "--overhead",
                     "applies to derive and deployments (validate fits it, leaving one run out)");
  }
  if (vm.count("overhead") && !step_costs_from_tables(vm)) {
    throw InputError("", 0, "--overhead", "applies to --step-costs tables only");
  }
  if (verb == "derive") return derive(vm, out);
  if (verb == "kernels") return kernels(vm, out);
  if (verb == "deployments") return deployments(vm, out);
  if (verb == "fit") return fit(vm, args, out);
  if (verb == "predict") return predict(vm, args, out);
  return validate(vm, out);
}

}  // namespace infersim
