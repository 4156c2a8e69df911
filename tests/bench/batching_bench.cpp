// The batching server alone on a recorded trace: reads it (Mooncake's
// conversation trace by default, hash_ids with Bh = 512), hands every request
// to BatchingServer at its arrival (server arrival = arrival) through a lean
// ServerContext over the event engine that only counts, and reports the run's
// seconds (best of a few turns, process time) and the scheduled request-steps
// a second (Σ batch sizes / seconds).
//
//   batching_bench [TRACE] [--replicas R] [--router NAME] [--turns N]
//                  [--kv-blocks K] [--no-prefix-caching] [--async] [--lockstep]
//                  [--split P:D] [--decode-router NAME]
//
// --split P:D runs a disaggregated fleet (BATCHING.md section 12) of P
// prefill and D decode replicas with the section's knobs in place of R.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "engine/engine.hpp"
#include "model/batching_server.hpp"
#include "trace/trace_reader.hpp"

namespace infersim {
namespace {

double process_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Counts what the server tells; feeds the requests one issue event at a time.
class CountingContext final : public ServerContext {
 public:
  CountingContext(ServerModel& server, const std::vector<Request>& requests)
      : server_(server), requests_(requests) {
    server_.attach(*this);
  }

  void run() {
    if (!requests_.empty()) engine_.schedule_at(requests_[0].arrival, Phase::kArrival, kIssue, 0);
    engine_.run([&](const Event& e) {
      if (e.kind != kIssue) {
        server_.handle(e.kind, e.subject);
        return;
      }
      const Request& r = requests_[e.subject];
      server_.accept(e.subject, r, r.arrival);
      if (e.subject + 1 < requests_.size()) {
        engine_.schedule_at(requests_[e.subject + 1].arrival, Phase::kArrival, kIssue,
                            e.subject + 1);
      }
    });
  }

  SimTime now() const override { return engine_.now(); }
  void schedule(SimTime at, Phase phase, std::uint32_t kind, std::uint64_t subject) override {
    engine_.schedule_at(at, phase, kind, subject);
  }
  bool requests_to_come() const override { return false; }
  bool pending_now_before(Phase phase) const override {
    const EventKey* next = engine_.next_key();
    return next != nullptr && next->time == engine_.now() && next->phase() < phase;
  }
  void started(std::uint64_t, std::uint32_t, SimTime) override {}
  void first_token(std::uint64_t, SimTime) override {}
  void finished(std::uint64_t, SimTime at, std::uint32_t, std::uint64_t) override {
    ++finished_;
    last_ = std::max(last_, at);
  }
  void rejected(std::uint64_t, SimTime) override { ++rejected_; }
  void busy(std::uint32_t, SimTime, SimTime) override {}
  void stepped(const StepRecord& step) override {
    ++steps_;
    request_steps_ += step.batch_requests;
  }
  void token_gaps(std::span<const Duration> gaps) override { gaps_ += gaps.size(); }

  std::uint64_t finished_ = 0, rejected_ = 0, steps_ = 0, request_steps_ = 0, gaps_ = 0;
  SimTime last_;
  std::uint64_t events() const { return engine_.executed(); }

 private:
  static constexpr std::uint32_t kIssue = ~std::uint32_t{0};
  ServerModel& server_;
  const std::vector<Request>& requests_;
  Engine<> engine_;
};

int run(int argc, char** argv) {
  std::string path = "trace/mooncake_conversation_trace.jsonl";
  BatchingKnobs knobs;
  knobs.replicas = 8;
  knobs.router = RouterKind::kPrefix;
  int turns = 5;
  std::int64_t prefill = 0, decode = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return std::string(argv[++i]);
    };
    if (arg == "--replicas") {
      knobs.replicas = std::stoll(value());
    } else if (arg == "--router") {
      if (!parse_router_kind(value(), knobs.router)) {
        std::fprintf(stderr, "unknown router\n");
        return 2;
      }
    } else if (arg == "--turns") {
      turns = std::stoi(value());
    } else if (arg == "--kv-blocks") {
      knobs.kv_blocks = std::stoll(value());
    } else if (arg == "--no-prefix-caching") {
      knobs.prefix_caching = false;
    } else if (arg == "--async") {
      knobs.async_scheduling = true;
    } else if (arg == "--lockstep") {
      knobs.lockstep = true;
    } else if (arg == "--split") {
      const std::string split = value();
      const std::size_t colon = split.find(':');
      if (colon == std::string::npos) {
        std::fprintf(stderr, "--split takes P:D\n");
        return 2;
      }
      prefill = std::stoll(split.substr(0, colon));
      decode = std::stoll(split.substr(colon + 1));
    } else if (arg == "--decode-router") {
      if (!parse_router_kind(value(), knobs.decode_router)) {
        std::fprintf(stderr, "unknown router\n");
        return 2;
      }
    } else {
      path = arg;
    }
  }

