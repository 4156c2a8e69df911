// SyntheticRequestGenerator: the comparison workload of MODEL.md section 9. The
// same run length, fleet, server and knobs as the recorded replay, with the
// requests drawn instead: arrivals at the trace's mean rate, sizes the trace's
// means (or a recorded request's pair drawn uniformly).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "request/trace_request_generator.hpp"

namespace infersim {

// mean: every request the trace's mean sizes (MODEL.md section 9); empirical:
// a recorded request's sizes drawn uniformly; recorded: the recorded requests
// themselves, each once in recorded order with its sizes and block ids, only
// their instants drawn (the timing alone changes).
enum class SyntheticSizes { kMean, kEmpirical, kRecorded };
enum class ArrivalProcess { kPoisson, kGamma };

struct SyntheticKnobs {
  SyntheticSizes sizes = SyntheticSizes::kMean;
  // Gamma inter-arrivals of shape `burstiness` at the same mean rate (vLLM's
  // --burstiness; 1 is Poisson, CV = 1/sqrt(K)). Outside the cross-implementation
  // contract: MODEL.md defines Poisson arrivals only.
  ArrivalProcess arrivals = ArrivalProcess::kPoisson;
  double burstiness = 1;
  std::uint64_t seed = 42;
};

// What the synthetic mode takes from the trace: the rate over all records and
// the mean sizes. With a replay window, over the records in it.
struct TraceRates {
  double rate_per_s = 0;           // n_trace / span_s
  double mean_context_tokens = 0;  // sum / n_trace, not rounded
  double mean_generated_tokens = 0;
  Duration span;                      // last - first arrival after time scale and resolution
  std::vector<std::size_t> replayed;  // the records drawn from: all, or the replay window's
};

// Throws InputError when the span is zero (every request at the same instant).
TraceRates trace_rates(const Trace& trace, const ArrivalKnobs& arrival);

class SyntheticRequestGenerator {
 public:
  SyntheticRequestGenerator(ArrivalKnobs arrival, RequestKnobs task, SyntheticKnobs synthetic)
      : arrival_(arrival), task_(task), synthetic_(synthetic) {}

  // Draws requests until the first arrival after `run_length`; with recorded
  // sizes, draws the instants of the replayed records (generate_retimed).
  GeneratedRequests generate(const Trace& trace, SimTime run_length) const;

  // The replayed records, each once in recorded order, at instants of the
  // arrival process conditioned on their count and span: n + 1 gaps drawn
  // (exponential, or gamma of the burstiness), and request i at the first
  // recorded arrival plus the span times the first i gaps' share of all n + 1
  // (for Poisson arrivals exactly n uniform points in the span, in order).
  GeneratedRequests generate_retimed(const Trace& trace, SimTime run_length) const;

 private:
  ArrivalKnobs arrival_;
  RequestKnobs task_;
  SyntheticKnobs synthetic_;
};

}  // namespace infersim
