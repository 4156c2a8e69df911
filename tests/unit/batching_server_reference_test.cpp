// The batching server against a deliberately naive second implementation of
// BATCHING.md sections 2-8 and 10-12, written here from the spec's text with
// plain vectors and linear scans and no code of the model's: no event engine
// (a loop over instants doing section 11's five stages), blocks found by
// scanning, the free queue a vector, identities as pairs, the fleet a vector
// of slots whose state is a word. On a few thousand small random workloads
// (equal instants, shared prefixes, small caches that preempt and evict,
// every router, async and lockstep, reservation and caching on and off) and
// as many random fleets (one to three classes of their own S, Tb, K, costs
// and power, autoscaled on short intervals so that replicas start, go while
// starting and drain) every request's instants, every step record, every
// token gap, every busy period, every replica's life and every figure must be
// equal; and every request ends finished or rejected with every block free.
// Random disaggregated fleets (section 12: prefill and decode classes, KV
// transfers queueing on each prefill replica's link, prefill replicas that
// stall on the blocks their transfers hold) add each request's transfer end,
// decode replica and decode admission.
#include <gtest/gtest.h>

#include "unit/inspectors.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <pcg_random.hpp>

#include "core/random.hpp"
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
  bool transferred = false;  // waiting on a decode replica with its KV
  std::int64_t transfer_end = 0;
  std::int64_t predicted_hit = -1;  // the hit scorer or dynamo expected (tokens)
  std::int64_t first_hit = -1;      // its first admission's hit (tokens)
  std::int64_t num_tokens() const { return p + out; }
};

// A replica's KV event (section 8's precise index): at `t`, identity stored
// or removed, or the replica's cache cleared.
struct KvLogEntry {
  std::int64_t t = 0;
  std::size_t replica = 0;
  std::pair<std::uint32_t, std::int64_t> identity;
  enum { kStored, kRemoved, kCleared } what = kStored;
};

// A KV transfer on a prefill replica's link (section 12).
struct Transfer {
  int req = 0;
  std::int64_t queued = 0;   // its first token's instant
  std::size_t position = 0;  // in its batch
  std::int64_t end = 0;
};

enum class State { kAbsent, kStarting, kActive, kDraining };

// A slot of the fleet (section 11) and the replica in it, if any.
struct Replica {
  std::size_t cls = 0;
  State state = State::kAbsent;
  std::int64_t since = 0;        // start of its provisioned time
  std::int64_t activate_at = 0;  // while starting
  std::optional<std::int64_t> active_from;
  std::vector<Block> blocks;
  std::vector<int> free_queue;
  std::vector<int> waiting;  // front = index 0
  std::vector<int> running;
  std::vector<std::pair<int, int>> pending;  // (request, count), in the order they came
  std::vector<std::pair<int, std::int64_t>> batch;
  bool stepping = false;
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int64_t busy = 0;  // this life's step time
  std::int64_t peak = 0;
  std::vector<Transfer> link;  // queued or running, in order
  std::int64_t link_end = 0;
};

// A replica's load as the scorer and dynamo routers see it (section 8).
struct Load {
  std::int64_t q = 0, r = 0, W = 0, U = 0;
};

// Per class: provisioned and busy time, energy, of the replicas' lives.
struct ClassTotals {
  std::int64_t provisioned = 0;
  std::int64_t busy = 0;
  double energy_wh = 0;
};

