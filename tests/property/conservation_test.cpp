// Invariants of the edge model on the seed's trace: every request is issued and
// answered exactly once, devices share the requests in turn, no core runs two
// requests at once, nobody starts before arriving.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "model/edge_simulation.hpp"
#include "scenario/scenario.hpp"
#include "test_support.hpp"
#include "trace/azure_csv_reader.hpp"

namespace infersim {
namespace {

class Recorder : public RequestObserver {
 public:
  void on_issued(std::uint64_t id, const Request&, const RequestOutcome& o) override {
    issued.push_back(id);
    outcomes.push_back(o);
  }
  void on_completed(std::uint64_t id, const Request&, const RequestOutcome& o) override {
    completed.push_back(id);
    completion_times.push_back(o.response);
  }
  std::vector<std::uint64_t> issued, completed;
  std::vector<RequestOutcome> outcomes;
  std::vector<SimTime> completion_times;
};

class Conservation : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(Conservation, EveryRequestIsServedOnceWithoutOverlap) {
  const std::uint32_t cores = GetParam();
  Settings settings;
  settings.cores = cores;
  settings.devices = 7;
  const Trace trace = read_azure_csv(test::seed_trace());
  GeneratedRequests generated = generate_recorded(settings, trace);
  const auto& tasks = generated.tasks;

  DeviceFleet fleet(settings.devices);
  const NetworkPath network(settings.hops);
  EdgeServer server(cores);
  EdgeSimulation simulation(tasks, fleet, network, server);
  Recorder recorder;
  simulation.add_observer(recorder);
  simulation.run();

  ASSERT_EQ(recorder.issued.size(), tasks.size());
  EXPECT_TRUE(std::is_sorted(recorder.issued.begin(), recorder.issued.end()));
  std::vector<std::uint64_t> completed = recorder.completed;
  std::sort(completed.begin(), completed.end());
  EXPECT_EQ(completed, recorder.issued);  // each exactly once
  EXPECT_TRUE(std::is_sorted(recorder.completion_times.begin(), recorder.completion_times.end()));
  EXPECT_EQ(simulation.events_executed(), 2 * tasks.size());

  for (std::uint32_t d = 0; d < settings.devices; ++d) {
    const std::uint64_t expected = tasks.size() / 7 + (d < tasks.size() % 7 ? 1 : 0);
    EXPECT_EQ(fleet.issued_by(d), expected) << "device " << d;
  }

  std::map<std::uint32_t, std::vector<std::pair<SimTime, SimTime>>> busy;
  Duration total;
  for (std::size_t k = 0; k < tasks.size(); ++k) {
    const RequestOutcome& o = recorder.outcomes[k];
    ASSERT_GE(o.start, o.server_arrival);
    ASSERT_GT(o.server_arrival, tasks[k].arrival);
    ASSERT_EQ(o.finish - o.start, tasks[k].exec);
    ASSERT_GE(o.response, o.finish);
    ASSERT_LE(o.first_token, o.response);
    ASSERT_LT(o.core, cores);
    busy[o.core].emplace_back(o.start, o.finish);
    total += tasks[k].exec;
  }
  for (auto& [core, intervals] : busy) {
    std::sort(intervals.begin(), intervals.end());
    for (std::size_t i = 1; i < intervals.size(); ++i) {
      ASSERT_LE(intervals[i - 1].second, intervals[i].first) << "core " << core;
    }
  }
  EXPECT_EQ(server.busy(), total);
}

INSTANTIATE_TEST_SUITE_P(Cores, Conservation, ::testing::Values(1u, 8u, 64u));

// Every call an observer sees, in order.
class CallLog : public RequestObserver {
 public:
  void on_issued(std::uint64_t id, const Request& task, const RequestOutcome& o) override {
    calls.push_back({false, id, task.arrival, o.start, o.response});
  }
  void on_completed(std::uint64_t id, const Request& task, const RequestOutcome& o) override {
    calls.push_back({true, id, task.arrival, o.start, o.response});
  }
  struct Call {
    bool completed;
    std::uint64_t id;
    SimTime arrival, start, response;
    bool operator==(const Call&) const = default;
  };
  std::vector<Call> calls;
};

// A reporter that has nothing to do at completions.
class IssueCount : public RequestObserver {
 public:
  void on_issued(std::uint64_t, const Request&, const RequestOutcome&) override { ++issued; }
  bool wants_completions() const override { return false; }
  std::uint64_t issued = 0;
};

TEST(Conservation, ObserversOnASecondThreadSeeTheSameCallsInTheSameOrder) {
  Settings settings;
  settings.cores = 3;
  const Trace trace = read_azure_csv(test::seed_trace());
  const GeneratedRequests generated = generate_recorded(settings, trace);
  std::vector<CallLog> logs(2);
  for (const bool threaded : {false, true}) {
    DeviceFleet fleet(settings.devices);
    const NetworkPath network(settings.hops);
    EdgeServer server(settings.cores);
    EdgeSimulation simulation(generated.tasks, fleet, network, server);
    IssueCount count;
    simulation.add_observer(logs[threaded]);
    simulation.add_observer(count);
    simulation.call_observers_on_thread(threaded);
    simulation.run();
    EXPECT_EQ(count.issued, generated.tasks.size());
  }
  ASSERT_EQ(logs[0].calls.size(), 2 * generated.tasks.size());
  EXPECT_TRUE(logs[0].calls == logs[1].calls);
}

}  // namespace
}  // namespace infersim
