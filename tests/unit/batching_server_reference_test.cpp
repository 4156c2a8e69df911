// The batching server against a deliberately naive second implementation of
// BATCHING.md sections 2-8 and 10, written here from the spec's text with
// plain vectors and linear scans and no code of the model's: no event engine
// (a loop over instants doing section 6's three stages), blocks found by
// scanning, the free queue a vector, identities as pairs. On a few hundred
// small random workloads (equal instants, shared prefixes, small caches that
// preempt and evict, every router, async and lockstep, reservation and
// caching on and off) every request's instants, every step record, every
// token gap, every busy period and every figure must be equal; and every
// request ends finished or rejected with every block free.
#include <gtest/gtest.h>

#include "unit/inspectors.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

#include <pcg_random.hpp>

#include "model/batching_server.hpp"
#include "unit/server_harness.hpp"

namespace infersim {
namespace {

using test::FedRequest;
using test::RequestReport;

namespace naive {

using Identity = std::pair<std::uint32_t, std::int64_t>;  // (h, sub)

struct Block {
  std::int64_t count = 0;
  bool cached = false;
  Identity identity;
};

struct Req {
  std::uint64_t id = 0;
  std::int64_t server_arrival = 0;
  std::int64_t p = 0, o = 0, out = 0, computed = 0;
  std::vector<Identity> identities;  // of blocks 0, 1, ... that have one
  std::vector<int> blocks;
  std::uint32_t preemptions = 0;
  std::uint64_t hit_tokens = 0;
  bool has_token = false;
  std::int64_t last_token = 0;
  std::int64_t num_tokens() const { return p + out; }
};

struct Replica {
  std::vector<Block> blocks;
  std::vector<int> free_queue;
  std::vector<int> waiting;  // front = index 0
  std::vector<int> running;
  std::vector<std::pair<int, int>> pending;  // (request, count), in the order they came
  std::vector<std::pair<int, std::int64_t>> batch;
  bool stepping = false;
  std::int64_t end = 0;
  std::int64_t busy = 0;
  std::uint64_t evicted = 0, preemptions = 0, admitted_tokens = 0, admitted_hits = 0,
                admissions = 0;
  std::int64_t peak = 0;
};

class Reference {
 public:
  Reference(const BatchingKnobs& k, const std::vector<FedRequest>& feed) : k_(k) {
    L_ = k.max_model_len ? *k.max_model_len
                         : std::min<std::int64_t>(131072, k.kv_blocks * k.block_tokens);
    for (std::size_t i = 0; i < feed.size(); ++i) {
      const Request& r = feed[i].request;
      Req q;
      q.id = i;
      q.server_arrival = feed[i].server_arrival.count_ns();
      q.p = std::max<std::int64_t>(1, std::llround(r.context_tokens));
      q.o = std::llround(r.generated_tokens);
      // Section 3: block j has (h[jB div Bh], (jB mod Bh) div B) while
      // (j+1)B <= min(p, n_h Bh).
      const std::int64_t B = k.block_tokens, Bh = r.block_id_tokens;
      if (!r.block_ids.empty() && Bh > 0) {
        const std::int64_t covered =
            std::min<std::int64_t>(q.p, static_cast<std::int64_t>(r.block_ids.size()) * Bh);
        for (std::int64_t j = 0; (j + 1) * B <= covered; ++j)
          q.identities.push_back({r.block_ids[j * B / Bh], (j * B % Bh) / B});
      }
      reqs_.push_back(q);
    }
    reps_.resize(k.replicas);
    for (Replica& rep : reps_) {
      rep.blocks.resize(k.kv_blocks);
      for (int b = 0; b < k.kv_blocks; ++b)
        rep.free_queue.push_back(b);
    }
    reports.resize(feed.size());
  }

