// Disaggregated prefill and decode (BATCHING.md section 12): a case worked by
// hand with one prefill and one decode replica (two requests leaving one step
// and queueing on the link, the transfers, the decode admissions, TTFT and
// TPOT, the summary's figures), requests with one output token or none served
// on their prefill replica alone, a preemption on the decode side that
// recomputes there, and invariants over random disaggregated fleets: each
// link serves its transfers first in, first out; a prefill replica holds a
// request's blocks until its transfer ends; a transferred request's first
// decode entry computes one token.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <pcg_random.hpp>

#include "core/random.hpp"
#include "model/batching_server.hpp"
#include "unit/server_harness.hpp"

namespace infersim {
namespace {

using test::fed;
using test::FedRequest;
using test::ServerHarness;

// B = 4, S = 8, Tb = 64, no caching; a step of P prefill tokens and D decodes
// lasts 1,000,000 + 1,000 P + 10,000 D ns. A link of 0.08 Gbit/s at 1000
// bytes a token and 0.1 ms of latency: a transfer of p tokens lasts
// 100,000 + 100,000 p ns.
BatchingKnobs small() {
  BatchingKnobs k;
  k.max_num_seqs = 8;
  k.max_num_batched_tokens = 64;
  k.block_tokens = 4;
  k.kv_blocks = 100;
  k.prefix_caching = false;
  k.reserve_full_prompt = false;
  k.step_base_s = 1e-3;
  k.step_prefill_token_s = 1e-6;
  k.step_prefill_pair_s = 0;
  k.step_decode_token_s = 1e-5;
  k.step_decode_context_s = 0;
  k.kv_bytes_per_token = 1000;
  k.kv_link_gbps = 0.08;
  k.kv_link_latency_s = 1e-4;
  return k;
}

// One prefill replica (index 0) and one decode replica (index 1).
std::vector<ReplicaClass> split(const BatchingKnobs& k, std::int64_t decode_blocks = 100) {
  ReplicaClass prefill;
  prefill.name = "prefill";
  prefill.knobs = k;
  prefill.role = Role::kPrefill;
  ReplicaClass decode = prefill;
  decode.name = "decode";
  decode.knobs.kv_blocks = decode_blocks;
  decode.role = Role::kDecode;
  return {prefill, decode};
}

std::optional<double> figure(const ServerUsage& u, const std::string& key) {
  for (const ServerFigure& f : u.figures) {
    if (f.key == key) return f.value;
  }
  ADD_FAILURE() << key << " is not among the server's figures";
  return std::nullopt;
}

SimTime ns(std::int64_t n) {
  return SimTime::ns(n);
}

TEST(Disaggregation, TwoRequestsQueueOnTheLinkByHand) {
  const BatchingKnobs k = small();
  BatchingServer server(k, split(k));
  ServerHarness harness(server);
  // A (p 10, o 3) and B (p 6, o 2) reach the server at 0.
  harness.run({fed(0, 10, 3), fed(0, 6, 2)});
  const auto& a = harness.reports[0];
  const auto& b = harness.reports[1];

  // Prefill step at 0: P = 16, 1,016,000 ns; both produce their first token.
  EXPECT_EQ(a.start, ns(0));
  EXPECT_EQ(b.start, ns(0));
  EXPECT_EQ(a.unit, 0u);
  EXPECT_EQ(a.first_token, ns(1'016'000));
  EXPECT_EQ(b.first_token, ns(1'016'000));
  // They queue on the prefill replica's link in batch order: A's 1,100,000
  // ns, then B's 700,000 ns after it.
  EXPECT_EQ(a.transfer_end, ns(2'116'000));
  EXPECT_EQ(b.transfer_end, ns(2'816'000));
  // A is admitted on the decode replica at once (n = 1, computed = 10: a
  // decode, 1,010,000 ns); B waits behind A's step, then both decode.
  EXPECT_EQ(a.decode_unit, 1u);
  EXPECT_EQ(b.decode_unit, 1u);
  EXPECT_EQ(a.decode_start, ns(2'116'000));
  EXPECT_EQ(b.decode_start, ns(3'126'000));
  EXPECT_EQ(a.finish, ns(4'146'000));
  EXPECT_EQ(b.finish, ns(4'146'000));
  // TPOT includes the transfer and the decode queue: A (4,146,000 -
  // 1,016,000) / 2, B the same over 1. Gaps: A's 2,110,000 and 1,020,000, B's
  // 3,130,000, in the order the tokens appear.
  EXPECT_EQ(harness.gaps, (std::vector<Duration>{Duration::ns(2'110'000), Duration::ns(1'020'000),
                                                 Duration::ns(3'130'000)}));
  ASSERT_EQ(harness.steps.size(), 3u);
  EXPECT_EQ(harness.steps[0].prefill_tokens, 16u);
  EXPECT_EQ(harness.steps[0].kv_blocks_used, 5u);  // 3 + 2 blocks
  EXPECT_EQ(harness.steps[1].replica, 1u);
  EXPECT_EQ(harness.steps[1].decode_requests, 1u);
  EXPECT_EQ(harness.steps[1].prefill_tokens, 0u);
  EXPECT_EQ(harness.steps[1].kv_blocks_used, 3u);  // ceil(11 / 4)
  EXPECT_EQ(harness.steps[2].decode_requests, 2u);
  EXPECT_EQ(harness.steps[2].kv_blocks_used, 5u);  // A's 3, B's ceil(7 / 4)

  const ServerUsage u = server.usage(harness.end);
  EXPECT_EQ(figure(u, "kv_transfers"), 2.0);
  EXPECT_DOUBLE_EQ(*figure(u, "kv_transfer_gb"), 16 * 1000 / 1e9);
  // kv_transfer_s: 0.0011 and 0.0018 (B queued behind A).
  EXPECT_DOUBLE_EQ(*figure(u, "kv_transfer_p50_s"), 0.00145);
  EXPECT_DOUBLE_EQ(*figure(u, "kv_transfer_p99_s"), 0.0011 + 0.99 * 0.0007);
  // decode_wait_s: 0 and 0.00031.
  EXPECT_DOUBLE_EQ(*figure(u, "decode_wait_p99_s"), 0.99 * 0.00031);
  EXPECT_EQ(figure(u, "steps"), 3.0);
  ASSERT_EQ(u.classes.size(), 2u);
  EXPECT_EQ(u.classes[0].role, "prefill");
  EXPECT_EQ(u.classes[1].role, "decode");
  EXPECT_DOUBLE_EQ(u.classes[0].busy_s, 0.001016);
  EXPECT_DOUBLE_EQ(u.classes[1].busy_s, 0.00203);
}

TEST(Disaggregation, ARequestOfOneTokenOrNoneStaysOnItsPrefillReplica) {
  const BatchingKnobs k = small();
  BatchingServer server(k, split(k));
  ServerHarness harness(server);
  harness.run({fed(0, 5, 1), fed(0, 3, 0)});
  for (const auto& r : harness.reports) {
    EXPECT_EQ(r.unit, 0u);
    EXPECT_EQ(r.first_token, ns(1'008'000));
    EXPECT_EQ(r.finish, ns(1'008'000));
    EXPECT_FALSE(r.transfer_end.has_value());
    EXPECT_FALSE(r.decode_start.has_value());
  }
  ASSERT_EQ(harness.steps.size(), 1u);
  const ServerUsage u = server.usage(harness.end);
  EXPECT_EQ(figure(u, "kv_transfers"), 0.0);
  EXPECT_EQ(figure(u, "kv_transfer_gb"), 0.0);
  EXPECT_EQ(figure(u, "kv_transfer_p99_s"), std::nullopt);
  EXPECT_EQ(figure(u, "decode_wait_p99_s"), std::nullopt);
}

TEST(Disaggregation, APreemptedRequestRecomputesOnItsDecodeReplica) {
  const BatchingKnobs k = small();
  // Five blocks of 4 tokens on the decode replica (max_model_len 20).
  BatchingServer server(k, split(k, 5));
  ServerHarness harness(server);
  harness.run({fed(0, 7, 6), fed(0, 7, 6)});
  const auto& a = harness.reports[0];
  const auto& b = harness.reports[1];
  // Prefill at 0 (P 14, 1,014,000 ns); transfers of 800,000 ns one after
  // the other.
  EXPECT_EQ(a.transfer_end, ns(1'814'000));
  EXPECT_EQ(b.transfer_end, ns(2'614'000));
  EXPECT_EQ(a.decode_start, ns(1'814'000));
  EXPECT_EQ(b.decode_start, ns(2'824'000));
  // At 3,844,000 B needs a third block and none is free: it preempts itself
  // (computed 0, its two blocks released) and waits until A's finish frees
  // its three, then recomputes its 9 tokens there as a prefill.
  EXPECT_EQ(a.finish, ns(6'874'000));
  EXPECT_EQ(a.preemptions, 0u);
  EXPECT_EQ(b.preemptions, 1u);
  EXPECT_EQ(b.finish, ns(10'913'000));
  const auto at = [&](std::int64_t t) -> const StepRecord& {
    for (const StepRecord& s : harness.steps) {
      if (s.replica == 1 && s.start == ns(t)) return s;
    }
    ADD_FAILURE() << "no decode step at " << t;
    return harness.steps.front();
  };
  EXPECT_EQ(at(3'844'000).preemptions, 1u);
  EXPECT_EQ(at(3'844'000).batch_requests, 1u);
  EXPECT_EQ(at(6'874'000).prefill_tokens, 9u);
  EXPECT_EQ(at(6'874'000).end, ns(7'883'000));
  // Its first decode admission alone is reported.
  EXPECT_EQ(b.decode_unit, 1u);
  const ServerUsage u = server.usage(harness.end);
  EXPECT_EQ(figure(u, "preemptions"), 1.0);
  EXPECT_EQ(figure(u, "kv_transfers"), 2.0);
}

// Random disaggregated fleets: 1-2 prefill and 1-2 decode replicas of their
// own sizes, random links, loads that queue on them.
struct Case {
  BatchingKnobs knobs;
  std::vector<ReplicaClass> classes;
  std::vector<FedRequest> requests;
};

Case random_case(std::uint64_t seed) {
  pcg32 rng(seed, 5);
  const auto pick = [&](std::uint32_t n) { return rng(n); };
  Case c;
  BatchingKnobs& k = c.knobs;
  k = small();
  k.router = static_cast<RouterKind>(pick(4));
  k.decode_router = static_cast<RouterKind>(pick(3));
  k.reserve_full_prompt = pick(2) == 0;
  k.async_scheduling = pick(3) == 0;
  k.kv_link_latency_s = pick(3) * 1e-4;
  k.kv_bytes_per_token = (1 + pick(20)) * 500.0;
  k.kv_link_gbps = (1 + pick(10)) * 0.02;
  k.kv_blocks = 12 + pick(30);
  for (const Role role : {Role::kPrefill, Role::kDecode}) {
    ReplicaClass cls;
    cls.name = role == Role::kPrefill ? "p" : "d";
    cls.role = role;
    cls.knobs = k;
    cls.knobs.kv_blocks = 12 + pick(30);
    cls.replicas = 1 + pick(2);
    k.kv_blocks = std::min(k.kv_blocks, cls.knobs.kv_blocks);
    c.classes.push_back(cls);
  }
  const std::int64_t L = k.kv_blocks * k.block_tokens;
  double t = 0;
  const std::size_t n = 5 + pick(40);
  for (std::size_t i = 0; i < n; ++i) {
    t += exponential(rng, 400.0);
    const double p = 1 + pick(static_cast<std::uint32_t>(std::min<std::int64_t>(L / 2, 40)));
    const double o = pick(static_cast<std::uint32_t>(std::min<std::int64_t>(L / 2, 20)));
    c.requests.push_back(fed(std::llround(t * 1e9), p, o));
  }
  return c;
}

TEST(Disaggregation, InvariantsOverRandomFleets) {
  std::uint64_t queued = 0, decode_preempting = 0;
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Case c = random_case(seed);
    BatchingServer server(c.knobs, c.classes);
    ServerHarness harness(server);
    harness.run(c.requests);
    const std::uint32_t prefill_replicas = static_cast<std::uint32_t>(c.classes[0].replicas);
    const auto xfer = [&](std::int64_t p) {
      return std::llround(c.knobs.kv_link_latency_s * 1e9) +
             std::llround(static_cast<double>(p) * c.knobs.kv_bytes_per_token * 8 /
                          (c.knobs.kv_link_gbps * 1e9) * 1e9);
    };
    // Each link, its transfers by their end: queued in first-token order,
    // each starting when the one before ended or at its first token.
    std::map<std::uint32_t, std::vector<std::size_t>> links;
    for (std::size_t i = 0; i < c.requests.size(); ++i) {
      const auto& r = harness.reports[i];
      ASSERT_TRUE(r.finish.has_value());
      const std::int64_t p = std::llround(c.requests[i].request.context_tokens);
      const std::int64_t o = std::llround(c.requests[i].request.generated_tokens);
      EXPECT_LT(r.unit, prefill_replicas);
      EXPECT_EQ(r.transfer_end.has_value(), o >= 2);
      if (!r.transfer_end) continue;
      EXPECT_GE(r.decode_unit, prefill_replicas);
      EXPECT_LE(*r.first_token, *r.transfer_end);
      EXPECT_LE(*r.transfer_end, *r.decode_start);
      EXPECT_LT(*r.decode_start, *r.finish);
      EXPECT_GE((*r.transfer_end - *r.first_token).count_ns(), xfer(p));
      links[r.unit].push_back(i);
    }
    for (auto& [unit, ids] : links) {
      std::sort(ids.begin(), ids.end(), [&](std::size_t x, std::size_t y) {
        return *harness.reports[x].transfer_end < *harness.reports[y].transfer_end;
      });
      SimTime link_end = SimTime::zero();
      for (const std::size_t i : ids) {
        const auto& r = harness.reports[i];
        const std::int64_t p = std::llround(c.requests[i].request.context_tokens);
        EXPECT_EQ(*r.transfer_end, std::max(*r.first_token, link_end) + Duration::ns(xfer(p)))
            << "request " << i;
        queued += *r.first_token < link_end;
        link_end = *r.transfer_end;
      }
    }
    // A prefill replica holds a handed request's blocks (ceil(p / B), no
    // caching) from its first token until its transfer ends: every step it
    // schedules meanwhile counts them in use.
    for (const StepRecord& s : harness.steps) {
      if (s.replica >= prefill_replicas) continue;
      std::int64_t held = 0;
      for (const std::size_t i : links[s.replica]) {
        const auto& r = harness.reports[i];
        if (*r.first_token <= s.start && s.start < *r.transfer_end) {
          held += (std::llround(c.requests[i].request.context_tokens) + 3) / 4;
        }
      }
      EXPECT_GE(static_cast<std::int64_t>(s.kv_blocks_used), held);
    }
    // A transferred request's first decode entry is a decode of one token:
    // without a preemption on the decode side no decode replica prefills.
    std::uint64_t decode_prefill = 0, decode_preemptions = 0;
    for (const StepRecord& s : harness.steps) {
      if (s.replica < prefill_replicas) continue;
      decode_prefill += s.prefill_tokens;
      decode_preemptions += s.preemptions;
      EXPECT_EQ(s.scheduled_tokens, s.prefill_tokens + s.decode_requests);
    }
    if (decode_preemptions == 0) {
      EXPECT_EQ(decode_prefill, 0u);
    }
    decode_preempting += decode_preemptions > 0;
    if (HasFailure()) break;
  }
  EXPECT_GT(queued, 400u);
  EXPECT_GT(decode_preempting, 10u);
}

}  // namespace
}  // namespace infersim
