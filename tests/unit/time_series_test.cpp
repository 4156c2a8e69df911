// The time series: a hand-made case worked out slice by slice (time weighting,
// largest queue, energy), the slices' bounds, and sums that must match the
// summary on a simulated run.
#include "report/time_series.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "core/input_error.hpp"
#include "model/edge_server.hpp"
#include "report/summary.hpp"
#include "scenario/scenario.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {

SimTime at(double s) {
  return SimTime::from_seconds(s);
}

struct Instants {
  double arrival, server_arrival, start, finish, response;
};

Request task_at(double arrival_s) {
  RequestKnobs knobs;
  knobs.ttft_budget_s = 12;
  knobs.decode_budget_s = 0;
  return make_request(at(arrival_s), 1000, 10, knobs);  // budget 12 s
}

// As the simulation tells it of a request served on a core: its busy time,
// then its outcome.
void serve(TimeSeriesCollector& c, std::uint64_t id, const Request& request,
           const RequestOutcome& o) {
  c.on_busy(o.unit, o.start, o.finish);
  c.on_request(id, request, o);
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
    serve(c, id++, task_at(r.arrival), o);
  }
}

// The slices on an edge server of `cores` cores with the default power.
TimeSeries compute(TimeSeriesCollector& c, SimTime run_length, unsigned cores) {
  const EdgeServer server(cores);
  return c.compute(run_length, server, server.usage(run_length), RadioEnergy(EnergyKnobs{}));
}

// MODEL.md section 8 on a stretch: the server's term and the radios'.
double energy_wh(SimTime length, Duration busy, unsigned cores, double request_bits,
                 double result_bits) {
  return EdgeServer(cores).energy_wh(length - SimTime::zero(), busy) +
         RadioEnergy(EnergyKnobs{}).radio_wh(request_bits, result_bits);
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
    series_ = compute(collector_, at(30), 1);
  }
  TimeSeriesCollector collector_{Duration::from_seconds(10)};
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
  const double run = energy_wh(at(30), Duration::from_seconds(22), 1, 3 * 32000, 3 * 320);
  EXPECT_NEAR(s[0].energy_wh + s[1].energy_wh + s[2].energy_wh, run, 1e-12 * run);
}