class Reference {
 public:
  // `classes` empty: one class of `section.replicas` replicas with the
  // section's knobs, never scaled (section 11's first paragraph).
  Reference(const BatchingKnobs& section, std::vector<ReplicaClass> classes,
            const std::vector<FedRequest>& feed)
      : k_(section), classes_(std::move(classes)), fleet_(!classes_.empty()) {
    dynamo_rng_[0] = dynamo_rng_[1] = pcg32(section.router_seed);
    if (!fleet_) {
      ReplicaClass only;
      only.replicas = section.replicas;
      only.knobs = section;
      classes_.push_back(only);
    }
    // max_model_len: given, else the least min(131072, K_c B).
    if (section.max_model_len) {
      L_ = *section.max_model_len;
    } else {
      L_ = 131072;
      for (const ReplicaClass& c : classes_)
        L_ = std::min<std::int64_t>(L_, c.knobs.kv_blocks * section.block_tokens);
    }
    for (std::size_t i = 0; i < feed.size(); ++i) {
      const Request& r = feed[i].request;
      Req q;
      q.id = i;
      q.server_arrival = feed[i].server_arrival.count_ns();
      q.p = std::max<std::int64_t>(1, std::llround(r.context_tokens));
      q.o = std::llround(r.generated_tokens);
      // Section 3: block j has (h[jB div Bh], (jB mod Bh) div B) while
      // (j+1)B <= min(p, n_h Bh).
      const std::int64_t B = section.block_tokens, Bh = r.block_id_tokens;
      if (!r.block_ids.empty() && Bh > 0) {
        const std::int64_t covered =
            std::min<std::int64_t>(q.p, static_cast<std::int64_t>(r.block_ids.size()) * Bh);
        for (std::int64_t j = 0; (j + 1) * B <= covered; ++j)
          q.identities.push_back({r.block_ids[j * B / Bh], (j * B % Bh) / B});
      }
      reqs_.push_back(q);
    }
    totals_.resize(classes_.size());
    window_.resize(classes_.size());
    next_evaluation_.resize(classes_.size());
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      const ReplicaClass& cls = classes_[c];
      const std::int64_t slots = cls.autoscale ? cls.autoscale->max : cls.replicas;
      for (std::int64_t s = 0; s < slots; ++s) {
        reps_.emplace_back();
        reps_.back().cls = c;
        if (s < cls.replicas) activate(reps_.back(), 0);
      }
      if (cls.autoscale) next_evaluation_[c] = cls.autoscale->interval.count_ns();
    }
    for (const ReplicaClass& c : classes_)
      disaggregated_ = disaggregated_ || c.role != Role::kBoth;
    peak_replicas_ = provisioned_now();
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
    bool evaluating = true;
    for (;;) {
      std::optional<std::int64_t> now;
      const auto consider = [&](std::int64_t x) {
        if (!now || x < *now) now = x;
      };
      if (next < order.size()) consider(reqs_[order[next]].server_arrival);
      for (const Replica& rep : reps_) {
        if (rep.stepping) consider(rep.end);
        if (rep.state == State::kStarting) consider(rep.activate_at);
        for (const Transfer& x : rep.link)
          consider(x.end);
      }
      for (std::size_t c = 0; c < classes_.size(); ++c) {
        if (evaluating && classes_[c].autoscale) consider(next_evaluation_[c]);
      }
      if (!now) break;
      const std::int64_t t = *now;
      // Section 9's load_imbalance: the state since the previous instant held until now.
      if (t != imbalance_at_) {
        const double held = Duration::ns(t - imbalance_at_).seconds();
        if (imbalance_now_ > 0) {
          imbalance_integral_ += held * imbalance_now_;
          imbalance_time_ += held;
        }
        imbalance_at_ = t;
      }
      end = t;
      // The vllm-dp routers' counts, as they stand at each refresh instant
      // (before the instant's events).
      // The scorer's and dynamo's views likewise, when they refresh.
      const std::int64_t every = std::max<std::int64_t>(1, std::llround(k_.router_refresh_s * 1e9));
      if (t >= next_refresh_) {
        next_refresh_ = (t / every + 1) * every;
        for (int side = 0; side < 2; ++side) {
          counts_[side].assign(reps_.size(), {0, 0});
          views_[side].assign(reps_.size(), {});
          for (std::size_t r = 0; r < reps_.size(); ++r) {
            const Replica& rep = reps_[r];
            if (rep.state != State::kActive || (role(rep) == Role::kDecode) != (side == 1))
              continue;
            counts_[side][r] = {static_cast<std::int64_t>(rep.waiting.size() + rep.pending.size()),
                                static_cast<std::int64_t>(rep.running.size())};
            views_[side][r] = load_now(rep);
          }
        }
      }
      // (0) starting replicas due now become active, with a fresh cache.
      for (Replica& rep : reps_) {
        if (rep.state == State::kStarting && rep.activate_at == t) activate(rep, t);
      }
      // (1) steps ending now, replicas in index order; a draining replica
      // left empty goes.
      bool any_end = false;
      for (std::size_t r = 0; r < reps_.size(); ++r) {
        if (reps_[r].stepping && reps_[r].end == t) {
          end_step(r, t);
          any_end = true;
          if (k_.async_scheduling && !k_.lockstep) advance_pending(r);
          if (reps_[r].state == State::kDraining && holds(reps_[r]) == 0 && reps_[r].link.empty())
            go(r, t);
        }
      }
      if (k_.async_scheduling && k_.lockstep && any_end) {
        for (std::size_t r = 0; r < reps_.size(); ++r)
          advance_pending(r);
      }
      // (1b) transfers ending now, by the instant they were queued, prefill
      // replica, then batch order.
      std::vector<std::pair<std::size_t, Transfer>> ending;
      for (std::size_t r = 0; r < reps_.size(); ++r) {
        for (const Transfer& x : reps_[r].link) {
          if (x.end == t) ending.push_back({r, x});
        }
      }
      std::stable_sort(ending.begin(), ending.end(), [](const auto& a, const auto& b) {
        return std::tie(a.second.queued, a.first, a.second.position) <
               std::tie(b.second.queued, b.first, b.second.position);
      });
      for (const auto& [r, x] : ending)
        end_transfer(r, x, t);
      // (2) requests reaching the server now, in (server_arrival, id) order.
      while (next < order.size() && reqs_[order[next]].server_arrival == t)
        arrive(order[next++], t);
      // (3) idle active or draining replicas with work schedule, in index order.
      pass(t);
      // (4) evaluations due now, classes in order, while a request is still
      // to reach the server or unfinished.
      bool due = false;
      for (std::size_t c = 0; c < classes_.size(); ++c)
        due = due || (evaluating && classes_[c].autoscale && next_evaluation_[c] == t);
      if (due && next == order.size() && unfinished_ == 0) evaluating = false;
      if (due && evaluating) {
        for (std::size_t c = 0; c < classes_.size(); ++c) {
          if (!classes_[c].autoscale || next_evaluation_[c] != t) continue;
          next_evaluation_[c] += classes_[c].autoscale->interval.count_ns();
          evaluate(c, t);
        }
      }
      peak_replicas_ = std::max(peak_replicas_, provisioned_now());
      std::int64_t most = 0, all = 0, n = 0;
      for (const Replica& rep : reps_) {
        if (rep.state != State::kActive || role(rep) == Role::kDecode) continue;
        most = std::max(most, holds(rep));
        all += holds(rep);
        ++n;
      }
      imbalance_now_ =
          all == 0 ? 0
                   : static_cast<double>(most) * static_cast<double>(n) / static_cast<double>(all);
    }
  }

  // Figures as sections 9 and 11 say.
  ServerUsage usage(SimTime end_time) const {
    const std::int64_t until = end_time.count_ns();
    ServerUsage u;
    u.unit = "replica";
    u.units = static_cast<std::uint32_t>(reps_.size());
    std::vector<ClassTotals> totals = totals_;
    std::vector<ReplicaSpan> spans = spans_;
    for (std::size_t r = 0; r < reps_.size(); ++r) {
      const Replica& rep = reps_[r];
      if (rep.state == State::kAbsent) continue;
      add_life(totals[rep.cls], rep, until);
      spans.push_back({static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(rep.cls),
                       SimTime::ns(rep.since), to_time(rep.active_from), SimTime::ns(until)});
    }
    std::int64_t provisioned = 0;
    for (const ClassTotals& t : totals) {
      u.busy += Duration::ns(t.busy);
      u.energy_wh += t.energy_wh;
      provisioned += t.provisioned;
    }
    const auto v = [](double x) { return std::optional<double>(x); };
    u.figures.push_back({"rejected", v(static_cast<double>(rejected_)), true});
    u.figures.push_back({"preemptions", v(static_cast<double>(preemptions_)), true});
    u.figures.push_back({"evicted_blocks", v(static_cast<double>(evicted_)), true});
    u.figures.push_back({"prefix_hit_rate",
                         admissions_ == 0 ? std::nullopt
                                          : v(static_cast<double>(admitted_hits_) /
                                              static_cast<double>(admitted_tokens_)),
                         false});
    u.figures.push_back({"steps", v(static_cast<double>(steps.size())), true});
    double batched = 0;
    for (const StepRecord& s : steps)
      batched += s.batch_requests;
    u.figures.push_back(
        {"avg_batch_requests",
         steps.empty() ? std::nullopt : v(batched / static_cast<double>(steps.size())), false});
    u.figures.push_back({"kv_peak_utilization", v(kv_peak_), false});
    u.figures.push_back(
        {"load_imbalance",
         imbalance_time_ > 0 ? v(imbalance_integral_ / imbalance_time_) : std::nullopt, false});
    std::int64_t predicted = 0, actual = 0, compared = 0;
    for (std::size_t i = 0; i < reqs_.size(); ++i) {
      if (!reports[i].finish || reqs_[i].predicted_hit < 0 || reqs_[i].first_hit < 0) continue;
      predicted += reqs_[i].predicted_hit;
      actual += reqs_[i].first_hit;
      ++compared;
    }
    u.figures.push_back({"router_hit_tokens_predicted",
                         compared == 0 ? std::nullopt : v(static_cast<double>(predicted)), true});
    u.figures.push_back({"router_hit_tokens_actual",
                         compared == 0 ? std::nullopt : v(static_cast<double>(actual)), true});
    if (!fleet_) return u;
    u.provisioned = Duration::ns(provisioned);
    double replica_hours = 0, gpu_hours = 0, cost = 0;
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      const ReplicaClass& cls = classes_[c];
      ClassUsage cu;
      cu.name = cls.name;
      cu.replica_hours = static_cast<double>(totals[c].provisioned) / 1e9 / 3600;
      cu.busy_s = static_cast<double>(totals[c].busy) / 1e9;
      if (totals[c].provisioned > 0)
        cu.utilization =
            static_cast<double>(totals[c].busy) / static_cast<double>(totals[c].provisioned);
      cu.cost_usd = cls.price_per_gpu_hour * static_cast<double>(cls.gpus) * cu.replica_hours;
      replica_hours += cu.replica_hours;
      gpu_hours += static_cast<double>(cls.gpus) * cu.replica_hours;
      cost += cu.cost_usd;
      u.classes.push_back(cu);
      u.class_idle_w.push_back(cls.knobs.gpu_idle_w);
      u.class_usd_per_hour.push_back(cls.price_per_gpu_hour * static_cast<double>(cls.gpus));
    }
    for (const Replica& rep : reps_)
      u.unit_class.push_back(classes_[rep.cls].name);
    u.spans = spans;
    u.figures.push_back({"replica_hours", v(replica_hours), false});
    u.figures.push_back({"gpu_hours", v(gpu_hours), false});
    u.figures.push_back({"cost_usd", v(cost), false});
    u.figures.push_back(
        {"usd_per_million_tokens",
         served_tokens_ > 0 ? v(cost * 1e6 / static_cast<double>(served_tokens_)) : std::nullopt,
         false});
    u.figures.push_back({"peak_replicas", v(static_cast<double>(peak_replicas_)), true});
    u.figures.push_back({"scale_ups", v(static_cast<double>(scale_ups_)), true});
    u.figures.push_back({"scale_downs", v(static_cast<double>(scale_downs_)), true});
    if (!disaggregated_) return u;
    for (std::size_t c = 0; c < classes_.size(); ++c)
      u.classes[c].role = classes_[c].role == Role::kPrefill ? "prefill" : "decode";
    // Section 12's figures: NumPy's percentiles, by sorting here.
    const auto pct = [](std::vector<std::int64_t> ns, double q) -> std::optional<double> {
      if (ns.empty()) return std::nullopt;
      std::sort(ns.begin(), ns.end());
      const double at = static_cast<double>(ns.size() - 1) * q;
      const auto lo = static_cast<std::size_t>(std::floor(at));
      const std::size_t hi = std::min(lo + 1, ns.size() - 1);
      const double a = static_cast<double>(ns[lo]) / 1e9, b = static_cast<double>(ns[hi]) / 1e9;
      return lo == hi ? a : a + (b - a) * (at - static_cast<double>(lo));
    };
    u.figures.push_back({"kv_transfers", v(static_cast<double>(transfer_ns_.size())), true});
    u.figures.push_back({"kv_transfer_gb", v(transfer_bytes_ / 1e9), false});
    u.figures.push_back({"kv_transfer_p50_s", pct(transfer_ns_, 0.5), false});
    u.figures.push_back({"kv_transfer_p99_s", pct(transfer_ns_, 0.99), false});
    u.figures.push_back({"decode_wait_p99_s", pct(decode_wait_ns_, 0.99), false});
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
  // vllm-dp: by replica, (waiting, running) of the latest refresh, a side.
  std::vector<std::pair<std::int64_t, std::int64_t>> counts_[2];
  // scorer and dynamo with a refresh: by replica, its load at the latest
  // refresh with the router's picks since added, a side.
  std::vector<Load> views_[2];
  pcg32 dynamo_rng_[2];  // a side's dynamo router's draws
  // Section 8's prefix indexes: every KV event so far, and a side's
  // approximate LRU by replica (the most recently used last).
  std::vector<KvLogEntry> kv_log_;
  std::vector<std::vector<Identity>> lru_[2];
  // Section 9's load_imbalance.
  double imbalance_integral_ = 0, imbalance_time_ = 0, imbalance_now_ = 0;
  std::int64_t imbalance_at_ = 0;
  std::int64_t next_refresh_ = 0;
  std::vector<StepRecord> steps;
  std::vector<Duration> gaps;
  std::vector<test::BusyReport> busy;
  std::int64_t end = 0;      // the last instant
  std::uint64_t drains = 0;  // replicas told to go while they held requests
  std::uint64_t stalls = 0;  // empty batches formed with work in hand (section 13.7)
  std::uint64_t decode_preemptions = 0;

 private:
  static std::optional<SimTime> to_time(std::optional<std::int64_t> t) {
    if (!t) return std::nullopt;
    return SimTime::ns(*t);
  }
  std::int64_t ceil_div(std::int64_t a, std::int64_t b) const { return (a + b - 1) / b; }
  const BatchingKnobs& knobs(const Replica& rep) const { return classes_[rep.cls].knobs; }

  // A replica of rep's class at `t` with a fresh KV cache (section 4).
  void activate(Replica& rep, std::int64_t t) {
    const std::int64_t K = knobs(rep).kv_blocks;
    rep.state = State::kActive;
    if (t == 0) rep.since = 0;
    rep.active_from = t;
    rep.blocks.assign(K, Block{});
    rep.free_queue.clear();
    for (int b = 0; b < K; ++b)
      rep.free_queue.push_back(b);
    rep.busy = 0;
    rep.peak = 0;
  }

  void add_life(ClassTotals& t, const Replica& rep, std::int64_t until) const {
    const BatchingKnobs& k = knobs(rep);
    const std::int64_t provisioned = until - rep.since;
    t.provisioned += provisioned;
    t.busy += rep.busy;
    t.energy_wh += (k.gpu_idle_w * Duration::ns(provisioned).seconds() +
                    (k.gpu_max_w - k.gpu_idle_w) * Duration::ns(rep.busy).seconds()) /
                   3600;
  }

  // The replica in slot r becomes absent at t.
  void go(std::size_t r, std::int64_t t) {
    Replica& rep = reps_[r];
    if (rep.state != State::kStarting) kv_log_.push_back({t, r, {}, KvLogEntry::kCleared});
    add_life(totals_[rep.cls], rep, t);
    spans_.push_back({static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(rep.cls),
                      SimTime::ns(rep.since), to_time(rep.active_from), SimTime::ns(t)});
    const std::size_t cls = rep.cls;
    rep = Replica{};
    rep.cls = cls;
  }

  std::int64_t provisioned_now() const {
    std::int64_t n = 0;
    for (const Replica& rep : reps_)
      n += rep.state != State::kAbsent;
    return n;
  }

  std::int64_t holds(const Replica& rep) const {
    return static_cast<std::int64_t>(rep.waiting.size() + rep.running.size() + rep.pending.size());
  }

  // Section 11's evaluation of class c at t.
  void evaluate(std::size_t c, std::int64_t t) {
    const Autoscale& a = *classes_[c].autoscale;
    std::int64_t load = 0;
    std::vector<std::size_t> absent, starting, active;
    for (std::size_t r = 0; r < reps_.size(); ++r) {
      const Replica& rep = reps_[r];
      if (rep.cls != c) continue;
      if (rep.state == State::kAbsent) absent.push_back(r);
      if (rep.state == State::kStarting) starting.push_back(r);
      if (rep.state == State::kActive) {
        active.push_back(r);
        load += holds(rep);
      }
    }
    const auto current = static_cast<std::int64_t>(starting.size() + active.size());
    // min(max, max(min, ceil(load / target))) in IEEE double (section 13.3).
    const double wanted = std::ceil(static_cast<double>(load) / a.target_requests);
    const auto desired = static_cast<std::int64_t>(
        std::min(static_cast<double>(a.max), std::max(static_cast<double>(a.min), wanted)));
    window_[c].push_back({t, desired});
    if (desired > current) {
      for (std::size_t j = 0; j < absent.size() && j < static_cast<std::size_t>(desired - current);
           ++j) {
        Replica& rep = reps_[absent[j]];
        rep.state = State::kStarting;
        rep.since = t;
        rep.active_from.reset();
        rep.activate_at = t + std::max<std::int64_t>(1, a.startup.count_ns());
        ++scale_ups_;
      }
      return;
    }
    // The largest desired over (t - delay, t], this evaluation included.
    std::int64_t floor = desired;
    for (const auto& [at, d] : window_[c]) {
      if (at > t - a.scale_down_delay.count_ns() || at == t) floor = std::max(floor, d);
    }
    std::int64_t going = current - floor;
    // Starting ones first, the latest started first, then the highest index.
    std::stable_sort(starting.begin(), starting.end(), [&](std::size_t x, std::size_t y) {
      if (reps_[x].since != reps_[y].since) return reps_[x].since > reps_[y].since;
      return x > y;
    });
    for (const std::size_t r : starting) {
      if (going <= 0) break;
      go(r, t);
      ++scale_downs_;
      --going;
    }
    for (auto it = active.rbegin(); it != active.rend() && going > 0; ++it, --going) {
      ++scale_downs_;
      if (holds(reps_[*it]) == 0 && reps_[*it].link.empty()) {
        go(*it, t);
      } else {
        reps_[*it].state = State::kDraining;
        ++drains;
      }
    }
  }

  int find(const Replica& rep, const Identity& id) const {
    for (std::size_t b = 0; b < rep.blocks.size(); ++b) {
      if (rep.blocks[b].cached && rep.blocks[b].identity == id) return static_cast<int>(b);
    }
    return -1;
  }
  // W: the tokens still to compute of its waiting and pending requests, a
  // transferred one counting 1 (section 13.6).
  std::int64_t queued_tokens(const Replica& rep) const {
    std::int64_t W = 0;
    for (const int w : rep.waiting)
      W += reqs_[w].transferred ? 1 : reqs_[w].num_tokens() - reqs_[w].computed;
    for (const auto& [w, c] : rep.pending)
      W += reqs_[w].transferred ? 1 : reqs_[w].num_tokens() - reqs_[w].computed;
    return W;
  }
  Load load_now(const Replica& rep) const {
    return {static_cast<std::int64_t>(rep.waiting.size() + rep.pending.size()),
            static_cast<std::int64_t>(rep.running.size()), queued_tokens(rep), used(rep)};
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
      ++evicted_;
      kv_log_.push_back({end, static_cast<std::size_t>(&rep - reps_.data()), rep.blocks[b].identity,
                         KvLogEntry::kRemoved});
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
      kv_log_.push_back(
          {end, static_cast<std::size_t>(&rep - reps_.data()), b.identity, KvLogEntry::kStored});
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

  Role role(const Replica& rep) const { return classes_[rep.cls].role; }

  // Section 8 over the active replicas of one side (arrivals: prefill or
  // colocated ones; transferred requests: decode ones), in index order;
  // returns a slot.
  std::size_t route(Req& q, bool decode = false) {
    std::vector<std::size_t> view;
    for (std::size_t r = 0; r < reps_.size(); ++r) {
      if (reps_[r].state == State::kActive && (role(reps_[r]) == Role::kDecode) == decode)
        view.push_back(r);
    }
    std::uint64_t& turn = decode ? rr_decode_ : rr_;
    const std::size_t n = view.size();
    const auto load = [&](std::size_t i) { return holds(reps_[view[i]]); };
    const auto least = [&] {
      std::size_t best = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (load(i) < load(best)) best = i;
      }
      return view[best];
    };
    switch (decode ? k_.decode_router : k_.router) {
      case RouterKind::kDataParallel: {
        // The counts of the latest refresh, this side's picks since counted
        // as waiting; the least 4 x waiting + running.
        auto& counts = counts_[decode ? 1 : 0];
        std::size_t best = 0;
        for (std::size_t i = 1; i < n; ++i) {
          const auto score = [&](std::size_t x) {
            return 4 * counts[view[x]].first + counts[view[x]].second;
          };
          if (score(i) < score(best)) best = i;
        }
        ++counts[view[best]].first;
        return view[best];
      }
      case RouterKind::kRoundRobin:
        return view[turn++ % n];
      case RouterKind::kLeastRequests:
        return least();
      case RouterKind::kKvAware: {
        std::size_t best = 0;
        std::int64_t best_cost = -1;
        for (std::size_t i = 0; i < n; ++i) {
          const Replica& rep = reps_[view[i]];
          const std::int64_t W = queued_tokens(rep);
          const std::int64_t hit = hit_length(rep, q) * k_.block_tokens;
          const std::int64_t cost = ceil_div(W + q.num_tokens() - hit, k_.block_tokens) + used(rep);
          if (best_cost < 0 || cost < best_cost) {
            best = i;
            best_cost = cost;
          }
        }
        return view[best];
      }
      case RouterKind::kPrefix: {
        std::int64_t lo = load(0), hi = lo;
        for (std::size_t i = 0; i < n; ++i) {
          lo = std::min(lo, load(i));
          hi = std::max(hi, load(i));
        }
        if (hi - lo > 32 && static_cast<double>(hi) > 1.1 * static_cast<double>(lo)) {
          return least();
        }
        std::size_t best = 0;
        std::int64_t best_hit = -1;
        for (std::size_t i = 0; i < n; ++i) {
          const std::int64_t hit = hit_length(reps_[view[i]], q) * k_.block_tokens;
          if (hit > best_hit) {
            best = i;
            best_hit = hit;
          }
        }
        if (static_cast<double>(best_hit) / static_cast<double>(q.p) > 0.5) return view[best];
        return least();
      }
      case RouterKind::kScorer:
      case RouterKind::kDynamo: {
        const RouterKind kind = decode ? k_.decode_router : k_.router;
        std::int64_t expected = -1;
        const std::size_t x = kind == RouterKind::kScorer ? scorer(q, view, decode, expected)
                                                          : dynamo(q, view, decode, expected);
        if (!decode) q.predicted_hit = expected;
        index_routed(view[x], q, decode);
        if (k_.router_refresh_s > 0) {
          ++views_[decode ? 1 : 0][view[x]].q;
          views_[decode ? 1 : 0][view[x]].W += q.transferred ? 1 : q.num_tokens();
        }
        return view[x];
      }
    }
    return 0;
  }

  // The hit in blocks of q at replica r as the prefix index of `decode`'s
  // side sees it now (section 8).
  std::int64_t index_hit(std::size_t r, const Req& q, bool decode) const {
    const Replica& rep = reps_[r];
    if (k_.prefix_index == PrefixIndexKind::kPrecise && k_.kv_event_delay_s == 0) {
      return hit_length(rep, q);
    }
    std::vector<Identity> held;
    if (k_.prefix_index == PrefixIndexKind::kApproximate) {
      const auto& lru = lru_[decode ? 1 : 0];
      if (r < lru.size()) held = lru[r];
    } else {
      // The events that happened at or before now - d, in order.
      const std::int64_t d = std::max<std::int64_t>(1, std::llround(k_.kv_event_delay_s * 1e9));
      for (const KvLogEntry& e : kv_log_) {
        if (e.replica != r || e.t > end - d) continue;
        if (e.what == KvLogEntry::kCleared) {
          held.clear();
        } else if (e.what == KvLogEntry::kStored) {
          held.push_back(e.identity);
        } else {
          held.erase(std::find(held.begin(), held.end(), e.identity));
        }
      }
    }
    if (!k_.prefix_caching) return 0;
    const std::int64_t cap = (q.num_tokens() - 1) / k_.block_tokens;
    std::int64_t h = 0;
    while (h < cap && h < static_cast<std::int64_t>(q.identities.size()) &&
           std::find(held.begin(), held.end(), q.identities[h]) != held.end())
      ++h;
    return h;
  }
  // An approximate index records the prompt's identities at the replica picked.
  void index_routed(std::size_t r, const Req& q, bool decode) {
    if (k_.prefix_index != PrefixIndexKind::kApproximate) return;
    auto& lru = lru_[decode ? 1 : 0];
    if (r >= lru.size()) lru.resize(r + 1);
    std::vector<Identity>& held = lru[r];
    for (const Identity& id : q.identities) {
      const auto at = std::find(held.begin(), held.end(), id);
      if (at != held.end()) held.erase(at);
      held.push_back(id);
    }
    while (static_cast<std::int64_t>(held.size()) > k_.prefix_index_blocks)
      held.erase(held.begin());
  }

  Load view_load(std::size_t r, bool decode) const {
    return k_.router_refresh_s > 0 ? views_[decode ? 1 : 0][r] : load_now(reps_[r]);
  }

  // Section 8's scorer over `view`: the position of the largest weighted sum.
  std::size_t scorer(const Req& q, const std::vector<std::size_t>& view, bool decode,
                     std::int64_t& expected) {
    const ScorerWeights& w = k_.scorer_weights;
    const std::size_t n = view.size();
    std::vector<double> score(n, 0.0);
    std::vector<Load> l(n);
    for (std::size_t i = 0; i < n; ++i)
      l[i] = view_load(view[i], decode);
    const auto scaled = [&](const std::vector<double>& x, double weight) {
      if (weight == 0) return;
      const double lo = *std::min_element(x.begin(), x.end());
      const double hi = *std::max_element(x.begin(), x.end());
      for (std::size_t i = 0; i < n; ++i)
        score[i] += weight * (hi == lo ? 1.0 : (hi - x[i]) / (hi - lo));
    };
    std::vector<double> queue(n), running(n), ttft(n);
    std::vector<std::int64_t> hits(n);
    for (std::size_t i = 0; i < n; ++i) {
      queue[i] = static_cast<double>(l[i].q);
      running[i] = static_cast<double>(l[i].r);
    }
    scaled(queue, w.queue);
    scaled(running, w.running);
    for (std::size_t i = 0; i < n; ++i) {
      const Replica& rep = reps_[view[i]];
      if (w.kv != 0) {
        score[i] +=
            w.kv * (1 - static_cast<double>(l[i].U) / static_cast<double>(rep.blocks.size()));
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      const Replica& rep = reps_[view[i]];
      const BatchingKnobs& kc = classes_[rep.cls].knobs;
      const std::int64_t hit = index_hit(view[i], q, decode) * k_.block_tokens;
      hits[i] = hit;
      if (w.prefix != 0) {
        score[i] += w.prefix * std::min(1.0, static_cast<double>(hit) / static_cast<double>(q.p));
      }
      // The class's step of n prefill tokens beside its r decodes (Q, A 0).
      const std::int64_t budget = kc.max_num_batched_tokens;
      const std::int64_t c = std::max<std::int64_t>(1, budget - std::min(l[i].r, budget));
      const auto step = [&](std::int64_t tokens) {
        return kc.step_base_s + kc.step_prefill_token_s * static_cast<double>(tokens) +
               kc.step_decode_token_s * static_cast<double>(l[i].r);
      };
      const std::int64_t N = l[i].W + q.num_tokens() - hit;
      ttft[i] = static_cast<double>(N / c) * (N / c > 0 ? step(c) : 0.0) +
                (N % c > 0 ? step(N % c) : 0.0);
    }
    scaled(ttft, w.predicted_ttft);
    std::size_t best = 0;
    for (std::size_t i = 1; i < n; ++i) {
      if (score[i] > score[best]) best = i;
    }
    if (w.prefix != 0 || w.predicted_ttft != 0) expected = hits[best];
    return best;
  }

  // Section 8's dynamo over `view`: the least cost, or a softmax draw.
  std::size_t dynamo(const Req& q, const std::vector<std::size_t>& view, bool decode,
                     std::int64_t& expected) {
    const std::size_t n = view.size();
    std::vector<double> cost(n);
    std::vector<std::int64_t> hits(n);
    const std::size_t x = dynamo_pick(q, view, decode, cost, hits);
    expected = hits[x];
    return x;
  }
  std::size_t dynamo_pick(const Req& q, const std::vector<std::size_t>& view, bool decode,
                          std::vector<double>& cost, std::vector<std::int64_t>& hits) {
    const std::size_t n = view.size();
    for (std::size_t i = 0; i < n; ++i) {
      const Load l = view_load(view[i], decode);
      const std::int64_t hit = index_hit(view[i], q, decode) * k_.block_tokens;
      hits[i] = hit;
      cost[i] = k_.dynamo_weight *
                    static_cast<double>(ceil_div(l.W + q.num_tokens() - hit, k_.block_tokens)) +
                static_cast<double>(l.U);
    }
    if (k_.dynamo_temperature == 0) {
      return static_cast<std::size_t>(std::min_element(cost.begin(), cost.end()) - cost.begin());
    }
    const double lo = *std::min_element(cost.begin(), cost.end());
    const double hi = *std::max_element(cost.begin(), cost.end());
    std::vector<double> pi(n);
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      pi[i] = hi == lo ? 1.0 : std::exp(-(cost[i] - lo) / ((hi - lo) * k_.dynamo_temperature));
      sum += pi[i];
    }
    const double u = uniform01(dynamo_rng_[decode ? 1 : 0]);
    double cumulative = 0;
    for (std::size_t i = 0; i < n; ++i) {
      cumulative += pi[i] / sum;
      if (u <= cumulative) return i;
    }
    return n - 1;
  }

  void arrive(int i, std::int64_t t) {
    Req& q = reqs_[i];
    if (q.p + q.o > L_) {
      reports[i].rejected = SimTime::ns(t);
      ++rejected_;
      return;
    }
    ++unfinished_;
    const std::size_t r = route(q);
    if (!k_.engine_turn_arrivals) {
      join(r, i);
      return;
    }
    // Section 10b: taken at the nearer end of the step (the round) running.
    const Replica* running = reps_[r].stepping ? &reps_[r] : nullptr;
    if (k_.lockstep) {
      for (const Replica& rep : reps_) {
        if (rep.stepping) running = &rep;
      }
    }
    if (running == nullptr) {
      join(r, i);
    } else if (k_.async_scheduling && t - running->start <= running->end - t) {
      reps_[r].pending.push_back({i, 1});
      reports[i].queued = SimTime::ns(running->start);
    } else {
      reports[i].queued = SimTime::ns(running->end);
      join(r, i);
    }
  }

  // Into replica r's waiting, or pending (section 10).
  void join(std::size_t r, int i) {
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

  bool steps_now(const Replica& rep) const {
    return rep.state == State::kActive || rep.state == State::kDraining;
  }

  void pass(std::int64_t t) {
    if (!k_.lockstep) {
      for (std::size_t r = 0; r < reps_.size(); ++r) {
        Replica& rep = reps_[r];
        if (!steps_now(rep) || rep.stepping || (rep.running.empty() && rep.waiting.empty()))
          continue;
        StepRecord s;
        const std::int64_t len = schedule(r, t, s);
        if (len == 0) {
          ++stalls;
          continue;
        }
        start_step(r, t, t + len, s);
      }
      return;
    }
    for (const Replica& rep : reps_) {
      if (rep.stepping) return;
    }
    std::vector<StepRecord> formed;
    std::int64_t end_ns = t;
    for (std::size_t r = 0; r < reps_.size(); ++r) {
      Replica& rep = reps_[r];
      if (rep.running.empty() && rep.waiting.empty()) continue;
      StepRecord s;
      const std::int64_t len = schedule(r, t, s);
      if (len == 0) continue;
      end_ns = std::max(end_ns, t + len);
      formed.push_back(s);
    }
    for (StepRecord& s : formed)
      start_step(s.replica, t, end_ns, s);
  }

  void start_step(std::size_t r, std::int64_t t, std::int64_t end_ns, StepRecord& s) {
    Replica& rep = reps_[r];
    rep.stepping = true;
    rep.start = t;
    rep.end = end_ns;
    rep.busy += end_ns - t;
    s.end = SimTime::ns(end_ns);
    busy.push_back({static_cast<std::uint32_t>(r), SimTime::ns(t), SimTime::ns(end_ns)});
    steps.push_back(s);
  }

  // Section 5, literally, with the replica's class's S, Tb and costs.
  // Returns step_ns, 0 for an empty batch.
  std::int64_t schedule(std::size_t r, std::int64_t t, StepRecord& s) {
    Replica& rep = reps_[r];
    const BatchingKnobs& kc = knobs(rep);
    const std::int64_t B = k_.block_tokens;
    std::int64_t budget = kc.max_num_batched_tokens;
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
        ++preemptions_;
        ++preemptions;
        v.transferred = false;  // recomputed here
        rep.waiting.insert(rep.waiting.begin(), last);
        if (role(rep) == Role::kDecode) ++decode_preemptions;
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
             static_cast<std::int64_t>(rep.running.size()) < kc.max_num_seqs) {
        const int w = rep.waiting.front();
        Req& q = reqs_[w];
        const std::int64_t h = hit_length(rep, q);
        const std::int64_t hit = h * B;
        std::int64_t touched = 0;
        for (std::int64_t j = 0; j < h; ++j)
          touched += rep.blocks[find(rep, q.identities[j])].count == 0;
        // A transferred request: n = 1 and its blocks for p + 1 tokens.
        const std::int64_t n = q.transferred ? 1 : std::min(q.num_tokens() - hit, budget);
        const std::int64_t upto = q.transferred ? q.p + 1 : hit + n;
        std::int64_t need = ceil_div(upto, B) - h + touched;
        if (k_.reserve_full_prompt)
          need = std::max(need, ceil_div(q.num_tokens(), B) - h + touched);
        if (need > static_cast<std::int64_t>(rep.free_queue.size())) break;
        rep.waiting.erase(rep.waiting.begin());
        for (std::int64_t j = 0; j < h; ++j) {
          const int b = find(rep, q.identities[j]);
          touch(rep, b);
          q.blocks.push_back(b);
        }
        for (std::int64_t x = 0; x < ceil_div(upto, B) - h; ++x)
          q.blocks.push_back(take(rep));
        q.computed = q.transferred ? q.p : hit;
        register_blocks(rep, q, upto);
        rep.running.push_back(w);
        rep.batch.push_back({w, n});
        cbs.push_back(q.computed);
        budget -= n;
        if (q.transferred) {
          q.transferred = false;
          reports[w].decode_start = SimTime::ns(t);
          reports[w].decode_unit = static_cast<std::uint32_t>(r);
          decode_wait_ns_.push_back(t - q.transfer_end);
        }
        if (role(rep) != Role::kDecode) {
          if (q.first_hit < 0) q.first_hit = hit;
          q.hit_tokens += hit;
          ++admissions_;
          admitted_tokens_ += q.num_tokens();
          admitted_hits_ += hit;
          adm_tokens += q.num_tokens();
          adm_hits += hit;
        }
        if (!reports[w].start) {
          reports[w].start = SimTime::ns(t);
          reports[w].unit = static_cast<std::uint32_t>(r);
        }
      }
    }
    rep.peak = std::max(rep.peak, used(rep));
    kv_peak_ =
        std::max(kv_peak_, static_cast<double>(rep.peak) / static_cast<double>(kc.kv_blocks));
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
    const double step_s = kc.step_base_s + kc.step_prefill_token_s * static_cast<double>(P) +
                          kc.step_prefill_pair_s * static_cast<double>(Q) +
                          kc.step_decode_token_s * static_cast<double>(D) +
                          kc.step_decode_context_s * static_cast<double>(A);
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
    for (std::size_t e = 0; e < rep.batch.size(); ++e) {
      const auto [i, n] = rep.batch[e];
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
        --unfinished_;
        served_tokens_ += q.p + q.o;
      } else if (role(rep) == Role::kPrefill) {
        // Its first token: it leaves running with its blocks and queues on
        // the link, latency + p tokens' bytes over the bandwidth.
        rep.running.erase(std::find(rep.running.begin(), rep.running.end(), i));
        const double bytes = static_cast<double>(q.p) * k_.kv_bytes_per_token;
        const std::int64_t xfer = std::llround(k_.kv_link_latency_s * 1e9) +
                                  std::llround(bytes * 8 / (k_.kv_link_gbps * 1e9) * 1e9);
        const std::int64_t start = rep.link.empty() ? t : std::max(t, rep.link_end);
        rep.link_end = start + xfer;
        rep.link.push_back({i, t, e, rep.link_end});
        transfer_bytes_ += bytes;
      }
    }
    rep.batch.clear();
  }

  // Section 12: the KV of x.req has left prefill replica r at t.
  void end_transfer(std::size_t r, const Transfer& x, std::int64_t t) {
    Replica& rep = reps_[r];
    Req& q = reqs_[x.req];
    release(rep, q);
    rep.link.erase(std::find_if(rep.link.begin(), rep.link.end(),
                                [&](const Transfer& y) { return y.req == x.req; }));
    transfer_ns_.push_back(t - q.last_token);
    reports[x.req].transfer_end = SimTime::ns(t);
    q.transferred = true;
    q.transfer_end = t;
    join(route(q, true), x.req);
    if (rep.state == State::kDraining && holds(rep) == 0 && rep.link.empty() && !rep.stepping)
      go(r, t);
  }

  BatchingKnobs k_;  // the fleet-wide knobs: B, caching, reservation, router, async, lockstep
  std::vector<ReplicaClass> classes_;
  bool fleet_ = false;
  std::int64_t L_ = 0;
  std::vector<Req> reqs_;
  std::vector<Replica> reps_;
  std::vector<ClassTotals> totals_;  // of the lives that ended
  std::vector<ReplicaSpan> spans_;   // of the lives that ended
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> window_;  // (t, desired)
  std::vector<std::int64_t> next_evaluation_;
  std::uint64_t rr_ = 0, rr_decode_ = 0;
  bool disaggregated_ = false;
  std::vector<std::int64_t> transfer_ns_, decode_wait_ns_;
  double transfer_bytes_ = 0;
  std::uint64_t rejected_ = 0, preemptions_ = 0, evicted_ = 0, admissions_ = 0,
                admitted_tokens_ = 0, admitted_hits_ = 0;
  std::int64_t unfinished_ = 0, served_tokens_ = 0, peak_replicas_ = 0;
  std::uint64_t scale_ups_ = 0, scale_downs_ = 0;
  double kv_peak_ = 0;
};

}  // namespace naive

