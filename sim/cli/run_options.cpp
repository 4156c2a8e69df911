#include "cli/run_options.hpp"

#include <charconv>
#include <cmath>
#include <optional>

#include "core/input_error.hpp"

namespace infersim {

const std::vector<KnobFlag>& knob_flags() {
  static const std::vector<KnobFlag> kFlags = {
      {"devices", "run.devices", "devices issuing the requests in turn (50)", KnobFlag::kWhole},
      {"duration", "run.duration_s",
       "run length T in seconds (default: the last arrival rounded up to a minute)",
       KnobFlag::kReal},
      {"seed", "run.seed", "seed of the run's random streams (42)", KnobFlag::kWhole},
      {"time-resolution", "run.time_resolution_s",
       "arrival clock: exact, 1s, 10ms, ... or seconds (exact)", KnobFlag::kResolution},
      {"time-scale", "run.time_scale", "multiplies every arrival offset (1)", KnobFlag::kReal},
      {"start-offset", "run.start_offset_s",
       "replay only from this offset of trace time (inclusive); a bare number is seconds, or "
       "give a unit: 600s, 600000ms (aiperf's --fixed-schedule-start-offset is in ms)",
       KnobFlag::kDuration},
      {"end-offset", "run.end_offset_s",
       "replay only up to this offset of trace time (inclusive); seconds, or 600s, 600000ms",
       KnobFlag::kDuration},
      {"max-idle-gap", "run.max_idle_gap_s",
       "cap every idle gap between consecutive arrivals at this long; seconds, or 5s, 5000ms",
       KnobFlag::kDuration},
      {"bytes-per-token", "tokens.bytes_per_token", "bytes of text per token (4)", KnobFlag::kReal},
      {"mi-per-context-token", "tokens.mi_per_context_token",
       "million instructions per context token, prefill (12)", KnobFlag::kReal},
      {"mi-per-generated-token", "tokens.mi_per_generated_token",
       "million instructions per generated token, decode (2000)", KnobFlag::kReal},
      {"ttft-budget", "deadline.ttft_budget_s", "seconds promised before the first token (2)",
       KnobFlag::kReal},
      {"decode-budget", "deadline.decode_budget_s", "seconds promised per generated token (0.1)",
       KnobFlag::kReal},
      {"server", "server.kind",
       "server model: edge (multi-core, MODEL.md) or batching (continuous-batching replicas, "
       "BATCHING.md) (edge)",
       KnobFlag::kText},
      {"cores", "server.cores", "edge server cores (8)", KnobFlag::kWhole},
      {"mips-per-core", "server.mips_per_core", "MIPS of one core (60000)", KnobFlag::kReal},
      {"idle-power", "server.idle_power_w", "server power when idle, W (420)", KnobFlag::kReal},
      {"max-power", "server.max_power_w", "server power with every core busy, W (720)",
       KnobFlag::kReal},
      {"replicas", "batching.replicas", "batching: engine replicas, each with its own KV cache (1)",
       KnobFlag::kWhole},
      {"router", "batching.router",
       "batching: round-robin, least-requests, kv-aware, prefix or vllm-dp (round-robin)",
       KnobFlag::kText},
      {"router-refresh-s", "batching.router_refresh_s",
       "batching: how often the vllm-dp router's counts refresh, s (0.1)", KnobFlag::kReal},
      {"max-num-seqs", "batching.max_num_seqs", "batching: most requests running a replica (1024)",
       KnobFlag::kWhole},
      {"max-num-batched-tokens", "batching.max_num_batched_tokens",
       "batching: tokens a step may schedule (8192)", KnobFlag::kWhole},
      {"block-tokens", "batching.block_tokens", "batching: tokens a KV block holds (16)",
       KnobFlag::kWhole},
      {"kv-blocks", "batching.kv_blocks", "batching: usable KV blocks a replica (31250)",
       KnobFlag::kWhole},
      {"max-model-len", "batching.max_model_len",
       "batching: longest request, prompt + output, accepted (min(131072, kv-blocks x "
       "block-tokens))",
       KnobFlag::kWhole},
      {"prefix-caching", "batching.prefix_caching",
       "batching: on or off: share cached prompt blocks between requests (on)", KnobFlag::kSwitch},
      {"reserve-full-prompt", "batching.reserve_full_prompt",
       "batching: on or off: admit a request only if its whole prompt fits (on)",
       KnobFlag::kSwitch},
      {"step-base-s", "batching.step_base_s", "batching: fixed cost of a step, s (0.0065)",
       KnobFlag::kReal},
      {"step-prefill-token-s", "batching.step_prefill_token_s",
       "batching: cost of a prefill token, s (1.98e-5)", KnobFlag::kReal},
      {"step-prefill-pair-s", "batching.step_prefill_pair_s",
       "batching: cost of a (query, key) pair of prefill attention, s (1.2e-9)", KnobFlag::kReal},
      {"step-decode-token-s", "batching.step_decode_token_s",
       "batching: cost of a decode token, s (2e-5)", KnobFlag::kReal},
      {"step-decode-context-s", "batching.step_decode_context_s",
       "batching: cost of a context token read by a decode, s (4e-8)", KnobFlag::kReal},
      {"step-weights-s", "batching.step_weights_s",
       "batching: the weights read once a step, s, the roofline's memory side (0)",
       KnobFlag::kReal},
      {"step-expert-s", "batching.step_expert_s",
       "batching: one expert's weights read in a step, s (0; needs moe-experts)", KnobFlag::kReal},
      {"moe-experts", "batching.moe_experts",
       "batching: experts of a mixture-of-experts model (0: dense)", KnobFlag::kWhole},
      {"moe-active-experts", "batching.moe_active_experts",
       "batching: experts a token is routed to (0: dense)", KnobFlag::kWhole},
      {"step-roofline", "batching.step_roofline",
       "batching: on or off: a step costs its fixed part plus the larger of its memory and "
       "compute sides, not their sum (off)",
       KnobFlag::kSwitch},
      {"gpu-idle-w", "batching.gpu_idle_w", "batching: power of an idle replica, W (100)",
       KnobFlag::kReal},
      {"gpu-max-w", "batching.gpu_max_w", "batching: power of a stepping replica, W (700)",
       KnobFlag::kReal},
      {"async-scheduling", "batching.async_scheduling",
       "batching: on or off: plan a step while the one before runs (off)", KnobFlag::kSwitch},
      {"replay-turns", "batching.replay_turns",
       "batching, --measured RUN: on or off: a recorded arrival is the engine's turn, taken at "
       "the nearer end of the step running then (off)",
       KnobFlag::kSwitch},
      {"lockstep", "batching.lockstep",
       "batching: on or off: replicas step together, as data-parallel MoE engines (off)",
       KnobFlag::kSwitch},
      {"decode-router", "batching.decode_router",
       "batching, disaggregated: round-robin, least-requests, kv-aware or vllm-dp among the "
       "decode replicas (round-robin)",
       KnobFlag::kText},
      {"kv-bytes-per-token", "batching.kv_bytes_per_token",
       "batching, disaggregated: KV bytes a prompt token transfers (131072)", KnobFlag::kReal},
      {"kv-link-gbps", "batching.kv_link_gbps",
       "batching, disaggregated: a prefill replica's link to the decode replicas, Gbit/s (400)",
       KnobFlag::kReal},
      {"kv-link-latency-s", "batching.kv_link_latency_s",
       "batching, disaggregated: fixed cost of a KV transfer, s (0.0005)", KnobFlag::kReal},
      {"trace", "trace.path", "trace file (trace/azure_llm_code_1h.csv)", KnobFlag::kText},
      {"format", "trace.format",
       "auto, azure-csv, mooncake-jsonl, burstgpt-csv, aiperf-jsonl, token-ids-jsonl, csv or jsonl "
       "(auto)",
       KnobFlag::kText},
      {"timestamp-column", "trace.timestamp_column", "column or key of the arrival time",
       KnobFlag::kText},
      {"input-column", "trace.input_column", "column or key of the input (context) tokens",
       KnobFlag::kText},
      {"output-column", "trace.output_column", "column or key of the output (generated) tokens",
       KnobFlag::kText},
      {"hash-ids-column", "trace.hash_ids_column", "column or key of the prompt block ids",
       KnobFlag::kText},
      {"timestamp-unit", "trace.timestamp_unit", "s, ms, us, ns, datetime or auto (auto)",
       KnobFlag::kText},
      {"sizes", "synthetic.sizes",
       "synthetic request sizes: mean (the trace's means), empirical (a recorded pair drawn) or "
       "recorded (the recorded requests themselves, only their instants drawn) (mean)",
       KnobFlag::kText},
      {"arrivals", "synthetic.arrivals", "synthetic arrivals: poisson or gamma (poisson)",
       KnobFlag::kText},
      {"burstiness", "synthetic.burstiness",
       "shape K of gamma inter-arrivals at the same mean rate; 1 is Poisson (1)", KnobFlag::kReal},
      {"replications", "synthetic.replications",
       "synthetic runs with seeds seed .. seed+R-1, reported as mean and 95 % CI (1)",
       KnobFlag::kWhole},
      {"per-request", "output.per_request", "csv: write requests.csv; none: summary only (csv)",
       KnobFlag::kText},
      {"metric-percentiles", "report.metric_percentiles",
       "percentiles of TTFT, TPOT, E2E latency and wait in the summary, comma-separated "
       "(50,90,99)",
       KnobFlag::kPercentiles},
      {"goodput", "report.goodput",
       "vLLM's goodput bounds in ms, e.g. \"ttft:500 tpot:50 e2el:2000\" (or aiperf's names: "
       "time_to_first_token, inter_token_latency, request_latency); a request is good when it "
       "meets every bound given (none)",
       KnobFlag::kGoodput},
      {"slice-duration", "report.slice_duration_s", "seconds a row of timeseries.csv (60)",
       KnobFlag::kReal},
      {"plots", "report.plots", "svg: render the plots with gnuplot; none: no plots (svg)",
       KnobFlag::kText},
  };
  return kFlags;
}

nlohmann::json flag_value(const KnobFlag& flag, const std::string& text) {
  const std::string label = std::string("--") + flag.flag;
  switch (flag.kind) {
    case KnobFlag::kText:
      return text;
    case KnobFlag::kResolution:
      return parse_time_resolution(text, label);
    case KnobFlag::kDuration:
      return parse_duration(text, label);
    case KnobFlag::kPercentiles:
      return parse_percentiles(text, label);
    case KnobFlag::kGoodput:
      return parse_goodput(text, label);
    case KnobFlag::kSwitch:
      if (text == "on" || text == "true") return true;
      if (text == "off" || text == "false") return false;
      throw InputError("", 0, label, "expected on or off, got '" + text + "'");
    case KnobFlag::kWhole: {
      std::uint64_t value = 0;
      const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
      if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return value;
      // A negative whole number goes on to the knob's own check, which gives
      // its range.
      std::int64_t negative = 0;
      const auto n = std::from_chars(text.data(), text.data() + text.size(), negative);
      if (n.ec == std::errc() && n.ptr == text.data() + text.size()) return negative;
      throw InputError("", 0, label, "expected a whole number, got '" + text + "'");
    }
    case KnobFlag::kReal:
      break;
  }
  double value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(value)) {
    throw InputError("", 0, label, "expected a number, got '" + text + "'");
  }
  return value;
}

