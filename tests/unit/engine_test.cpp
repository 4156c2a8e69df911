// The event engine and its queues: every test runs against each queue behind
// the interface, each queue (the linear scan too) checked against a sorted
// set of plain (time, phase, seq) tuples that shares no code with them.
#include "engine/engine.hpp"

#include <gtest/gtest.h>

#include <pcg_random.hpp>
#include <set>
#include <tuple>
#include <vector>

namespace infersim {
namespace {

template <typename Q>
class EventQueueTest : public ::testing::Test {};
using Queues = ::testing::Types<BinaryHeapQueue, QuaternaryHeapQueue, LinearScanQueue>;
TYPED_TEST_SUITE(EventQueueTest, Queues);

Event at(std::int64_t ns, Phase phase, std::uint64_t seq, std::uint64_t subject = 0) {
  return Event{EventKey{SimTime::ns(ns), phase, seq}, 0, subject};
}

TYPED_TEST(EventQueueTest, PopsInTimeThenPhaseThenSequenceOrder) {
  TypeParam q;
  q.insert(at(20, Phase::kArrival, 0, 1));
  q.insert(at(10, Phase::kArrival, 1, 2));
  q.insert(at(10, Phase::kDeparture, 2, 3));
  q.insert(at(10, Phase::kArrival, 3, 4));
  q.insert(at(5, Phase::kArrival, 4, 5));
  std::vector<std::uint64_t> order;
  while (!q.empty()) {
    order.push_back(q.peek().subject);
    q.pop();
  }
  EXPECT_EQ(order, (std::vector<std::uint64_t>{5, 3, 2, 4, 1}));
}

TYPED_TEST(EventQueueTest, SizeFollowsInsertsAndPops) {
  TypeParam q;
  EXPECT_TRUE(q.empty());
  q.insert(at(1, Phase::kArrival, 0));
  q.insert(at(1, Phase::kArrival, 1));
  EXPECT_EQ(q.size(), 2u);
  q.pop();
  EXPECT_EQ(q.size(), 1u);
  EXPECT_FALSE(q.empty());
}

// The order of MODEL.md and STYLE.md written out without EventKey: time, then
// phase (departures first), then the schedule count; the subject rides along.
using Reference = std::set<std::tuple<std::int64_t, int, std::uint64_t, std::uint64_t>>;

void insert_both(EventQueue auto& q, Reference& reference, std::int64_t ns, Phase phase,
                 std::uint64_t seq) {
  q.insert(at(ns, phase, seq, seq));
  reference.emplace(ns, static_cast<int>(phase), seq, seq);
}

TYPED_TEST(EventQueueTest, AgreesWithASortedSetUnderRandomHoldOperations) {
  pcg32 rng(7);
  TypeParam q;
  Reference reference;
  std::uint64_t seq = 0;
  for (int i = 0; i < 64; ++i) {
    insert_both(q, reference, rng(16), static_cast<Phase>(rng(3)), seq++);
  }
  int pops = 0;
  for (int step = 0; step < 5000 && !q.empty(); ++step) {
    ASSERT_EQ(q.size(), reference.size());
    const auto& [ns, phase, expected_seq, subject] = *reference.begin();
    const Event& e = q.peek();
    ASSERT_EQ(e.key.time.count_ns(), ns) << "step " << step;
    ASSERT_EQ(static_cast<int>(e.key.phase()), phase) << "step " << step;
    ASSERT_EQ(e.key.seq(), expected_seq) << "step " << step;
    ASSERT_EQ(e.subject, subject) << "step " << step;
    const std::int64_t now = ns;
    q.pop();
    reference.erase(reference.begin());
    ++pops;
    const int inserts = static_cast<int>(rng(3));  // 0, 1 or 2: the queue wanders in size
    for (int i = 0; i < inserts && q.size() < 200; ++i) {
      insert_both(q, reference, now + rng(8), static_cast<Phase>(rng(3)), seq++);
    }
  }
  EXPECT_GT(pops, 1000) << "the walk ended early; it checks too little";
}

template <typename Q>
class EngineTest : public ::testing::Test {};
TYPED_TEST_SUITE(EngineTest, Queues);

TYPED_TEST(EngineTest, RunsEqualTimesFirstInFirstOut) {
  Engine<TypeParam> engine;
  for (std::uint64_t i = 0; i < 10; ++i)
    engine.schedule_at(SimTime::ns(100), Phase::kArrival, 0, i);
  std::vector<std::uint64_t> order;
  engine.run([&](const Event& e) { order.push_back(e.subject); });
  EXPECT_EQ(order, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(engine.executed(), 10u);
  EXPECT_EQ(engine.now(), SimTime::ns(100));
}

TYPED_TEST(EngineTest, EventsScheduledDuringRunKeepTheOrder) {
  Engine<TypeParam> engine;
  engine.schedule_at(SimTime::ns(10), Phase::kArrival, 0, 0);
  std::vector<std::pair<std::int64_t, std::uint64_t>> seen;
  engine.run([&](const Event& e) {
    seen.emplace_back(engine.now().count_ns(), e.subject);
    if (e.subject == 0) {
      engine.schedule_in(Duration::ns(5), Phase::kArrival, 0, 2);
      engine.schedule_in(Duration::ns(0), Phase::kArrival, 0, 1);
      engine.schedule_in(Duration::ns(5), Phase::kDeparture, 0, 3);
    }
  });
  const std::vector<std::pair<std::int64_t, std::uint64_t>> expected = {
      {10, 0}, {10, 1}, {15, 3}, {15, 2}};
  EXPECT_EQ(seen, expected);
}

TYPED_TEST(EngineTest, RefusesAnEventInThePast) {
  Engine<TypeParam> engine;
  engine.schedule_at(SimTime::ns(10), Phase::kArrival, 0, 0);
  EXPECT_THROW(
      engine.run([&](const Event&) { engine.schedule_at(SimTime::ns(9), Phase::kArrival, 0, 1); }),
      CausalityError);
}

TYPED_TEST(EngineTest, RefusesANegativeDelay) {
  Engine<TypeParam> engine;
  EXPECT_THROW(engine.schedule_in(Duration::ns(-1), Phase::kArrival, 0, 0), CausalityError);
}

}  // namespace
}  // namespace infersim