  void run() {
    std::vector<int> order(reqs_.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return reqs_[a].server_arrival < reqs_[b].server_arrival;
    });
    std::size_t next = 0;
    for (;;) {
      std::optional<std::int64_t> now;
      if (next < order.size()) now = reqs_[order[next]].server_arrival;
      for (const Replica& rep : reps_) {
        if (rep.stepping && (!now || rep.end < *now)) now = rep.end;
      }
      if (!now) break;
      const std::int64_t t = *now;
      // (1) steps ending now, replicas in index order.
      bool any_end = false;
      for (std::size_t r = 0; r < reps_.size(); ++r) {
        if (reps_[r].stepping && reps_[r].end == t) {
          end_step(r, t);
          any_end = true;
          if (k_.async_scheduling && !k_.lockstep) advance_pending(r);
        }
      }
      if (k_.async_scheduling && k_.lockstep && any_end) {
        for (std::size_t r = 0; r < reps_.size(); ++r)
          advance_pending(r);
      }
      // (2) requests reaching the server now, in (server_arrival, id) order.
      while (next < order.size() && reqs_[order[next]].server_arrival == t)
        arrive(order[next++], t);
      // (3) idle replicas with work schedule, in index order.
      pass(t);
    }
  }

  // Figures as section 9 says.
  ServerUsage usage(SimTime end) const {
    ServerUsage u;
    u.unit = "replica";
    u.units = static_cast<std::uint32_t>(reps_.size());
    std::uint64_t pre = 0, ev = 0, adm = 0, tok = 0, hits = 0;
    std::int64_t peak = 0;
    for (const Replica& rep : reps_) {
      u.busy += Duration::ns(rep.busy);
      u.energy_wh += (k_.gpu_idle_w * end.seconds() +
                      (k_.gpu_max_w - k_.gpu_idle_w) * Duration::ns(rep.busy).seconds()) /
                     3600;
      pre += rep.preemptions;
      ev += rep.evicted;
      adm += rep.admissions;
      tok += rep.admitted_tokens;
      hits += rep.admitted_hits;
      peak = std::max(peak, rep.peak);
    }
    const auto v = [](double x) { return std::optional<double>(x); };
    u.figures.push_back({"rejected", v(static_cast<double>(rejected_)), true});
    u.figures.push_back({"preemptions", v(static_cast<double>(pre)), true});
    u.figures.push_back({"evicted_blocks", v(static_cast<double>(ev)), true});
    u.figures.push_back(
        {"prefix_hit_rate",
         adm == 0 ? std::nullopt : v(static_cast<double>(hits) / static_cast<double>(tok)), false});
    u.figures.push_back({"steps", v(static_cast<double>(steps.size())), true});
    double batched = 0;
    for (const StepRecord& s : steps)
      batched += s.batch_requests;
    u.figures.push_back(
        {"avg_batch_requests",
         steps.empty() ? std::nullopt : v(batched / static_cast<double>(steps.size())), false});
    u.figures.push_back({"kv_peak_utilization",
                         v(static_cast<double>(peak) / static_cast<double>(k_.kv_blocks)), false});
    return u;
  }

  bool all_blocks_free() const {
    for (const Replica& rep : reps_) {
      for (const Block& b : rep.blocks) {
        if (b.count != 0) return false;
      }
      if (rep.free_queue.size() != rep.blocks.size()) return false;
    }
    return true;
  }

  std::vector<RequestReport> reports;
  std::vector<StepRecord> steps;
  std::vector<Duration> gaps;
  std::vector<test::BusyReport> busy;

 private:
  std::int64_t ceil_div(std::int64_t a, std::int64_t b) const { return (a + b - 1) / b; }

