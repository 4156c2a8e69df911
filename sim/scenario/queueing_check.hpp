// A queueing-theory cross-check of the engine and the edge server: generated
// M/M/c and M/D/1 workloads run through the Simulation, and the simulated mean
// waiting time is set beside the analytic one (Erlang C, Pollaczek-Khinchine).
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
  unsigned cores = 1;  // kMD1: must be 1
  double rho = 0.5;    // utilization per core, 0 < rho < 1
  std::uint64_t requests = 0;
  std::uint64_t seed = 42;
};

struct QueueCheck {
  QueueCase c;
  double simulated_wait_s = 0;  // mean over every request, the first ones included
  double analytic_wait_s = 0;
  double relative_error = 0;    // (simulated - analytic) / analytic
  double standard_error_s = 0;  // of simulated_wait_s, by batch means
};

// The standard error of the simulated mean comes from this many batch means
// over the requests in issue order.
inline constexpr std::size_t kQueueCheckBatches = 20;

// A check agrees when its relative error is within 2 % or the difference is
// within 3 standard errors: at high load or with few waiting requests the
// sampling error of the simulated mean alone exceeds 2 %.
inline constexpr double kQueueCheckTolerance = 0.02;
inline constexpr double kQueueCheckStandardErrors = 3;
bool agrees(const QueueCheck& check);

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

// Standard error of the mean of `values` by `batches` batch means over the
// values in order (batch b holds indices [b*n/batches, (b+1)*n/batches)): the
// sample standard deviation of the batch means over sqrt(batches). 0 with
// fewer than two values; with fewer values than batches, one value a batch.
double batch_means_standard_error(const std::vector<double>& values, std::size_t batches);

QueueCheck run_queue_case(const QueueCase& c);

// The M/M/c cases for every rho in `loads` and c in `cores`, then M/D/1 for
// every rho in `loads`; each with the given requests and seed.
std::vector<QueueCase> queue_cases(const std::vector<double>& loads,
                                   const std::vector<unsigned>& cores, std::uint64_t requests,
                                   std::uint64_t seed);

// The default loads and core counts of `infersim validate`.
inline constexpr double kDefaultQueueLoads[] = {0.5, 0.8, 0.95};
inline constexpr unsigned kDefaultQueueCores[] = {1, 8, 32};

// queue_cases with the default loads and core counts.
std::vector<QueueCase> default_queue_cases(std::uint64_t requests, std::uint64_t seed);

}  // namespace infersim