TEST_F(HandMade, CsvHasAHeaderAndARowASlice) {
  const std::string csv = time_series_csv(series_);
  EXPECT_TRUE(csv.starts_with(
      "slice_start_s,slice_end_s,arrivals,completions,deadline_misses,queue_len_mean,"
      "queue_len_max,busy_cores_mean,utilization,energy_wh,wait_p99_s,ttft_p99_s\n"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
  EXPECT_THAT(csv, ::testing::HasSubstr("\n10.000000000,20.000000000,0,1,0,1.2,2,1,1,"));
}

// The p99 TTFT of a slice is of the requests arriving in it, whenever their
// first token comes; an arrival at the run's end exactly belongs to the last
// slice.
TEST(TimeSeries, TtftP99IsOfTheRequestsArrivingInTheSlice) {
  TimeSeriesCollector c(Duration::from_seconds(10));
  std::uint64_t id = 0;
  auto request = [&](double arrival, double first_token, double response) {
    RequestOutcome o;
    o.server_arrival = at(arrival);
    o.start = at(arrival);
    o.first_token = at(first_token);
    o.finish = at(response);
    o.response = at(response);
    serve(c, id++, task_at(arrival), o);
  };
  request(1, 2, 3);     // TTFT 1
  request(2, 4, 5);     // 2
  request(3, 8, 9);     // 5
  request(12, 42, 43);  // 30, answered three slices later
  request(45, 47, 48);  // 2
  request(50, 50, 50);  // 0, at the run's end
  const TimeSeries t = compute(c, at(50), 1);
  ASSERT_EQ(t.slices.size(), 5u);
  // NumPy: index (3 - 1) * 0.99 = 1.98, 2 + 0.98 * (5 - 2).
  EXPECT_DOUBLE_EQ(*t.slices[0].ttft_p99_s, 2 + 0.98 * 3);
  EXPECT_DOUBLE_EQ(*t.slices[1].ttft_p99_s, 30);
  EXPECT_FALSE(t.slices[2].ttft_p99_s.has_value());
  EXPECT_FALSE(t.slices[3].ttft_p99_s.has_value());
  EXPECT_DOUBLE_EQ(*t.slices[4].ttft_p99_s, 0 + 0.99 * 2);  // of {0, 2}
}

TEST(TimeSeries, ASliceWithoutStartsHasNoWaitPercentile) {
  TimeSeriesCollector c(Duration::from_seconds(1));
  feed(c, {{1, 1, 1, 2, 3}});
  const TimeSeries t = compute(c, at(5), 2);
  ASSERT_EQ(t.slices.size(), 5u);
  EXPECT_TRUE(t.slices[1].wait_p99_s.has_value());
  EXPECT_FALSE(t.slices[2].wait_p99_s.has_value());
  EXPECT_THAT(time_series_csv(t), ::testing::EndsWith(",\n"));  // the empty last field
}

TEST(TimeSeries, AnInstantInTheQueueDoesNotCount) {
  TimeSeriesCollector c(Duration::from_seconds(10));
  feed(c, {{0, 2, 2, 3, 4}, {0, 2, 2, 3, 4}});  // reach the server and start at once
  const TimeSeries t = compute(c, at(10), 2);
  EXPECT_EQ(t.slices[0].queue_len_max, 0u);
  EXPECT_DOUBLE_EQ(*t.slices[0].queue_len_mean, 0);
  EXPECT_DOUBLE_EQ(*t.slices[0].busy_cores_mean, 0.2);
}

// A step is its replica's busy time (ServerObserver::on_step): the same
// busy figures as those spans told by on_busy, one of them across a slice's
// edge.
// A slice too fine for the run is refused at the first instant past the
// limit, before the slices grow to it (not at the end, after a million).
TEST(TimeSeries, AnInstantPastTheMostSlicesIsRefusedAtOnce) {
  TimeSeriesCollector c(Duration::ns(1000));
  const std::string what = test::error_of([&] {
    c.on_busy(0, SimTime::zero(), SimTime::ns(static_cast<std::int64_t>(1000 * kMaxSlices + 1)));
  });
  EXPECT_NE(what.find("report.slice_duration_s: "), std::string::npos) << what;
  EXPECT_NE(what.find(" s makes more than 1000000 slices of a run reaching "), std::string::npos)
      << what;
}

TEST(TimeSeries, AStepCountsAsItsReplicasBusyTime) {
  TimeSeriesCollector spans(Duration::from_seconds(10)), steps(Duration::from_seconds(10));
  const std::vector<std::tuple<std::uint32_t, double, double>> busy = {
      {0, 1, 4}, {1, 2, 3}, {0, 8, 13}, {1, 15, 15.5}};
  for (const auto& [replica, from, to] : busy) {
    spans.on_busy(replica, at(from), at(to));
    StepRecord step;
    step.replica = replica;
    step.start = at(from);
    step.end = at(to);
    steps.on_step(step);
  }
  const TimeSeries a = compute(spans, at(20), 2), b = compute(steps, at(20), 2);
  ASSERT_EQ(a.slices.size(), 2u);
  ASSERT_EQ(b.slices.size(), 2u);
  EXPECT_DOUBLE_EQ(*a.slices[0].busy_cores_mean, (3 + 1 + 2) / 10.0);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a.slices[i].busy_cores_mean, b.slices[i].busy_cores_mean) << i;
    EXPECT_EQ(a.slices[i].utilization, b.slices[i].utilization) << i;
    EXPECT_EQ(a.slices[i].energy_wh, b.slices[i].energy_wh) << i;
  }
}