  int find(const Replica& rep, const Identity& id) const {
    for (std::size_t b = 0; b < rep.blocks.size(); ++b) {
      if (rep.blocks[b].cached && rep.blocks[b].identity == id) return static_cast<int>(b);
    }
    return -1;
  }
  std::int64_t used(const Replica& rep) const {
    std::int64_t n = 0;
    for (const Block& b : rep.blocks)
      n += b.count >= 1;
    return n;
  }
  int take(Replica& rep) {
    const int b = rep.free_queue.front();
    rep.free_queue.erase(rep.free_queue.begin());
    if (rep.blocks[b].cached) {
      rep.blocks[b].cached = false;
      ++rep.evicted;
    }
    rep.blocks[b].count = 1;
    return b;
  }
  void touch(Replica& rep, int b) {
    if (rep.blocks[b].count == 0) {
      rep.free_queue.erase(std::find(rep.free_queue.begin(), rep.free_queue.end(), b));
    }
    ++rep.blocks[b].count;
  }
  void release(Replica& rep, Req& q) {
    for (auto it = q.blocks.rbegin(); it != q.blocks.rend(); ++it) {
      Block& b = rep.blocks[*it];
      if (--b.count == 0) {
        if (b.cached) {
          rep.free_queue.push_back(*it);
        } else {
          rep.free_queue.insert(rep.free_queue.begin(), *it);
        }
      }
    }
    q.blocks.clear();
  }
  // Register for the first x tokens: every held block j with (j+1)B <= x,
  // an identity, not cached, whose identity is not in the map, gets it.
  void register_blocks(Replica& rep, Req& q, std::int64_t x) {
    if (!k_.prefix_caching) return;
    for (std::size_t j = 0; j < q.blocks.size(); ++j) {
      if (static_cast<std::int64_t>(j + 1) * k_.block_tokens > x) break;
      if (j >= q.identities.size()) break;
      Block& b = rep.blocks[q.blocks[j]];
      if (b.cached || find(rep, q.identities[j]) >= 0) continue;
      b.cached = true;
      b.identity = q.identities[j];
    }
  }
  std::int64_t hit_length(const Replica& rep, const Req& q) const {
    if (!k_.prefix_caching) return 0;
    const std::int64_t cap = (q.num_tokens() - 1) / k_.block_tokens;
    std::int64_t h = 0;
    while (h < cap && h < static_cast<std::int64_t>(q.identities.size()) &&
           find(rep, q.identities[h]) >= 0)
      ++h;
    return h;
  }
  std::int64_t load(const Replica& rep) const {
    return static_cast<std::int64_t>(rep.waiting.size() + rep.pending.size() + rep.running.size());
  }

  std::size_t route(const Req& q) {
    const std::size_t R = reps_.size();
    const auto least = [&] {
      std::size_t best = 0;
      for (std::size_t r = 0; r < R; ++r) {
        if (load(reps_[r]) < load(reps_[best])) best = r;
      }
      return best;
    };
    switch (k_.router) {
      case RouterKind::kRoundRobin:
        return rr_++ % R;
      case RouterKind::kLeastRequests:
        return least();
      case RouterKind::kKvAware: {
        std::size_t best = 0;
        std::int64_t best_cost = -1;
        for (std::size_t r = 0; r < R; ++r) {
          std::int64_t W = 0;
          for (const int w : reps_[r].waiting)
            W += reqs_[w].num_tokens() - reqs_[w].computed;
          for (const auto& [w, c] : reps_[r].pending)
            W += reqs_[w].num_tokens() - reqs_[w].computed;
          const std::int64_t hit = hit_length(reps_[r], q) * k_.block_tokens;
          const std::int64_t cost = ceil_div(W + q.p - hit, k_.block_tokens) + used(reps_[r]);
          if (best_cost < 0 || cost < best_cost) {
            best = r;
            best_cost = cost;
          }
        }
        return best;
      }
      case RouterKind::kPrefix: {
        std::int64_t lo = load(reps_[0]), hi = lo;
        for (const Replica& rep : reps_) {
          lo = std::min(lo, load(rep));
          hi = std::max(hi, load(rep));
        }
        if (hi - lo > 32 && static_cast<double>(hi) > 1.1 * static_cast<double>(lo)) {
          return least();
        }
        std::size_t best = 0;
        std::int64_t best_hit = -1;
        for (std::size_t r = 0; r < R; ++r) {
          const std::int64_t hit = hit_length(reps_[r], q) * k_.block_tokens;
          if (hit > best_hit) {
            best = r;
            best_hit = hit;
          }
        }
        if (static_cast<double>(best_hit) / static_cast<double>(q.p) > 0.5) return best;
        return least();
      }
    }
    return 0;
  }

  void arrive(int i, std::int64_t t) {
    Req& q = reqs_[i];
    if (q.p + q.o > L_) {
      reports[i].rejected = SimTime::ns(t);
      ++rejected_;
      return;
    }
    const std::size_t r = route(q);
    bool stepping = reps_[r].stepping;
    if (k_.lockstep) {
      stepping = false;
      for (const Replica& rep : reps_)
        stepping = stepping || rep.stepping;
    }
    if (k_.async_scheduling && stepping) {
      reps_[r].pending.push_back({i, 2});
    } else {
      reps_[r].waiting.push_back(i);
    }
  }