const KnobFlag* find_knob_flag(const std::string& name) {
  for (const KnobFlag& flag : knob_flags()) {
    if (name == flag.flag) return &flag;
  }
  return nullptr;
}

void set_knob(Settings& settings, const KnobFlag& flag, const std::string& text) {
  set_setting(settings, flag.key, flag_value(flag, text), "", std::string("--") + flag.flag);
}

namespace {

// "10ms" -> 0.01, "2" -> 2 (seconds); none when the text is not a finite number
// with an optional unit (ns, us, ms, s).
std::optional<double> seconds_with_unit(const std::string& text) {
  struct Unit {
    const char* suffix;
    double seconds;
  };
  static constexpr Unit kUnits[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}};
  std::string number = text;
  double scale = 1;
  for (const Unit& unit : kUnits) {
    const std::string suffix = unit.suffix;
    if (number.size() > suffix.size() && number.ends_with(suffix)) {
      number.resize(number.size() - suffix.size());
      scale = unit.seconds;
      break;
    }
  }
  double value = 0;
  const auto r = std::from_chars(number.data(), number.data() + number.size(), value);
  if (r.ec != std::errc() || r.ptr != number.data() + number.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value * scale;
}

}  // namespace

double parse_time_resolution(const std::string& text, const std::string& label) {
  if (text == "exact") return 0;
  const std::optional<double> seconds = seconds_with_unit(text);
  if (!seconds || *seconds < 0) {
    throw InputError(
        "", 0, label,
        "expected exact, a duration such as 1s or 10ms, or seconds >= 0; got '" + text + "'");
  }
  return *seconds;
}

