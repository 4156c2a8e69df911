#include "calibration/deployment_check.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "calibration/kernel_step_cost.hpp"
#include "core/input_error.hpp"
#include "core/mapped_file.hpp"
#include "core/number_format.hpp"
#include "core/percentiles.hpp"
#include "report/csv_field.hpp"
#include "scenario/scenario.hpp"
#include "trace/csv_rows.hpp"

namespace infersim {
namespace {

// The source's GPU names, by the catalog's (settings/hardware/gpus.json).
const std::map<std::string, std::string>& deployment_gpu_names() {
  static const std::map<std::string, std::string> names = {
      {"h100_sxm", "h100"},      {"h200_sxm", "h200"}, {"b200_sxm", "b200"},
      {"a100_sxm", "a100-80gb"}, {"l40s", "l40s"},     {"rtx_pro_6000_server", "rtx-pro-6000"}};
  return names;
}

std::string lowercase_of(std::string text) {
  for (char& c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// "Org/Name-Instruct-FP8" as the catalog's model of that name: the part
// after the organisation, lowercased, "-instruct" and "-fp8" left out.
std::string bare_model_name(const std::string& path) {
  std::string name = lowercase_of(path.substr(path.find('/') + 1));
  for (const std::string suffix : {"-fp8", "-instruct"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix))
      name.resize(name.size() - suffix.size());
  }
  return name;
}

const ModelSpec* deployment_model(const HardwareCatalog& catalog, const std::string& path) {
  if (const ModelSpec* m = catalog.model_by_id(path)) return m;
  for (const auto& [name, model] : catalog.models) {
    if (bare_model_name(model.hf_id) == bare_model_name(path)) return &model;
  }
  return nullptr;
}

// Why a row is not replayed; empty when it is.
std::string why_uncovered(const DeploymentRow& r, const HardwareCatalog& catalog) {
  if (r.mode != "agg") return "disaggregated (prefill and decode workers): not replayed yet";
  const auto gpu = deployment_gpu_names().find(r.system);
  if (gpu == deployment_gpu_names().end() || !catalog.gpus.count(gpu->second))
    return "GPU " + r.system + ": not in settings/hardware/gpus.json";
  if (deployment_model(catalog, r.model_path) == nullptr)
    return "model " + r.model_path + ": not in settings/hardware/models.json";
  if (!r.precision.empty() && r.precision != "bf16" && r.precision != "fp8")
    return "precision " + r.precision + ": the datasheet presets are BF16 or FP8";
  if (r.precision == "fp8" && catalog.gpus.at(gpu->second).fp8_flops <= 0)
    return "precision fp8 on " + gpu->second + ", which has no FP8";
  if (r.pp != 1 || r.attention_dp != 1) return "pipeline or attention data parallelism";
  return "";
}

double signed_error_pct(double predicted, double measured) {
  return 100 * (predicted - measured) / measured;
}

}  // namespace

std::string catalog_gpu_name(const std::string& system) {
  const auto it = deployment_gpu_names().find(system);
  return it == deployment_gpu_names().end() ? system : it->second;
}

std::string catalog_model_name(const HardwareCatalog& catalog, const std::string& model_path) {
  const ModelSpec* m = deployment_model(catalog, model_path);
  return m == nullptr ? "" : m->name;
}

double DeploymentRow::output_tps() const {
  return static_cast<double>(concurrency * osl) /
         ((ttft_ms + static_cast<double>(osl - 1) * tpot_ms) / 1000);
}

std::vector<DeploymentRow> read_deployments(const std::string& path) {
  std::optional<MappedFile> file;
  try {
    file.emplace(path);
  } catch (const std::exception&) {
    throw InputError(path, 0, "", "cannot open the deployments file");
  }
  CsvRows rows(file->bytes(), path);
  std::vector<std::string_view> fields;
  if (!rows.next(fields)) throw InputError(path, 1, "", "empty: expected a header");
  std::vector<std::string> header(fields.begin(), fields.end());
  rows.name_columns(header);
  const auto column = [&](const std::string& name) {
    const auto at = std::find(header.begin(), header.end(), name);
    if (at == header.end()) throw InputError(path, 1, name, "missing column");
    return static_cast<std::size_t>(at - header.begin());
  };
  const std::size_t id = column("id"), source = column("silicon_data_source"),
                    version = column("backend_version"), model = column("model_path"),
                    system = column("system"), precision = column("precision"),
                    mode = column("mode"), isl = column("isl"), osl = column("osl"),
                    tp = column("tp_size"), batch = column("batch_size"), pp = column("pp_size"),
                    dp = column("attention_dp_size"), ttft = column("silicon_ttft_ms"),
                    tpot = column("silicon_tpot_ms");
  std::vector<DeploymentRow> out;
  while (rows.next(fields)) {
    if (fields.empty()) continue;
    if (fields.size() != header.size()) {
      throw InputError(path, rows.line(), "",
                       std::to_string(fields.size()) + " fields, the header has " +
                           std::to_string(header.size()));
    }
    const auto text = [&](std::size_t c) { return std::string(fields[c]); };
    const auto number = [&](std::size_t c, bool may_be_empty) -> double {
      const std::string_view f = fields[c];
      if (f.empty() && may_be_empty) return 0;
      double v = 0;
      const auto r = std::from_chars(f.data(), f.data() + f.size(), v);
      if (f.empty() || r.ec != std::errc() || r.ptr != f.data() + f.size() || !std::isfinite(v) ||
          v < 0) {
        throw InputError(path, rows.line(), header[c],
                         "expected a number of 0 or more, got '" + std::string(f) + "'");
      }
      return v;
    };
    DeploymentRow r;
    r.line = rows.line();
    r.id = text(id);
    r.system = text(system);
    r.model_path = text(model);
    r.precision = text(precision);
    r.mode = text(mode);
    r.version = text(version);
    const bool agg = r.mode == "agg";
    r.isl = static_cast<std::int64_t>(number(isl, false));
    r.osl = static_cast<std::int64_t>(number(osl, false));
    r.tp = static_cast<std::int64_t>(number(tp, !agg));
    // Empty: none (1).
    r.pp = std::max<std::int64_t>(1, static_cast<std::int64_t>(number(pp, true)));
    r.attention_dp = std::max<std::int64_t>(1, static_cast<std::int64_t>(number(dp, true)));
    r.ttft_ms = number(ttft, false);
    r.tpot_ms = number(tpot, false);
    const std::string from = text(source);
    const std::string tag = "silicon_concurrency=";
    const std::size_t at = from.find(tag);
    std::int64_t c = 0;
    if (at != std::string::npos) {
      const char* begin = from.data() + at + tag.size();
      std::from_chars(begin, from.data() + from.size(), c);
    }
    // Else the batch size, which is the concurrency where both are given.
    if (at == std::string::npos) c = static_cast<std::int64_t>(number(batch, true));
    if (c < 1 && agg) {
      throw InputError(
          path, rows.line(), "silicon_data_source",
          "expected silicon_concurrency=C (C at least 1), or a batch_size, in '" + from + "'");
    }
    r.concurrency = c;
    if (agg && (r.tp < 1 || r.isl < 1 || r.osl < 1 || r.ttft_ms <= 0 || r.tpot_ms <= 0)) {
      throw InputError(path, rows.line(), "",
                       "an aggregated row needs tp_size, isl and osl of at least 1 and a "
                       "measured TTFT and TPOT above 0");
    }
    out.push_back(std::move(r));
  }
  return out;
}

DeploymentCheck check_deployments(const std::vector<DeploymentRow>& rows,
                                  const HardwareCatalog& catalog,
                                  const DeploymentOptions& options) {
  DeploymentCheck check;
  std::vector<const DeploymentRow*> covered;
  for (const DeploymentRow& r : rows) {
    const std::string why = why_uncovered(r, catalog);
    if (why.empty()) {
      covered.push_back(&r);
    } else {
      ++check.uncovered[why];
    }
  }
  // Each GPU's kernel tables, read once for every row of it.
  std::map<std::string, KernelTables> kernels;
  if (!options.kernels_folder.empty()) {
    for (const DeploymentRow* r : covered) {
      const std::string gpu = deployment_gpu_names().at(r->system);
      if (!kernels.contains(gpu))
        kernels[gpu] = KernelTables::load(options.kernels_folder + "/" + gpu);
    }
  }
  std::vector<std::optional<DeploymentPrediction>> predicted(covered.size());
  std::vector<std::string> misfits(covered.size());
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto worker = [&] {
    for (std::size_t i = next++; i < covered.size(); i = next++) {
      try {
        const DeploymentRow& r = *covered[i];
        const GpuSpec& gpu = catalog.gpus.at(deployment_gpu_names().at(r.system));
        const ModelSpec& model = *deployment_model(catalog, r.model_path);
        Deployment d;
        d.tensor_parallel = r.tp;
        d.dtype = r.precision == "fp8" ? "fp8" : "bf16";
        BatchingKnobs knobs;
        try {
          knobs = options.kernels_folder.empty()
                      ? derive_knobs(gpu, model, d, catalog.efficiency)
                      : derive_table_knobs(gpu, model, d, catalog.efficiency, kernels.at(gpu.name),
                                           options.overhead_s);
        } catch (const InputError&) {
          misfits[i] = "weights that do not fit at their tensor parallelism";
          continue;
        }
        // The preset as `presets derive` writes it (its figures rounded as
        // the file has them): the run a user would make of it.
        Settings s;
        apply_settings_json(s, preset_document(gpu, model, d, knobs, catalog),
                            gpu.name + "-" + model.name);
        s.mode = "recorded";
        s.hops.clear();  // the benchmark's client sits beside the server
        s.per_request = "none";
        s.max_concurrency = static_cast<std::uint32_t>(r.concurrency);
        s.dataset = "random";
        s.random_input_len = r.isl;
        s.random_output_len = r.osl;
        s.random_range_ratio = 0;
        s.num_prompts = static_cast<std::uint64_t>(
            std::max(options.least_prompts, options.prompts_per_client * r.concurrency));
        validate_settings(s, r.id);
        const ModeResult result = run_mode(s, Trace{}, "recorded");
        DeploymentPrediction p;
        p.row = &r;
        p.gpu = gpu.name;
        p.model = model.name;
        p.ttft_ms = 1000 * result.summary.get("ttft_mean_s").value_or(0);
        p.tpot_ms = 1000 * result.summary.get("tpot_mean_s").value_or(0);
        p.output_tps = result.summary.get("output_throughput_tps").value_or(0);
        p.kv_blocks = s.batching.kv_blocks;
        p.kv_bound = static_cast<double>(r.concurrency) * static_cast<double>(r.isl + r.osl) >
                     static_cast<double>(s.batching.kv_blocks * s.batching.block_tokens);
        predicted[i] = p;
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  const unsigned pool =
      std::max(1u, std::min<unsigned>(options.threads, static_cast<unsigned>(covered.size())));
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < pool; ++t)
    threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads)
    t.join();
  if (failure) std::rethrow_exception(failure);
  for (std::size_t i = 0; i < covered.size(); ++i) {
    if (predicted[i]) {
      check.predicted.push_back(*predicted[i]);
    } else {
      ++check.uncovered[misfits[i]];
    }
  }
  return check;
}

std::string deployments_csv(const DeploymentCheck& check) {
  std::string out =
      "id,gpu,model,precision,tp,isl,osl,concurrency,kv_bound,measured_ttft_ms,"
      "predicted_ttft_ms,ttft_error_pct,measured_tpot_ms,predicted_tpot_ms,tpot_error_pct,"
      "measured_output_tps,predicted_output_tps,output_error_pct\n";
  for (const DeploymentPrediction& p : check.predicted) {
    const DeploymentRow& r = *p.row;
    out += csv_field(r.id) + "," + p.gpu + "," + p.model + "," +
           (r.precision.empty() ? "bf16" : r.precision) + "," + std::to_string(r.tp) + "," +
           std::to_string(r.isl) + "," + std::to_string(r.osl) + "," +
           std::to_string(r.concurrency) + "," + (p.kv_bound ? "true" : "false") + "," +
           shortest(r.ttft_ms) + "," + shortest(p.ttft_ms) + "," +
           shortest(signed_error_pct(p.ttft_ms, r.ttft_ms)) + "," + shortest(r.tpot_ms) + "," +
           shortest(p.tpot_ms) + "," + shortest(signed_error_pct(p.tpot_ms, r.tpot_ms)) + "," +
           shortest(r.output_tps()) + "," + shortest(p.output_tps) + "," +
           shortest(signed_error_pct(p.output_tps, r.output_tps())) + "\n";
  }
  return out;
}

ErrorStats error_stats(const std::vector<double>& signed_pct) {
  ErrorStats e;
  if (signed_pct.empty()) return e;
  std::vector<double> magnitude;
  double sum = 0;
  for (const double x : signed_pct) {
    magnitude.push_back(std::abs(x));
    sum += x;
  }
  e.median = *percentile(magnitude, 0.5);
  e.p90 = *percentile(magnitude, 0.9);
  e.bias = sum / static_cast<double>(signed_pct.size());
  return e;
}

std::vector<DeploymentGroup> deployment_groups(const DeploymentCheck& check) {
  std::map<std::tuple<std::string, std::string, std::string, bool>,
           std::vector<const DeploymentPrediction*>>
      groups;
  for (const DeploymentPrediction& p : check.predicted) {
    const std::string precision = p.row->precision.empty() ? "bf16" : p.row->precision;
    groups[{p.gpu, p.model, precision, p.kv_bound}].push_back(&p);
  }
  std::vector<DeploymentGroup> out;
  for (const auto& [key, members] : groups) {
    DeploymentGroup g;
    std::tie(g.gpu, g.model, g.precision, g.kv_bound) = key;
    g.rows = members.size();
    std::vector<double> ttft, tpot, output;
    for (const DeploymentPrediction* p : members) {
      ttft.push_back(signed_error_pct(p->ttft_ms, p->row->ttft_ms));
      tpot.push_back(signed_error_pct(p->tpot_ms, p->row->tpot_ms));
      output.push_back(signed_error_pct(p->output_tps, p->row->output_tps()));
    }
    g.ttft = error_stats(ttft);
    g.tpot = error_stats(tpot);
    g.output = error_stats(output);
    out.push_back(g);
  }
  return out;
}

}  // namespace infersim