  void advance_pending(std::size_t r) {
    Replica& rep = reps_[r];
    std::vector<std::pair<int, int>> still;
    for (auto& [i, c] : rep.pending) {
      if (--c == 0) {
        rep.waiting.push_back(i);
      } else {
        still.push_back({i, c});
      }
    }
    rep.pending = still;
    if (rep.running.empty() && rep.waiting.empty()) {
      for (const auto& [i, c] : rep.pending)
        rep.waiting.push_back(i);
      rep.pending.clear();
    }
  }

  void pass(std::int64_t t) {
    if (!k_.lockstep) {
      for (std::size_t r = 0; r < reps_.size(); ++r) {
        Replica& rep = reps_[r];
        if (rep.stepping || (rep.running.empty() && rep.waiting.empty())) continue;
        StepRecord s;
        const std::int64_t len = schedule(r, t, s);
        if (len == 0) continue;
        start_step(r, t, t + len, s);
      }
      return;
    }
    for (const Replica& rep : reps_) {
      if (rep.stepping) return;
    }
    std::vector<StepRecord> formed;
    std::int64_t end = t;
    for (std::size_t r = 0; r < reps_.size(); ++r) {
      Replica& rep = reps_[r];
      if (rep.running.empty() && rep.waiting.empty()) continue;
      StepRecord s;
      const std::int64_t len = schedule(r, t, s);
      if (len == 0) continue;
      end = std::max(end, t + len);
      formed.push_back(s);
    }
    for (StepRecord& s : formed)
      start_step(s.replica, t, end, s);
  }

  void start_step(std::size_t r, std::int64_t t, std::int64_t end, StepRecord& s) {
    Replica& rep = reps_[r];
    rep.stepping = true;
    rep.end = end;
    rep.busy += end - t;
    s.end = SimTime::ns(end);
    busy.push_back({static_cast<std::uint32_t>(r), SimTime::ns(t), SimTime::ns(end)});
    steps.push_back(s);
  }

