// Fleets of replica classes (BATCHING.md section 11): the degenerate fleets
// that must equal a run without one request by request, a scale-up with its
// start-up delay and a drain worked out by hand with the bill, two classes of
// different speed, and invariants over random fleets and loads.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <pcg_random.hpp>

#include "core/random.hpp"
#include "model/batching_server.hpp"
#include "test_support.hpp"
#include "unit/server_harness.hpp"

namespace infersim {
namespace {

using test::fed;
using test::FedRequest;
using test::ServerHarness;

// One replica's worth of small knobs: B = 4, S = 8, Tb = 64; a step of P
// prefill tokens and D decodes lasts 1,000,000 + 1,000 P + 10,000 D ns.
BatchingKnobs small(std::int64_t kv_blocks = 2000) {
  BatchingKnobs k;
  k.max_num_seqs = 8;
  k.max_num_batched_tokens = 64;
  k.block_tokens = 4;
  k.kv_blocks = kv_blocks;
  k.prefix_caching = false;
  k.reserve_full_prompt = false;
  k.step_base_s = 1e-3;
  k.step_prefill_token_s = 1e-6;
  k.step_prefill_pair_s = 0;
  k.step_decode_token_s = 1e-5;
  k.step_decode_context_s = 0;
  return k;
}

std::vector<FedRequest> random_requests(std::uint64_t seed, std::size_t n, double rate_per_s) {
  pcg32 rng(seed);
  std::vector<FedRequest> out;
  double t = 0;
  for (std::size_t i = 0; i < n; ++i) {
    t += exponential(rng, rate_per_s);
    const double prompt = 1 + std::floor(uniform01(rng) * 120);
    const double output = std::floor(uniform01(rng) * 60);
    out.push_back(fed(std::llround(t * 1e9), prompt, output));
  }
  return out;
}

ServerUsage run(BatchingServer& server, const std::vector<FedRequest>& requests,
                ServerHarness& harness) {
  harness.run(requests);
  return server.usage(harness.end);
}

double usage_figure(const ServerUsage& u, const std::string& key) {
  for (const ServerFigure& f : u.figures) {
    if (f.key == key) return f.value.value_or(std::nan(""));
  }
  ADD_FAILURE() << key << " is not among the server's figures";
  return std::nan("");
}

void expect_same_requests(const ServerHarness& a, const ServerHarness& b) {
  ASSERT_EQ(a.reports.size(), b.reports.size());
  for (std::size_t i = 0; i < a.reports.size(); ++i) {
    EXPECT_EQ(a.reports[i].start, b.reports[i].start) << "request " << i;
    EXPECT_EQ(a.reports[i].unit, b.reports[i].unit) << "request " << i;
    EXPECT_EQ(a.reports[i].first_token, b.reports[i].first_token) << "request " << i;
    EXPECT_EQ(a.reports[i].finish, b.reports[i].finish) << "request " << i;
    EXPECT_EQ(a.reports[i].rejected, b.reports[i].rejected) << "request " << i;
  }
}

// A fleet of one class never scaled is the run without a fleet: the same
// instants, the same figures of section 9 (section 11, last paragraph).
TEST(Fleet, OneClassIsTheFleetOfVersionOne) {
  for (const RouterKind router : {RouterKind::kRoundRobin, RouterKind::kLeastRequests,
                                  RouterKind::kKvAware, RouterKind::kPrefix}) {
    BatchingKnobs knobs = small(64);
    knobs.replicas = 3;
    knobs.router = router;
    const std::vector<FedRequest> requests = random_requests(7, 400, 150);
    BatchingServer plain(knobs);
    ServerHarness plain_run(plain);
    const ServerUsage a = run(plain, requests, plain_run);
    ReplicaClass only;
    only.name = "only";
    only.replicas = 3;
    only.knobs = knobs;
    BatchingServer fleet(knobs, {only});
    ServerHarness fleet_run(fleet);
    const ServerUsage b = run(fleet, requests, fleet_run);
    expect_same_requests(plain_run, fleet_run);
    EXPECT_EQ(a.busy, b.busy);
    EXPECT_EQ(a.energy_wh, b.energy_wh);
    for (std::size_t i = 0; i < a.figures.size(); ++i) {
      EXPECT_EQ(a.figures[i].key, b.figures[i].key);
      EXPECT_EQ(a.figures[i].value, b.figures[i].value) << a.figures[i].key;
    }
    EXPECT_EQ(b.provisioned, Duration::ns(3 * (plain_run.end - SimTime::zero()).count_ns()));
    EXPECT_EQ(usage_figure(b, "cost_usd"), 0);
    EXPECT_EQ(usage_figure(b, "peak_replicas"), 3);
  }
}

// An autoscaler held at min = max = replicas never moves: a fixed fleet,
// request by request.
TEST(Fleet, AutoscaleHeldAtOneCountIsAFixedFleet) {
  BatchingKnobs knobs = small(64);
  knobs.replicas = 2;
  knobs.router = RouterKind::kLeastRequests;
  const std::vector<FedRequest> requests = random_requests(11, 300, 120);
  BatchingServer plain(knobs);
  ServerHarness plain_run(plain);
  run(plain, requests, plain_run);
  ReplicaClass held;
  held.replicas = 2;
  held.knobs = knobs;
  held.autoscale = Autoscale{};
  held.autoscale->min = held.autoscale->max = 2;
  held.autoscale->interval = Duration::ns(100'000'000);
  BatchingServer fleet(knobs, {held});
  ServerHarness fleet_run(fleet);
  const ServerUsage u = run(fleet, requests, fleet_run);
  expect_same_requests(plain_run, fleet_run);
  EXPECT_EQ(usage_figure(u, "scale_ups"), 0);
  EXPECT_EQ(usage_figure(u, "scale_downs"), 0);
}

// BATCHING.md section 13.1: each duration fits the clock, but a run may still
// reach its end; the next evaluation past it is refused naming the knob, not
// scheduled at a wrapped-around instant.
TEST(Fleet, AnEvaluationPastTheClocksEndNamesTheInterval) {
  ReplicaClass cls;
  cls.name = "gpu";
  cls.knobs = small(2000);
  cls.autoscale = Autoscale{};
  cls.autoscale->max = 2;
  cls.autoscale->interval = Duration::ns(1'000'000'000'000'000'000);  // 10^9 s
  BatchingServer server(cls.knobs, {cls});
  ServerHarness harness(server);
  // An arrival at 9.1 * 10^18 ns keeps evaluations going to 9 * 10^18 ns,
  // whose next would be at 10^19 ns > 2^63 - 1.
  const std::string what =
      test::error_of([&] { harness.run({fed(9'100'000'000'000'000'000, 4, 2)}); });
  EXPECT_NE(what.find("batching.fleet (class gpu).autoscale.interval_s: the run reaches past the "
                      "end of the nanosecond clock"),
            std::string::npos)
      << what;
}

// Section 13.3: desired = min(max, max(min, ceil(load / target))) in double.
// A tiny target makes load / target infinite for any load: desired is the
// maximum, so the first evaluation with a request held starts every slot.
TEST(Fleet, ATinyTargetWantsTheMaximum) {
  ReplicaClass cls;
  cls.name = "gpu";
  cls.knobs = small(2000);
  cls.autoscale = Autoscale{};
  cls.autoscale->max = 3;
  cls.autoscale->interval = Duration::ns(1'000'000'000);
  cls.autoscale->target_requests = 1e-300;
  cls.autoscale->startup = Duration::zero();
  BatchingServer server(cls.knobs, {cls});
  ServerHarness harness(server);
  // Held from 0 to about 2.04 s: the evaluation at 1 s sees a load of 1.
  harness.run({fed(0, 4, 2001)});
  const ServerUsage u = server.usage(harness.end);
  EXPECT_EQ(usage_figure(u, "scale_ups"), 2);
  EXPECT_EQ(usage_figure(u, "peak_replicas"), 3);
}

// An evaluation every 10 us under a 300 s stabilization delay: 300,000
// evaluations in 3 s, each with every earlier one in its window. Rescanning
// the window each time reads 4.5 * 10^10 entries (minutes); as a sliding
// maximum each evaluation costs O(1) amortized (well under a second).
TEST(Fleet, ALongDelayAtAShortIntervalStaysLinear) {
  ReplicaClass cls;
  cls.name = "gpu";
  cls.knobs = small(2000);
  cls.autoscale = Autoscale{};
  cls.autoscale->max = 4;
  cls.autoscale->interval = Duration::ns(10'000);
  cls.autoscale->target_requests = 1;
  cls.autoscale->startup = Duration::zero();
  cls.autoscale->scale_down_delay = Duration::ns(300'000'000'000);
  BatchingServer server(cls.knobs, {cls});
  ServerHarness harness(server);
  const auto begin = std::chrono::steady_clock::now();
  harness.run(
      {fed(0, 4, 2001), fed(0, 4, 2001), fed(1'000'000'000, 4, 2001), fed(3'000'000'000, 4, 1)});
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_LT(wall_s, 5.0);
  const ServerUsage u = server.usage(harness.end);
  // Up to 2, then 3 at 1 s; the delay outlasts the run: never down.
  EXPECT_EQ(usage_figure(u, "scale_ups"), 2);
  EXPECT_EQ(usage_figure(u, "scale_downs"), 0);
  EXPECT_GE(harness.end, SimTime::ns(3'000'000'000));
}

// Worked by hand. One class: 1 replica at 0, autoscaled from 1 to 2 every
// second on a target of 1 request a replica, start-up 0.5 s, no
// stabilization delay; least-requests; 2 GPUs a replica at $2 an hour.
//   r0, r1 at 0 (4 + 2001 tokens each) share replica 0: a prefill step of 8
//   tokens (1,008,000 ns), then 2000 steps of 2 decodes (1,020,000 ns): both
//   finish at 2,041,008,000.
//   t = 1 s: load 2, desired 2 > 1: slot 1 starts, active at 1.5 s.
//   r2 at 1.6 s (4 + 1) goes to replica 1, the least loaded: one step of 4
//   prefill tokens, done at 1,601,004,000.
//   t = 2 s: load 2 (replica 0), desired 2 = current: nothing.
//   t = 3 s: r3 is still to come; load 0, desired 1, floor 1 < 2: replica 1,
//   the highest active one, holds nothing and goes at once (absent at 3 s).
//   r3 at 3.5 s (4 + 1) goes to replica 0: done at 3,501,004,000.
//   t = 4 s: nothing in flight, nothing to come: the evaluations end.
// Provisioned: replica 0 for [0, 4 s), replica 1 for [1 s, 3 s): 6 s of
// replica time, 12 s of GPU time, $2 * 12 / 3600. Busy: 2,042,012,000 ns on
// replica 0, 1,004,000 on replica 1.
TEST(Fleet, ScaleUpWithStartUpAndDrainWithTheBillByHand) {
  BatchingKnobs knobs = small(2000);
  knobs.router = RouterKind::kLeastRequests;
  ReplicaClass cls;
  cls.name = "gpu";
  cls.replicas = 1;
  cls.knobs = knobs;
  cls.gpus = 2;
  cls.price_per_gpu_hour = 2;
  cls.autoscale = Autoscale{};
  cls.autoscale->min = 1;
  cls.autoscale->max = 2;
  cls.autoscale->interval = Duration::ns(1'000'000'000);
  cls.autoscale->target_requests = 1;
  cls.autoscale->startup = Duration::ns(500'000'000);
  cls.autoscale->scale_down_delay = Duration::zero();
  BatchingServer server(knobs, {cls});
  ServerHarness harness(server);
  harness.run(
      {fed(0, 4, 2001), fed(0, 4, 2001), fed(1'600'000'000, 4, 1), fed(3'500'000'000, 4, 1)});
  const auto& r = harness.reports;
  EXPECT_EQ(r[0].finish, SimTime::ns(2'041'008'000));
  EXPECT_EQ(r[1].finish, SimTime::ns(2'041'008'000));
  EXPECT_EQ(r[2].unit, 1u);
  EXPECT_EQ(r[2].start, SimTime::ns(1'600'000'000));
  EXPECT_EQ(r[2].finish, SimTime::ns(1'601'004'000));
  EXPECT_EQ(r[3].unit, 0u);
  EXPECT_EQ(r[3].finish, SimTime::ns(3'501'004'000));
  EXPECT_EQ(harness.end, SimTime::ns(4'000'000'000));  // the last evaluation

  const ServerUsage u = server.usage(SimTime::ns(4'000'000'000));
  EXPECT_EQ(u.provisioned, Duration::ns(6'000'000'000));
  EXPECT_EQ(u.busy, Duration::ns(2'042'012'000 + 1'004'000));
  EXPECT_DOUBLE_EQ(usage_figure(u, "replica_hours"), 6.0 / 3600);
  EXPECT_DOUBLE_EQ(usage_figure(u, "gpu_hours"), 12.0 / 3600);
  EXPECT_DOUBLE_EQ(usage_figure(u, "cost_usd"), 2 * 12.0 / 3600);
  EXPECT_DOUBLE_EQ(usage_figure(u, "usd_per_million_tokens"),
                   2 * 12.0 / 3600 * 1e6 / (2 * 2005 + 2 * 5));
  EXPECT_EQ(usage_figure(u, "peak_replicas"), 2);
  EXPECT_EQ(usage_figure(u, "scale_ups"), 1);
  EXPECT_EQ(usage_figure(u, "scale_downs"), 1);
  EXPECT_DOUBLE_EQ(u.energy_wh, (100 * 6.0 + 600 * 2.043016) / 3600);
  ASSERT_EQ(u.classes.size(), 1u);
  EXPECT_EQ(u.classes[0].name, "gpu");
  EXPECT_DOUBLE_EQ(*u.classes[0].utilization, 2.043016 / 6);
  EXPECT_EQ(u.unit_class, (std::vector<std::string>{"gpu", "gpu"}));
}

// Worked by hand: a replica told to go while it serves drains. Two replicas
// at 0, autoscaled from 1 to 2 every second on a target of 4; least-requests.
//   r0 and r1 at 0 (4 + 2001 tokens) go to replicas 0 and 1: alone, a prefill
//   step (1,004,000 ns), then 2000 decode steps of 1,010,000: 2,021,004,000.
//   t = 1 s: load 2, desired 1, floor 1 < 2: replica 1 (the highest) holds r1
//   and drains: routed nothing more, it steps on.
//   r2 at 1.2 s (4 + 1) goes to replica 0, the only active one: it joins the
//   step after the one running then (ends 1,200,884,000), a step of r0's
//   decode and r2's 4 prefill tokens, 1,014,000 ns: r2 done at 1,201,898,000
//   and r0 at 2,021,008,000, 4,000 ns later than alone.
//   r1 finishes at 2,021,004,000: replica 1 becomes absent then.
//   t = 2 s: load 1 (replica 0), desired 1 = current: nothing. t = 3 s: the
//   evaluations end.
// Provisioned: 3 s + 2.021004 s; busy: both replicas from 0 to their last
// finish.
TEST(Fleet, ADrainingReplicaServesWhatItHoldsAndIsBilledUntilThen) {
  BatchingKnobs knobs = small(2000);
  knobs.router = RouterKind::kLeastRequests;
  ReplicaClass cls;
  cls.replicas = 2;
  cls.knobs = knobs;
  cls.autoscale = Autoscale{};
  cls.autoscale->min = 1;
  cls.autoscale->max = 2;
  cls.autoscale->interval = Duration::ns(1'000'000'000);
  cls.autoscale->target_requests = 4;
  cls.autoscale->startup = Duration::ns(500'000'000);
  cls.autoscale->scale_down_delay = Duration::zero();
  BatchingServer server(knobs, {cls});
  ServerHarness harness(server);
  harness.run({fed(0, 4, 2001), fed(0, 4, 2001), fed(1'200'000'000, 4, 1)});
  const auto& r = harness.reports;
  EXPECT_EQ(r[0].unit, 0u);
  EXPECT_EQ(r[1].unit, 1u);
  EXPECT_EQ(r[2].unit, 0u);  // not to the draining replica, though it holds fewer
  EXPECT_EQ(r[2].finish, SimTime::ns(1'201'898'000));
  EXPECT_EQ(r[0].finish, SimTime::ns(2'021'008'000));
  EXPECT_EQ(r[1].finish, SimTime::ns(2'021'004'000));
  EXPECT_EQ(harness.end, SimTime::ns(3'000'000'000));
  const ServerUsage u = server.usage(harness.end);
  EXPECT_EQ(u.provisioned, Duration::ns(3'000'000'000 + 2'021'004'000));
  EXPECT_EQ(u.busy, Duration::ns(std::int64_t{2'021'008'000} + 2'021'004'000));
  EXPECT_EQ(usage_figure(u, "scale_ups"), 0);
  EXPECT_EQ(usage_figure(u, "scale_downs"), 1);
  EXPECT_EQ(usage_figure(u, "peak_replicas"), 2);
  ASSERT_EQ(u.spans.size(), 2u);
  EXPECT_EQ(u.spans[0].unit, 1u);  // the drained one, closed first
  EXPECT_EQ(u.spans[0].to, SimTime::ns(2'021'004'000));
}

// A replica that would become active after it was told to go never serves:
// scaled up at 1 s (start-up 10 s), down at 3 s while still starting.
TEST(Fleet, AStartingReplicaGoesFirstAndNeverServes) {
  BatchingKnobs knobs = small(2000);
  knobs.router = RouterKind::kRoundRobin;
  ReplicaClass cls;
  cls.knobs = knobs;
  cls.autoscale = Autoscale{};
  cls.autoscale->min = 1;
  cls.autoscale->max = 2;
  cls.autoscale->interval = Duration::ns(1'000'000'000);
  cls.autoscale->target_requests = 1;
  cls.autoscale->startup = Duration::ns(10'000'000'000);
  cls.autoscale->scale_down_delay = Duration::zero();
  BatchingServer server(knobs, {cls});
  ServerHarness harness(server);
  // Two long requests until 2.04 s, then one at 12 s: every request on
  // replica 0 (the slot 1 replica started at 1 s went at 3 s).
  harness.run({fed(0, 4, 2001), fed(0, 4, 2001), fed(12'000'000'000, 4, 1)});
  for (const auto& report : harness.reports)
    EXPECT_EQ(report.unit, 0u);
  const ServerUsage u = server.usage(harness.end);
  EXPECT_EQ(usage_figure(u, "scale_ups"), 1);
  EXPECT_EQ(usage_figure(u, "scale_downs"), 1);
  // Replica 1 was provisioned from 1 s to 3 s, idle; the evaluations end at
  // 13 s, the first with nothing in flight and nothing to come.
  EXPECT_EQ(harness.end, SimTime::ns(13'000'000'000));
  EXPECT_EQ(u.provisioned, Duration::ns(13'000'000'000 + 2'000'000'000));
}

// Two classes of different speed: round-robin alternates them, each request
// costs its class's step.
TEST(Fleet, TwoClassesStepEachWithItsOwnCost) {
  BatchingKnobs fast = small(100);
  fast.router = RouterKind::kRoundRobin;
  BatchingKnobs slow = fast;
  slow.step_base_s = 2e-3;
  slow.kv_blocks = 50;
  ReplicaClass a{"fast", 1, fast, 1, 3.0, std::nullopt, Role::kBoth, ""};
  ReplicaClass b{"slow", 1, slow, 1, 1.0, std::nullopt, Role::kBoth, ""};
  BatchingKnobs section = fast;
  section.max_model_len = 200;  // within both classes' K * B
  BatchingServer server(section, {a, b});
  ServerHarness harness(server);
  harness.run({fed(0, 4, 1), fed(0, 4, 1), fed(10'000'000, 100, 1)});
  const auto& r = harness.reports;
  EXPECT_EQ(r[0].unit, 0u);
  EXPECT_EQ(r[0].finish, SimTime::ns(1'004'000));
  EXPECT_EQ(r[1].unit, 1u);
  EXPECT_EQ(r[1].finish, SimTime::ns(2'004'000));
  // The third goes to the fast one, its prompt in chunks of 64 and 36.
  EXPECT_EQ(r[2].unit, 0u);
  EXPECT_EQ(r[2].finish, SimTime::ns(10'000'000 + 1'064'000 + 1'036'000));
  const ServerUsage u = server.usage(SimTime::ns(60'000'000'000));
  ASSERT_EQ(u.classes.size(), 2u);
  EXPECT_DOUBLE_EQ(u.classes[0].cost_usd, 3.0 * 60 / 3600);
  EXPECT_DOUBLE_EQ(u.classes[1].cost_usd, 1.0 * 60 / 3600);
  EXPECT_DOUBLE_EQ(u.classes[1].busy_s, 0.002004);
  // The slow class's peak: 1 of 50 blocks; the fast one's 25 of 100.
  EXPECT_DOUBLE_EQ(usage_figure(u, "kv_peak_utilization"), 25.0 / 100);
}

// Random fleets and loads: every request served on a slot of the fleet,
// provisioned time at least busy time in every class, the bill the sum of
// price x GPUs x hours, the peak within the slots.
TEST(Fleet, InvariantsOverRandomFleets) {
  pcg32 rng(2026);
  for (int trial = 0; trial < 40; ++trial) {
    BatchingKnobs section = small(400);
    const RouterKind routers[] = {RouterKind::kRoundRobin, RouterKind::kLeastRequests,
                                  RouterKind::kKvAware, RouterKind::kPrefix};
    section.router = routers[rng(4)];
    section.async_scheduling = rng(2) == 1;
    section.max_model_len = 1000;
    std::vector<ReplicaClass> classes;
    std::int64_t slots = 0;
    const std::uint32_t count = 1 + rng(3);
    for (std::uint32_t c = 0; c < count; ++c) {
      ReplicaClass cls;
      cls.name = "c" + std::to_string(c);
      cls.knobs = section;
      cls.knobs.kv_blocks = 300 + rng(300);
      cls.knobs.step_base_s = 1e-3 * (1 + rng(3));
      cls.gpus = 1 + rng(4);
      cls.price_per_gpu_hour = 0.5 * rng(8);
      if (rng(2) == 1) {
        Autoscale a;
        a.min = 1 + rng(2);
        a.max = a.min + rng(4);
        a.interval = Duration::ns(50'000'000 * (1 + rng(4)));
        a.target_requests = 1 + rng(6);
        a.startup = Duration::ns(100'000'000 * rng(3));
        a.scale_down_delay = Duration::ns(100'000'000 * rng(4));
        cls.autoscale = a;
        cls.replicas = a.min + rng(static_cast<std::uint32_t>(a.max - a.min + 1));
      } else {
        cls.replicas = 1 + rng(3);
      }
      slots += cls.slots();
      classes.push_back(cls);
    }
    const std::vector<FedRequest> requests = random_requests(trial, 300, 40 + rng(200));
    BatchingServer server(section, classes);
    ServerHarness harness(server);
    harness.run(requests);
    for (std::size_t i = 0; i < requests.size(); ++i) {
      ASSERT_TRUE(harness.reports[i].finish) << "trial " << trial << " request " << i;
      EXPECT_LT(harness.reports[i].unit, slots);
    }
    const ServerUsage u = server.usage(harness.end);
    double cost = 0;
    for (std::size_t c = 0; c < classes.size(); ++c) {
      const ClassUsage& cu = u.classes[c];
      EXPECT_LE(cu.busy_s, cu.replica_hours * 3600 * (1 + 1e-12)) << "trial " << trial;
      cost +=
          classes[c].price_per_gpu_hour * static_cast<double>(classes[c].gpus) * cu.replica_hours;
    }
    EXPECT_NEAR(usage_figure(u, "cost_usd"), cost, 1e-9 * (1 + cost));
    EXPECT_LE(usage_figure(u, "peak_replicas"), static_cast<double>(slots));
    EXPECT_LE(u.busy, *u.provisioned);
  }
}

}  // namespace
}  // namespace infersim