  TraceSource source;
  source.path = path;
  const double read_start = process_seconds();
  const Trace trace = read_trace(source);
  std::vector<Request> requests(trace.records.size());
  std::uint32_t id_tokens = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const TraceRecord& rec = trace.records[i];
    Request& r = requests[i];
    r.arrival = SimTime::ns(rec.offset_ns);
    r.context_tokens = rec.context_tokens;
    r.generated_tokens = rec.generated_tokens;
    r.block_ids = trace.hash_ids_of(i);
    r.block_id_tokens = r.block_ids.empty() ? 0 : 512;
    if (!r.block_ids.empty()) id_tokens = 512;
  }
  check_batching_knobs(knobs, id_tokens, "batching_bench");
  std::vector<ReplicaClass> fleet;
  if (prefill > 0 && decode > 0) {
    for (const auto& [name, role, count] :
         {std::tuple{"prefill", Role::kPrefill, prefill}, {"decode", Role::kDecode, decode}}) {
      ReplicaClass cls;
      cls.name = name;
      cls.role = role;
      cls.replicas = count;
      cls.knobs = knobs;
      fleet.push_back(cls);
    }
  }
  const double read_s = process_seconds() - read_start;

  double best = 1e300;
  for (int turn = 0; turn < turns; ++turn) {
    BatchingServer server(knobs, fleet);
    CountingContext context(server, requests);
    const double start = process_seconds();
    context.run();
    const double seconds = process_seconds() - start;
    best = std::min(best, seconds);
    if (turn + 1 < turns) continue;
    const ServerUsage usage = server.usage(context.last_);
    std::printf("trace %s: %zu requests (read in %.3f s)\n", path.c_str(), requests.size(), read_s);
    if (!fleet.empty()) {
      std::printf("disaggregated: %lld prefill, %lld decode (decode router %s), ",
                  static_cast<long long>(prefill), static_cast<long long>(decode),
                  to_string(knobs.decode_router).c_str());
    }
    std::printf("replicas %lld, router %s, prefix caching %s%s%s\n",
                static_cast<long long>(fleet.empty() ? knobs.replicas : prefill + decode),
                to_string(knobs.router).c_str(), knobs.prefix_caching ? "on" : "off",
                knobs.async_scheduling ? ", async" : "", knobs.lockstep ? ", lockstep" : "");
    std::printf(
        "finished %llu, rejected %llu, steps %llu, request-steps %llu, tokens gaps %llu, "
        "events %llu\n",
        static_cast<unsigned long long>(context.finished_),
        static_cast<unsigned long long>(context.rejected_),
        static_cast<unsigned long long>(context.steps_),
        static_cast<unsigned long long>(context.request_steps_),
        static_cast<unsigned long long>(context.gaps_),
        static_cast<unsigned long long>(context.events()));
    for (const ServerFigure& f : usage.figures) {
      std::printf("  %s %s\n", f.key.c_str(), f.value ? std::to_string(*f.value).c_str() : "null");
    }
    std::printf("simulated %.1f s; busy %.1f replica-s\n", context.last_.seconds(),
                usage.busy.seconds());
    std::printf("run: best of %d turns %.4f s process time; %.3g request-steps/s\n", turns, best,
                static_cast<double>(context.request_steps_) / best);
  }
  return 0;
}

}  // namespace
}  // namespace infersim

int main(int argc, char** argv) {
  try {
    return infersim::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
