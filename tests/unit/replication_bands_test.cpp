// The seeds' band of a replicated mode: each slice's and each CDF point's
// smallest and largest value over the seeds, worked out by hand.
#include "report/replication_bands.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace infersim {
namespace {

TimeSlice slice(double start, double end, std::uint64_t arrivals, std::uint64_t completions,
                std::uint64_t misses, std::optional<double> wait_p99) {
  TimeSlice s;
  s.start = SimTime::from_seconds(start);
  s.end = SimTime::from_seconds(end);
  s.arrivals = arrivals;
  s.completions = completions;
  s.deadline_misses = misses;
  s.queue_len_mean = static_cast<double>(arrivals) / 2;
  s.busy_cores_mean = 1;
  s.utilization = 0.5;
  s.wait_p99_s = wait_p99;
  return s;
}

// Two seeds; the second runs a slice longer. Slice 0: arrivals 4 and 6, miss
// rates 1/4 and 0/5, wait p99 2 and none. Slice 1: the second seed's alone.
TEST(ReplicationBands, SliceRangesOverTheSeeds) {
  TimeSeries a{Duration::from_seconds(10), "core", false, {slice(0, 10, 4, 4, 1, 2.0)}};
  TimeSeries b{Duration::from_seconds(10),
               "core",
               false,
               {slice(0, 10, 6, 5, 0, std::nullopt), slice(10, 15, 2, 0, 0, 0.5)}};
  const auto rows = test::lines_of(time_series_band_csv({a, b}));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0],
            "slice_start_s,slice_end_s,arrivals_min,arrivals_max,queue_len_mean_min,"
            "queue_len_mean_max,busy_cores_mean_min,busy_cores_mean_max,utilization_min,"
            "utilization_max,miss_rate_min,miss_rate_max,wait_p99_s_min,wait_p99_s_max,"
            "ttft_p99_s_min,ttft_p99_s_max");
  EXPECT_EQ(rows[1], "0.000000000,10.000000000,4,6,2,3,1,1,0.5,0.5,0,0.25,2,2,,");
  // No answer in the second seed's last slice: no miss rate.
  EXPECT_EQ(rows[2], "10.000000000,15.000000000,2,2,1,1,1,1,0.5,0.5,,,0.5,0.5,,");
}

// The second seed's CDF has other fractions: its value at the first's
// fractions is read off by linear interpolation (at 0.5, halfway between
// its 0.4 and 0.6 points: (1 + 3) / 2 = 2).
TEST(ReplicationBands, CdfRangesAtTheFirstSeedsFractions) {
  LatencyCdf a{{0, 0.5, 1}, {0, 1, 4}, {1, 1, 1}, {2, 2, 2}};
  LatencyCdf b{{0, 0.4, 0.6, 1}, {0, 1, 3, 5}, {1, 1, 1, 1}, {1, 3, 3, 3}};
  const auto rows = test::lines_of(cdf_band_csv({a, b}));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], "fraction,wait_s_min,wait_s_max,ttft_s_min,ttft_s_max,e2el_s_min,e2el_s_max");
  EXPECT_EQ(rows[1], "0,0,0,1,1,1,2");
  EXPECT_EQ(rows[2], "0.5,1,2,1,1,2,3");
  EXPECT_EQ(rows[3], "1,4,5,1,1,2,3");
}

}  // namespace
}  // namespace infersim
