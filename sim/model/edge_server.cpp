#include "model/edge_server.hpp"

#include <algorithm>
#include <functional>

namespace infersim {

EdgeServer::EdgeServer(std::uint32_t cores) : cores_(cores) {
  heap_.reserve(cores);
  for (std::uint32_t c = 0; c < cores; ++c)
    heap_.push_back(FreeCore{SimTime::zero(), c});
  std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
}

CoreAssignment EdgeServer::assign(SimTime server_arrival, Duration exec) {
  std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
  FreeCore& slot = heap_.back();
  CoreAssignment a;
  a.core = slot.core;
  a.start = std::max(server_arrival, slot.free_at);
  a.finish = a.start + exec;
  slot.free_at = a.finish;
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  busy_ += exec;
  return a;
}

}  // namespace infersim
