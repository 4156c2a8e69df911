// Serving figures under the names vLLM's benchmark prints them (TTFT, TPOT,
// E2E latency, throughputs, peak concurrency, goodput), collected by an
// observer and appended to a mode's summary after the OUTPUT.md figures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/large_array.hpp"
#include "core/sim_time.hpp"
#include "model/request_observer.hpp"
#include "report/summary.hpp"
#include "request/request_list.hpp"

namespace infersim {

// vLLM's --goodput: bounds in milliseconds, each optional. A request is good
// when it meets every bound given (inclusive).
struct GoodputBounds {
  std::optional<double> ttft_ms;
  std::optional<double> tpot_ms;
  std::optional<double> e2el_ms;
};

struct ServingMetricsKnobs {
  std::vector<double> percentiles = {50, 90, 99};  // each in (0, 100]
  std::optional<GoodputBounds> goodput;            // none: no goodput figures
  // A request's TPOT from its token instants at the server, as BATCHING.md
  // section 7 has it ((finish - first token) / (o - 1), o = llround(generated),
  // rounded in integers), and the inter-token latencies the server reports
  // (itl_* figures). Else MODEL.md's edge server: (E2E - TTFT) / (g - 1), no ITL.
  bool server_token_instants = false;
  // A benchmark's client sent the requests (MODEL.md section 4b), its cap
  // (0: none), and the GPUs that served (0: not GPUs): the benchmark's
  // figures of such a run.
  bool client = false;
  std::uint32_t max_concurrency = 0;
  double gpus = 0;
};

// An empirical distribution as points: at each fraction, the waiting time,
// the time to first token and the end-to-end latency below which that
// fraction of the requests lies (percentiles interpolated as NumPy's default).
struct LatencyCdf {
  std::vector<double> fraction;
  std::vector<double> wait_s;
  std::vector<double> ttft_s;
  std::vector<double> e2el_s;
};

// "ttft_p50_s", "e2el_p99.9_s": metric, `p` and the percentile in its shortest
// decimal form.
std::string percentile_key(const std::string& metric, double percentile);

// Listens to the simulation and keeps each request's latencies. Over the
// simulated requests (served: a rejected one has none):
// - TTFT = first token at the device − arrival; E2E latency = response −
//   arrival (the makespan); wait = start − server arrival;
// - TPOT = (E2E − TTFT) / (generated − 1), over requests with more than one
//   generated token (or from the server's token instants, see the knobs);
// - ITL: every gap between consecutive tokens of a request, as the server
//   reports them (the batching server);
// - the benchmark duration runs from the first arrival to the last response
//   (vLLM's, from the first request sent to the last one finished); the
//   throughputs divide by it;
// - the peak output token throughput is vLLM's: the most generated tokens
//   reaching the devices in one second [first arrival + k s, + (k+1) s); a
//   request's llround(generated) tokens reach its device evenly spaced from
//   its first token to its response (the edge server's tokens, by TPOT's
//   definition; the batching server's as an even spread of its own instants,
//   which the observer is not told one by one);
// - goodput counts the requests meeting every bound; a request with one
//   generated token or none meets any TPOT bound (vLLM counts its TPOT as 0);
// - peak concurrency is counted as requests come, so on_request must be called
//   in non-decreasing arrival order (as Simulation does).
class ServingMetrics : public RequestObserver, public ServerObserver {
 public:
  // Given `requests` (the tasks it will be told of, in id order, which must
  // outlive it), the TPOT of each is worked out at the end from its latencies
  // and its generated tokens there, rather than kept: on_request must then come
  // in id order.
  explicit ServingMetrics(ServingMetricsKnobs knobs = {}, std::size_t expected_requests = 0,
                          const RequestList* requests = nullptr);
  // A rejected request has no latency: it is left out of every figure.
  void on_request(std::uint64_t id, const Request& request, const RequestOutcome& outcome) override;
  void on_token_gaps(std::span<const Duration> gaps) override;
  unsigned reads() const override { return kTokenGaps; }
  // Room for this many token gaps, taken before the run (a few million on a
  // long trace: one allocation, on huge pages where the kernel gives them).
  void reserve_token_gaps(std::size_t gaps);

  // Selects every percentile the figures and the CDF will read, on two
  // threads when `spare_core`; optional (they are selected when read).
  // True when it did so on two threads.
  bool prepare(bool spare_core);
  // Appends the serving figures to `summary`, after what it holds, skipping a
  // key it already has (ttft_p50_s is one of OUTPUT.md's). Call once.
  void append_to(Summary& summary);
  // From this many requests prepare() uses a spare core.
  static constexpr std::uint64_t kPrepareOnTwoThreadsFrom = 100'000;
  // The CDF's points when not told otherwise (cdf.csv).
  static constexpr std::size_t kCdfPoints = 1001;
  // Up to `max_points` evenly spaced fractions from 0 to 1 (every request's
  // value when there are fewer requests). Call after append_to or alone.
  LatencyCdf cdf(std::size_t max_points = kCdfPoints);
  // Every request's E2E latency, TTFT and wait (SummaryCollector can read them).
  LatencySamples& samples() { return samples_; }

 private:
  ServingMetricsKnobs knobs_;
  std::uint64_t n_ = 0;
  std::uint64_t good_ = 0;
  double tpot_sum_s_ = 0;
  double input_tokens_ = 0;
  double output_tokens_ = 0;
  std::optional<SimTime> first_arrival_;
  SimTime last_response_;
  LatencySamples samples_;
  const RequestList* requests_;
  std::uint64_t tpot_count_ = 0;  // requests with a TPOT
  std::vector<double> tpot_s_;    // each TPOT, without `requests`
  std::optional<std::vector<std::optional<double>>> tpot_percentiles_;  // once selected
  std::vector<std::optional<double>> tpot_percentiles();
  // Responses of the requests in flight, a min-heap; its largest size.
  std::vector<std::int64_t> in_flight_;
  std::uint64_t peak_in_flight_ = 0;
  SimTime last_arrival_;
  // Every inter-token gap, with server_token_instants: their sum in seconds,
  // added in the order they come, and the gaps themselves for the
  // percentiles, in any order: those under 2^32 ns (4.29 s, nearly all) in
  // 32 bits, since filling fresh pages is most of what keeping them costs,
  // the others in 64.
  double itl_sum_s_ = 0;
  LargeVector<std::uint32_t> itl_ns_;
  std::vector<std::int64_t> itl_long_ns_;
  // Tokens reaching the devices a second from the first arrival: the seconds
  // from `tokens_from_` on, still open (a later request's tokens come no
  // earlier than its arrival, so the seconds before the latest arrival's are
  // final and leave for `peak_tokens_`).
  void count_tokens(SimTime first_token, SimTime last_token, std::int64_t tokens);
  std::vector<std::uint64_t> tokens_a_second_;
  std::uint64_t tokens_from_ = 0;
  std::uint64_t peak_tokens_ = 0;
};

}  // namespace infersim