// A random small workload and knobs for it.
struct Workload {
  BatchingKnobs knobs;
  std::vector<std::vector<std::uint32_t>> ids;
  std::vector<FedRequest> requests;
};

// Up to 40 requests that fit in L: equal instants, shared prefixes along
// three chains of block ids, prompts of 0 and half tokens, no output.
void add_requests(pcg32& rng, std::int64_t block_tokens, std::int64_t L, Workload& w) {
  const auto pick = [&](std::uint32_t n) { return rng(n); };
  // Bh = B, 2B or 4B, now and then 64B (an id spans two of the map's groups).
  const std::uint32_t id_tokens =
      pick(5) == 0 ? 0 : static_cast<std::uint32_t>(block_tokens << (pick(6) == 0 ? 6 : pick(3)));
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
}

// The scorer's weights (0 to 3 each), dynamo's weight and temperature, the
// seed, and now and then an exact view.
template <class Pick>
void random_router_knobs(Pick& pick, BatchingKnobs& k) {
  k.scorer_weights = {static_cast<double>(pick(4)), static_cast<double>(pick(4)),
                      static_cast<double>(pick(4)), static_cast<double>(pick(4)),
                      static_cast<double>(pick(4))};
  k.dynamo_weight = 0.5 * pick(5);
  k.dynamo_temperature = pick(2) == 0 ? 0 : 0.25 * (1 + pick(8));
  k.router_seed = pick(1000);
  if (pick(3) == 0) k.router_refresh_s = 0;
  // The prefix index: the cache itself, its events up to 4 ms late, or an
  // approximate LRU of 1 to 40 identities a replica.
  k.prefix_index = pick(3) == 0 ? PrefixIndexKind::kApproximate : PrefixIndexKind::kPrecise;
  k.prefix_index_blocks = 1 + pick(40);
  k.kv_event_delay_s = pick(2) == 0 ? 0 : (1 + pick(40)) * 1e-4;
}