double parse_duration(const std::string& text, const std::string& label) {
  const std::optional<double> seconds = seconds_with_unit(text);
  if (!seconds) {
    throw InputError("", 0, label,
                     "expected seconds or a duration such as 600s or 600000ms, got '" + text + "'");
  }
  return *seconds;
}

}  // namespace infersim

namespace infersim {
namespace {

// The words of `text` apart by spaces, tabs or commas.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (const char c : text + " ") {
    if (c == ' ' || c == '\t' || c == ',') {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  return out;
}

std::optional<double> real_of(const std::string& text) {
  double value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

nlohmann::json parse_percentiles(const std::string& text, const std::string& label) {
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& word : words(text)) {
    const auto value = real_of(word);
    if (!value) {
      throw InputError("", 0, label,
                       "expected percentiles apart by commas such as 50,90,99; got '" + word + "'");
    }
    out.push_back(*value);
  }
  return out;
}

nlohmann::json parse_goodput(const std::string& text, const std::string& label) {
  const std::vector<std::string> given = words(text);
  if (given.size() == 1 && given[0] == "none") return nullptr;
  if (given.empty()) {
    throw InputError("", 0, label, "expected bounds such as ttft:500 e2el:2000, or none");
  }
  // vLLM's names, then aiperf's for the same bounds (its inter-token latency is
  // (e2e - ttft) / (generated - 1), vLLM's TPOT).
  struct Name {
    const char* word;
    const char* bound;
  };
  static constexpr Name kNames[] = {
      {"ttft", "ttft"},
      {"tpot", "tpot"},
      {"e2el", "e2el"},
      {"time_to_first_token", "ttft"},
      {"inter_token_latency", "tpot"},
      {"request_latency", "e2el"},
  };
  nlohmann::json out = nlohmann::json::object();
  for (const std::string& word : given) {
    const auto colon = word.find(':');
    const std::string name = word.substr(0, colon);
    const auto value = colon == std::string::npos ? std::nullopt : real_of(word.substr(colon + 1));
    const Name* known = nullptr;
    std::vector<std::string> words;
    for (const Name& n : kNames) {
      if (name == n.word) known = &n;
      words.emplace_back(n.word);
    }
    if (known == nullptr) {
      const auto near = nearest(name, words);
      throw InputError("", 0, label,
                       "expected NAME:MS with NAME ttft, tpot or e2el (vLLM) or "
                       "time_to_first_token, inter_token_latency or request_latency (aiperf), "
                       "got '" +
                           word + "'" +
                           (near && colon != std::string::npos ? " (did you mean " + *near + "?)"
                                                               : std::string()));
    }
    if (!value) {
      throw InputError("", 0, label,
                       "expected " + name + ":MS, milliseconds as a number, got '" + word + "'");
    }
    const std::string key = std::string(known->bound) + "_ms";
    if (out.contains(key)) {
      throw InputError("", 0, label,
                       std::string(known->bound) + " is given twice" +
                           (name == known->bound ? "" : " (" + name + " is " + known->bound + ")"));
    }
    out[key] = *value;
  }
  return out;
}

}  // namespace infersim
