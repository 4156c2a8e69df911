// The queueing check: the analytic formulas against known values, the
// generated workloads, the waits the simulation reports on cases that can be
// worked out by hand, and the batch-means standard error.
#include "scenario/queueing_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <pcg_random.hpp>

#include "core/random.hpp"

namespace infersim {
namespace {

// Tasks (arrival, execution time) as queue_case_tasks makes them: the service
// time as the context size, one MI a token on a one-MIPS core.
RequestList tasks_at(std::initializer_list<std::pair<double, double>> arrival_exec_s) {
  RequestList tasks(queue_case_tasks({QueueCase::kMD1, 1, 0.5, 0, 1}).knobs());
  for (const auto& [arrival_s, exec_s] : arrival_exec_s)
    tasks.add(SimTime::from_seconds(arrival_s), exec_s, 0);
  return tasks;
}

std::vector<std::int64_t> waits_ns(const std::vector<Duration>& waits) {
  std::vector<std::int64_t> out;
  for (Duration w : waits)
    out.push_back(w.count_ns());
  return out;
}

TEST(ErlangC, OneServerWaitsWithProbabilityRho) {
  EXPECT_NEAR(erlang_c(1, 0.5), 0.5, 1e-15);
  EXPECT_NEAR(erlang_c(1, 0.95), 0.95, 1e-15);
}

TEST(ErlangC, TwoServersAtOneErlangWaitAThirdOfTheTime) {
  EXPECT_NEAR(erlang_c(2, 1), 1.0 / 3, 1e-15);
}

TEST(ErlangC, MatchesTheClosedFormSum) {
  // a^c/c! * c/(c-a) over sum_{k<c} a^k/k! plus that term, in exact fractions:
  // 5832/16337 for c = 8, a = 6; and to 40 digits (mpmath) for c = 32, a = 16.
  EXPECT_NEAR(erlang_c(8, 6), 5832.0 / 16337, 1e-14);
  EXPECT_NEAR(erlang_c(32, 16), 0.000291057991747950998, 1e-17);
}

TEST(ErlangC, StaysFiniteWhereFactorialsOverflow) {
  // 190^200 / 200! is far outside a double; the Erlang B recursion never forms it.
  EXPECT_NEAR(erlang_c(200, 190), 0.365263856562546395, 1e-12);
}

TEST(ErlangC, RejectsALoadTheServersCannotCarry) {
  EXPECT_THROW(erlang_c(2, 2), std::invalid_argument);
  EXPECT_THROW(erlang_c(0, 0.5), std::invalid_argument);
  EXPECT_THROW(erlang_c(4, 0), std::invalid_argument);
}

TEST(MmcMeanWait, OneServerIsRhoOverMuMinusLambda) {
  EXPECT_NEAR(mmc_mean_wait_s(1, 0.5, 1), 1.0, 1e-15);
  EXPECT_NEAR(mmc_mean_wait_s(1, 2, 4), 0.25, 1e-15);  // rho 0.5, 4 per second
  EXPECT_NEAR(mmc_mean_wait_s(1, 0.95, 1), 19.0, 1e-12);
}

TEST(MmcMeanWait, TwoServersAtOneErlang) {
  // C = 1/3, divided by c*mu - lambda = 2 - 1.
  EXPECT_NEAR(mmc_mean_wait_s(2, 1, 1), 1.0 / 3, 1e-15);
  // Twice the rates, half the wait.
  EXPECT_NEAR(mmc_mean_wait_s(2, 2, 2), 1.0 / 6, 1e-15);
}

TEST(Md1MeanWait, IsHalfTheMm1Wait) {
  EXPECT_NEAR(md1_mean_wait_s(0.5, 1), 0.5, 1e-15);
  EXPECT_NEAR(md1_mean_wait_s(0.4, 2), 4.0, 1e-14);  // rho 0.8: 0.8 * 2 / (2 * 0.2)
  EXPECT_NEAR(md1_mean_wait_s(0.95, 1), 9.5, 1e-12);
  EXPECT_THROW(md1_mean_wait_s(1, 1), std::invalid_argument);
}

TEST(QueueCaseTasks, ArrivalsAreExponentialGapsSummedInNanoseconds) {
  const QueueCase c{QueueCase::kMMc, 8, 0.5, 100, 7};
  const RequestList tasks = queue_case_tasks(c);
  ASSERT_EQ(tasks.size(), 100u);
  pcg32 rng(7);
  SimTime t;
  for (const Request& task : tasks) {
    t = t + Duration::from_seconds(exponential(rng, 4.0));  // lambda = 0.5 * 8 * 1
    ASSERT_EQ(task.arrival, t);
  }
}

TEST(QueueCaseTasks, ServiceTimesComeFromTheirOwnStream) {
  const RequestList mmc = queue_case_tasks({QueueCase::kMMc, 1, 0.5, 50, 7});
  const RequestList md1 = queue_case_tasks({QueueCase::kMD1, 1, 0.5, 50, 7});
  pcg32 services(7, 1);
  for (std::size_t k = 0; k < mmc.size(); ++k) {
    // A request's service time is its context size (simulated_waits runs it at
    // one MI a token on one MIPS).
    EXPECT_EQ(mmc[k].context_tokens, exponential(services, 1.0));
    EXPECT_EQ(md1[k].context_tokens, 1.0);
    // Drawing services leaves the arrivals as they are.
    EXPECT_EQ(mmc[k].arrival, md1[k].arrival);
  }
}

TEST(QueueCaseTasks, RejectsCasesOutsideTheModels) {
  EXPECT_THROW(queue_case_tasks({QueueCase::kMD1, 2, 0.5, 10, 1}), std::invalid_argument);
  EXPECT_THROW(queue_case_tasks({QueueCase::kMMc, 1, 1.0, 10, 1}), std::invalid_argument);
  EXPECT_THROW(queue_case_tasks({QueueCase::kMMc, 0, 0.5, 10, 1}), std::invalid_argument);
}

TEST(SimulatedWaits, OneCoreQueuesInArrivalOrder) {
  // Starts at 0, 1, 2 and 5 s.
  const auto waits = simulated_waits(tasks_at({{0, 1}, {0.5, 1}, {1.2, 1}, {5, 1}}), 1);
  EXPECT_EQ(waits_ns(waits), (std::vector<std::int64_t>{0, 500'000'000, 800'000'000, 0}));
}

TEST(SimulatedWaits, TwoCoresServeTwoAtOnce) {
  const auto waits = simulated_waits(tasks_at({{0, 1}, {0, 3}, {0, 1}, {0.5, 1}}), 2);
  // Cores free at 1 and 3: the third starts at 1, the fourth when it frees at 2.
  EXPECT_EQ(waits_ns(waits), (std::vector<std::int64_t>{0, 0, 1'000'000'000, 1'500'000'000}));
}

TEST(RunQueueCase, Md1WithGapsOverOneSecondNeverWaits) {
  const QueueCase c{QueueCase::kMD1, 1, 0.02, 10, 42};
  const RequestList tasks = queue_case_tasks(c);
  for (std::size_t k = 1; k < tasks.size(); ++k) {
    ASSERT_GT(tasks[k].arrival - tasks[k - 1].arrival, Duration::from_seconds(1))
        << "the case needs gaps over the 1 s service; pick another seed";
  }
  const QueueCheck check = run_queue_case(c);
  EXPECT_EQ(check.simulated_wait_s, 0);
  EXPECT_EQ(check.standard_error_s, 0);
  EXPECT_NEAR(check.analytic_wait_s, 0.02 / (2 * 0.98), 1e-15);
  EXPECT_EQ(check.relative_error, -1);
}

TEST(RunQueueCase, Md1FollowsLindleysRecursion) {
  // One core, service S: W(k+1) = max(0, W(k) + S - gap(k+1)), worked in
  // nanoseconds from the same draws, then averaged in the same order.
  const QueueCase c{QueueCase::kMD1, 1, 0.8, 2000, 3};
  const RequestList tasks = queue_case_tasks(c);
  const std::int64_t service_ns = 1'000'000'000;
  std::int64_t wait_ns = 0;
  double sum_s = 0;
  std::int64_t waited = 0;
  for (std::size_t k = 0; k < tasks.size(); ++k) {
    if (k > 0) {
      const std::int64_t gap_ns = (tasks[k].arrival - tasks[k - 1].arrival).count_ns();
      wait_ns = std::max<std::int64_t>(0, wait_ns + service_ns - gap_ns);
    }
    waited += wait_ns > 0;
    sum_s += Duration::ns(wait_ns).seconds();
  }
  ASSERT_GT(waited, 500) << "the case should queue often enough to mean something";
  EXPECT_EQ(run_queue_case(c).simulated_wait_s, sum_s / 2000);
}

TEST(RunQueueCase, SameSeedSameResultOtherSeedAnother) {
  const QueueCase c{QueueCase::kMMc, 8, 0.8, 5000, 11};
  const QueueCheck a = run_queue_case(c);
  const QueueCheck b = run_queue_case(c);
  EXPECT_EQ(a.simulated_wait_s, b.simulated_wait_s);
  EXPECT_EQ(a.standard_error_s, b.standard_error_s);
  EXPECT_GT(a.simulated_wait_s, 0);
  QueueCase other = c;
  other.seed = 12;
  EXPECT_NE(run_queue_case(other).simulated_wait_s, a.simulated_wait_s);
  EXPECT_EQ(run_queue_case(other).analytic_wait_s, a.analytic_wait_s);
}

TEST(BatchMeans, StandardErrorOfTwoBatches) {
  // Batch means 1.5 and 3.5: standard deviation sqrt(2), over sqrt(2) batches.
  EXPECT_NEAR(batch_means_standard_error({1, 2, 3, 4}, 2), 1.0, 1e-15);
  // Three batches of 5 values over 5, 5, 6 values: means 2, 7 and 12.5.
  std::vector<double> values;
  for (int v = 0; v < 16; ++v)
    values.push_back(v);
  const double sd = std::sqrt(((2 - 21.5 / 3) * (2 - 21.5 / 3) + (7 - 21.5 / 3) * (7 - 21.5 / 3) +
                               (12.5 - 21.5 / 3) * (12.5 - 21.5 / 3)) /
                              2);
  EXPECT_NEAR(batch_means_standard_error(values, 3), sd / std::sqrt(3.0), 1e-14);
}

TEST(BatchMeans, NoSpreadNoError) {
  EXPECT_EQ(batch_means_standard_error(std::vector<double>(100, 2.5), 20), 0);
  EXPECT_EQ(batch_means_standard_error({7}, 20), 0);
  EXPECT_EQ(batch_means_standard_error({}, 20), 0);
}

TEST(Agrees, WithinTwoPercentOrThreeStandardErrors) {
  QueueCheck check;
  check.analytic_wait_s = 10;
  check.simulated_wait_s = 10.19;
  check.relative_error = 0.019;
  EXPECT_TRUE(agrees(check));
  check.simulated_wait_s = 10.5;
  check.relative_error = 0.05;
  EXPECT_FALSE(agrees(check));
  check.standard_error_s = 0.17;
  EXPECT_TRUE(agrees(check));
  check.standard_error_s = 0.16;
  EXPECT_FALSE(agrees(check));
}

TEST(Agrees, TheProbabilityOfWaitingMustAgreeToo) {
  QueueCheck check;  // the mean wait exactly right; the probability 10 % high
  check.analytic_wait_s = check.simulated_wait_s = 10;
  check.analytic_wait_probability = 0.5;
  check.simulated_wait_probability = 0.55;
  check.probability_relative_error = 0.1;
  EXPECT_FALSE(agrees(check));
  for (const double standard_error : {0.016, 0.017}) {  // 3 of them: 0.048 and 0.051
    check.probability_standard_error = standard_error;
    EXPECT_EQ(agrees(check), standard_error > 0.05 / 3) << standard_error;
  }
}

TEST(RunQueueCase, ReplicationsPoolTheWaitsOfSeedAfterSeed) {
  // 2000 requests a replication cannot bring 3 standard errors within 10 % at
  // 8 cores: all three replications run.
  const QueueCase c{QueueCase::kMMc, 8, 0.8, 2000, 5, 3};
  double sum_s = 0;
  double waited = 0;
  for (std::uint64_t seed : {5, 6, 7}) {
    QueueCase one = c;
    one.seed = seed;
    for (Duration w : simulated_waits(queue_case_tasks(one), 8)) {
      sum_s += w.seconds();
      waited += w.count_ns() > 0 ? 1 : 0;
    }
  }
  const QueueCheck check = run_queue_case(c);
  EXPECT_EQ(check.replications, 3u);
  EXPECT_EQ(check.simulated_wait_s, sum_s / 6000);
  EXPECT_EQ(check.simulated_wait_probability, waited / 6000);
  EXPECT_EQ(check.analytic_wait_probability, erlang_c(8, 6.4));
  EXPECT_GT(check.probability_standard_error, 0);
  EXPECT_GT(check.standard_error_s, 0);
}

TEST(RunQueueCase, StopsOnceBothPassMarksAreWithinTenPercent) {
  // One core at rho = 0.5: 3 standard errors of 2 * 10^5 requests are a few
  // percent of both figures, so the first replication is the last.
  const QueueCheck check = run_queue_case({QueueCase::kMMc, 1, 0.5, 200'000, 42, 5});
  EXPECT_EQ(check.replications, 1u);
  EXPECT_LE(3 * check.standard_error_s, 0.1 * check.analytic_wait_s);
  EXPECT_LE(3 * check.probability_standard_error, 0.1 * 0.5);
  EXPECT_EQ(check.analytic_wait_probability, 0.5);  // Erlang C of one server is rho
}

TEST(BatchMeans, PooledFromSeveralRunsAsOneSet) {
  EXPECT_EQ(batch_means({1, 2, 3, 4, 5, 6}, 3), (std::vector<double>{1.5, 3.5, 5.5}));
  // means 1.5, 3.5, 5.5 and 7.5: standard deviation sqrt(20 / 3), over sqrt(4)
  EXPECT_NEAR(standard_error_of_batch_means({1.5, 3.5, 5.5, 7.5}), std::sqrt(20.0 / 3) / 2, 1e-15);
  EXPECT_EQ(standard_error_of_batch_means({4}), 0);
}

TEST(DefaultQueueCases, NineMmcCasesThenThreeMd1) {
  const std::vector<QueueCase> cases = default_queue_cases(1000, 5);
  ASSERT_EQ(cases.size(), 12u);
  for (std::size_t k = 0; k < 9; ++k) {
    EXPECT_EQ(cases[k].kind, QueueCase::kMMc);
    EXPECT_EQ(cases[k].cores, (std::vector<unsigned>{1, 8, 32})[k / 3]);
    EXPECT_EQ(cases[k].rho, (std::vector<double>{0.5, 0.8, 0.95})[k % 3]);
  }
  for (std::size_t k = 9; k < 12; ++k) {
    EXPECT_EQ(cases[k].kind, QueueCase::kMD1);
    EXPECT_EQ(cases[k].cores, 1u);
  }
  for (const QueueCase& c : cases) {
    EXPECT_EQ(c.requests, 1000u);
    EXPECT_EQ(c.seed, 5u);
    EXPECT_EQ(c.max_replications, 1u);
  }
  EXPECT_EQ(default_queue_cases(1000, 5, 7).back().max_replications, 7u);
}

}  // namespace
}  // namespace infersim
