#include "scenario/queueing_check.hpp"

#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include <pcg_random.hpp>

#include "core/random.hpp"
#include "model/device_fleet.hpp"
#include "model/edge_server.hpp"
#include "model/network_path.hpp"
#include "model/request_observer.hpp"
#include "model/simulation.hpp"

namespace infersim {
namespace {

// Every case has a mean service time of 1 s.
constexpr double kServiceRatePerS = 1;
// The service times' pcg32 stream; the arrivals use the default stream, so
// with one seed the two sequences are distinct generators, not one shared.
constexpr std::uint64_t kServiceStream = 1;

// Records each request's wait by its id.
class WaitRecorder : public RequestObserver {
 public:
  explicit WaitRecorder(std::size_t requests) : waits_(requests) {}
  void on_request(std::uint64_t id, const Request& /*task*/, const RequestOutcome& o) override {
    waits_[id] = o.wait();
  }
  std::vector<Duration>& waits() { return waits_; }

 private:
  std::vector<Duration> waits_;
};

void check_case(const QueueCase& c) {
  if (!(c.rho > 0 && c.rho < 1)) {
    throw std::invalid_argument("queueing check: rho must be in (0, 1), got " +
                                std::to_string(c.rho));
  }
  if (c.cores == 0) throw std::invalid_argument("queueing check: no cores");
  if (c.kind == QueueCase::kMD1 && c.cores != 1) {
    throw std::invalid_argument("queueing check: M/D/1 has one core, got " +
                                std::to_string(c.cores));
  }
}

}  // namespace

double erlang_c(unsigned servers, double offered_load_erlangs) {
  const double a = offered_load_erlangs;
  if (servers == 0 || !(a > 0) || !(a < servers)) {
    throw std::invalid_argument("erlang_c: needs 0 < load < servers");
  }
  // Erlang B by its recursion: B(0) = 1, B(k) = a*B(k-1) / (k + a*B(k-1)).
  double b = 1;
  for (unsigned k = 1; k <= servers; ++k)
    b = a * b / (k + a * b);
  const double rho = a / servers;
  return b / (1 - rho * (1 - b));
}

double mmc_mean_wait_s(unsigned c, double lambda, double mu) {
  return erlang_c(c, lambda / mu) / (c * mu - lambda);
}

double md1_mean_wait_s(double lambda, double service_s) {
  const double rho = lambda * service_s;
  if (!(rho > 0 && rho < 1)) throw std::invalid_argument("md1_mean_wait_s: needs 0 < rho < 1");
  return rho * service_s / (2 * (1 - rho));
}

bool agrees(const QueueCheck& check) {
  return std::fabs(check.relative_error) <= kQueueCheckTolerance ||
         std::fabs(check.simulated_wait_s - check.analytic_wait_s) <=
             kQueueCheckStandardErrors * check.standard_error_s;
}

const char* queue_model_name(QueueCase::Kind kind) {
  return kind == QueueCase::kMMc ? "M/M/c" : "M/D/1";
}

RequestList queue_case_tasks(const QueueCase& c) {
  check_case(c);
  const double lambda = c.rho * c.cores * kServiceRatePerS;
  pcg32 arrivals(c.seed);
  pcg32 services(c.seed, kServiceStream);
  const double fixed_service_s = 1 / kServiceRatePerS;
  // A task's service time s is its context size: on the server of
  // simulated_waits it executes in exactly Duration::from_seconds(s).
  RequestKnobs knobs;
  knobs.bytes_per_token = 0;
  RequestList tasks(knobs);
  tasks.reserve(c.requests);
  SimTime t = SimTime::zero();
  for (std::uint64_t k = 0; k < c.requests; ++k) {
    const Duration gap = Duration::from_seconds(exponential(arrivals, lambda));
    if (t.count_ns() > std::numeric_limits<std::int64_t>::max() - gap.count_ns()) {
      throw std::out_of_range("queueing check: the arrivals run past the int64 nanosecond clock");
    }
    t = t + gap;
    tasks.add(t,
              c.kind == QueueCase::kMMc ? exponential(services, kServiceRatePerS) : fixed_service_s,
              0);
  }
  return tasks;
}

std::vector<Duration> simulated_waits(const RequestList& tasks, std::uint32_t cores) {
  DeviceFleet fleet(1);
  const NetworkPath direct({});  // no hops: each request reaches the server when issued
  // One MI a context token, one MIPS a core, nothing generated: a request's
  // execution time is its context size in seconds.
  EdgeServerKnobs knobs;
  knobs.cores = cores;
  knobs.mi_per_context_token = 1;
  knobs.mi_per_generated_token = 0;
  knobs.mips_per_core = 1;
  EdgeServer server(knobs);
  Simulation simulation(tasks, fleet, direct, server);
  WaitRecorder recorder(tasks.size());
  simulation.add_observer(recorder);
  simulation.run();
  return std::move(recorder.waits());
}

double batch_means_standard_error(const std::vector<double>& values, std::size_t batches) {
  const std::size_t n = values.size();
  if (batches > n) batches = n;
  if (batches < 2) return 0;
  std::vector<double> means(batches);
  for (std::size_t b = 0; b < batches; ++b) {
    const std::size_t begin = b * n / batches;
    const std::size_t end = (b + 1) * n / batches;
    double sum = 0;
    for (std::size_t k = begin; k < end; ++k)
      sum += values[k];
    means[b] = sum / static_cast<double>(end - begin);
  }
  double total = 0;
  for (double m : means)
    total += m;
  const double grand = total / static_cast<double>(batches);
  double squares = 0;
  for (double m : means)
    squares += (m - grand) * (m - grand);
  const double variance = squares / static_cast<double>(batches - 1);
  return std::sqrt(variance / static_cast<double>(batches));
}

QueueCheck run_queue_case(const QueueCase& c) {
  const RequestList tasks = queue_case_tasks(c);
  const std::vector<Duration> waits = simulated_waits(tasks, c.cores);
  std::vector<double> waits_s;
  waits_s.reserve(waits.size());
  double sum_s = 0;
  for (Duration w : waits) {
    waits_s.push_back(w.seconds());
    sum_s += w.seconds();
  }
  QueueCheck check;
  check.c = c;
  check.simulated_wait_s = waits.empty() ? 0 : sum_s / static_cast<double>(waits.size());
  const double lambda = c.rho * c.cores * kServiceRatePerS;
  check.analytic_wait_s = c.kind == QueueCase::kMMc
                              ? mmc_mean_wait_s(c.cores, lambda, kServiceRatePerS)
                              : md1_mean_wait_s(lambda, 1 / kServiceRatePerS);
  check.relative_error = (check.simulated_wait_s - check.analytic_wait_s) / check.analytic_wait_s;
  check.standard_error_s = batch_means_standard_error(waits_s, kQueueCheckBatches);
  return check;
}

std::vector<QueueCase> queue_cases(const std::vector<double>& loads,
                                   const std::vector<unsigned>& cores, std::uint64_t requests,
                                   std::uint64_t seed) {
  std::vector<QueueCase> cases;
  for (unsigned c : cores) {
    for (double rho : loads)
      cases.push_back(QueueCase{QueueCase::kMMc, c, rho, requests, seed});
  }
  for (double rho : loads)
    cases.push_back(QueueCase{QueueCase::kMD1, 1, rho, requests, seed});
  return cases;
}

std::vector<QueueCase> default_queue_cases(std::uint64_t requests, std::uint64_t seed) {
  return queue_cases({std::begin(kDefaultQueueLoads), std::end(kDefaultQueueLoads)},
                     {std::begin(kDefaultQueueCores), std::end(kDefaultQueueCores)}, requests,
                     seed);
}

}  // namespace infersim
