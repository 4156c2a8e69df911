#include "scenario/queueing_check.hpp"

#include <algorithm>
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
  const auto within = [](double simulated, double analytic, double relative_error,
                         double standard_error) {
    return std::fabs(relative_error) <= kQueueCheckTolerance ||
           std::fabs(simulated - analytic) <= kQueueCheckStandardErrors * standard_error;
  };
  return within(check.simulated_wait_s, check.analytic_wait_s, check.relative_error,
                check.standard_error_s) &&
         within(check.simulated_wait_probability, check.analytic_wait_probability,
                check.probability_relative_error, check.probability_standard_error);
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

std::vector<double> batch_means(const std::vector<double>& values, std::size_t batches) {
  const std::size_t n = values.size();
  if (batches > n) batches = n;
  std::vector<double> means(batches);
  for (std::size_t b = 0; b < batches; ++b) {
    const std::size_t begin = b * n / batches;
    const std::size_t end = (b + 1) * n / batches;
    double sum = 0;
    for (std::size_t k = begin; k < end; ++k)
      sum += values[k];
    means[b] = sum / static_cast<double>(end - begin);
  }
  return means;
}

double standard_error_of_batch_means(const std::vector<double>& means) {
  const std::size_t batches = means.size();
  if (batches < 2) return 0;
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

double batch_means_standard_error(const std::vector<double>& values, std::size_t batches) {
  return standard_error_of_batch_means(batch_means(values, batches));
}

QueueCheck run_queue_case(const QueueCase& c) {
  QueueCheck check;
  check.c = c;
  const double lambda = c.rho * c.cores * kServiceRatePerS;
  check.analytic_wait_s = c.kind == QueueCase::kMMc
                              ? mmc_mean_wait_s(c.cores, lambda, kServiceRatePerS)
                              : md1_mean_wait_s(lambda, 1 / kServiceRatePerS);
  // An M/G/1 server is busy, so that an arrival waits, a fraction rho of the time.
  check.analytic_wait_probability =
      c.kind == QueueCase::kMMc ? erlang_c(c.cores, lambda / kServiceRatePerS) : c.rho;

  // Batch means of every replication so far: each replication's batches are
  // its own, so no batch straddles two independent runs.
  std::vector<double> wait_means, waiting_means;
  double sum_s = 0;
  double waiting = 0;
  std::uint64_t requests = 0;
  const std::uint32_t most = std::max<std::uint32_t>(c.max_replications, 1);
  for (std::uint32_t r = 0; r < most; ++r) {
    QueueCase replication = c;
    replication.seed = c.seed + r;
    const std::vector<Duration> waits = simulated_waits(queue_case_tasks(replication), c.cores);
    std::vector<double> waits_s, waited;
    waits_s.reserve(waits.size());
    waited.reserve(waits.size());
    for (Duration w : waits) {
      waits_s.push_back(w.seconds());
      waited.push_back(w.count_ns() > 0 ? 1 : 0);
      sum_s += w.seconds();
      waiting += waited.back();
    }
    requests += waits.size();
    const std::vector<double> means = batch_means(waits_s, kQueueCheckBatches);
    const std::vector<double> fractions = batch_means(waited, kQueueCheckBatches);
    wait_means.insert(wait_means.end(), means.begin(), means.end());
    waiting_means.insert(waiting_means.end(), fractions.begin(), fractions.end());

    check.replications = r + 1;
    check.simulated_wait_s = requests == 0 ? 0 : sum_s / static_cast<double>(requests);
    check.simulated_wait_probability = requests == 0 ? 0 : waiting / static_cast<double>(requests);
    check.standard_error_s = standard_error_of_batch_means(wait_means);
    check.probability_standard_error = standard_error_of_batch_means(waiting_means);
    const bool tight = kQueueCheckStandardErrors * check.standard_error_s <=
                           kQueueCheckTargetBound * check.analytic_wait_s &&
                       kQueueCheckStandardErrors * check.probability_standard_error <=
                           kQueueCheckTargetBound * check.analytic_wait_probability;
    if (tight) break;
  }
  check.relative_error = (check.simulated_wait_s - check.analytic_wait_s) / check.analytic_wait_s;
  check.probability_relative_error =
      (check.simulated_wait_probability - check.analytic_wait_probability) /
      check.analytic_wait_probability;
  return check;
}

std::vector<QueueCase> queue_cases(const std::vector<double>& loads,
                                   const std::vector<unsigned>& cores, std::uint64_t requests,
                                   std::uint64_t seed, std::uint32_t max_replications) {
  std::vector<QueueCase> cases;
  for (unsigned c : cores) {
    for (double rho : loads)
      cases.push_back(QueueCase{QueueCase::kMMc, c, rho, requests, seed, max_replications});
  }
  for (double rho : loads)
    cases.push_back(QueueCase{QueueCase::kMD1, 1, rho, requests, seed, max_replications});
  return cases;
}

std::vector<QueueCase> default_queue_cases(std::uint64_t requests, std::uint64_t seed,
                                           std::uint32_t max_replications) {
  return queue_cases({std::begin(kDefaultQueueLoads), std::end(kDefaultQueueLoads)},
                     {std::begin(kDefaultQueueCores), std::end(kDefaultQueueCores)}, requests, seed,
                     max_replications);
}

}  // namespace infersim