  // Section 5, literally. Returns step_ns, 0 for an empty batch.
  std::int64_t schedule(std::size_t r, std::int64_t t, StepRecord& s) {
    Replica& rep = reps_[r];
    const std::int64_t B = k_.block_tokens;
    std::int64_t budget = k_.max_num_batched_tokens;
    bool preempted = false;
    std::uint32_t preemptions = 0;
    rep.batch.clear();
    std::vector<std::int64_t> cbs;
    std::uint64_t adm_tokens = 0, adm_hits = 0;
    std::size_t i = 0;
    bool stop = false;
    while (i < rep.running.size() && budget > 0) {
      Req& q = reqs_[rep.running[i]];
      const std::int64_t n = std::min(q.num_tokens() - q.computed, budget);
      const std::int64_t need =
          ceil_div(q.computed + n, B) - static_cast<std::int64_t>(q.blocks.size());
      while (need > static_cast<std::int64_t>(rep.free_queue.size())) {
        const int last = rep.running.back();
        rep.running.pop_back();
        Req& v = reqs_[last];
        release(rep, v);
        v.computed = 0;
        ++v.preemptions;
        ++rep.preemptions;
        ++preemptions;
        rep.waiting.insert(rep.waiting.begin(), last);
        preempted = true;
        if (&v == &q) {
          stop = true;
          break;
        }
      }
      if (stop) break;
      for (std::int64_t x = 0; x < need; ++x)
        q.blocks.push_back(take(rep));
      register_blocks(rep, q, q.computed + n);
      rep.batch.push_back({rep.running[i], n});
      cbs.push_back(q.computed);
      budget -= n;
      ++i;
    }
    if (!preempted) {
      while (!rep.waiting.empty() && budget > 0 &&
             static_cast<std::int64_t>(rep.running.size()) < k_.max_num_seqs) {
        const int w = rep.waiting.front();
        Req& q = reqs_[w];
        const std::int64_t h = hit_length(rep, q);
        const std::int64_t hit = h * B;
        std::int64_t touched = 0;
        for (std::int64_t j = 0; j < h; ++j)
          touched += rep.blocks[find(rep, q.identities[j])].count == 0;
        const std::int64_t n = std::min(q.num_tokens() - hit, budget);
        std::int64_t need = ceil_div(hit + n, B) - h + touched;
        if (k_.reserve_full_prompt)
          need = std::max(need, ceil_div(q.num_tokens(), B) - h + touched);
        if (need > static_cast<std::int64_t>(rep.free_queue.size())) break;
        rep.waiting.erase(rep.waiting.begin());
        for (std::int64_t j = 0; j < h; ++j) {
          const int b = find(rep, q.identities[j]);
          touch(rep, b);
          q.blocks.push_back(b);
        }
        for (std::int64_t x = 0; x < ceil_div(hit + n, B) - h; ++x)
          q.blocks.push_back(take(rep));
        q.computed = hit;
        q.hit_tokens += hit;
        register_blocks(rep, q, hit + n);
        rep.running.push_back(w);
        rep.batch.push_back({w, n});
        cbs.push_back(hit);
        budget -= n;
        ++rep.admissions;
        rep.admitted_tokens += q.num_tokens();
        rep.admitted_hits += hit;
        adm_tokens += q.num_tokens();
        adm_hits += hit;
        if (!reports[w].start) {
          reports[w].start = SimTime::ns(t);
          reports[w].unit = static_cast<std::uint32_t>(r);
        }
      }
    }
    rep.peak = std::max(rep.peak, used(rep));
    if (rep.batch.empty()) return 0;
    std::int64_t P = 0, Q = 0, D = 0, A = 0, tokens = 0;
    for (std::size_t e = 0; e < rep.batch.size(); ++e) {
      const Req& q = reqs_[rep.batch[e].first];
      const std::int64_t n = rep.batch[e].second, cb = cbs[e];
      tokens += n;
      if (q.out >= 1 && cb == q.num_tokens() - 1) {
        ++D;
        A += cb + 1;
      } else {
        P += n;
        Q += n * cb + n * (n + 1) / 2;
      }
    }
    const double step_s = k_.step_base_s + k_.step_prefill_token_s * static_cast<double>(P) +
                          k_.step_prefill_pair_s * static_cast<double>(Q) +
                          k_.step_decode_token_s * static_cast<double>(D) +
                          k_.step_decode_context_s * static_cast<double>(A);
    s.replica = static_cast<std::uint32_t>(r);
    s.start = SimTime::ns(t);
    s.batch_requests = static_cast<std::uint32_t>(rep.batch.size());
    s.scheduled_tokens = static_cast<std::uint64_t>(tokens);
    s.prefill_tokens = static_cast<std::uint64_t>(P);
    s.decode_requests = static_cast<std::uint32_t>(D);
    s.running = static_cast<std::uint32_t>(rep.running.size());
    s.waiting = static_cast<std::uint32_t>(rep.waiting.size() + rep.pending.size());
    s.kv_blocks_used = static_cast<std::uint32_t>(used(rep));
    s.kv_blocks = static_cast<std::uint32_t>(rep.blocks.size());
    s.preemptions = preemptions;
    s.admitted_tokens = adm_tokens;
    s.hit_tokens = adm_hits;
    return std::max<std::int64_t>(1, std::llround(step_s * 1e9));
  }

  void end_step(std::size_t r, std::int64_t t) {
    Replica& rep = reps_[r];
    rep.stepping = false;
    for (const auto& [i, n] : rep.batch) {
      Req& q = reqs_[i];
      q.computed += n;
      if (q.computed != q.num_tokens()) continue;
      if (q.out < q.o) {
        ++q.out;
        if (!q.has_token) {
          reports[i].first_token = SimTime::ns(t);
          q.has_token = true;
        } else {
          gaps.push_back(Duration::ns(t - q.last_token));
        }
        q.last_token = t;
      }
      if (q.out == q.o) {
        if (!q.has_token) reports[i].first_token = SimTime::ns(t);
        reports[i].finish = SimTime::ns(t);
        reports[i].preemptions = q.preemptions;
        reports[i].prefix_hit_tokens = q.hit_tokens;
        rep.running.erase(std::find(rep.running.begin(), rep.running.end(), i));
        release(rep, q);
      }
    }
    rep.batch.clear();
  }