TEST(TimeSeries, AFleetsBusyEnergyFallsInEverySliceABusySpanCrosses) {
  // One replica of a class idle at 0 W and 3600 W more when busy, busy from 5
  // to 25 s over slices of 10 s: 5, 10 and 5 s of it in the three slices,
  // whether the span comes whole or cut at the edges.
  const auto energies = [](const std::vector<std::pair<double, double>>& spans) {
    TimeSeriesCollector c(Duration::from_seconds(10));
    c.set_unit_dynamic_w({3600});
    for (const auto& [from, to] : spans)
      c.on_busy(0, at(from), at(to));
    const EdgeServer server(1);
    ServerUsage usage = server.usage(at(30));
    usage.spans = {ReplicaSpan{0, 0, at(0), at(0), at(30)}};
    usage.class_idle_w = {0};
    usage.class_usd_per_hour = {0};
    const TimeSeries t = c.compute(at(30), server, usage, RadioEnergy(EnergyKnobs{}));
    std::vector<double> wh;
    for (const TimeSlice& slice : t.slices)
      wh.push_back(slice.energy_wh);
    return wh;
  };
  const std::vector<double> whole = energies({{5, 25}});
  EXPECT_THAT(whole, ::testing::Pointwise(::testing::DoubleEq(), std::vector<double>{5, 10, 5}));
  EXPECT_EQ(whole, energies({{5, 10}, {10, 20}, {20, 25}}));
}

TEST(TimeSeries, TheLastSliceEndsAtTheRunsEndAndHoldsWhatHappensThen) {
  TimeSeriesCollector c(Duration::from_seconds(10));
  feed(c, {{0, 0, 0, 19, 20}});
  TimeSeriesCollector longer(Duration::from_seconds(10));
  feed(longer, {{0, 0, 0, 19, 20}});
  // The response at 20 s is the end: two slices, the last one [10, 20].
  const TimeSeries even = compute(c, at(15), 1);
  ASSERT_EQ(even.slices.size(), 2u);
  EXPECT_EQ(even.slices[1].completions, 1u);
  EXPECT_EQ(even.slices[1].end, at(20));
  // A run of 25 s: the last slice is [20, 25], and its means use 5 s.
  const TimeSeries partial = compute(longer, at(25), 1);
  EXPECT_THROW(compute(c, at(25), 1), std::logic_error);
  ASSERT_EQ(partial.slices.size(), 3u);
  EXPECT_EQ(partial.slices[2].end, at(25));
  EXPECT_EQ(partial.slices[2].completions, 1u);
  EXPECT_DOUBLE_EQ(partial.slices[2].energy_wh, 420 * 5.0 / 3600);
}

TEST(TimeSeries, AnEmptyRunOfNoLengthHasOneEmptySlice) {
  TimeSeriesCollector c(Duration::from_seconds(60));
  const TimeSeries t = compute(c, at(0), 8);
  ASSERT_EQ(t.slices.size(), 1u);
  EXPECT_FALSE(t.slices[0].queue_len_mean.has_value());
  EXPECT_EQ(t.slices[0].energy_wh, 0);
}

TEST(TimeSeries, TooManySlicesAreRefused) {
  EXPECT_THAT(test::error_of([] {
                TimeSeriesCollector c(Duration::ns(1));
                compute(c, at(3600), 8);
              }),
              ::testing::HasSubstr("report.slice_duration_s"));
}

// The slices worked out by brute force, slice by slice, from every request's
// instants: the reference the streaming collector must equal exactly.
__extension__ typedef __int128 Int128;

struct Served {
  infersim::Request task;
  RequestOutcome o;
};

