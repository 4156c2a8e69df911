#include "model/edge_server.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <functional>
#include <stdexcept>

#include "core/input_error.hpp"

namespace infersim {

EdgeServer::EdgeServer(EdgeServerKnobs knobs) : knobs_(knobs) {
  if (knobs_.cores == 0) throw std::invalid_argument("EdgeServer: no cores");
  heap_.reserve(knobs_.cores);
  for (std::uint32_t c = 0; c < knobs_.cores; ++c)
    heap_.push_back(FreeCore{SimTime::zero(), c});
  std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
}

namespace {

// The knobs a request's execution time comes from (MODEL.md section 5).
constexpr const char* kCostKeys =
    "server.mips_per_core, tokens.mi_per_context_token, tokens.mi_per_generated_token";

[[noreturn, gnu::cold, gnu::noinline]] void too_long(const Request& request, double seconds) {
  char text[320];
  std::snprintf(text, sizeof(text),
                "a request of %.6g context and %.6g generated tokens would run %.3g s on a core, "
                "more than the 1e9 s an execution may last on the nanosecond clock",
                request.context_tokens, request.generated_tokens, seconds);
  throw InputError("", 0, kCostKeys, text);
}

[[noreturn, gnu::cold, gnu::noinline]] void past_the_clock() {
  throw InputError("", 0, kCostKeys,
                   "the cores' queue reaches past the end of the nanosecond clock (2^63 ns, "
                   "about 292 years): faster cores, cheaper requests or a shorter trace");
}

}  // namespace

CoreAssignment EdgeServer::assign(SimTime server_arrival, Duration exec) {
  std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
  FreeCore& slot = heap_.back();
  CoreAssignment a;
  a.core = slot.core;
  a.start = std::max(server_arrival, slot.free_at);
  std::int64_t finish_ns = 0;
  if (__builtin_add_overflow(a.start.count_ns(), exec.count_ns(), &finish_ns)) [[unlikely]]
    past_the_clock();
  a.finish = SimTime::ns(finish_ns);
  slot.free_at = a.finish;
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  busy_ += exec;
  return a;
}

void EdgeServer::accept(std::uint64_t id, const Request& request, SimTime server_arrival) {
  const double seconds = (request.context_tokens * knobs_.mi_per_context_token +
                          request.generated_tokens * knobs_.mi_per_generated_token) /
                         knobs_.mips_per_core;
  if (!(seconds <= kLongestDurationS)) [[unlikely]]
    too_long(request, seconds);
  const EdgeCost cost = edge_cost(request.context_tokens, request.generated_tokens, knobs_);
  const CoreAssignment a = assign(server_arrival, cost.exec);
  context_->started(id, a.core, a.start);
  context_->busy(a.core, a.start, a.finish);
  context_->first_token(id, a.start + cost.first_token);
  context_->finished(id, a.finish, 0, 0);
}

ServerDescription EdgeServer::describe() const {
  ServerDescription d;  // its defaults are the edge server's words
  d.units = knobs_.cores;
  char mips[32];
  const auto written = std::to_chars(mips, mips + sizeof(mips), knobs_.mips_per_core);
  d.headline = std::to_string(knobs_.cores) + (knobs_.cores == 1 ? " core of " : " cores of ") +
               std::string(mips, written.ptr) + " MIPS";
  return d;
}

ServerUsage EdgeServer::usage(SimTime end) const {
  ServerUsage u;
  u.unit = "core";
  u.units = knobs_.cores;
  u.busy = busy_;
  u.busy_is_requests_exec = true;
  u.energy_wh = energy_wh(end - SimTime::zero(), busy_);
  return u;
}

double EdgeServer::energy_wh(Duration length, Duration busy) const {
  // MODEL.md section 8: idle power all along, the dynamic share in proportion
  // to the busy core-time.
  const double end_s = length.seconds();
  const double busy_s = busy.seconds();
  return (knobs_.idle_power_w * end_s +
          (knobs_.max_power_w - knobs_.idle_power_w) * busy_s / knobs_.cores) /
         3600;
}

}  // namespace infersim
