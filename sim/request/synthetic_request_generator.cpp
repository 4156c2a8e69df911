#include "request/synthetic_request_generator.hpp"

#include <cmath>
#include <vector>

#include <pcg_random.hpp>

#include "core/input_error.hpp"
#include "core/random.hpp"

namespace infersim {

TraceRates trace_rates(const Trace& trace, const ArrivalKnobs& arrival) {
  TraceRates rates;
  const ReplayedOffsets replayed = replayed_offsets(trace, arrival);
  if (replayed.record.empty()) {
    throw InputError(trace.path, 0, "", "no request of the trace is in the replay window");
  }
  const double n = static_cast<double>(replayed.record.size());
  // Offsets are in order, and scaling and rounding keep that order.
  rates.span = arrival_for_offset(replayed.offset_ns.back(), arrival) -
               arrival_for_offset(replayed.offset_ns.front(), arrival);
  if (rates.span <= Duration::zero()) {
    throw InputError(trace.path, 0, "",
                     "every request arrives at the same instant, so the trace has no mean rate "
                     "for the synthetic mode (replay it with --recorded)");
  }
  std::uint64_t context = 0, generated = 0;
  for (const std::size_t k : replayed.record) {
    context += trace.records[k].context_tokens;
    generated += trace.records[k].generated_tokens;
  }
  rates.rate_per_s = n / rates.span.seconds();
  rates.mean_context_tokens = static_cast<double>(context) / n;
  rates.mean_generated_tokens = static_cast<double>(generated) / n;
  rates.replayed = std::move(replayed.record);
  return rates;
}

GeneratedRequests SyntheticRequestGenerator::generate_retimed(const Trace& trace,
                                                              SimTime run_length) const {
  const TraceRates rates = trace_rates(trace, arrival_);
  const std::size_t n = rates.replayed.size();
  const bool gamma = synthetic_.arrivals == ArrivalProcess::kGamma && synthetic_.burstiness != 1;
  pcg32 rng(synthetic_.seed);
  // The n + 1 gaps' running sums, in units of their mean (the rate cancels).
  std::vector<double> sums(n + 1);
  double sum = 0;
  for (std::size_t i = 0; i <= n; ++i) {
    sum += gamma ? standard_gamma(rng, synthetic_.burstiness) / synthetic_.burstiness
                 : exponential(rng, 1.0);
    sums[i] = sum;
  }
  const ReplayedOffsets replayed = replayed_offsets(trace, arrival_);
  const SimTime first = arrival_for_offset(replayed.offset_ns.front(), arrival_);
  const double span_ns = static_cast<double>(rates.span.count_ns());
  GeneratedRequests out;
  out.run_length = run_length;
  out.tasks = RequestList(task_);
  out.tasks.reserve(n);
  const bool ids = !trace.hash_ranges.empty();
  if (ids) out.tasks.use_block_ids(trace.hash_ids, trace.block_id_tokens);
  for (std::size_t i = 0; i < n; ++i) {
    // Point i of n + 1 gaps falls strictly inside the span.
    const SimTime at = first + Duration::ns(std::llround(span_ns * (sums[i] / sums[n])));
    const SimTime t = apply_resolution(at, arrival_.resolution);
    const std::size_t k = rates.replayed[i];
    const TraceRecord& r = trace.records[k];
    if (ids) out.tasks.add_block_range(trace.hash_ranges[k]);
    out.tasks.add(t, r.context_tokens, r.generated_tokens);
  }
  return out;
}

GeneratedRequests SyntheticRequestGenerator::generate(const Trace& trace,
                                                      SimTime run_length) const {
  if (synthetic_.sizes == SyntheticSizes::kRecorded) return generate_retimed(trace, run_length);
  const TraceRates rates = trace_rates(trace, arrival_);
  const std::size_t n_trace = rates.replayed.size();
  const bool gamma = synthetic_.arrivals == ArrivalProcess::kGamma && synthetic_.burstiness != 1;
  const double gamma_scale_s = 1 / (rates.rate_per_s * synthetic_.burstiness);

  GeneratedRequests out;
  out.run_length = run_length;
  out.tasks = RequestList(task_);
  out.tasks.reserve(static_cast<std::size_t>(rates.rate_per_s * run_length.seconds() * 1.05) + 16);
  // Requests of empirical sizes take the drawn record's block ids; mean-sized
  // ones have none (BATCHING.md section 3).
  const bool ids = synthetic_.sizes == SyntheticSizes::kEmpirical && !trace.hash_ranges.empty();
  if (ids) out.tasks.use_block_ids(trace.hash_ids, trace.block_id_tokens);
  pcg32 rng(synthetic_.seed);
  SimTime sum = SimTime::zero();  // the running sum, never rounded to the clock
  for (;;) {
    const double gap_s = gamma ? standard_gamma(rng, synthetic_.burstiness) * gamma_scale_s
                               : exponential(rng, rates.rate_per_s);
    sum = sum + Duration::from_seconds(gap_s);
    const SimTime t = apply_resolution(sum, arrival_.resolution);
    if (t > run_length) break;
    double c = rates.mean_context_tokens;
    double g = rates.mean_generated_tokens;
    if (synthetic_.sizes == SyntheticSizes::kEmpirical) {
      auto index = static_cast<std::size_t>(uniform01(rng) * static_cast<double>(n_trace));
      const std::size_t k = rates.replayed[std::min(index, n_trace - 1)];
      const TraceRecord& r = trace.records[k];
      c = r.context_tokens;
      g = r.generated_tokens;
      if (ids) out.tasks.add_block_range(trace.hash_ranges[k]);
    }
    out.tasks.add(t, c, g);
  }
  return out;
}

}  // namespace infersim
