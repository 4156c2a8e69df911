// Invariants of the edge model on the seed's trace: every request is issued and
// answered exactly once, in id order, devices share the requests in turn, no
// core runs two requests at once, nobody starts before arriving, and the busy
// time the server reports is the requests' own.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "model/simulation.hpp"
#include "scenario/scenario.hpp"
#include "test_support.hpp"
#include "trace/azure_csv_reader.hpp"

namespace infersim {
namespace {

class Recorder : public RequestObserver, public ServerObserver {
 public:
  void on_request(std::uint64_t id, const Request&, const RequestOutcome& o) override {
    delivered.push_back(id);
    outcomes.push_back(o);
  }
  void on_busy(std::uint32_t unit, SimTime from, SimTime to) override {
    busy.push_back({unit, from, to});
  }
  struct Busy {
    std::uint32_t unit;
    SimTime from, to;
  };
  std::vector<std::uint64_t> delivered;
  std::vector<RequestOutcome> outcomes;
  std::vector<Busy> busy;
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
  Simulation simulation(tasks, fleet, network, server);
  Recorder recorder;
  simulation.add_observer(recorder);
  simulation.add_server_observer(recorder);
  simulation.run();

  // Each exactly once, in id order.
  ASSERT_EQ(recorder.delivered.size(), tasks.size());
  for (std::size_t k = 0; k < tasks.size(); ++k)
    ASSERT_EQ(recorder.delivered[k], k);
  // The edge server decides at issue: one event a request, its issue.
  EXPECT_EQ(simulation.events_executed(), tasks.size());
  ASSERT_EQ(recorder.busy.size(), tasks.size());

  // Request k from device k mod N: each device issues its even share.
  std::vector<std::uint64_t> issued(settings.devices, 0);
  for (std::size_t k = 0; k < tasks.size(); ++k) {
    ASSERT_EQ(recorder.outcomes[k].device, k % settings.devices);
    ++issued[recorder.outcomes[k].device];
  }
  for (std::uint32_t d = 0; d < settings.devices; ++d) {
    const std::uint64_t expected = tasks.size() / 7 + (d < tasks.size() % 7 ? 1 : 0);
    EXPECT_EQ(issued[d], expected) << "device " << d;
  }

  std::map<std::uint32_t, std::vector<std::pair<SimTime, SimTime>>> busy;
  Duration total;
  for (std::size_t k = 0; k < tasks.size(); ++k) {
    const RequestOutcome& o = recorder.outcomes[k];
    ASSERT_GE(o.start, o.server_arrival);
    ASSERT_GT(o.server_arrival, tasks[k].arrival);
    const EdgeCost cost =
        edge_cost(tasks[k].context_tokens, tasks[k].generated_tokens, server.knobs());
    ASSERT_EQ(o.finish - o.start, cost.exec);
    ASSERT_GE(o.response, o.finish);
    ASSERT_LE(o.first_token, o.response);
    ASSERT_EQ(o.first_token_server, o.start + cost.first_token);
    ASSERT_LT(o.unit, cores);
    ASSERT_FALSE(o.rejected);
    // The busy time told is the request's own run on its core.
    ASSERT_EQ(recorder.busy[k].unit, o.unit);
    ASSERT_EQ(recorder.busy[k].from, o.start);
    ASSERT_EQ(recorder.busy[k].to, o.finish);
    busy[o.unit].emplace_back(o.start, o.finish);
    total += cost.exec;
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

}  // namespace
}  // namespace infersim