TimeSeries brute_force(const std::vector<Served>& requests, std::int64_t s, SimTime run_length,
                       unsigned cores) {
  std::int64_t end = run_length.count_ns();
  for (const Served& r : requests)
    end = std::max(end, r.o.response.count_ns());
  const std::size_t count = std::max<std::size_t>(1, static_cast<std::size_t>((end + s - 1) / s));
  auto slice_of = [&](SimTime t) {
    return std::min<std::size_t>(static_cast<std::size_t>(t.count_ns() / s), count - 1);
  };
  // Intervals [from, to) in the queue.
  auto queued_at = [&](std::int64_t t) {
    std::uint64_t n = 0;
    for (const Served& r : requests)
      n += r.o.server_arrival.count_ns() <= t && t < r.o.start.count_ns();
    return n;
  };
  TimeSeries out;
  out.slice = Duration::ns(s);
  for (std::size_t k = 0; k < count; ++k) {
    TimeSlice slice;
    const std::int64_t from = static_cast<std::int64_t>(k) * s;
    const std::int64_t to = k + 1 == count ? end : from + s;
    slice.start = SimTime::ns(from);
    slice.end = SimTime::ns(to);
    Int128 queued_ns = 0, busy_ns = 0;
    double request_bits = 0, result_bits = 0;
    std::vector<double> waits;
    // The queue's largest length: at the slice's start or where one joins it.
    slice.queue_len_max = queued_at(from);
    for (const Served& r : requests) {
      const std::int64_t a = r.o.server_arrival.count_ns(), b = r.o.start.count_ns();
      const std::int64_t c = r.o.finish.count_ns();
      auto overlap = [&](std::int64_t x, std::int64_t y) {
        return std::max<std::int64_t>(0, std::min(y, to) - std::max(x, from));
      };
      queued_ns += overlap(a, b);
      busy_ns += overlap(b, c);
      if (a >= from && a < to) slice.queue_len_max = std::max(slice.queue_len_max, queued_at(a));
      if (slice_of(r.task.arrival) == k) {
        ++slice.arrivals;
        request_bits += r.task.request_bits;
        result_bits += r.task.result_bits;
      }
      if (slice_of(r.o.response) == k) {
        ++slice.completions;
        slice.deadline_misses += r.o.response - r.task.arrival > r.task.budget;
      }
      if (slice_of(r.o.start) == k) waits.push_back(r.o.wait().seconds());
    }
    const std::int64_t length = to - from;
    if (length > 0) {
      slice.queue_len_mean = static_cast<double>(queued_ns) / static_cast<double>(length);
      slice.busy_cores_mean = static_cast<double>(busy_ns) / static_cast<double>(length);
      slice.utilization = static_cast<double>(busy_ns) / (static_cast<double>(length) * cores);
    }
    slice.energy_wh =
        energy_wh(SimTime::ns(length), Duration::ns(static_cast<std::int64_t>(busy_ns)), cores,
                  request_bits, result_bits);
    slice.wait_p99_s = percentile(waits, 0.99);
    out.slices.push_back(slice);
  }
  return out;
}