Workload random_workload(std::uint64_t seed) {
  pcg32 rng(seed);
  const auto pick = [&](std::uint32_t n) { return rng(n); };
  Workload w;
  BatchingKnobs& k = w.knobs;
  k.replicas = 1 + pick(3);
  k.router = static_cast<RouterKind>(pick(7));
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
  k.router_refresh_s = (1 + pick(40)) * 1e-4;
  k.engine_turn_arrivals = pick(2) == 0;
  random_router_knobs(pick, k);
  add_requests(rng, k.block_tokens, k.model_len(), w);
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

// Every step, every request's instants, every token gap and busy period.
void expect_same_instants(const test::ServerHarness& harness, const naive::Reference& ref,
                          std::size_t requests) {
  // The first step that differs is the one to read.
  const bool failed = ::testing::Test::HasFailure();
  for (std::size_t i = 0; i < std::min(ref.steps.size(), harness.steps.size()); ++i) {
    expect_same_step(harness.steps[i], ref.steps[i], i);
    if (!failed && ::testing::Test::HasFailure()) return;
  }
  EXPECT_EQ(harness.steps.size(), ref.steps.size());
  for (std::size_t i = 0; i < requests; ++i) {
    const RequestReport &a = harness.reports[i], &b = ref.reports[i];
    EXPECT_EQ(a.start, b.start) << "request " << i;
    EXPECT_EQ(a.unit, b.unit) << "request " << i;
    EXPECT_EQ(a.first_token, b.first_token) << "request " << i;
    EXPECT_EQ(a.finish, b.finish) << "request " << i;
    EXPECT_EQ(a.rejected, b.rejected) << "request " << i;
    EXPECT_EQ(a.preemptions, b.preemptions) << "request " << i;
    EXPECT_EQ(a.prefix_hit_tokens, b.prefix_hit_tokens) << "request " << i;
    EXPECT_EQ(a.queued, b.queued) << "request " << i;
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
}

TEST(BatchingServerReference, RandomWorkloadsAgreeWithANaiveImplementation) {
  std::uint64_t preempting = 0, evicting = 0, rejecting = 0, hitting = 0, early = 0, late = 0;
  std::uint64_t expecting = 0, mistaken = 0;
  const char* env = std::getenv("BATCHING_REFERENCE_SEEDS");
  const std::uint64_t seeds = env ? std::strtoull(env, nullptr, 10) : 2000;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Workload w = random_workload(seed);
    BatchingServer server(w.knobs);
    test::ServerHarness harness(server);
    harness.run(w.requests);
    naive::Reference ref(w.knobs, {}, w.requests);
    ref.run();

    expect_same_instants(harness, ref, w.requests.size());
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
    for (std::size_t i = 0; i < w.requests.size(); ++i) {
      const std::optional<SimTime> q = harness.reports[i].queued;
      early += q && *q < w.requests[i].server_arrival;
      late += q && *q > w.requests[i].server_arrival;
    }
    preempting += *a.figures[1].value > 0;
    evicting += *a.figures[2].value > 0;
    rejecting += *a.figures[0].value > 0;
    hitting += a.figures[3].value.value_or(0) > 0;
    // Section 8's scorer and dynamo expected hits, some of them wrongly.
    std::optional<double> predicted, actual;
    for (const ServerFigure& f : a.figures) {
      if (f.key == "router_hit_tokens_predicted") predicted = f.value;
      if (f.key == "router_hit_tokens_actual") actual = f.value;
    }
    expecting += predicted.value_or(0) > 0;
    mistaken += predicted != actual;
    if (HasFailure()) break;
  }
  // The workloads reach the rules they are meant to test.
  EXPECT_GT(preempting, 40u);
  EXPECT_GT(evicting, 40u);
  EXPECT_GT(rejecting, 20u);
  EXPECT_GT(hitting, 80u);
  EXPECT_GT(expecting, 150u);
  EXPECT_GT(mistaken, 100u);
  // Section 10b's arrivals taken at a step's start and at its end.
  EXPECT_GT(early, 200u);
  EXPECT_GT(late, 200u);
}

// A random small fleet (section 11): one to three classes, each with its own
// S, Tb, K, costs, power, GPUs and price, two in three autoscaled on short
// intervals with start-ups, stabilization windows and targets that make it
// scale up, down and drain within a few hundred milliseconds.
struct Fleet {
  Workload workload;  // its knobs: the section's, the fleet-wide ones
  std::vector<ReplicaClass> classes;
};

Fleet random_fleet(std::uint64_t seed) {
  pcg32 rng(seed, 11);
  const auto pick = [&](std::uint32_t n) { return rng(n); };
  Fleet f;
  BatchingKnobs& k = f.workload.knobs;
  k.router = static_cast<RouterKind>(pick(7));
  k.block_tokens = std::int64_t{1} << pick(3);
  k.prefix_caching = pick(4) != 0;
  k.reserve_full_prompt = pick(2) == 0;
  k.async_scheduling = pick(3) == 0;
  k.router_refresh_s = (1 + pick(40)) * 1e-4;
  k.engine_turn_arrivals = pick(2) == 0;
  random_router_knobs(pick, k);
  const std::uint32_t count = 1 + pick(3);
  std::int64_t least_k = 0;
  for (std::uint32_t c = 0; c < count; ++c) {
    ReplicaClass cls;
    cls.name = "class" + std::to_string(c);
    BatchingKnobs& ck = cls.knobs;
    ck = k;
    ck.kv_blocks = 3 + pick(22);
    ck.max_num_batched_tokens = 1 + pick(24);
    ck.max_num_seqs = 1 + pick(std::min<std::uint32_t>(6, ck.max_num_batched_tokens));
    ck.step_base_s = (1 + pick(20)) * 1e-4;
    ck.step_prefill_token_s = pick(50) * 1e-6;
    ck.step_prefill_pair_s = pick(2) == 0 ? 0 : pick(30) * 1e-9;
    ck.step_decode_token_s = pick(30) * 1e-6;
    ck.step_decode_context_s = pick(2) == 0 ? 0 : pick(30) * 1e-8;
    ck.gpu_idle_w = 50 + pick(100);
    ck.gpu_max_w = ck.gpu_idle_w + pick(600);
    cls.gpus = 1 + pick(4);
    cls.price_per_gpu_hour = 0.25 * pick(16);
    if (pick(3) != 0) {
      Autoscale a;
      a.min = 1 + pick(2);
      a.max = a.min + pick(4);
      a.interval = Duration::ns((1 + pick(10)) * 1'000'000);
      a.target_requests = pick(4) == 0 ? 0.5 : 1 + pick(4);
      a.startup = Duration::ns(pick(4) == 0 ? 0 : pick(10) * 1'000'000);
      a.scale_down_delay = Duration::ns(pick(3) == 0 ? 0 : pick(20) * 1'000'000);
      cls.replicas = a.min + pick(static_cast<std::uint32_t>(a.max - a.min + 1));
      cls.autoscale = a;
    } else {
      cls.replicas = 1 + pick(2);
    }
    least_k = c == 0 ? ck.kv_blocks : std::min(least_k, ck.kv_blocks);
    f.classes.push_back(cls);
  }
  // The section's K is the least class's, so its max_model_len is the
  // fleet's default; now and then a shorter one is given.
  k.kv_blocks = least_k;
  if (pick(3) == 0)
    k.max_model_len = 1 + pick(static_cast<std::uint32_t>(least_k * k.block_tokens));
  add_requests(rng, k.block_tokens, k.model_len(), f.workload);
  return f;
}

double relative_gap(double a, double b) {
  return std::abs(a - b) / std::max({1e-300, std::abs(a), std::abs(b)});
}

// A fleet's usage, the model's against the naive one's: counts and instants
// equal, sums of doubles (hours, dollars, watt-hours), added up in another
// order, within 1e-12 of each other; every class (and its role) and every
// replica's life, by when it ended.
void expect_same_fleet_usage(const ServerUsage& a, const ServerUsage& b) {
  EXPECT_EQ(a.units, b.units);
  EXPECT_EQ(a.busy, b.busy);
  EXPECT_EQ(a.provisioned, b.provisioned);
  EXPECT_LT(relative_gap(a.energy_wh, b.energy_wh), 1e-12);
  ASSERT_EQ(a.figures.size(), b.figures.size());
  for (std::size_t i = 0; i < a.figures.size(); ++i) {
    EXPECT_EQ(a.figures[i].key, b.figures[i].key);
    EXPECT_EQ(a.figures[i].integer, b.figures[i].integer) << a.figures[i].key;
    ASSERT_EQ(a.figures[i].value.has_value(), b.figures[i].value.has_value()) << a.figures[i].key;
    if (a.figures[i].value) {
      EXPECT_LT(relative_gap(*a.figures[i].value, *b.figures[i].value), 1e-12)
          << a.figures[i].key << " " << *a.figures[i].value << " " << *b.figures[i].value;
    }
  }
  EXPECT_EQ(a.unit_class, b.unit_class);
  EXPECT_EQ(a.class_idle_w, b.class_idle_w);
  EXPECT_EQ(a.class_usd_per_hour, b.class_usd_per_hour);
  ASSERT_EQ(a.classes.size(), b.classes.size());
  for (std::size_t c = 0; c < a.classes.size(); ++c) {
    EXPECT_EQ(a.classes[c].name, b.classes[c].name);
    EXPECT_EQ(a.classes[c].role, b.classes[c].role);
    EXPECT_LT(relative_gap(a.classes[c].replica_hours, b.classes[c].replica_hours), 1e-12);
    EXPECT_LT(relative_gap(a.classes[c].busy_s, b.classes[c].busy_s), 1e-12);
    EXPECT_LT(relative_gap(a.classes[c].cost_usd, b.classes[c].cost_usd), 1e-12);
    ASSERT_EQ(a.classes[c].utilization.has_value(), b.classes[c].utilization.has_value());
    if (a.classes[c].utilization) {
      EXPECT_LT(relative_gap(*a.classes[c].utilization, *b.classes[c].utilization), 1e-12);
    }
  }
  // The replicas' lives, by when they ended, then slot.
  const auto by_end = [](std::vector<ReplicaSpan> spans) {
    std::sort(spans.begin(), spans.end(), [](const ReplicaSpan& x, const ReplicaSpan& y) {
      return std::tie(x.to, x.unit, x.from) < std::tie(y.to, y.unit, y.from);
    });
    return spans;
  };
  const std::vector<ReplicaSpan> sa = by_end(a.spans), sb = by_end(b.spans);
  ASSERT_EQ(sa.size(), sb.size());
  for (std::size_t i = 0; i < sa.size(); ++i) {
    EXPECT_EQ(sa[i].unit, sb[i].unit) << "span " << i;
    EXPECT_EQ(sa[i].cls, sb[i].cls) << "span " << i;
    EXPECT_EQ(sa[i].from, sb[i].from) << "span " << i;
    EXPECT_EQ(sa[i].active_from, sb[i].active_from) << "span " << i;
    EXPECT_EQ(sa[i].to, sb[i].to) << "span " << i;
  }
}

// Section 11 against the naive implementation: slots, the routers' view of the
// active replicas, evaluations, start-ups, stabilization, draining, billing.
// Instants and counts must be equal; sums of doubles (hours, dollars, watt-
// hours), added up in another order here, within 1e-12 of each other.
TEST(BatchingServerReference, RandomFleetsAgreeWithANaiveImplementation) {
  std::uint64_t scaled_up = 0, scaled_down = 0, drained = 0, several = 0, rejecting = 0;
  const char* env = std::getenv("BATCHING_REFERENCE_SEEDS");
  const std::uint64_t seeds = env ? std::strtoull(env, nullptr, 10) : 2000;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE("fleet seed " + std::to_string(seed));
    const Fleet f = random_fleet(seed);
    const Workload& w = f.workload;
    BatchingServer server(w.knobs, f.classes);
    test::ServerHarness harness(server);
    harness.run(w.requests);
    naive::Reference ref(w.knobs, f.classes, w.requests);
    ref.run();

    expect_same_instants(harness, ref, w.requests.size());
    // The model's last event may be the start-up of a replica that went while
    // starting, which activates nothing and is no instant of the run.
    EXPECT_LE(SimTime::ns(ref.end), harness.end);
    const SimTime end = harness.end + Duration::ns(12345);
    const ServerUsage a = server.usage(end), b = ref.usage(end);
    expect_same_fleet_usage(a, b);
    EXPECT_EQ(test::ServerInspector::in_flight(server), 0u);
    EXPECT_TRUE(ref.all_blocks_free());
    const auto figure = [&](const char* key) {
      for (const ServerFigure& fig : a.figures) {
        if (fig.key == key) return fig.value.value_or(0);
      }
      return 0.0;
    };
    scaled_up += figure("scale_ups") > 0;
    scaled_down += figure("scale_downs") > 0;
    drained += ref.drains > 0;
    several += f.classes.size() > 1;
    rejecting += figure("rejected") > 0;
    if (HasFailure()) break;
  }
  // The fleets reach the rules they are meant to test.
  EXPECT_GT(scaled_up, seeds / 8);
  EXPECT_GT(scaled_down, seeds / 4);
  EXPECT_GT(drained, seeds / 20);
  EXPECT_GT(several, seeds / 2);
  EXPECT_GT(rejecting, seeds / 4);
}

