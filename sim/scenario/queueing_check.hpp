// A queueing-theory cross-check of the engine and the edge server: generated
// M/M/c and M/D/1 workloads run through the Simulation, and the simulated mean
// waiting time and probability of waiting are set beside the analytic ones
// (Erlang C, Pollaczek-Khinchine), over independent replications until the
// comparison can tell a 10 % error.
#pragma once

#include <cstdint>
#include <vector>

#include "core/sim_time.hpp"
#include "request/request.hpp"
#include "request/request_list.hpp"

namespace infersim {

// Erlang C: the probability that an arrival waits in an M/M/c queue with the
// given offered load a = lambda/mu (erlangs, a < c). Computed through the Erlang B
// recursion, which stays finite where a^c/c! would overflow.
double erlang_c(unsigned servers, double offered_load_erlangs);

// Mean wait in queue (s) of M/M/c with arrival rate lambda and service rate mu
// per server (both per second): C(c, lambda/mu) / (c*mu - lambda).
double mmc_mean_wait_s(unsigned c, double lambda, double mu);

// Mean wait in queue (s) of M/D/1 (Pollaczek-Khinchine): rho*service/(2*(1-rho))
// with rho = lambda*service.
double md1_mean_wait_s(double lambda, double service_s);

struct QueueCase {
  enum Kind { kMMc, kMD1 } kind = kMMc;
  unsigned cores = 1;          // kMD1: must be 1
  double rho = 0.5;            // utilization per core, 0 < rho < 1
  std::uint64_t requests = 0;  // a replication's
  std::uint64_t seed = 42;
  // Replication r (from 0) runs the case's workload drawn from seed + r;
  // replications are added while either figure's pass mark (3 standard
  // errors) is wider than kQueueCheckTargetBound of its analytic value, up to
  // this many.
  std::uint32_t max_replications = 1;
};

struct QueueCheck {
  QueueCase c;
  std::uint32_t replications = 0;  // run, each of c.requests
  // Means over every request of every replication, the first ones of each
  // (which start from an empty system) included.
  double simulated_wait_s = 0;
  double analytic_wait_s = 0;
  double relative_error = 0;    // (simulated - analytic) / analytic
  double standard_error_s = 0;  // of simulated_wait_s, by batch means
  // P(wait > 0), the fraction of requests that wait at all: Erlang C for
  // M/M/c, rho for M/D/1. Where waiting is rare (many cores at low load) the
  // mean wait rests on a few hundred waiting requests in a million and its
  // standard error is tens of percent; this fraction is estimated several
  // times better from the same run.
  double simulated_wait_probability = 0;
  double analytic_wait_probability = 0;
  double probability_relative_error = 0;
  double probability_standard_error = 0;
};

// The standard errors come from this many batch means a replication, over its
// requests in issue order, pooled over the replications.
inline constexpr std::size_t kQueueCheckBatches = 20;

// A check agrees when both the mean wait and the probability of waiting do:
// each within 2 % of its analytic value, or within 3 standard errors of it (at
// high load or with few waiting requests the sampling error alone exceeds 2 %).
inline constexpr double kQueueCheckTolerance = 0.02;
inline constexpr double kQueueCheckStandardErrors = 3;
bool agrees(const QueueCheck& check);

// Replications stop once 3 standard errors of each figure are within this
// fraction of its analytic value: an error of 10 % then shows.
inline constexpr double kQueueCheckTargetBound = 0.10;

// "M/M/c" or "M/D/1".
const char* queue_model_name(QueueCase::Kind kind);

// The workload of a case, with a mean service time of 1 s (mu = 1) and
// lambda = rho * cores: Poisson arrivals from t = 0 drawn from pcg32(seed), each
// gap rounded to nanoseconds once and summed in integers; service times
// exponential with rate mu from a second stream pcg32(seed, 1) (M/M/c), or
// exactly 1 s (M/D/1). Only arrival and exec are set. Throws
// std::invalid_argument for a case outside the models' range.
RequestList queue_case_tasks(const QueueCase& c);

// Each task's wait at the server (start - arrival) when the tasks run through
// The Simulation with no network hops and an EdgeServer of `cores` cores.
std::vector<Duration> simulated_waits(const RequestList& tasks, std::uint32_t cores);

// The means of `values` in `batches` batches in order (batch b holds indices
// [b*n/batches, (b+1)*n/batches)); with fewer values than batches, one value
// a batch.
std::vector<double> batch_means(const std::vector<double>& values, std::size_t batches);

// Standard error of a grand mean from batch means of equal weight: their
// sample standard deviation over sqrt(their count); 0 with fewer than two.
double standard_error_of_batch_means(const std::vector<double>& means);

// Standard error of the mean of `values` by `batches` batch means over the
// values in order: standard_error_of_batch_means(batch_means(values, batches)).
double batch_means_standard_error(const std::vector<double>& values, std::size_t batches);

QueueCheck run_queue_case(const QueueCase& c);

// The M/M/c cases for every rho in `loads` and c in `cores`, then M/D/1 for
// every rho in `loads`; each with the given requests, seed and most replications.
std::vector<QueueCase> queue_cases(const std::vector<double>& loads,
                                   const std::vector<unsigned>& cores, std::uint64_t requests,
                                   std::uint64_t seed, std::uint32_t max_replications = 1);

// The default loads and core counts of `infersim validate`.
inline constexpr double kDefaultQueueLoads[] = {0.5, 0.8, 0.95};
inline constexpr unsigned kDefaultQueueCores[] = {1, 8, 32};

// queue_cases with the default loads and core counts.
std::vector<QueueCase> default_queue_cases(std::uint64_t requests, std::uint64_t seed,
                                           std::uint32_t max_replications = 1);

}  // namespace infersim