// Random runs on a coarse clock, so that instants meet each other and the
// slices' bounds: ties, requests that never wait, zero execution times, long
// queues, and runs whose end is a slice bound with a response there.
TEST(TimeSeries, StreamedSlicesEqualTheBruteForceOnes) {
  std::mt19937_64 bits(2024);
  for (int round = 0; round < 300; ++round) {
    const std::int64_t unit = 1 + static_cast<std::int64_t>(bits() % 5);
    const std::int64_t s = unit * (1 + static_cast<std::int64_t>(bits() % 6));
    const unsigned cores = 1 + static_cast<unsigned>(bits() % 3);
    const int n = static_cast<int>(bits() % 120);
    std::vector<std::int64_t> free_at(cores, 0);
    std::vector<Served> requests;
    std::int64_t arrival = 0;
    for (int i = 0; i < n; ++i) {
      arrival += unit * static_cast<std::int64_t>(bits() % 3);
      Served r;
      r.task = make_request(SimTime::ns(arrival), 100 + bits() % 900, bits() % 4, RequestKnobs{});
      r.task.budget = Duration::ns(unit * static_cast<std::int64_t>(bits() % 12));
      const auto core = static_cast<std::size_t>(std::min_element(free_at.begin(), free_at.end()) -
                                                 free_at.begin());
      r.o.server_arrival = SimTime::ns(arrival + unit * static_cast<std::int64_t>(bits() % 3));
      r.o.start = std::max(r.o.server_arrival, SimTime::ns(free_at[core]));
      r.o.finish = r.o.start + Duration::ns(unit * static_cast<std::int64_t>(bits() % 5));
      r.o.response = r.o.finish + Duration::ns(unit * static_cast<std::int64_t>(bits() % 2));
      free_at[core] = r.o.finish.count_ns();
      requests.push_back(r);
    }
    std::int64_t last = 0;
    for (const Served& r : requests)
      last = std::max(last, r.o.response.count_ns());
    // Half the runs end at the last response, rounded down to a slice bound.
    const SimTime run_length = SimTime::ns(
        bits() % 2 == 0 ? last / s * s : last + unit * static_cast<std::int64_t>(bits() % 9));

    TimeSeriesCollector collector(Duration::ns(s));
    for (std::size_t i = 0; i < requests.size(); ++i)
      serve(collector, i, requests[i].task, requests[i].o);
    const TimeSeries got = compute(collector, run_length, cores);
    const TimeSeries want = brute_force(requests, s, run_length, cores);
    ASSERT_EQ(got.slices.size(), want.slices.size()) << round;
    for (std::size_t k = 0; k < want.slices.size(); ++k) {
      const TimeSlice& g = got.slices[k];
      const TimeSlice& w = want.slices[k];
      const std::string where = "round " + std::to_string(round) + " slice " + std::to_string(k);
      EXPECT_EQ(g.start, w.start) << where;
      EXPECT_EQ(g.end, w.end) << where;
      EXPECT_EQ(g.arrivals, w.arrivals) << where;
      EXPECT_EQ(g.completions, w.completions) << where;
      EXPECT_EQ(g.deadline_misses, w.deadline_misses) << where;
      EXPECT_EQ(g.queue_len_mean, w.queue_len_mean) << where;
      EXPECT_EQ(g.queue_len_max, w.queue_len_max) << where;
      EXPECT_EQ(g.busy_cores_mean, w.busy_cores_mean) << where;
      EXPECT_EQ(g.utilization, w.utilization) << where;
      EXPECT_EQ(g.energy_wh, w.energy_wh) << where;
      EXPECT_EQ(g.wait_p99_s, w.wait_p99_s) << where;
    }
  }
}

TEST(TimeSeries, AStartAtTheRunsEndCountsInTheLastSlicesWaits) {
  // One core, slices of 10 s, the run ends at 20 s: R2 waits 12 s and starts
  // at 15; R3 waits 15 s and starts at 20 exactly, the end, which the last
  // slice [10, 20] holds.
  TimeSeriesCollector c(Duration::from_seconds(10));
  feed(c, {{0, 1, 1, 15, 15}, {2, 3, 15, 20, 20}, {4, 5, 20, 20, 20}});
  const TimeSeries t = compute(c, at(20), 1);
  ASSERT_EQ(t.slices.size(), 2u);
  EXPECT_DOUBLE_EQ(*t.slices[1].wait_p99_s, 12 + 0.99 * 3);
  EXPECT_EQ(t.slices[1].queue_len_max, 2u);
}

TEST(TimeSeries, RequestsOutOfArrivalOrderAreALogicError) {
  TimeSeriesCollector c(Duration::from_seconds(10));
  feed(c, {{5, 6, 6, 7, 8}});
  EXPECT_THROW(feed(c, {{4, 6, 6, 7, 8}}), std::logic_error);
}

// Bursty arrivals on a small server, through the whole edge model.
ModeResult bursty_run(double slice_s) {
  Settings settings;
  settings.cores = 2;
  settings.slice_duration_s = slice_s;
  RequestList tasks(settings.request_knobs());
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