// A random small disaggregated fleet (section 12): one or two prefill
// classes and one or two decode classes, some autoscaled, small caches (a
// prefill replica's transfers hold its blocks; decode replicas preempt), and
// links from instant to a few steps long.
Fleet random_disaggregated_fleet(std::uint64_t seed) {
  Fleet f = random_fleet(seed);
  pcg32 rng(seed, 23);
  const auto pick = [&](std::uint32_t n) { return rng(n); };
  BatchingKnobs& k = f.workload.knobs;
  constexpr RouterKind kDecodeRouters[] = {RouterKind::kRoundRobin, RouterKind::kLeastRequests,
                                           RouterKind::kKvAware, RouterKind::kDataParallel,
                                           RouterKind::kDynamo};
  k.decode_router = kDecodeRouters[pick(5)];
  k.kv_link_latency_s = pick(3) == 0 ? 0 : pick(20) * 1e-4;
  k.kv_bytes_per_token = pick(4) == 0 ? 0 : (1 + pick(100)) * 100.0;
  k.kv_link_gbps = (1 + pick(40)) * 0.01;  // a 48-token prompt of 10 kB a token: 0.1 to 4 s
  std::vector<ReplicaClass>& classes = f.classes;
  if (classes.size() == 1) {
    ReplicaClass other = classes.front();
    other.name = "class1";
    other.knobs.kv_blocks = 3 + pick(22);
    classes.push_back(other);
  }
  const std::size_t prefill = 1 + pick(static_cast<std::uint32_t>(classes.size() - 1));
  std::int64_t least_k = 0;
  for (std::size_t c = 0; c < classes.size(); ++c) {
    classes[c].role = c < prefill ? Role::kPrefill : Role::kDecode;
    least_k = c == 0 ? classes[c].knobs.kv_blocks : std::min(least_k, classes[c].knobs.kv_blocks);
    classes[c].knobs.decode_router = k.decode_router;
    classes[c].knobs.kv_link_latency_s = k.kv_link_latency_s;
    classes[c].knobs.kv_bytes_per_token = k.kv_bytes_per_token;
    classes[c].knobs.kv_link_gbps = k.kv_link_gbps;
  }
  // Requests within the fleet's max_model_len (its least K * B, or shorter).
  k.kv_blocks = least_k;
  if (k.max_model_len && *k.max_model_len > least_k * k.block_tokens)
    k.max_model_len = least_k * k.block_tokens;
  f.workload.ids.clear();
  f.workload.requests.clear();
  add_requests(rng, k.block_tokens, k.model_len(), f.workload);
  return f;
}

