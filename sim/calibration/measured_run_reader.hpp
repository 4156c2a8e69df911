// Reading a measured run of a real LLM server as LLMServingSim's bench
// publishes one: a folder with `requests.jsonl` (each request's token counts
// and the engine's own instants), `meta.json` (the engine's arguments and, in
// newer runs, its resolved configuration, KV cache and hardware), and when
// present `timeseries.csv` (one row a tick) and `llmservingsim_vs_vllm.txt`
// (that simulator's figures against the engine's). What `calibrate --server
// batching` fits and what `run --measured RUN_DIR` compares a replay with.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace infersim {

// One request of requests.jsonl. Instants are the engine's monotonic clock in
// seconds (vLLM's RequestStateStats); a request the engine never served has
// them null and `served` false.
struct MeasuredRunRequest {
  std::uint64_t line = 0;   // of requests.jsonl, from 1
  std::uint64_t index = 0;  // i of "bench-i": line i (from 0) of the workload
  std::uint32_t input_tokens = 0;
  std::uint32_t output_tokens = 0;
  bool served = false;
  std::optional<double> arrival_time_s;  // the client's clock (epoch seconds)
  double queued_s = 0;                   // entered the engine's waiting queue
  double scheduled_s = 0;                // first scheduled
  double first_token_s = 0;
  double last_token_s = 0;
};

// What meta.json says about the engine; none where it says nothing (or null).
// A value is taken from the resolved configuration when the file has one,
// else from the engine arguments; `*_from` names the key it came from.
struct MeasuredEngine {
  std::string model;
  std::string vllm_version;
  std::optional<std::int64_t> tensor_parallel_size;
  std::optional<std::int64_t> data_parallel_size;
  std::optional<bool> enable_expert_parallel;
  std::optional<std::int64_t> max_num_seqs;
  std::optional<std::int64_t> max_num_batched_tokens;
  std::optional<std::int64_t> max_model_len;
  std::optional<std::int64_t> num_gpu_blocks;  // kv_cache.num_gpu_blocks
  std::optional<std::int64_t> block_size;
  std::optional<bool> enable_prefix_caching;
  std::optional<bool> async_scheduling;  // resolved_config.scheduler_config
  std::optional<double> gpu_memory_utilization;
  std::optional<std::string> device_name;  // hardware.device_name
  std::optional<double> device_memory_bytes;
  std::optional<std::int64_t> device_count;
  std::optional<std::string> dataset_path;
  std::optional<std::string> dataset_hash;  // SHA-256 of the workload
  std::optional<double> tick_seconds;
  // Where each engine figure came from, "key: value" lines in read order.
  std::vector<std::string> sources;
};

// A row of timeseries.csv: `t` is the end of its tick in seconds from the stat
// logger's start; running, waiting and the KV use are the last snapshot in the
// tick (summed over data-parallel engines; KV use averaged).
struct MeasuredTick {
  double t_s = 0;
  std::optional<double> prompt_throughput;  // prompt tokens of prefills finished in the tick, / s
  std::optional<double> gen_throughput;
  double running = 0;
  double waiting = 0;
  std::optional<double> kv_cache_pct;
  std::optional<double> preempted;
};

// One line of llmservingsim_vs_vllm.txt: `TTFT Mean  7097.2  6815.7  -4.0%`.
struct PublishedFigure {
  std::string metric;     // "TTFT", "TPOT", "Latency"
  std::string statistic;  // "Mean", "Median", "P90", "P95", "P99"
  double measured_ms = 0;
  double simulated_ms = 0;
};

struct MeasuredRun {
  std::filesystem::path dir;
  std::vector<MeasuredRunRequest> requests;  // in file order
  std::uint64_t unserved = 0;                // requests with null instants
  std::optional<MeasuredEngine> engine;      // none: no meta.json
  std::vector<MeasuredTick> ticks;           // empty: no timeseries.csv
  std::vector<PublishedFigure> published;    // empty: no llmservingsim_vs_vllm.txt

  // The request `bench-i` of the workload's line i, or nullptr.
  const MeasuredRunRequest* by_index(std::uint64_t i) const;
};

// True when `path` is a folder holding requests.jsonl.
bool is_measured_run_folder(const std::filesystem::path& path);

// Reads the folder. Throws InputError naming the file, line and field of the
// first bad value: a request id that is not `bench-N` or repeats, a missing or
// negative count, instants out of order (queued, scheduled, first token, last
// token), a meta.json field of the wrong type, a timeseries.csv without `t`,
// `running` or `waiting`; or when no request was served.
MeasuredRun read_measured_run(const std::filesystem::path& dir);

}  // namespace infersim
