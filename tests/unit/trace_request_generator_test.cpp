#include "request/trace_request_generator.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace infersim {
namespace {

Trace trace_of(std::vector<std::int64_t> offsets_ns) {
  Trace trace;
  for (std::int64_t t : offsets_ns)
    trace.records.push_back(TraceRecord{t, 100, 2});
  return trace;
}

TEST(TraceRequestGenerator, ResolutionRoundsHalfUpInIntegers) {
  const Duration second = Duration::from_seconds(1);
  EXPECT_EQ(apply_resolution(SimTime::ns(499'999'999), second), SimTime::ns(0));
  EXPECT_EQ(apply_resolution(SimTime::ns(500'000'000), second), SimTime::ns(1'000'000'000));
  EXPECT_EQ(apply_resolution(SimTime::ns(1'499'999'999), second), SimTime::ns(1'000'000'000));
  EXPECT_EQ(apply_resolution(SimTime::ns(1'234), Duration::zero()), SimTime::ns(1'234));
  // odd resolution: R/2 truncates to 1, so 1 ns rounds down and 2 ns up
  EXPECT_EQ(apply_resolution(SimTime::ns(1), Duration::ns(3)), SimTime::ns(0));
  EXPECT_EQ(apply_resolution(SimTime::ns(2), Duration::ns(3)), SimTime::ns(3));
  EXPECT_EQ(apply_resolution(SimTime::ns(4), Duration::ns(3)), SimTime::ns(3));
}

TEST(TraceRequestGenerator, TimeScaleComesBeforeResolution) {
  ArrivalKnobs knobs;
  knobs.time_scale = 0.5;
  knobs.resolution = Duration::from_seconds(1);
  // 2.6 s scaled to 1.3 s, then rounded to 1 s; rounding first would give 1.5 s.
  EXPECT_EQ(arrival_for_offset(2'600'000'000, knobs), SimTime::ns(1'000'000'000));
}

TEST(TraceRequestGenerator, RunLengthIsTheLastArrivalRoundedUpToAMinute) {
  EXPECT_EQ(run_length_for(SimTime::from_seconds(3435.95)), SimTime::from_seconds(3480));
  EXPECT_EQ(run_length_for(SimTime::from_seconds(60)), SimTime::from_seconds(60));
  EXPECT_EQ(run_length_for(SimTime::ns(60'000'000'001)), SimTime::from_seconds(120));
  EXPECT_EQ(run_length_for(SimTime::zero()), SimTime::zero());
}

TEST(TraceRequestGenerator, OneTaskPerRecordInOrder) {
  const TraceRequestGenerator generator(ArrivalKnobs{}, RequestKnobs{});
  const GeneratedRequests out = generator.generate(trace_of({0, 5, 5, 90'000'000'000}));
  ASSERT_EQ(out.tasks.size(), 4u);
  EXPECT_EQ(out.tasks[1].arrival, SimTime::ns(5));
  EXPECT_EQ(out.tasks[3].arrival, SimTime::from_seconds(90));
  EXPECT_EQ(out.run_length, SimTime::from_seconds(120));
  EXPECT_EQ(out.dropped, 0u);
}

TEST(TraceRequestGenerator, DropsAndCountsWhatArrivesAfterTheRun) {
  ArrivalKnobs knobs;
  knobs.duration = Duration::from_seconds(10);
  const TraceRequestGenerator generator(knobs, RequestKnobs{});
  const GeneratedRequests out =
      generator.generate(trace_of({0, 10'000'000'000, 10'000'000'001, 20'000'000'000}));
  EXPECT_EQ(out.tasks.size(), 2u);  // t == T is kept
  EXPECT_EQ(out.dropped, 2u);
  EXPECT_EQ(out.run_length, SimTime::from_seconds(10));
}

TEST(TraceRequestGenerator, ZeroDurationKeepsOnlyRequestsAtTimeZero) {
  ArrivalKnobs knobs;
  knobs.duration = Duration::zero();
  const GeneratedRequests out =
      TraceRequestGenerator(knobs, RequestKnobs{}).generate(trace_of({0, 0, 1}));
  EXPECT_EQ(out.tasks.size(), 2u);
  EXPECT_EQ(out.dropped, 1u);
}

}  // namespace
}  // namespace infersim

namespace infersim {
namespace {

// Offsets 0, 10, 20, 21, 50, 51 s.
Trace window_trace() {
  Trace trace;
  for (const std::int64_t s : {0, 10, 20, 21, 50, 51}) {
    trace.records.push_back(TraceRecord{s * 1'000'000'000, 1, 1});
  }
  return trace;
}

std::vector<std::int64_t> arrivals_ms(const GeneratedRequests& out) {
  std::vector<std::int64_t> s;
  for (const Request& t : out.tasks)
    s.push_back(t.arrival.count_ns() / 1'000'000);  // in ms
  return s;
}

// Knobs of a replay: the window [start_s, end_s] of the trace, the longest
// idle gap kept, the time scale and the clock's resolution (seconds).
ArrivalKnobs replay_knobs(std::optional<double> start_s, std::optional<double> end_s,
                          std::optional<double> max_idle_gap_s, double time_scale = 1,
                          double resolution_s = 0) {
  ArrivalKnobs knobs;
  if (start_s) knobs.start_offset = Duration::from_seconds(*start_s);
  if (end_s) knobs.end_offset = Duration::from_seconds(*end_s);
  if (max_idle_gap_s) knobs.max_idle_gap = Duration::from_seconds(*max_idle_gap_s);
  knobs.time_scale = time_scale;
  knobs.resolution = Duration::from_seconds(resolution_s);
  return knobs;
}

// window_trace() replayed: the arrivals (ms) and how many records fell
// outside the window; the run's length where a case fixes it.
struct Replayed {
  const char* name;
  ArrivalKnobs knobs;
  std::vector<std::int64_t> arrivals_ms;
  std::uint64_t outside_window;
  std::optional<SimTime> run_length = std::nullopt;
};

TEST(ReplayWindow, WindowGapScaleAndResolutionShapeTheArrivals) {
  const Replayed cases[] = {
      {"keeps the inclusive window and counts from its start",
       replay_knobs(10, 50, {}),
       {0, 10'000, 11'000, 40'000},
       2},
      // gaps 10, 10, 1, 29, 1 become 5, 5, 1, 5, 1
      {"an idle gap cap shifts every later request",
       replay_knobs({}, {}, 5),
       {0, 5'000, 10'000, 11'000, 16'000, 17'000},
       0},
      // window: 0, 10, 11, 40, 41; gap cap 4: 0, 4, 5, 9, 10; scaled (--speedup
      // 4): 0, 1, 1.25, 2.25, 2.5; rounded to the second: 0, 1, 1, 2, 3
      {"window and gap come before scale and resolution",
       replay_knobs(10, {}, 4, 0.25, 1),
       {0, 1'000, 1'000, 2'000, 3'000},
       1,
       SimTime::from_seconds(60)},
      {"an empty window replays nothing", replay_knobs(30, 40, {}), {}, 6},
  };
  for (const Replayed& c : cases) {
    SCOPED_TRACE(c.name);
    const GeneratedRequests out =
        TraceRequestGenerator(c.knobs, RequestKnobs{}).generate(window_trace());
    EXPECT_EQ(arrivals_ms(out), c.arrivals_ms);
    EXPECT_EQ(out.outside_window, c.outside_window);
    EXPECT_EQ(out.dropped, 0u);
    if (c.run_length) {
      EXPECT_EQ(out.run_length, *c.run_length);
    }
  }
}

}  // namespace
}  // namespace infersim

namespace infersim {
namespace {

// Built in the records' memory or apart, the tasks are the same, whatever the
// window, gap cap, scale, clock and run length leave of them.
TEST(TraceRequestGenerator, TakingTheRecordsGivesTheSameTasks) {
  std::vector<ArrivalKnobs> cases(6);
  cases[1].time_scale = 0.37;
  cases[2].resolution = Duration::from_seconds(1);
  cases[3].start_offset = Duration::from_seconds(2);
  cases[3].end_offset = Duration::from_seconds(40);
  cases[4].max_idle_gap = Duration::from_seconds(0.5);
  cases[5].duration = Duration::from_seconds(30);  // drops the later ones
  for (std::size_t c = 0; c < cases.size(); ++c) {
    Trace trace;
    for (std::int64_t i = 0; i < 500; ++i)
      trace.records.push_back(TraceRecord{i * i * 250'000, static_cast<std::uint32_t>(7 * i % 300),
                                          static_cast<std::uint32_t>(i % 11)});
    const TraceRequestGenerator generator(cases[c], RequestKnobs{});
    const GeneratedRequests apart = generator.generate(trace);
    const GeneratedRequests taken = generator.generate_taking_records(trace);
    EXPECT_TRUE(trace.records.empty()) << c;
    EXPECT_EQ(taken.run_length, apart.run_length) << c;
    EXPECT_EQ(taken.dropped, apart.dropped) << c;
    EXPECT_EQ(taken.outside_window, apart.outside_window) << c;
    ASSERT_EQ(taken.tasks.size(), apart.tasks.size()) << c;
    for (std::size_t k = 0; k < apart.tasks.size(); ++k) {
      ASSERT_EQ(taken.tasks.arrival(k), apart.tasks.arrival(k)) << c << " " << k;
      ASSERT_EQ(taken.tasks.context_tokens(k), apart.tasks.context_tokens(k));
      ASSERT_EQ(taken.tasks.generated_tokens(k), apart.tasks.generated_tokens(k));
    }
  }
}

}  // namespace
}  // namespace infersim
