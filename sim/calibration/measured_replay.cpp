#include "calibration/measured_replay.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>

#include "core/input_error.hpp"
#include "core/number_format.hpp"
#include "core/percentiles.hpp"
#include "model/batching_server.hpp"
#include "model/device_fleet.hpp"
#include "model/network_path.hpp"
#include "model/simulation.hpp"

namespace infersim {
namespace {

std::string yes_no(bool on) {
  return on ? "on" : "off";
}

// The last path component of a model name ("meta-llama/Llama-3.1-8B" ->
// "Llama-3.1-8B").
std::string short_model(const std::string& model) {
  const auto slash = model.find_last_of('/');
  return slash == std::string::npos ? model : model.substr(slash + 1);
}

// Records every step as scheduled.
class StepRecorder : public ServerObserver {
 public:
  explicit StepRecorder(std::vector<StepRecord>& steps) : steps_(steps) {}
  void on_step(const StepRecord& step) override { steps_.push_back(step); }
  unsigned reads() const override { return kSteps; }

 private:
  std::vector<StepRecord>& steps_;
};

// The TTFT residuals' scale: the run's mean measured TTFT (1 ms at least).
double mean_ttft(const std::vector<MeasuredFigures>& measured) {
  double sum = 0;
  for (const MeasuredFigures& m : measured)
    sum += m.ttft_s;
  return std::max(1e-3, measured.empty() ? 0 : sum / static_cast<double>(measured.size()));
}

// Statistics of the table: mean, median, p90, p95, p99 (NumPy's
// interpolation), in ms.
std::vector<double> statistics_ms(std::vector<double> seconds) {
  if (seconds.empty()) return {0, 0, 0, 0, 0};
  const double mean =
      std::accumulate(seconds.begin(), seconds.end(), 0.0) / static_cast<double>(seconds.size());
  const auto p = percentiles(seconds, {0.5, 0.9, 0.95, 0.99});
  return {1e3 * mean, 1e3 * *p[0], 1e3 * *p[1], 1e3 * *p[2], 1e3 * *p[3]};
}

constexpr const char* kStatistics[] = {"Mean", "Median", "P90", "P95", "P99"};

// The stat logger's start before the replay's origin: timeseries.csv credits
// a request's whole prompt to the tick in which its prefill finished (its
// first token), so the offset is where the measured first tokens, bucketed
// by ticks, give the file's prompt throughput; the middle of the best
// stretch of a 1 ms scan over one tick.
std::optional<double> tick_offset(const MeasuredReplay& replay, double tick_s) {
  std::vector<std::pair<double, double>> firsts;  // (first token, prompt tokens)
  for (const MeasuredFigures& m : replay.measured) {
    if (!m.first_token_s) return std::nullopt;
    firsts.emplace_back(*m.first_token_s, m.input_tokens);
  }
  if (replay.ticks.empty() || !replay.ticks.front().prompt_throughput) return std::nullopt;
  std::sort(firsts.begin(), firsts.end());
  constexpr int kSteps = 1000;
  double best = -1;
  int best_from = 0, best_to = 0;
  for (int k = 0; k <= kSteps; ++k) {
    const double offset = tick_s * k / kSteps;
    double error = 0;
    std::size_t i = 0;
    for (const MeasuredTick& t : replay.ticks) {
      if (!t.prompt_throughput) return std::nullopt;
      const double lo = t.t_s - tick_s - offset, hi = t.t_s - offset;
      while (i < firsts.size() && firsts[i].first < lo)
        ++i;
      double sum = 0;
      for (std::size_t j = i; j < firsts.size() && firsts[j].first < hi; ++j)
        sum += firsts[j].second;
      error += std::abs(sum - *t.prompt_throughput * tick_s);
    }
    if (best < 0 || error < best - 1e-9) {
      best = error;
      best_from = best_to = k;
    } else if (std::abs(error - best) <= 1e-9 && best_to == k - 1) {
      best_to = k;
    }
  }
  return tick_s * (best_from + best_to) / 2.0 / kSteps;
}

}  // namespace

RequestList MeasuredReplay::tasks() const {
  RequestList list = RequestList::from_records(RequestKnobs{}, trace.records);
  if (!trace.hash_ranges.empty()) {
    list.use_block_ids(trace.hash_ids, trace.block_id_tokens);
    list.set_block_ranges(trace.hash_ranges);
  }
  return list;
}

EngineSetup engine_setup(const BatchingKnobs& base, const GivenKnobs& given) {
  EngineSetup e;
  e.knobs = base;
  const auto said = [&](const char* key, const std::string& value) {
    const std::string name = std::string("batching.") + key;
    const char* from = given.flags.count(name)   ? " (flag)"
                       : given.files.count(name) ? " (settings file or preset)"
                                                 : nullptr;
    if (from != nullptr) {
      e.facts.push_back(std::string(key) + " = " + value + from);
    } else {
      e.assumptions.push_back(std::string(key) + " = " + value +
                              " (not recorded; infersim's default)");
    }
  };
  said("max_num_seqs", std::to_string(base.max_num_seqs));
  said("max_num_batched_tokens", std::to_string(base.max_num_batched_tokens));
  said("replicas", std::to_string(base.replicas));
  said("async_scheduling", yes_no(base.async_scheduling));
  said("kv_blocks", std::to_string(base.kv_blocks));
  e.kv_blocks_known =
      given.flags.count("batching.kv_blocks") > 0 || given.files.count("batching.kv_blocks") > 0;
  e.description = "an engine of " + std::to_string(base.replicas) + " replica" +
                  (base.replicas == 1 ? "" : "s");
  return e;
}

EngineSetup engine_setup(const MeasuredRun& run, const BatchingKnobs& base,
                         const GivenKnobs& given) {
  EngineSetup e;
  e.knobs = base;
  BatchingKnobs& k = e.knobs;
  const MeasuredEngine none;
  const MeasuredEngine& m = run.engine ? *run.engine : none;
  const std::string meta = (run.dir / "meta.json").string();
  if (!run.engine) e.assumptions.push_back("no meta.json: every engine knob is assumed");
  // A knob from a flag, else meta.json, else a settings file or a preset,
  // else vLLM's default; where each came from is said.
  const auto by_flag = [&](const char* key) {
    return given.flags.count(std::string("batching.") + key) > 0;
  };
  const auto by_file = [&](const char* key) {
    return given.files.count(std::string("batching.") + key) > 0;
  };
  // Says where a knob came from, given its value in words as meta.json (when
  // recorded) and the settings have it; false when neither a flag, meta.json
  // nor a file set it (the caller takes vLLM's default).
  const auto said = [&](const char* key, const std::optional<std::string>& recorded,
                        const std::string& settings) {
    const auto aside = [](const std::string& whose, const std::string& value) {
      return "; " + whose + " " + value + " set aside";
    };
    if (by_flag(key)) {
      e.facts.push_back(std::string(key) + " = " + settings + " (flag" +
                        (recorded && *recorded != settings ? aside("meta.json's", *recorded) : "") +
                        ")");
    } else if (recorded) {
      e.facts.push_back(
          std::string(key) + " = " + *recorded + " (meta.json" +
          (by_file(key) && *recorded != settings ? aside("the settings'", settings) : "") + ")");
    } else if (by_file(key)) {
      e.facts.push_back(std::string(key) + " = " + settings +
                        " (settings file or preset; not recorded in meta.json)");
    } else {
      return false;
    }
    return true;
  };
  const auto count = [&](const char* key, std::int64_t& knob, const std::optional<std::int64_t>& v,
                         std::int64_t fallback, const std::string& why) {
    const std::optional<std::string> recorded =
        v ? std::optional<std::string>(std::to_string(*v)) : std::nullopt;
    if (said(key, recorded, std::to_string(knob))) {
      if (v && !by_flag(key)) knob = *v;
      return;
    }
    knob = fallback;
    e.assumptions.push_back(std::string(key) + " = " + std::to_string(knob) + " (" + why + ")");
  };
  const auto flag = [&](const char* key, bool& knob, const std::optional<bool>& v, bool fallback,
                        const std::string& why) {
    const std::optional<std::string> recorded =
        v ? std::optional<std::string>(yes_no(*v)) : std::nullopt;
    if (said(key, recorded, yes_no(knob))) {
      if (v && !by_flag(key)) knob = *v;
      return;
    }
    knob = fallback;
    e.assumptions.push_back(std::string(key) + " = " + yes_no(knob) + " (" + why + ")");
  };

  e.model = m.model;
  e.tensor_parallel = m.tensor_parallel_size.value_or(1);
  e.device_name = m.device_name.value_or("");
  e.gpu_memory_utilization = m.gpu_memory_utilization.value_or(0.9);
  const std::int64_t tp = m.tensor_parallel_size.value_or(1);
  const std::int64_t dp = m.data_parallel_size.value_or(1);
  const bool ep = m.enable_expert_parallel.value_or(false);
  count("max_num_seqs", k.max_num_seqs, m.max_num_seqs, 256,
        "not recorded; vLLM's EngineArgs default for an offline engine");
  count("max_num_batched_tokens", k.max_num_batched_tokens, m.max_num_batched_tokens, 8192,
        "not recorded; vLLM's default with chunked prefill");
  // Data parallelism: one engine (its own scheduler and KV cache) a rank.
  count("replicas", k.replicas, m.data_parallel_size, 1, "not recorded; one engine");
  const bool parallelism_recorded = m.data_parallel_size && m.enable_expert_parallel;
  if (by_flag("lockstep") || (by_file("lockstep") && !parallelism_recorded)) {
    e.facts.push_back(std::string("lockstep = ") + yes_no(k.lockstep) +
                      (by_flag("lockstep") ? " (flag)" : " (settings file or preset)"));
  } else {
    k.lockstep = k.replicas > 1 && ep;
    (parallelism_recorded ? e.facts : e.assumptions)
        .push_back(std::string("lockstep = ") + yes_no(k.lockstep) +
                   (k.lockstep ? " (meta.json: data parallel with expert parallelism, the ranks "
                                 "run each forward pass together, BATCHING.md section 10)"
                               : " (no expert parallelism across replicas)"));
  }
  if (k.replicas > 1 && !by_flag("router") && !by_file("router")) {
    // vLLM's data-parallel client picks the rank of least 4 x waiting +
    // running from counts the coordinator publishes every 100 ms, adding its
    // own picks since: ranks of near-equal counts (both full, or both
    // filling) get arrivals in turn. That rule is `vllm-dp`; on the
    // Qwen3-30B-A3B run it fits the queued requests far better but moves the
    // fitted costs (examples/validate_vllm/README.md), so round-robin, which
    // the fits were made with, stays the default.
    k.router = RouterKind::kRoundRobin;
    e.assumptions.push_back(
        "router = round-robin (vLLM's data-parallel client picks the rank of least "
        "4 x waiting + running from counts published every 100 ms plus its own picks since, "
        "so ranks of near-equal load take arrivals in turn; --router vllm-dp for that rule)");
  }
  // Block size: the workload's ids cover 16 tokens, so a block of 16 or a
  // divisor of it keeps exact identities; a larger vLLM block is replayed in
  // 16-token blocks holding as many tokens in all.
  std::int64_t kv_scale_num = 1, kv_scale_den = 1;
  if (by_flag("block_tokens") || (m.block_size && 16 % *m.block_size == 0)) {
    said("block_tokens", m.block_size ? std::optional(std::to_string(*m.block_size)) : std::nullopt,
         std::to_string(k.block_tokens));
    if (!by_flag("block_tokens")) k.block_tokens = *m.block_size;
  } else if (m.block_size) {
    k.block_tokens = 16;
    kv_scale_num = *m.block_size;
    kv_scale_den = 16;
    e.assumptions.push_back("block_tokens = 16 (vLLM's blocks hold " +
                            std::to_string(*m.block_size) +
                            " tokens; the workload's prompt ids cover 16, so the replay keeps "
                            "16-token blocks, as many tokens of KV in all)");
  } else if (by_file("block_tokens")) {
    said("block_tokens", std::nullopt, std::to_string(k.block_tokens));
  } else {
    k.block_tokens = 16;
    e.assumptions.push_back("block_tokens = 16 (vLLM's default block size)");
  }
  if (by_flag("kv_blocks")) {
    e.kv_blocks_known = true;
    e.facts.push_back("kv_blocks = " + std::to_string(k.kv_blocks) + " (flag)");
  } else if (m.num_gpu_blocks) {
    // vLLM keeps one block aside (the null block): num_gpu_blocks - 1 usable.
    const std::int64_t settings = k.kv_blocks;
    k.kv_blocks = (*m.num_gpu_blocks - 1) * kv_scale_num / kv_scale_den;
    e.kv_blocks_known = true;
    e.kv_blocks_recorded = true;
    e.facts.push_back("kv_blocks = " + std::to_string(k.kv_blocks) + " (meta.json num_gpu_blocks " +
                      std::to_string(*m.num_gpu_blocks) + " - 1" +
                      (by_file("kv_blocks") && settings != k.kv_blocks
                           ? "; the settings' " + std::to_string(settings) + " set aside"
                           : std::string()) +
                      ")");
  } else if (by_file("kv_blocks")) {
    e.kv_blocks_known = true;
    e.facts.push_back("kv_blocks = " + std::to_string(k.kv_blocks) +
                      " (settings file or preset; not recorded in meta.json)");
  } else {
    e.assumptions.push_back("kv_blocks: not recorded");
  }
  const auto len_text = [&] {
    return k.max_model_len ? std::to_string(*k.max_model_len)
                           : "min(131072, kv_blocks x block_tokens)";
  };
  if (by_flag("max_model_len") || m.max_model_len || by_file("max_model_len")) {
    said("max_model_len",
         m.max_model_len ? std::optional(std::to_string(*m.max_model_len)) : std::nullopt,
         len_text());
    if (m.max_model_len && !by_flag("max_model_len")) k.max_model_len = *m.max_model_len;
  } else {
    std::int64_t longest = 0;
    for (const MeasuredRunRequest& r : run.requests)
      longest = std::max<std::int64_t>(longest, std::int64_t{r.input_tokens} + r.output_tokens);
    k.max_model_len.reset();
    e.assumptions.push_back(
        "max_model_len = min(131072, kv_blocks x block_tokens) (not recorded: vLLM takes the "
        "model's own limit; the longest request here is " +
        std::to_string(longest) + " tokens)");
  }
  // A cache the run recorded, with a model length the settings carried over
  // from another engine: vLLM would not have started with a length the cache
  // cannot hold, so it is cut to what the cache holds.
  if (m.num_gpu_blocks && !by_flag("kv_blocks") && !m.max_model_len && !by_flag("max_model_len") &&
      k.max_model_len && (*k.max_model_len - 1) / k.block_tokens >= k.kv_blocks) {
    e.facts.push_back("max_model_len = " + std::to_string(k.kv_blocks * k.block_tokens) +
                      " (the recorded cache's tokens; the settings' " +
                      std::to_string(*k.max_model_len) + " is more than it holds)");
    k.max_model_len = k.kv_blocks * k.block_tokens;
  }
  flag("prefix_caching", k.prefix_caching, m.enable_prefix_caching, true,
       "vLLM's default for decoder models");
  if (!by_flag("reserve_full_prompt") && !by_file("reserve_full_prompt")) {
    k.reserve_full_prompt = true;
    e.assumptions.push_back("reserve_full_prompt = on (vLLM's scheduler_reserve_full_isl default)");
  }
  flag("async_scheduling", k.async_scheduling, m.async_scheduling, true,
       "vLLM 0.19 turns it on where supported; the files do not record the resolved value");
  if (m.enable_expert_parallel && *m.enable_expert_parallel && dp == 1) {
    e.assumptions.push_back("expert parallelism within one engine: its cost is in the step costs");
  }
  // What meta.json says must hold together, as vLLM checks it at start-up.
  if (m.max_num_seqs && m.max_num_batched_tokens && *m.max_num_seqs > *m.max_num_batched_tokens) {
    throw InputError(meta, 0, "max_num_seqs, max_num_batched_tokens",
                     "max_num_seqs " + std::to_string(*m.max_num_seqs) +
                         " exceeds max_num_batched_tokens " +
                         std::to_string(*m.max_num_batched_tokens) +
                         ": vLLM refuses that engine, so the file contradicts itself");
  }
  if (m.max_model_len && m.num_gpu_blocks && m.block_size &&
      *m.max_model_len > (*m.num_gpu_blocks - 1) * *m.block_size) {
    throw InputError(meta, 0, "max_model_len, num_gpu_blocks",
                     "max_model_len " + std::to_string(*m.max_model_len) + " exceeds the " +
                         std::to_string((*m.num_gpu_blocks - 1) * *m.block_size) +
                         " tokens its KV blocks hold: vLLM refuses that engine");
  }
  e.description = (m.model.empty() ? std::string("an unnamed model") : short_model(m.model)) +
                  " on " + std::to_string(k.replicas) + " replica" + (k.replicas == 1 ? "" : "s") +
                  " (TP " + std::to_string(tp) + (dp > 1 ? ", DP " + std::to_string(dp) : "") +
                  (ep ? ", EP" : "") + ")" +
                  (m.vllm_version.empty() ? "" : ", vLLM " + m.vllm_version);
  return e;
}

MeasuredReplay prepare_replay(const MeasuredRun& run, const Trace& workload,
                              const std::string& workload_sha256) {
  const std::string requests_path = (run.dir / "requests.jsonl").string();
  if (run.engine && run.engine->dataset_hash && !workload_sha256.empty() &&
      *run.engine->dataset_hash != workload_sha256) {
    throw InputError((run.dir / "meta.json").string(), 0, "dataset_hash",
                     *run.engine->dataset_hash + " is not the SHA-256 of the workload " +
                         workload.path + " (" + workload_sha256 +
                         "): the run replayed another workload");
  }
  if (workload.out_of_order > 0) {
    throw InputError(workload.path, 0, "",
                     "its lines are not in arrival order, so line i cannot be matched to the "
                     "run's bench-i");
  }
  // Line i of the workload is bench-i: a workload of another length is
  // another workload (or a part of one), whatever requests match.
  if (run.requests.size() != workload.records.size()) {
    throw InputError(requests_path, 0, "request_id",
                     std::to_string(run.requests.size()) + " requests, the workload " +
                         workload.path + " " + std::to_string(workload.records.size()) +
                         " lines: the run did not serve this workload (bench-i is its line i)");
  }
  MeasuredReplay replay;
  replay.source = run.dir.string();
  replay.ticks = run.ticks;
  replay.published = run.published;
  replay.left_out = run.unserved;
  if (run.engine && run.engine->tick_seconds) replay.tick_s = run.engine->tick_seconds;
  // Served requests in the engine's arrival order (ties by index).
  std::vector<const MeasuredRunRequest*> served;
  for (const MeasuredRunRequest& r : run.requests) {
    if (!r.served) continue;
    if (r.index >= workload.records.size()) {
      throw InputError(requests_path, r.line, "request_id",
                       "bench-" + std::to_string(r.index) + " has no line in the workload " +
                           workload.path + " (" + std::to_string(workload.records.size()) +
                           " requests)");
    }
    const TraceRecord& w = workload.records[r.index];
    if (w.context_tokens != r.input_tokens || w.generated_tokens != r.output_tokens) {
      throw InputError(requests_path, r.line, "input_toks",
                       "bench-" + std::to_string(r.index) + " has " +
                           std::to_string(r.input_tokens) + " input and " +
                           std::to_string(r.output_tokens) +
                           " output tokens, the workload's line " + std::to_string(r.index + 1) +
                           " " + std::to_string(w.context_tokens) + " and " +
                           std::to_string(w.generated_tokens) + ": another workload");
    }
    served.push_back(&r);
  }
  std::stable_sort(
      served.begin(), served.end(), [](const MeasuredRunRequest* a, const MeasuredRunRequest* b) {
        return a->queued_s < b->queued_s || (a->queued_s == b->queued_s && a->index < b->index);
      });
  const double origin = served.front()->queued_s;
  Trace& t = replay.trace;
  t.path = workload.path;
  t.format = workload.format;
  t.timestamp_unit = "engine queued_ts";
  replay.engine_turns = true;
  t.block_id_tokens = workload.block_id_tokens;
  for (const MeasuredRunRequest* r : served) {
    TraceRecord record;
    record.offset_ns = seconds_to_ns(r->queued_s - origin);
    record.context_tokens = r->input_tokens;
    record.generated_tokens = r->output_tokens;
    t.records.push_back(record);
    if (!workload.hash_ranges.empty()) {
      const std::span<const std::uint32_t> ids = workload.hash_ids_of(r->index);
      const auto begin = static_cast<std::uint32_t>(t.hash_ids.size());
      t.hash_ids.insert(t.hash_ids.end(), ids.begin(), ids.end());
      t.hash_ranges.push_back({begin, static_cast<std::uint32_t>(ids.size())});
    }
    MeasuredFigures f;
    f.request = r->index;
    f.input_tokens = r->input_tokens;
    f.output_tokens = r->output_tokens;
    f.start_s = r->scheduled_s - origin;
    f.first_token_s = r->first_token_s - origin;
    f.finish_s = r->last_token_s - origin;
    f.ttft_s = r->first_token_s - r->queued_s;
    f.latency_s = r->last_token_s - r->queued_s;
    if (r->output_tokens >= 2) {
      f.tpot_s = (r->last_token_s - r->first_token_s) / (r->output_tokens - 1);
    }
    replay.measured.push_back(f);
  }
  if (t.hash_ids.empty()) {
    t.hash_ranges.clear();
    t.block_id_tokens = 0;
  }
  replay.ttft_scale_s = mean_ttft(replay.measured);
  if (!replay.tick_s && replay.ticks.size() >= 2) {
    double smallest = replay.ticks[1].t_s - replay.ticks[0].t_s;
    for (std::size_t i = 2; i < replay.ticks.size(); ++i)
      smallest = std::min(smallest, replay.ticks[i].t_s - replay.ticks[i - 1].t_s);
    replay.tick_s = smallest;
  }
  return replay;
}

MeasuredReplay prepare_replay(const Measurement& measurement, const Trace& trace) {
  if (measurement.requests.size() != trace.records.size()) {
    throw InputError(measurement.path, 0, "",
                     "holds " + std::to_string(measurement.requests.size()) +
                         " measured requests, the trace " + std::to_string(trace.records.size()) +
                         ": requests are matched by order, so the counts must agree");
  }
  MeasuredReplay replay;
  replay.source = measurement.path;
  replay.trace = trace;
  for (std::size_t k = 0; k < measurement.requests.size(); ++k) {
    const MeasuredRequest& m = measurement.requests[k];
    TraceRecord& record = replay.trace.records[k];
    if (std::llround(m.input_tokens) != record.context_tokens ||
        std::llround(m.output_tokens) != record.generated_tokens) {
      throw InputError(measurement.path, m.line, "input tokens",
                       "request " + std::to_string(k + 1) + " has " +
                           printf_text("%g", m.input_tokens) + " input and " +
                           printf_text("%g", m.output_tokens) +
                           " output tokens, the trace's record " + std::to_string(k + 1) + " " +
                           std::to_string(record.context_tokens) + " and " +
                           std::to_string(record.generated_tokens));
    }
    MeasuredFigures f;
    f.request = k;
    f.input_tokens = record.context_tokens;
    f.output_tokens = record.generated_tokens;
    f.ttft_s = m.ttft_s;
    f.latency_s = m.e2e_s;
    if (record.generated_tokens >= 2) {
      f.tpot_s = (m.e2e_s - m.ttft_s) / (record.generated_tokens - 1);
    }
    replay.measured.push_back(f);
  }
  replay.ttft_scale_s = mean_ttft(replay.measured);
  return replay;
}

Replay replay_measured(const MeasuredReplay& replay, const BatchingKnobs& knobs) {
  check_batching_knobs(knobs, replay.trace.block_id_tokens, "");
  const RequestList tasks = replay.tasks();
  Replay out{RequestLog(tasks.size(), true), {}};
  DeviceFleet fleet(1);
  const NetworkPath network({});
  BatchingKnobs server_knobs = knobs;
  server_knobs.engine_turn_arrivals = knobs.replay_turns && replay.engine_turns;
  BatchingServer server(server_knobs);
  StepRecorder recorder(out.steps);
  Simulation simulation(tasks, fleet, network, server);
  simulation.add_observer(out.requests);
  simulation.add_server_observer(recorder);
  simulation.run();
  return out;
}

MeasuredLoss replay_loss(const MeasuredReplay& replay, const Replay& result) {
  return replay_loss(
      replay, result,
      replay.figures_weight > 0 ? figure_errors(replay, result) : std::vector<FigureError>{});
}

MeasuredLoss replay_loss(const MeasuredReplay& replay, const Replay& result,
                         const std::vector<FigureError>& figures) {
  MeasuredLoss loss;
  loss.ttft_scale_s = replay.ttft_scale_s;
  for (std::size_t k = 0; k < replay.measured.size(); ++k) {
    const MeasuredFigures& m = replay.measured[k];
    const RequestOutcome r = result.requests[k];
    if (r.rejected) continue;
    const double ttft = (r.first_token_server - r.queued).seconds();
    const double e = (ttft - m.ttft_s) / replay.ttft_scale_s;
    loss.ttft_term += e * e;
    ++loss.ttft_requests;
    if (m.tpot_s && m.output_tokens >= 2) {
      const double tpot = (r.finish - r.first_token_server).seconds() / (m.output_tokens - 1);
      const double d = (tpot - *m.tpot_s) / *m.tpot_s;
      loss.tpot_term += d * d;
      ++loss.tpot_requests;
    }
  }
  if (loss.ttft_requests > 0) loss.ttft_term /= static_cast<double>(loss.ttft_requests);
  if (loss.tpot_requests > 0) loss.tpot_term /= static_cast<double>(loss.tpot_requests);
  loss.figures_weight = replay.figures_weight;
  if (replay.figures_weight > 0) {
    for (const FigureError& f : figures)
      loss.figures_term += f.relative() * f.relative();
    if (!figures.empty()) {
      loss.figures_term *= replay.figures_weight / static_cast<double>(figures.size());
    }
  }
  loss.total = loss.ttft_term + loss.tpot_term + loss.figures_term;
  return loss;
}

std::vector<FigureError> figure_errors(const MeasuredReplay& replay, const Replay& result) {
  // Each metric's (replay id, simulated, measured) over the served requests.
  struct Sample {
    std::size_t id;
    double simulated;
    double measured;
  };
  std::array<std::vector<Sample>, 3> samples;
  for (std::size_t k = 0; k < replay.measured.size(); ++k) {
    const MeasuredFigures& m = replay.measured[k];
    const RequestOutcome r = result.requests[k];
    if (r.rejected) continue;
    samples[0].push_back({k, (r.first_token_server - r.queued).seconds(), m.ttft_s});
    if (m.tpot_s && m.output_tokens >= 2) {
      samples[1].push_back(
          {k, (r.finish - r.first_token_server).seconds() / (m.output_tokens - 1), *m.tpot_s});
    }
    samples[2].push_back({k, (r.finish - r.queued).seconds(), m.latency_s});
  }
  constexpr std::array<FigureMetric, 3> kMetrics = {FigureMetric::kTtft, FigureMetric::kTpot,
                                                    FigureMetric::kLatency};
  std::vector<FigureError> out;
  for (std::size_t g = 0; g < samples.size(); ++g) {
    std::vector<Sample>& s = samples[g];
    if (s.empty()) continue;
    const double n = static_cast<double>(s.size());
    std::vector<double> measured;
    for (const Sample& x : s)
      measured.push_back(x.measured);
    // The mean.
    FigureError mean{
        kMetrics[g], std::accumulate(measured.begin(), measured.end(), 0.0) / n, 0, {}};
    for (const Sample& x : s) {
      mean.simulated_s += x.simulated / n;
      mean.parts.emplace_back(x.id, 1 / n);
    }
    out.push_back(std::move(mean));
    // The percentiles, at NumPy's index q (n - 1) between two order
    // statistics.
    constexpr std::array<double, 3> kQuantiles = {0.5, 0.9, 0.99};
    const auto measured_q = percentiles(measured, {kQuantiles[0], kQuantiles[1], kQuantiles[2]});
    std::stable_sort(s.begin(), s.end(),
                     [](const Sample& a, const Sample& b) { return a.simulated < b.simulated; });
    for (std::size_t i = 0; i < kQuantiles.size(); ++i) {
      const auto [index, below, above] = percentile_ranks(s.size(), kQuantiles[i]);
      const double frac = index - static_cast<double>(below);
      FigureError q{kMetrics[g],
                    *measured_q[i],
                    below == above ? s[below].simulated
                                   : interpolate(s[below].simulated, s[above].simulated, index),
                    {{s[below].id, 1 - frac}}};
      if (above != below && frac > 0) q.parts.emplace_back(s[above].id, frac);
      out.push_back(std::move(q));
    }
  }
  std::erase_if(out, [](const FigureError& f) { return !(f.measured_s > 0); });
  return out;
}

MeasuredReport compare_replay(const MeasuredReplay& replay, const Replay& result,
                              const EngineSetup& engine) {
  MeasuredReport report;
  report.source = replay.source;
  report.engine = engine.description;
  report.left_out = replay.left_out;
  report.loss = replay_loss(replay, result);
  for (std::size_t k = 0; k < replay.measured.size(); ++k) {
    const RequestOutcome r = result.requests[k];
    MeasuredRequestRow row;
    row.measured = replay.measured[k];
    row.arrival_s = SimTime::ns(replay.trace.records[k].offset_ns).seconds();
    row.rejected = r.rejected;
    row.replica = r.unit;
    row.preemptions = r.preemptions;
    if (!r.rejected) {
      row.simulated_start_s = r.start.seconds();
      row.simulated_first_token_s = r.first_token_server.seconds();
      row.simulated_finish_s = r.finish.seconds();
      // Counted, as the engine's are, from the turn that took the request
      // (BATCHING.md section 10b), within half a step of its arrival.
      row.simulated_ttft_s = (r.first_token_server - r.queued).seconds();
      row.simulated_latency_s = (r.finish - r.queued).seconds();
      if (row.measured.output_tokens >= 2) {
        row.simulated_tpot_s =
            (r.finish - r.first_token_server).seconds() / (row.measured.output_tokens - 1);
      }
    }
    report.requests.push_back(row);
  }
  for (const MetricSamples& g : served_samples(report.requests)) {
    const std::vector<double> a = statistics_ms(g.measured), b = statistics_ms(g.simulated);
    for (int i = 0; i < 5; ++i) {
      MeasuredTableRow row;
      row.metric = g.metric;
      row.statistic = kStatistics[i];
      row.measured_ms = a[static_cast<std::size_t>(i)];
      row.simulated_ms = b[static_cast<std::size_t>(i)];
      for (const PublishedFigure& p : replay.published) {
        if (p.metric == row.metric && p.statistic == row.statistic) row.other_ms = p.simulated_ms;
      }
      report.table.push_back(row);
    }
  }

  // Ticks: the replay's state at each tick's end, summed over replicas (KV
  // use averaged), as the stat logger keeps each engine's last snapshot.
  if (!replay.ticks.empty()) {
    const double tick_s = replay.tick_s.value_or(1);
    report.tick_offset_s = tick_offset(replay, tick_s);
    const double offset = report.tick_offset_s.value_or(0);
    std::uint32_t replicas = 0;
    for (const StepRecord& s : result.steps)
      replicas = std::max(replicas, s.replica + 1);
    std::vector<std::vector<const StepRecord*>> by_replica(replicas);
    for (const StepRecord& s : result.steps)
      by_replica[s.replica].push_back(&s);
    double running_diff = 0, waiting_diff = 0;
    for (const MeasuredTick& tick : replay.ticks) {
      MeasuredTickRow row;
      row.t_s = tick.t_s;
      row.replay_s = tick.t_s - offset;
      row.measured_running = tick.running;
      row.measured_waiting = tick.waiting;
      row.measured_kv_pct = tick.kv_cache_pct;
      const SimTime at = SimTime::from_seconds(std::max(0.0, row.replay_s));
      double kv = 0;
      for (const std::vector<const StepRecord*>& steps : by_replica) {
        // The last step that started before the instant; none, or ended
        // before it with no step after: the replica is idle, holding nothing.
        const auto it =
            std::lower_bound(steps.begin(), steps.end(), at,
                             [](const StepRecord* s, SimTime t) { return s->start < t; });
        if (it == steps.begin()) continue;
        const StepRecord* s = *(it - 1);
        if (s->end < at) continue;
        row.simulated_running += s->running;
        row.simulated_waiting += s->waiting;
        kv += s->kv_blocks == 0 ? 0 : 100.0 * s->kv_blocks_used / s->kv_blocks;
      }
      row.simulated_kv_pct = replicas == 0 ? 0 : kv / replicas;
      running_diff += std::abs(row.simulated_running - row.measured_running);
      waiting_diff += std::abs(row.simulated_waiting - row.measured_waiting);
      report.ticks.push_back(row);
    }
    report.running_mean_abs_diff = running_diff / static_cast<double>(replay.ticks.size());
    report.waiting_mean_abs_diff = waiting_diff / static_cast<double>(replay.ticks.size());
  }
  return report;
}

std::string workload_of_run(const std::string& path) {
  const std::string missing =
      "missing: --measured replays the workload the run was given; name it (the token-id JSONL "
      "whose line i is the run's bench-i)";
  if (!is_measured_run_folder(path)) throw InputError("", 0, "--trace", missing);
  const MeasuredRun run = read_measured_run(path);
  if (!run.engine || !run.engine->dataset_path) throw InputError("", 0, "--trace", missing);
  const std::filesystem::path dir(path);
  const std::filesystem::path beside =
      (dir.has_filename() ? dir : dir.parent_path()).parent_path() / "workloads" /
      std::filesystem::path(*run.engine->dataset_path).filename();
  std::error_code error;
  if (!std::filesystem::exists(beside, error)) {
    throw InputError("", 0, "--trace",
                     missing + "; meta.json's dataset_path is not at " + beside.string());
  }
  return beside.string();
}

void refuse_folder_without_requests(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error) && !is_measured_run_folder(path)) {
    throw InputError((std::filesystem::path(path) / "requests.jsonl").string(), 0, "",
                     "missing: a measured run's folder holds requests.jsonl (one request a "
                     "line), and meta.json beside it");
  }
}

MeasuredSource load_measured_source(const std::string& path, const Trace& workload,
                                    const std::string& workload_sha256, const BatchingKnobs& base,
                                    const GivenKnobs& given) {
  MeasuredSource source;
  refuse_folder_without_requests(path);
  if (is_measured_run_folder(path)) {
    const MeasuredRun run = read_measured_run(path);
    source.run_folder = true;
    source.engine = engine_setup(run, base, given);
    source.replay = prepare_replay(run, workload, workload_sha256);
  } else {
    const Measurement measurement = read_measurement(path);
    source.engine = engine_setup(base, given);
    source.replay = prepare_replay(measurement, workload);
  }
  return source;
}

}  // namespace infersim