  BatchingKnobs k_;
  std::int64_t L_ = 0;
  std::vector<Req> reqs_;
  std::vector<Replica> reps_;
  std::size_t rr_ = 0;
  std::uint64_t rejected_ = 0;
};

}  // namespace naive

// A random small workload and knobs for it.
struct Workload {
  BatchingKnobs knobs;
  std::vector<std::vector<std::uint32_t>> ids;
  std::vector<FedRequest> requests;
};

Workload random_workload(std::uint64_t seed) {
  pcg32 rng(seed);
  const auto pick = [&](std::uint32_t n) { return rng(n); };
  Workload w;
  BatchingKnobs& k = w.knobs;
  k.replicas = 1 + pick(3);
  k.router = static_cast<RouterKind>(pick(4));
  k.block_tokens = std::int64_t{1} << pick(3);  // 1, 2, 4
  k.kv_blocks = 3 + pick(22);
  k.max_num_batched_tokens = 1 + pick(24);
  k.max_num_seqs = 1 + pick(std::min<std::uint32_t>(6, k.max_num_batched_tokens));
  if (pick(3) == 0)
    k.max_model_len = 1 + pick(static_cast<std::uint32_t>(k.kv_blocks * k.block_tokens));
  k.prefix_caching = pick(4) != 0;
  k.reserve_full_prompt = pick(2) == 0;
  k.async_scheduling = pick(3) == 0;
  k.lockstep = pick(3) == 0;
  k.step_base_s = (1 + pick(20)) * 1e-4;
  k.step_prefill_token_s = pick(50) * 1e-6;
  k.step_prefill_pair_s = pick(2) == 0 ? 0 : pick(30) * 1e-9;
  k.step_decode_token_s = pick(30) * 1e-6;
  k.step_decode_context_s = pick(2) == 0 ? 0 : pick(30) * 1e-8;
  // Bh = B, 2B or 4B, now and then 64B (an id spans two of the map's groups).
  const std::uint32_t id_tokens =
      pick(5) == 0 ? 0 : static_cast<std::uint32_t>(k.block_tokens << (pick(6) == 0 ? 6 : pick(3)));
  const std::int64_t L = k.model_len();
  // Shared prefixes: three chains of ids a request starts along.
  const std::size_t count = 1 + pick(40);
  w.ids.reserve(count);
  std::int64_t arrival = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (pick(3) != 0) arrival += 1 + pick(4'000'000);
    double context = pick(static_cast<std::uint32_t>(std::min<std::int64_t>(L, 48)) + 1);
    double generated = pick(10);
    if (pick(6) == 0) context += 0.5;  // llround away from zero
    if (pick(8) == 0) generated = 0;
    if (pick(10) == 0) context = 0;  // a prompt of 0 becomes 1
    std::vector<std::uint32_t> ids;
    if (id_tokens != 0) {
      const std::uint32_t chain = pick(3);
      const std::uint32_t along = pick(12);
      for (std::uint32_t j = 0; j < along; ++j)
        ids.push_back(chain * 100 + j);
      for (std::uint32_t j = pick(3); j > 0; --j)
        ids.push_back(1000 + pick(50));  // a branch of its own (now and then a repeat)
      if (pick(15) == 0 && !ids.empty()) ids.push_back(ids.front());
    }
    w.ids.push_back(ids);
    const std::int64_t up = pick(2) == 0 ? 0 : pick(3'000'000);
    w.requests.push_back(test::fed(arrival, context, generated, w.ids.back(), id_tokens, up));
  }
  return w;
}

void expect_same_step(const StepRecord& a, const StepRecord& b, std::size_t i) {
  EXPECT_EQ(a.replica, b.replica) << "step " << i;
  EXPECT_EQ(a.start, b.start) << "step " << i;
  EXPECT_EQ(a.end, b.end) << "step " << i;
  EXPECT_EQ(a.batch_requests, b.batch_requests) << "step " << i;
  EXPECT_EQ(a.scheduled_tokens, b.scheduled_tokens) << "step " << i;
  EXPECT_EQ(a.prefill_tokens, b.prefill_tokens) << "step " << i;
  EXPECT_EQ(a.decode_requests, b.decode_requests) << "step " << i;
  EXPECT_EQ(a.running, b.running) << "step " << i;
  EXPECT_EQ(a.waiting, b.waiting) << "step " << i;
  EXPECT_EQ(a.kv_blocks_used, b.kv_blocks_used) << "step " << i;
  EXPECT_EQ(a.kv_blocks, b.kv_blocks) << "step " << i;
  EXPECT_EQ(a.preemptions, b.preemptions) << "step " << i;
  EXPECT_EQ(a.admitted_tokens, b.admitted_tokens) << "step " << i;
  EXPECT_EQ(a.hit_tokens, b.hit_tokens) << "step " << i;
}

