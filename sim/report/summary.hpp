// The summary figures of a run (MODEL.md section 8, OUTPUT.md keys), kept as an
// ordered list of named figures so that JSON, CSV and console read one source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sim_time.hpp"
#include "model/energy_model.hpp"
#include "model/request_observer.hpp"

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

// Percentile q in [0, 1] of the values, by linear interpolation at (n-1)*q
// exactly as NumPy's default does it. Reorders `values`. None when empty.
std::optional<double> percentile(std::vector<double>& values, double q);
// The same percentile of nanosecond counts, in seconds: equal to `percentile`
// over each count converted by Duration::seconds (the conversion keeps the
// order). Selects rather than sorts; reorders `ns`.
std::optional<double> percentile_seconds(std::vector<std::int64_t>& ns, double q);
// NumPy's default interpolation between the values at floor((n-1)q) and the
// next index, as `percentile` does it.
double interpolate(double below, double above, double index);

// Every request's latencies as nanosecond counts, for exact percentiles: the
// makespan (E2E latency), the time to first token and the wait. Kept once a
// run; the summary and the serving figures read the same arrays.
// Sorted once (a radix sort each), every percentile is then read off them.
struct LatencySamples {
  std::vector<std::int64_t> e2el_ns, ttft_ns, wait_ns;
  bool sorted = false;
  void reserve(std::size_t requests);
  void add(Duration e2el, Duration ttft, Duration wait) {
    e2el_ns.push_back(e2el.count_ns());
    ttft_ns.push_back(ttft.count_ns());
    wait_ns.push_back(wait.count_ns());
    sorted = false;
  }
  // Sorts the three arrays, unless they are.
  void sort();
  // `percentile_seconds` of one of the three arrays, read off it once sorted.
  std::optional<double> percentile(const std::vector<std::int64_t>& ns, double q);
};

// The percentile of ns counts sorted in increasing order, in seconds, as
// `percentile_seconds` gives it.
std::optional<double> sorted_percentile_seconds(const std::vector<std::int64_t>& sorted, double q);

// Listens to the edge model and accumulates, in request id order, what the
// summary needs. Keeps its own latency samples, or, given `shared`, reads
// those another observer fills with the same requests (ServingMetrics does).
class SummaryCollector : public RequestObserver {
 public:
  explicit SummaryCollector(std::size_t expected_requests = 0, LatencySamples* shared = nullptr);
  SummaryCollector(const SummaryCollector&) = delete;
  SummaryCollector& operator=(const SummaryCollector&) = delete;
  void on_issued(std::uint64_t id, const Task& task, const RequestOutcome& outcome) override;
  void on_completed(std::uint64_t, const Task&, const RequestOutcome&) override {}

  struct RunFacts {
    SimTime run_length;  // T
    std::uint64_t dropped = 0;
    unsigned cores = 1;
    const EnergyModel* energy = nullptr;
  };
  Summary summarize(const RunFacts& facts);

 private:
  __extension__ using Int128 = __int128;
  std::uint64_t n_ = 0;
  std::uint64_t met_ = 0;
  Int128 exec_ns_ = 0;
  Int128 wait_ns_ = 0;
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
