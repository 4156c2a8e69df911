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

// Listens to the edge model and accumulates, in request id order, what the
// summary needs.
class SummaryCollector : public RequestObserver {
 public:
  explicit SummaryCollector(std::size_t expected_requests = 0);
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
  std::vector<double> makespan_s_, ttft_s_, wait_s_;
};

}  // namespace infersim