TEST(BatchingServerReference, RandomWorkloadsAgreeWithANaiveImplementation) {
  std::uint64_t preempting = 0, evicting = 0, rejecting = 0, hitting = 0;
  const char* env = std::getenv("BATCHING_REFERENCE_SEEDS");
  const std::uint64_t seeds = env ? std::strtoull(env, nullptr, 10) : 2000;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Workload w = random_workload(seed);
    BatchingServer server(w.knobs);
    test::ServerHarness harness(server);
    harness.run(w.requests);
    naive::Reference ref(w.knobs, w.requests);
    ref.run();

    ASSERT_EQ(harness.steps.size(), ref.steps.size());
    for (std::size_t i = 0; i < ref.steps.size(); ++i)
      expect_same_step(harness.steps[i], ref.steps[i], i);
    for (std::size_t i = 0; i < w.requests.size(); ++i) {
      const RequestReport &a = harness.reports[i], &b = ref.reports[i];
      EXPECT_EQ(a.start, b.start) << "request " << i;
      EXPECT_EQ(a.unit, b.unit) << "request " << i;
      EXPECT_EQ(a.first_token, b.first_token) << "request " << i;
      EXPECT_EQ(a.finish, b.finish) << "request " << i;
      EXPECT_EQ(a.rejected, b.rejected) << "request " << i;
      EXPECT_EQ(a.preemptions, b.preemptions) << "request " << i;
      EXPECT_EQ(a.prefix_hit_tokens, b.prefix_hit_tokens) << "request " << i;
      // Conservation: finished or rejected, never both.
      EXPECT_NE(a.finish.has_value(), a.rejected.has_value()) << "request " << i;
    }
    EXPECT_EQ(harness.gaps, ref.gaps);
    ASSERT_EQ(harness.busy_periods.size(), ref.busy.size());
    for (std::size_t i = 0; i < ref.busy.size(); ++i) {
      EXPECT_EQ(harness.busy_periods[i].unit, ref.busy[i].unit);
      EXPECT_EQ(harness.busy_periods[i].from, ref.busy[i].from);
      EXPECT_EQ(harness.busy_periods[i].to, ref.busy[i].to);
    }
    const SimTime end = harness.end + Duration::ns(12345);
    const ServerUsage a = server.usage(end), b = ref.usage(end);
    EXPECT_EQ(a.unit, b.unit);
    EXPECT_EQ(a.units, b.units);
    EXPECT_EQ(a.busy, b.busy);
    EXPECT_EQ(a.energy_wh, b.energy_wh);
    ASSERT_EQ(a.figures.size(), b.figures.size());
    for (std::size_t i = 0; i < a.figures.size(); ++i) {
      EXPECT_EQ(a.figures[i].key, b.figures[i].key);
      EXPECT_EQ(a.figures[i].value, b.figures[i].value) << a.figures[i].key;
      EXPECT_EQ(a.figures[i].integer, b.figures[i].integer) << a.figures[i].key;
    }
    // Conservation: nothing in flight, every block free with count 0.
    EXPECT_EQ(test::ServerInspector::in_flight(server), 0u);
    EXPECT_TRUE(ref.all_blocks_free());
    for (const ReplicaScheduler* replica : test::ServerInspector::replicas(server)) {
      const KvBlockPool& pool = replica->pool();
      EXPECT_EQ(pool.free_blocks(), pool.blocks());
      EXPECT_EQ(test::PoolInspector::free_queue(pool).size(), pool.blocks());
      for (std::uint32_t blk = 0; blk < pool.blocks(); ++blk)
        EXPECT_EQ(test::PoolInspector::count(pool, blk), 0u);
      EXPECT_EQ(replica->requests(), 0u);
    }
    preempting += *a.figures[1].value > 0;
    evicting += *a.figures[2].value > 0;
    rejecting += *a.figures[0].value > 0;
    hitting += a.figures[3].value.value_or(0) > 0;
    if (HasFailure()) break;
  }
  // The workloads reach the rules they are meant to test.
  EXPECT_GT(preempting, 40u);
  EXPECT_GT(evicting, 40u);
  EXPECT_GT(rejecting, 20u);
  EXPECT_GT(hitting, 80u);
}

}  // namespace
}  // namespace infersim
