// The summary figures of a run (MODEL.md section 8, OUTPUT.md keys), kept as an
// ordered list of named figures so that JSON, CSV and console read one source.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/order_statistics.hpp"
#include "core/percentiles.hpp"
#include "core/sim_time.hpp"
#include "model/radio_energy.hpp"
#include "model/request_observer.hpp"
#include "model/server_model.hpp"

namespace infersim {

struct Figure {
  std::string key;
  std::optional<double> value;  // none = the figure does not exist (written as null)
  bool integer = false;         // a count, written without a fraction
};

class Summary {
 public:
  void add(std::string key, std::optional<double> value, bool integer = false);
  const std::vector<Figure>& figures() const { return figures_; }
  // The figure's value; throws std::out_of_range for an unknown key.
  std::optional<double> get(const std::string& key) const;

 private:
  std::vector<Figure> figures_;
};

// Every request's latencies as nanosecond counts, for exact percentiles and
// sums: the makespan (E2E latency), the time to first token and the wait. Kept
// once a run; the summary and the serving figures read the same arrays. A
// percentile is read off the exact order statistics at its two ranks, selected
// without sorting (core/order_statistics). Readers say beforehand what they
// will read (`want`), so that one selection an array finds every rank at once;
// a percentile not wanted is still exact, only found by a selection of its own.
class LatencySamples {
 public:
  enum Metric : unsigned { kE2el = 0, kTtft = 1, kWait = 2 };

  void reserve(std::size_t requests);
  void add(Duration e2el, Duration ttft, Duration wait) {
    push(kE2el, e2el);
    push(kTtft, ttft);
    push(kWait, wait);
    if (selected_.load(std::memory_order_relaxed)) forget();
  }
  std::size_t size() const { return ns_[kE2el].size(); }
  const std::vector<std::int64_t>& values(Metric m) const { return ns_[m]; }
  // The sum of `m`'s values in seconds, summed exactly and converted once.
  double total_s(Metric m) const { return static_cast<double>(total_ns_[m]) / 1e9; }
  // Their mean in seconds; none without values.
  std::optional<double> mean_s(Metric m) const {
    if (size() == 0) return std::nullopt;
    return total_s(m) / static_cast<double>(size());
  }

  // Percentile q in [0, 1] of `m` will be read.
  void want(Metric m, double q) { wanted_q_[m].push_back(q); }
  // The points of `cdf_fractions(size(), max_points)` of `m` will be read.
  void want_cdf(Metric m, std::size_t max_points) { wanted_cdf_[m] = max_points; }
  // `percentile_seconds` of `m`'s values.
  std::optional<double> percentile(Metric m, double q);
  // Selects every wanted percentile of `m` now (the metrics may be selected
  // on different threads at once; nothing else may run meanwhile).
  void select_wanted(Metric m) { select(m, {}); }

  // Up to `max_points` (at least 2) evenly spaced fractions from 0 to 1, or
  // one a value when there are fewer values: the fractions a CDF is read at.
  static std::vector<double> cdf_fractions(std::size_t n, std::size_t max_points);

 private:
  __extension__ using Int128 = __int128;

  void push(Metric m, Duration d) {
    ns_[m].push_back(d.count_ns());
    total_ns_[m] += d.count_ns();
  }
  void forget();
  // Selects the values at `ranks` of `m` and every wanted one not yet known.
  void select(Metric m, std::vector<std::size_t> ranks);

  std::vector<std::int64_t> ns_[3];
  Int128 total_ns_[3] = {0, 0, 0};
  std::vector<double> wanted_q_[3];
  std::size_t wanted_cdf_[3] = {0, 0, 0};
  std::vector<std::pair<std::size_t, std::int64_t>> known_[3];  // (rank, value), by rank
  std::atomic<bool> selected_{false};  // the metrics are selected on two threads
};

// Listens to the simulation and accumulates, in request id order, what the
// summary needs (MODEL.md section 8; BATCHING.md section 9 for a server that
// rejects requests: they count as requests and misses, their request bits in
// the traffic, and are left out of every latency figure and average, which
// divide by the requests served). Keeps its own latency samples, or, given
// `shared`, reads those another observer fills with the same requests
// (ServingMetrics does).
class SummaryCollector : public RequestObserver {
 public:
  explicit SummaryCollector(std::size_t expected_requests = 0, LatencySamples* shared = nullptr);
  SummaryCollector(const SummaryCollector&) = delete;
  SummaryCollector& operator=(const SummaryCollector&) = delete;
  void on_request(std::uint64_t id, const Request& request, const RequestOutcome& outcome) override;

  struct RunFacts {
    SimTime run_length;  // T
    std::uint64_t dropped = 0;
    const ServerUsage* usage = nullptr;  // what the server used
    const RadioEnergy* radio = nullptr;  // the devices' radios
  };
  // OUTPUT.md's figures, then the server's own (ServerUsage::figures).
  Summary summarize(const RunFacts& facts);
  // The run's end: T, or the last response when later (MODEL.md section 8).
  SimTime end(SimTime run_length) const { return std::max(run_length, last_response_); }

 private:
  __extension__ using Int128 = __int128;
  std::uint64_t n_ = 0;
  std::uint64_t served_ = 0;  // n_ less the rejected
  std::uint64_t met_ = 0;
  Int128 makespan_ok_ns_ = 0;
  Int128 budget_ns_ = 0;
  double request_bits_ = 0;
  double result_bits_ = 0;
  SimTime last_response_;
  LatencySamples own_;
  LatencySamples* samples_;  // &own_ or the shared ones
  bool fills_samples_;
};

}  // namespace infersim
