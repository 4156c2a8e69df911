// The time series: a hand-made case worked out slice by slice (time weighting,
// largest queue, energy), the slices' bounds, and sums that must match the
// summary on a simulated run.
#include "report/time_series.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/input_error.hpp"
#include "scenario/scenario.hpp"

namespace infersim {
namespace {

SimTime at(double s) {
  return SimTime::from_seconds(s);
}

struct Instants {
  double arrival, server_arrival, start, finish, response;
};

Task task_at(double arrival_s) {
  TaskKnobs knobs;
  knobs.ttft_budget_s = 12;
  knobs.decode_budget_s = 0;
  return make_task(at(arrival_s), 1000, 10, knobs);  // budget 12 s
}

void feed(TimeSeriesCollector& c, const std::vector<Instants>& requests) {
  std::uint64_t id = 0;
  for (const Instants& r : requests) {
    RequestOutcome o;
    o.server_arrival = at(r.server_arrival);
    o.start = at(r.start);
    o.finish = at(r.finish);
    o.response = at(r.response);
    o.first_token = o.response;
    c.on_issued(id++, task_at(r.arrival), o);
  }
}

// One core; three requests arrive in the first 10 s slice and queue behind
// each other:
//   R1 arrives 1, at the server 2, runs [2, 12), answered 13 (makespan 12: met)
//   R2 arrives 3, at the server 4, runs [12, 22), answered 23 (20: missed)
//   R3 arrives 5, at the server 6, runs [22, 24), answered 25 (20: missed)
class HandMade : public ::testing::Test {
 protected:
  void SetUp() override {
    feed(collector_, {{1, 2, 2, 12, 13}, {3, 4, 12, 22, 23}, {5, 6, 22, 24, 25}});
    series_ = collector_.compute(at(30), 1, energy_);
  }
  TimeSeriesCollector collector_{Duration::from_seconds(10)};
  const EnergyModel energy_{EnergyKnobs{}};
  TimeSeries series_;
};

TEST_F(HandMade, SlicesCoverTheRun) {
  ASSERT_EQ(series_.slices.size(), 3u);
  EXPECT_EQ(series_.slices[0].start, at(0));
  EXPECT_EQ(series_.slices[2].start, at(20));
  EXPECT_EQ(series_.slices[2].end, at(30));
}

TEST_F(HandMade, CountsGoByArrivalAndByResponse) {
  const auto& s = series_.slices;
  EXPECT_EQ(s[0].arrivals, 3u);
  EXPECT_EQ(s[1].arrivals + s[2].arrivals, 0u);
  EXPECT_EQ(s[0].completions, 0u);
  EXPECT_EQ(s[1].completions, 1u);
  EXPECT_EQ(s[2].completions, 2u);
  EXPECT_EQ(s[1].deadline_misses, 0u);
  EXPECT_EQ(s[2].deadline_misses, 2u);
}

TEST_F(HandMade, QueueLengthIsTimeWeighted) {
  // Queued: R2 over [4, 12), R3 over [6, 22).
  const auto& s = series_.slices;
  EXPECT_DOUBLE_EQ(*s[0].queue_len_mean, (6.0 + 4.0) / 10);  // R2 6 s, R3 4 s
  EXPECT_DOUBLE_EQ(*s[1].queue_len_mean, (2.0 + 10.0) / 10);
  EXPECT_DOUBLE_EQ(*s[2].queue_len_mean, 2.0 / 10);
  EXPECT_EQ(s[0].queue_len_max, 2u);
  EXPECT_EQ(s[1].queue_len_max, 2u);  // carried in from the slice before
  EXPECT_EQ(s[2].queue_len_max, 1u);
}

TEST_F(HandMade, BusyCoresAndUtilizationAreTimeWeighted) {
  // Busy: [2, 24) without a gap.
  const auto& s = series_.slices;
  EXPECT_DOUBLE_EQ(*s[0].busy_cores_mean, 0.8);
  EXPECT_DOUBLE_EQ(*s[1].busy_cores_mean, 1.0);
  EXPECT_DOUBLE_EQ(*s[2].busy_cores_mean, 0.4);
  EXPECT_DOUBLE_EQ(*s[2].utilization, 0.4);
}

TEST_F(HandMade, WaitPercentileOfTheRequestsStartingInTheSlice) {
  const auto& s = series_.slices;
  EXPECT_DOUBLE_EQ(*s[0].wait_p99_s, 0);
  EXPECT_DOUBLE_EQ(*s[1].wait_p99_s, 8);
  EXPECT_DOUBLE_EQ(*s[2].wait_p99_s, 16);
}

TEST_F(HandMade, EnergyIsTheModelAppliedToEachSliceAndSumsToTheRun) {
  const double radio_wh = 3 * (32000 * 283.17 + 320 * 137.01) * 1e-9 / 3600;
  const auto& s = series_.slices;
  EXPECT_DOUBLE_EQ(s[0].energy_wh, (420 * 10 + 300 * 8.0) / 3600 + radio_wh);
  EXPECT_DOUBLE_EQ(s[1].energy_wh, (420 * 10 + 300 * 10.0) / 3600);
  EXPECT_DOUBLE_EQ(s[2].energy_wh, (420 * 10 + 300 * 4.0) / 3600);
  const double run = energy_.energy_wh(at(30), Duration::from_seconds(22), 1, 3 * 32000, 3 * 320);
  EXPECT_NEAR(s[0].energy_wh + s[1].energy_wh + s[2].energy_wh, run, 1e-12 * run);
}

TEST_F(HandMade, CsvHasAHeaderAndARowASlice) {
  const std::string csv = time_series_csv(series_);
  EXPECT_TRUE(csv.starts_with(std::string(kTimeSeriesCsvHeader) + "\n"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
  EXPECT_THAT(csv, ::testing::HasSubstr("\n10.000000000,20.000000000,0,1,0,1.2,2,1,1,"));
}

TEST(TimeSeries, ASliceWithoutStartsHasNoWaitPercentile) {
  TimeSeriesCollector c(Duration::from_seconds(1));
  feed(c, {{1, 1, 1, 2, 3}});
  const TimeSeries t = c.compute(at(5), 2, EnergyModel(EnergyKnobs{}));
  ASSERT_EQ(t.slices.size(), 5u);
  EXPECT_TRUE(t.slices[1].wait_p99_s.has_value());
  EXPECT_FALSE(t.slices[2].wait_p99_s.has_value());
  EXPECT_THAT(time_series_csv(t), ::testing::EndsWith(",\n"));  // the empty last field
}

TEST(TimeSeries, AnInstantInTheQueueDoesNotCount) {
  TimeSeriesCollector c(Duration::from_seconds(10));
  feed(c, {{0, 2, 2, 3, 4}, {0, 2, 2, 3, 4}});  // reach the server and start at once
  const TimeSeries t = c.compute(at(10), 2, EnergyModel(EnergyKnobs{}));
  EXPECT_EQ(t.slices[0].queue_len_max, 0u);
  EXPECT_DOUBLE_EQ(*t.slices[0].queue_len_mean, 0);
  EXPECT_DOUBLE_EQ(*t.slices[0].busy_cores_mean, 0.2);
}

TEST(TimeSeries, TheLastSliceEndsAtTheRunsEndAndHoldsWhatHappensThen) {
  TimeSeriesCollector c(Duration::from_seconds(10));
  feed(c, {{0, 0, 0, 19, 20}});
  TimeSeriesCollector longer(Duration::from_seconds(10));
  feed(longer, {{0, 0, 0, 19, 20}});
  // The response at 20 s is the end: two slices, the last one [10, 20].
  const TimeSeries even = c.compute(at(15), 1, EnergyModel({}));
  ASSERT_EQ(even.slices.size(), 2u);
  EXPECT_EQ(even.slices[1].completions, 1u);
  EXPECT_EQ(even.slices[1].end, at(20));
  // A run of 25 s: the last slice is [20, 25], and its means use 5 s.
  const TimeSeries partial = longer.compute(at(25), 1, EnergyModel({}));
  EXPECT_THROW(c.compute(at(25), 1, EnergyModel({})), std::logic_error);
  ASSERT_EQ(partial.slices.size(), 3u);
  EXPECT_EQ(partial.slices[2].end, at(25));
  EXPECT_EQ(partial.slices[2].completions, 1u);
  EXPECT_DOUBLE_EQ(partial.slices[2].energy_wh, 420 * 5.0 / 3600);
}

TEST(TimeSeries, AnEmptyRunOfNoLengthHasOneEmptySlice) {
  const TimeSeries t =
      TimeSeriesCollector(Duration::from_seconds(60)).compute(at(0), 8, EnergyModel({}));
  ASSERT_EQ(t.slices.size(), 1u);
  EXPECT_FALSE(t.slices[0].queue_len_mean.has_value());
  EXPECT_EQ(t.slices[0].energy_wh, 0);
}

TEST(TimeSeries, TooManySlicesAreRefused) {
  try {
    TimeSeriesCollector(Duration::ns(1)).compute(at(3600), 8, EnergyModel({}));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("report.slice_duration_s"));
  }
}

// Bursty arrivals on a small server, through the whole edge model.
ModeResult bursty_run(double slice_s) {
  Settings settings;
  settings.cores = 2;
  settings.slice_duration_s = slice_s;
  TaskList tasks(settings.task_knobs());
  std::uint64_t state = 12345;
  double t = 0;
  for (int i = 0; i < 600; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(state >> 11) / 9007199254740992.0;
    t += (i / 50) % 2 == 0 ? 0.05 * u : 4 * u;  // bursts of 50, then calm
    tasks.add(SimTime::from_seconds(t), 200 + 1000 * u, 1 + 40 * u);
  }
  return simulate(settings, "recorded", std::move(tasks), SimTime::from_seconds(std::ceil(t)), 0,
                  false);
}

TEST(TimeSeries, SlicesAddUpToTheSummary) {
  for (const double slice_s : {7.0, 60.0, 1000.0}) {
    const ModeResult r = bursty_run(slice_s);
    std::uint64_t arrivals = 0, completions = 0, misses = 0;
    double energy = 0, busy_s = 0;
    for (const TimeSlice& s : r.time_series.slices) {
      arrivals += s.arrivals;
      completions += s.completions;
      misses += s.deadline_misses;
      energy += s.energy_wh;
      busy_s += *s.busy_cores_mean * (s.end - s.start).seconds();
    }
    const double requests = *r.summary.get("requests");
    EXPECT_EQ(static_cast<double>(arrivals), requests) << slice_s;
    EXPECT_EQ(static_cast<double>(completions), requests) << slice_s;
    EXPECT_EQ(static_cast<double>(misses), *r.summary.get("deadline_missed")) << slice_s;
    EXPECT_NEAR(energy, *r.summary.get("energy_wh"), 1e-12 * energy) << slice_s;
    EXPECT_NEAR(busy_s, *r.summary.get("compute_s"), 1e-9 * busy_s) << slice_s;
    EXPECT_EQ(r.time_series.slices.back().end.seconds(), *r.summary.get("end_s"));
    EXPECT_EQ(r.time_series.slices.size(),
              static_cast<std::size_t>(std::ceil(*r.summary.get("end_s") / slice_s)));
  }
}

TEST(TimeSeries, QueueOfABurstyRunIsNeverNegativeAndPeaksAboveItsMean) {
  const ModeResult r = bursty_run(10);
  bool queued = false;
  for (const TimeSlice& s : r.time_series.slices) {
    EXPECT_GE(*s.queue_len_mean, 0);
    EXPECT_LE(*s.queue_len_mean, static_cast<double>(s.queue_len_max));
    EXPECT_LE(*s.busy_cores_mean, 2.0 + 1e-12);
    queued = queued || s.queue_len_max > 0;
  }
  EXPECT_TRUE(queued);
}

}  // namespace
}  // namespace infersim
