// The batching server (BATCHING.md): R replicas of an LLM inference engine,
// each batching at the iteration level over a paged KV cache with prefix
// caching (ReplicaScheduler), behind a router (RequestRouter); with async
// scheduling and lockstep replicas as section 10 says. Three events of its
// own: a request reaching the server (arrival phase), the end of the steps at
// an instant (departure phase, replicas in index order) and one scheduling
// pass an instant (schedule phase, after everything else then).
#pragma once

#include <cstdint>
#include <vector>

#include "model/batching_knobs.hpp"
#include "model/replica_scheduler.hpp"
#include "model/request_router.hpp"
#include "model/server_model.hpp"
#include "model/step_cost.hpp"

namespace infersim {

namespace test {
struct ServerInspector;
}

class BatchingServer final : public ServerModel {
 public:
  // `knobs` passed check_batching_knobs (with the requests' block size).
  explicit BatchingServer(const BatchingKnobs& knobs);
  // The replicas refer to the server's slots: it stays where it was made.
  BatchingServer(const BatchingServer&) = delete;
  BatchingServer& operator=(const BatchingServer&) = delete;

  void attach(ServerContext& context) override { context_ = &context; }
  void accept(std::uint64_t id, const Request& request, SimTime server_arrival) override;
  void handle(std::uint32_t kind, std::uint64_t subject) override;
  ServerUsage usage(SimTime end) const override;
  double energy_wh(Duration length, Duration busy) const override;

  // The tests look at the replicas and the slots in flight
  // (tests/unit/inspectors.hpp).
  friend struct test::ServerInspector;

 private:
  enum Kind : std::uint32_t { kArrive = 0, kStepEnd = 1, kSchedulePass = 2 };
  void arrive(std::uint32_t slot);
  void end_steps();
  void schedule_pass();
  void request_pass();
  void release_slot(std::uint32_t slot);
  bool any_stepping() const { return stepping_ > 0; }
  bool idle(std::uint32_t replica) const { return step_end_[replica] == kIdle; }
  void begin_step(std::uint32_t replica, SimTime start, SimTime end);

  BatchingKnobs knobs_;
  StepCost cost_;
  std::int64_t model_len_;
  ServerContext* context_ = nullptr;
  std::vector<BatchedRequest> requests_;  // slots of the requests in flight
  std::vector<std::uint32_t> free_slots_;
  std::vector<ReplicaScheduler> replicas_;
  RequestRouter router_;
  std::uint32_t stepping_ = 0;  // replicas stepping now
  // Each replica's step end, kIdle when it is not stepping: side by side, for
  // the scans at every step end and scheduling pass.
  static constexpr SimTime kIdle = SimTime::ns(-1);
  std::vector<SimTime> step_end_;
  // The instants whose step ends were completed and whose pass is scheduled
  // (-1: none), so each happens once an instant.
  SimTime ends_done_at_ = SimTime::ns(-1);
  SimTime pass_at_ = SimTime::ns(-1);
  std::vector<Duration> gaps_;
  std::vector<std::uint32_t> finished_;
  std::vector<StepRecord> planned_;  // lockstep: the batches of one pass

  std::uint64_t rejected_ = 0;
  std::uint64_t steps_ = 0;
  std::uint64_t batched_requests_ = 0;  // Σ batch sizes
};

}  // namespace infersim
