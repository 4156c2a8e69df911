// The synthetic mode of MODEL.md section 9: the first arrivals for seed 42 are
// worked out from pcg32's raw outputs and the written-out formulas.
#include "request/synthetic_request_generator.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/input_error.hpp"
#include "core/random.hpp"

namespace infersim {
namespace {

// Two records 10 s apart: rate 2 / 10 s = 0.2 per second; means (100+300)/2, (1+3)/2.
Trace two_records() {
  Trace trace;
  trace.records = {{0, 100, 1}, {10'000'000'000, 300, 3}};
  return trace;
}

TEST(Random, Pcg32SeededWith42GivesItsKnownStream) {
  pcg32 rng(42);
  EXPECT_EQ(rng(), 3270867926u);
  EXPECT_EQ(rng(), 1795671209u);
  EXPECT_EQ(rng(), 1924641435u);
}

TEST(Random, UniformTakesTheFirstOutputAsTheHighBits) {
  pcg32 rng(42);
  // (3270867926 >> 5) * 2^26 + (1795671209 >> 6), over 2^53
  EXPECT_EQ(uniform01(rng), (102214622.0 * 67108864.0 + 28057362.0) / 9007199254740992.0);
}

TEST(SyntheticRequestGenerator, FirstArrivalsForSeed42FollowTheFormulas) {
  SyntheticKnobs knobs;
  knobs.seed = 42;
  const SyntheticRequestGenerator generator(ArrivalKnobs{}, RequestKnobs{}, knobs);
  const GeneratedRequests out = generator.generate(two_records(), SimTime::from_seconds(30));
  // u1 = 0.76155828251009638: -log1p(-u1) / 0.2 = 7.168151848 s
  // u2 = 0.44811549981037913: + 2.972082467 s
  // u3 = 0.95970718122392906: + 16.0579101 s
  ASSERT_EQ(out.tasks.size(), 3u);
  EXPECT_EQ(out.tasks[0].arrival.count_ns(), 7'168'151'848);
  EXPECT_EQ(out.tasks[1].arrival.count_ns(), 10'140'234'315);
  EXPECT_EQ(out.tasks[2].arrival.count_ns(), 26'198'144'415);
  EXPECT_DOUBLE_EQ(out.tasks[0].context_tokens, 200);
  EXPECT_DOUBLE_EQ(out.tasks[0].generated_tokens, 2);
  EXPECT_EQ(out.run_length, SimTime::from_seconds(30));
  // and the same by recomputing the formulas here
  pcg32 rng(42);
  std::int64_t t = 0;
  for (const Request& task : out.tasks) {
    const std::uint32_t high = rng() >> 5;
    const std::uint32_t low = rng() >> 6;
    const double u = (high * 67108864.0 + low) / 9007199254740992.0;
    t += std::llround(-std::log1p(-u) / 0.2 * 1e9);
    EXPECT_EQ(task.arrival.count_ns(), t);
  }
}

TEST(SyntheticRequestGenerator, ResolutionRoundsEachArrivalNotTheRunningSum) {
  SyntheticKnobs knobs;
  ArrivalKnobs arrival;
  arrival.resolution = Duration::from_seconds(1);
  const GeneratedRequests out = SyntheticRequestGenerator(arrival, RequestKnobs{}, knobs)
                                    .generate(two_records(), SimTime::from_seconds(30));
  // 7.168 -> 7 s, 10.140 -> 10 s, 26.198 -> 26 s: had the sum been rounded, the
  // second gap (2.97 s) would have been added to 7 s and given 10 s, the third 26 s
  // too, so check the rounding of the sums themselves.
  ASSERT_EQ(out.tasks.size(), 3u);
  EXPECT_EQ(out.tasks[0].arrival, SimTime::from_seconds(7));
  EXPECT_EQ(out.tasks[1].arrival, SimTime::from_seconds(10));
  EXPECT_EQ(out.tasks[2].arrival, SimTime::from_seconds(26));
}

TEST(SyntheticRequestGenerator, StopsAtTheFirstArrivalAfterTheRun) {
  const SyntheticRequestGenerator generator(ArrivalKnobs{}, RequestKnobs{}, SyntheticKnobs{});
  EXPECT_EQ(generator.generate(two_records(), SimTime::ns(10'140'234'315)).tasks.size(), 2u);
  EXPECT_EQ(generator.generate(two_records(), SimTime::ns(10'140'234'314)).tasks.size(), 1u);
  EXPECT_EQ(generator.generate(two_records(), SimTime::zero()).tasks.size(), 0u);
}

TEST(SyntheticRequestGenerator, EmpiricalSizesPickARecordedPairWithTheNextUniform) {
  SyntheticKnobs knobs;
  knobs.sizes = SyntheticSizes::kEmpirical;
  const GeneratedRequests out = SyntheticRequestGenerator(ArrivalKnobs{}, RequestKnobs{}, knobs)
                                    .generate(two_records(), SimTime::from_seconds(60));
  pcg32 rng(42);
  const Trace trace = two_records();
  for (const Request& task : out.tasks) {
    uniform01(rng);  // the gap
    const auto index = static_cast<std::size_t>(uniform01(rng) * 2);
    EXPECT_DOUBLE_EQ(task.context_tokens, trace.records[index].context_tokens);
    EXPECT_DOUBLE_EQ(task.generated_tokens, trace.records[index].generated_tokens);
  }
  ASSERT_GE(out.tasks.size(), 3u);
}

TEST(SyntheticRequestGenerator, RateComesFromEveryRecordAfterScaling) {
  ArrivalKnobs arrival;
  arrival.time_scale = 0.5;
  const TraceRates rates = trace_rates(two_records(), arrival);
  EXPECT_DOUBLE_EQ(rates.rate_per_s, 2 / 5.0);
  EXPECT_EQ(rates.span, Duration::from_seconds(5));
  EXPECT_DOUBLE_EQ(rates.mean_context_tokens, 200);
}

TEST(SyntheticRequestGenerator, ATraceAtOneInstantHasNoRate) {
  Trace trace;
  trace.records = {{0, 1, 1}, {0, 2, 2}};
  EXPECT_THROW(trace_rates(trace, ArrivalKnobs{}), InputError);
}

TEST(SyntheticRequestGenerator, PoissonCountMatchesTheRate) {
  // 0.2/s over 100000 s: 20000 expected, standard deviation 141.
  const GeneratedRequests out =
      SyntheticRequestGenerator(ArrivalKnobs{}, RequestKnobs{}, SyntheticKnobs{})
          .generate(two_records(), SimTime::from_seconds(100000));
  EXPECT_NEAR(static_cast<double>(out.tasks.size()), 20000, 4 * 141);
}

TEST(SyntheticRequestGenerator, GammaArrivalsKeepTheRateAndSetTheVariation) {
  SyntheticKnobs knobs;
  knobs.arrivals = ArrivalProcess::kGamma;
  knobs.burstiness = 0.25;  // CV = 1 / sqrt(0.25) = 2
  const GeneratedRequests out = SyntheticRequestGenerator(ArrivalKnobs{}, RequestKnobs{}, knobs)
                                    .generate(two_records(), SimTime::from_seconds(500000));
  std::vector<double> gaps;
  SimTime last = SimTime::zero();
  for (const Request& t : out.tasks) {
    gaps.push_back((t.arrival - last).seconds());
    last = t.arrival;
  }
  double mean = 0, squares = 0;
  for (double g : gaps)
    mean += g;
  mean /= static_cast<double>(gaps.size());
  for (double g : gaps)
    squares += (g - mean) * (g - mean);
  const double cv = std::sqrt(squares / static_cast<double>(gaps.size() - 1)) / mean;
  EXPECT_NEAR(mean, 5, 5 * 0.05);
  EXPECT_NEAR(cv, 2, 2 * 0.05);
}

TEST(SyntheticRequestGenerator, GammaWithShapeOneIsThePoissonStream) {
  SyntheticKnobs gamma;
  gamma.arrivals = ArrivalProcess::kGamma;
  gamma.burstiness = 1;
  const auto a = SyntheticRequestGenerator(ArrivalKnobs{}, RequestKnobs{}, gamma)
                     .generate(two_records(), SimTime::from_seconds(600));
  const auto b = SyntheticRequestGenerator(ArrivalKnobs{}, RequestKnobs{}, SyntheticKnobs{})
                     .generate(two_records(), SimTime::from_seconds(600));
  ASSERT_EQ(a.tasks.size(), b.tasks.size());
  for (std::size_t i = 0; i < a.tasks.size(); ++i)
    EXPECT_EQ(a.tasks[i].arrival, b.tasks[i].arrival);
}

TEST(Random, StandardGammaHasItsMeanAndVariance) {
  for (const double shape : {0.3, 1.0, 4.5}) {
    pcg32 rng(7);
    double sum = 0, squares = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
      const double x = standard_gamma(rng, shape);
      sum += x;
      squares += x * x;
    }
    const double mean = sum / n;
    const double variance = squares / n - mean * mean;
    EXPECT_NEAR(mean, shape, shape * 0.02) << shape;
    EXPECT_NEAR(variance, shape, shape * 0.05) << shape;
  }
}

// A bursty trace: 4000 requests in bursts of 40 within a second, a burst
// every 50 s, each with its own sizes and two block ids.
Trace bursty_trace() {
  Trace trace;
  trace.block_id_tokens = 512;
  for (std::uint32_t i = 0; i < 4000; ++i) {
    const std::int64_t at = std::int64_t{i / 40} * 50'000'000'000 + (i % 40) * 25'000'000;
    trace.records.push_back({at, 100 + i, 1 + i % 17});
    trace.hash_ranges.push_back({static_cast<std::uint32_t>(trace.hash_ids.size()), 2});
    trace.hash_ids.push_back(i);
    trace.hash_ids.push_back(7);
  }
  return trace;
}

// The coefficient of variation of the gaps between consecutive arrivals.
double gap_cv(const RequestList& tasks) {
  std::vector<double> gaps;
  for (std::size_t i = 1; i < tasks.size(); ++i)
    gaps.push_back((tasks[i].arrival - tasks[i - 1].arrival).seconds());
  double mean = 0, square = 0;
  for (const double g : gaps)
    mean += g;
  mean /= static_cast<double>(gaps.size());
  for (const double g : gaps)
    square += (g - mean) * (g - mean);
  return std::sqrt(square / static_cast<double>(gaps.size() - 1)) / mean;
}

// The recorded requests at Poisson instants: each record once, in its order,
// with its sizes and block ids; only the instants are drawn, a Poisson
// process over the recorded span (gaps with a CV of 1 where the recorded
// ones, in bursts, have one near 5).
TEST(SyntheticRequestGenerator, RecordedSizesKeepTheRequestsAndDrawOnlyTheirInstants) {
  const Trace trace = bursty_trace();
  SyntheticKnobs knobs;
  knobs.sizes = SyntheticSizes::kRecorded;
  const SyntheticRequestGenerator generator(ArrivalKnobs{}, RequestKnobs{}, knobs);
  const GeneratedRequests out = generator.generate(trace, SimTime::from_seconds(5000));
  ASSERT_EQ(out.tasks.size(), trace.records.size());
  const SimTime last = SimTime::ns(trace.records.back().offset_ns);
  RequestList recorded(RequestKnobs{});
  for (std::size_t i = 0; i < trace.records.size(); ++i) {
    const Request r = out.tasks[i];
    EXPECT_EQ(r.context_tokens, trace.records[i].context_tokens) << i;
    EXPECT_EQ(r.generated_tokens, trace.records[i].generated_tokens) << i;
    ASSERT_EQ(r.block_ids.size(), 2u) << i;
    EXPECT_EQ(r.block_ids[0], i);
    EXPECT_EQ(r.block_id_tokens, 512u);
    if (i > 0) {
      EXPECT_GE(r.arrival, out.tasks[i - 1].arrival);
    }
    EXPECT_GE(r.arrival, SimTime::zero());
    EXPECT_LE(r.arrival, last);
    recorded.add(SimTime::ns(trace.records[i].offset_ns), 1, 1);
  }
  EXPECT_GT(gap_cv(recorded), 4.0);
  EXPECT_NEAR(gap_cv(out.tasks), 1.0, 0.06);
  // The index of dispersion of the counts in 50 s windows: about 1 for
  // Poisson arrivals (the recorded bursts put all of a window's 40 in one).
  std::vector<double> counts(80, 0);
  for (std::size_t i = 0; i < out.tasks.size(); ++i) {
    const auto w = static_cast<std::size_t>(out.tasks[i].arrival.seconds() / 50);
    if (w < counts.size()) ++counts[w];
  }
  double mean = 0, square = 0;
  for (const double c : counts)
    mean += c;
  mean /= static_cast<double>(counts.size());
  for (const double c : counts)
    square += (c - mean) * (c - mean);
  EXPECT_NEAR(square / static_cast<double>(counts.size() - 1) / mean, 1.0, 0.4);
  // Another seed draws other instants for the same requests.
  knobs.seed = 43;
  const GeneratedRequests other = SyntheticRequestGenerator(ArrivalKnobs{}, RequestKnobs{}, knobs)
                                      .generate(trace, SimTime::from_seconds(5000));
  EXPECT_NE(other.tasks[100].arrival, out.tasks[100].arrival);
  EXPECT_EQ(other.tasks[100].context_tokens, out.tasks[100].context_tokens);
  // Gamma arrivals of shape 4: gaps with a CV of about 1/2.
  knobs.arrivals = ArrivalProcess::kGamma;
  knobs.burstiness = 4;
  const GeneratedRequests gamma = SyntheticRequestGenerator(ArrivalKnobs{}, RequestKnobs{}, knobs)
                                      .generate(trace, SimTime::from_seconds(5000));
  EXPECT_NEAR(gap_cv(gamma.tasks), 0.5, 0.05);
}

}  // namespace
}  // namespace infersim