// Section 12 against the naive implementation: every rule of section 11 as
// above, and each request's transfer end, decode replica and decode
// admission; the transfers' and decode waits' figures.
TEST(BatchingServerReference, RandomDisaggregatedFleetsAgreeWithANaiveImplementation) {
  std::uint64_t transferred = 0, queued = 0, stalled = 0, decode_preempted = 0, scaled = 0,
                single = 0;
  const char* env = std::getenv("BATCHING_REFERENCE_SEEDS");
  const std::uint64_t seeds = env ? std::strtoull(env, nullptr, 10) : 2000;
  const char* first = std::getenv("BATCHING_REFERENCE_FIRST");
  for (std::uint64_t seed = first ? std::strtoull(first, nullptr, 10) : 1; seed <= seeds; ++seed) {
    SCOPED_TRACE("disaggregated fleet seed " + std::to_string(seed));
    const Fleet f = random_disaggregated_fleet(seed);
    const Workload& w = f.workload;
    BatchingServer server(w.knobs, f.classes);
    test::ServerHarness harness(server);
    harness.run(w.requests);
    naive::Reference ref(w.knobs, f.classes, w.requests);
    ref.run();

    expect_same_instants(harness, ref, w.requests.size());
    for (std::size_t i = 0; i < w.requests.size(); ++i) {
      const RequestReport &a = harness.reports[i], &b = ref.reports[i];
      EXPECT_EQ(a.transfer_end, b.transfer_end) << "request " << i;
      EXPECT_EQ(a.decode_start, b.decode_start) << "request " << i;
      EXPECT_EQ(a.decode_unit, b.decode_unit) << "request " << i;
      // A request with two tokens or more is handed over; one with fewer
      // is served on its prefill replica alone.
      const bool handed = a.finish && std::llround(w.requests[i].request.generated_tokens) >= 2;
      EXPECT_EQ(a.decode_start.has_value(), handed) << "request " << i;
      transferred += handed;
      single += a.finish && !handed;
      if (handed) queued += *a.transfer_end - *a.first_token > Duration::ns(0);
    }
    EXPECT_LE(SimTime::ns(ref.end), harness.end);
    const SimTime end = harness.end + Duration::ns(12345);
    const ServerUsage a = server.usage(end), b = ref.usage(end);
    expect_same_fleet_usage(a, b);
    EXPECT_EQ(test::ServerInspector::in_flight(server), 0u);
    EXPECT_TRUE(ref.all_blocks_free());
    for (const ReplicaScheduler* replica : test::ServerInspector::replicas(server))
      EXPECT_EQ(replica->pool().free_blocks(), replica->pool().blocks());
    stalled += ref.stalls > 0;
    decode_preempted += ref.decode_preemptions > 0;
    for (const ServerFigure& fig : a.figures)
      scaled += fig.key == "scale_ups" && fig.value.value_or(0) > 0;
    if (HasFailure()) break;
  }
  // The fleets reach the rules they are meant to test.
  EXPECT_GT(transferred, seeds * 5);
  EXPECT_GT(single, seeds);
  EXPECT_GT(queued, seeds * 2);
  EXPECT_GT(stalled, seeds / 20);
  EXPECT_GT(decode_preempted, seeds / 20);
  EXPECT_GT(scaled, seeds / 8);
}

}  // namespace
}  // namespace infersim
