// The workload profile of small traces built in memory, against figures
// computed by hand, and of Poisson arrivals against their theory.
#include "trace/workload_profile.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#include "core/random.hpp"

namespace infersim {
namespace {

std::int64_t ns_of(double seconds) {
  return std::llround(seconds * 1e9);
}

// Records at the given offsets in seconds, 100 context and 10 generated tokens
// each, no hash ids.
Trace trace_at(std::initializer_list<double> offsets_s) {
  Trace trace;
  for (const double t : offsets_s) {
    TraceRecord r;
    r.offset_ns = ns_of(t);
    r.context_tokens = 100;
    r.generated_tokens = 10;
    trace.records.push_back(r);
  }
  return trace;
}

void add_ids(Trace& trace, std::size_t record, std::initializer_list<std::uint32_t> ids) {
  trace.hash_ranges.resize(trace.records.size());
  trace.hash_ranges.at(record) = {static_cast<std::uint32_t>(trace.hash_ids.size()),
                                  static_cast<std::uint32_t>(ids.size())};
  trace.hash_ids.insert(trace.hash_ids.end(), ids);
}

TEST(WorkloadProfile, PeaksCountRequestsInWindowsOfOffset) {
  // Windows [0, 1) and [1, 2): three requests, then one.
  const WorkloadProfile p = profile_workload(trace_at({0, 0.5, 0.9, 1.2}));
  EXPECT_EQ(p.requests, 4u);
  EXPECT_EQ(p.peak_per_second, 3u);
  EXPECT_EQ(p.peak_per_minute, 4u);
  EXPECT_DOUBLE_EQ(p.span_s, 1.2);
  ASSERT_TRUE(p.mean_rate_rps);
  EXPECT_DOUBLE_EQ(*p.mean_rate_rps, 4 / 1.2);
  ASSERT_TRUE(p.longest_gap_s);
  EXPECT_DOUBLE_EQ(*p.longest_gap_s, 0.5);
}

TEST(WorkloadProfile, PeakWindowsStartAtOffsetZeroNotAtTheFirstArrival) {
  // From the first arrival, 0.5 .. 1.4 would hold all three; from offset 0 the
  // windows [0, 1) and [1, 2) hold one and two.
  const WorkloadProfile p = profile_workload(trace_at({0.5, 1.2, 1.4}));
  EXPECT_EQ(p.peak_per_second, 2u);
  EXPECT_NEAR(p.span_s, 0.9, 1e-12);
}

TEST(WorkloadProfile, InterarrivalCvIsPopulationDeviationOverMeanOfTheGaps) {
  // Gaps 1 and 2: mean 1.5, population deviation 0.5.
  const WorkloadProfile uneven = profile_workload(trace_at({0, 1, 3}));
  ASSERT_TRUE(uneven.interarrival_cv);
  EXPECT_DOUBLE_EQ(*uneven.interarrival_cv, 0.5 / 1.5);
  EXPECT_DOUBLE_EQ(*uneven.longest_gap_s, 2);

  const WorkloadProfile regular = profile_workload(trace_at({0, 1, 2, 3}));
  ASSERT_TRUE(regular.interarrival_cv);
  EXPECT_NEAR(*regular.interarrival_cv, 0, 1e-12);
}

TEST(WorkloadProfile, RegularArrivalsAreLessDispersedThanPoisson) {
  // Every 0.4 s: counts 3, 2, 3 per second; mean 8/3, variance 2/9.
  const WorkloadProfile p = profile_workload(trace_at({0, 0.4, 0.8, 1.2, 1.6, 2.0, 2.4, 2.8}));
  ASSERT_TRUE(p.index_of_dispersion_1s);
  EXPECT_NEAR(*p.index_of_dispersion_1s, (2.0 / 9) / (8.0 / 3), 1e-12);
  EXPECT_LT(*p.index_of_dispersion_1s, 1);
}

TEST(WorkloadProfile, ClumpedArrivalsAreMoreDispersedThanPoissonEmptyWindowsIncluded) {
  // Counts 5, 0, 0, 1 in the seconds 0..3: mean 1.5, variance 6.5 - 2.25.
  const WorkloadProfile p = profile_workload(trace_at({0, 0.1, 0.2, 0.3, 0.4, 3.5}));
  ASSERT_TRUE(p.index_of_dispersion_1s);
  EXPECT_NEAR(*p.index_of_dispersion_1s, 4.25 / 1.5, 1e-12);
  EXPECT_GT(*p.index_of_dispersion_1s, 1);
  // Everything falls in one 10 s window: no dispersion to measure.
  EXPECT_FALSE(p.index_of_dispersion_10s);
  EXPECT_FALSE(p.index_of_dispersion_60s);
}

TEST(WorkloadProfile, TenSecondWindowsReachTheLastArrivalInclusive) {
  // Counts 2, 0, 1 in [0, 10), [10, 20), [20, 30): mean 1, variance 2/3.
  const WorkloadProfile p = profile_workload(trace_at({0, 5, 25}));
  ASSERT_TRUE(p.index_of_dispersion_10s);
  EXPECT_NEAR(*p.index_of_dispersion_10s, 2.0 / 3, 1e-12);
  // A last arrival exactly on a window's start opens that window: counts 1, 1.
  const WorkloadProfile edge = profile_workload(trace_at({0, 10}));
  ASSERT_TRUE(edge.index_of_dispersion_10s);
  EXPECT_NEAR(*edge.index_of_dispersion_10s, 0, 1e-12);
}

TEST(WorkloadProfile, PoissonArrivalsHaveDispersionAndCvNearOne) {
  pcg32 rng(42);
  Trace trace;
  double t = 0;
  for (int k = 0; k < 100000; ++k) {
    TraceRecord r;
    r.offset_ns = ns_of(t);
    trace.records.push_back(r);
    t += exponential(rng, 5);
  }
  const WorkloadProfile p = profile_workload(trace);
  EXPECT_NEAR(*p.interarrival_cv, 1, 0.02);
  EXPECT_NEAR(*p.index_of_dispersion_1s, 1, 0.05);
  EXPECT_NEAR(*p.index_of_dispersion_10s, 1, 0.1);
  EXPECT_NEAR(*p.mean_rate_rps, 5, 0.1);
}

TEST(WorkloadProfile, TokenPercentilesInterpolateAsNumPy) {
  Trace trace = trace_at({0, 1, 2, 3, 4});
  const std::uint32_t context[] = {40, 10, 100, 30, 20};
  for (std::size_t k = 0; k < 5; ++k) {
    trace.records[k].context_tokens = context[k];
    trace.records[k].generated_tokens = static_cast<std::uint32_t>(k + 1);
  }
  const WorkloadProfile p = profile_workload(trace);
  // Sorted 10 20 30 40 100: p90 at position 3.6, p99 at 3.96.
  EXPECT_DOUBLE_EQ(p.input_tokens.mean, 40);
  EXPECT_DOUBLE_EQ(p.input_tokens.p50, 30);
  EXPECT_DOUBLE_EQ(p.input_tokens.p90, 76);
  EXPECT_DOUBLE_EQ(p.input_tokens.p99, 97.6);
  EXPECT_EQ(p.input_tokens.max, 100u);
  EXPECT_DOUBLE_EQ(p.output_tokens.mean, 3);
  EXPECT_DOUBLE_EQ(p.output_tokens.p50, 3);
  EXPECT_DOUBLE_EQ(p.output_tokens.p90, 4.6);
  EXPECT_DOUBLE_EQ(p.output_tokens.p99, 4.96);
  EXPECT_EQ(p.output_tokens.max, 5u);
}

// Ids 1, 2 | 1, 2, 3 | 4: six seen, four distinct, two seen before. Ids far
// apart (hashes rather than Mooncake's counter) give the same figures.
TEST(WorkloadProfile, BlockReuseIsTheShareOfBlocksSeenBefore) {
  for (const std::uint32_t a : {1u, 4000000000u}) {
    const std::uint32_t c = a == 1 ? 3 : 3000000000u;
    Trace trace = trace_at({0, 1, 2});
    add_ids(trace, 0, {a, 2});
    add_ids(trace, 1, {a, 2, c});
    add_ids(trace, 2, {4});
    const WorkloadProfile p = profile_workload(trace);
    ASSERT_TRUE(p.blocks);
    EXPECT_EQ(p.blocks->blocks_seen, 6u) << a;
    EXPECT_EQ(p.blocks->distinct_blocks, 4u) << a;
    EXPECT_DOUBLE_EQ(p.blocks->block_reuse, 2.0 / 6) << a;
  }
}

TEST(WorkloadProfile, BlockIdsAreReadThroughEachRecordsRange) {
  // The ids stored out of record order, as a file read out of timestamp order
  // leaves them; one record without ids.
  Trace trace = trace_at({0, 1, 2});
  trace.hash_ids = {7, 7, 8, 9};
  trace.hash_ranges = {{2, 2}, {0, 0}, {0, 2}};  // 8, 9; none; 7, 7
  const WorkloadProfile p = profile_workload(trace);
  ASSERT_TRUE(p.blocks);
  EXPECT_EQ(p.blocks->blocks_seen, 4u);
  EXPECT_EQ(p.blocks->distinct_blocks, 3u);
  EXPECT_DOUBLE_EQ(p.blocks->block_reuse, 0.25);
}

TEST(WorkloadProfile, TraceWithoutHashIdsHasNoBlockFigures) {
  const WorkloadProfile p = profile_workload(trace_at({0, 1}));
  EXPECT_FALSE(p.blocks);
  const nlohmann::ordered_json json = workload_profile_to_json(p);
  for (const char* key : {"blocks_seen", "distinct_blocks", "block_reuse"}) {
    ASSERT_TRUE(json.contains(key)) << key;
    EXPECT_TRUE(json[key].is_null()) << key;
  }
}

TEST(WorkloadProfile, OneRequestHasNoRateGapsOrDispersion) {
  const WorkloadProfile p = profile_workload(trace_at({0}));
  EXPECT_EQ(p.requests, 1u);
  EXPECT_EQ(p.span_s, 0);
  EXPECT_EQ(p.peak_per_second, 1u);
  EXPECT_FALSE(p.mean_rate_rps);
  EXPECT_FALSE(p.interarrival_cv);
  EXPECT_FALSE(p.longest_gap_s);
  EXPECT_FALSE(p.index_of_dispersion_1s);
  // Simultaneous arrivals: gaps of zero have no coefficient of variation.
  const WorkloadProfile same = profile_workload(trace_at({3, 3}));
  EXPECT_FALSE(same.mean_rate_rps);
  EXPECT_FALSE(same.interarrival_cv);
  EXPECT_EQ(same.peak_per_second, 2u);
}

TEST(WorkloadProfile, EmptyTraceHasNoFigures) {
  const WorkloadProfile p = profile_workload(Trace{});
  EXPECT_EQ(p.requests, 0u);
  EXPECT_EQ(p.peak_per_second, 0u);
  EXPECT_FALSE(p.mean_rate_rps);
  EXPECT_FALSE(p.blocks);
}

TEST(WorkloadProfile, RefusesRecordsOutOfOffsetOrder) {
  EXPECT_THROW(profile_workload(trace_at({0, 2, 1})), std::invalid_argument);
}

TEST(WorkloadProfile, JsonHasTheNamedKeysInOrderWithNestedTokenStats) {
  Trace trace = trace_at({0, 0.5, 0.9, 1.2});
  add_ids(trace, 0, {1});
  add_ids(trace, 3, {1});
  const nlohmann::ordered_json json = workload_profile_to_json(profile_workload(trace));
  std::vector<std::string> keys;
  for (const auto& item : json.items())
    keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "requests", "span_s", "mean_rate_rps", "peak_per_second", "peak_per_minute",
                      "interarrival_cv", "longest_gap_s", "index_of_dispersion_1s",
                      "index_of_dispersion_10s", "index_of_dispersion_60s", "input_tokens",
                      "output_tokens", "blocks_seen", "distinct_blocks", "block_reuse"}));
  EXPECT_EQ(json["requests"], 4);
  EXPECT_EQ(json["peak_per_second"], 3);
  EXPECT_EQ(json["input_tokens"]["p90"], 100.0);
  EXPECT_EQ(json["output_tokens"]["max"], 10);
  EXPECT_EQ(json["blocks_seen"], 2);
  EXPECT_EQ(json["distinct_blocks"], 1);
  EXPECT_DOUBLE_EQ(json["block_reuse"].get<double>(), 0.5);
  // One 10 s window only.
  EXPECT_TRUE(json["index_of_dispersion_10s"].is_null());
}

}  // namespace
}  // namespace infersim
