#include "report/summary.hpp"

#include <gtest/gtest.h>

#include "model/edge_server.hpp"

namespace infersim {
namespace {

TEST(Percentile, InterpolatesLinearlyLikeNumPy) {
  std::vector<double> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(*percentile(v, 0.5), 2.5);  // numpy.percentile([1,2,3,4], 50)
  v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(*percentile(v, 0.9), 3.7);
  v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(*percentile(v, 0.99), 3.9699999999999998);  // numpy gives 3.9699999999999998
  v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(*percentile(v, 0), 1);
  v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(*percentile(v, 1), 4);
}

TEST(Percentile, OneValueAndNone) {
  std::vector<double> one = {7};
  EXPECT_DOUBLE_EQ(*percentile(one, 0.99), 7);
  std::vector<double> none;
  EXPECT_FALSE(percentile(none, 0.5).has_value());
}

// The summary of what `collector` heard, for an idle edge server of 8 cores
// (busy time is the server's to say).
Summary summarize(SummaryCollector& collector, SimTime run_length, std::uint64_t dropped) {
  const EdgeServer server(8);
  const ServerUsage usage = server.usage(collector.end(run_length));
  const EnergyModel radio(EnergyKnobs{});
  return collector.summarize({run_length, dropped, &usage, &radio});
}

TEST(SummaryCollector, NoRequestsGiveNullAveragesNotNaN) {
  SummaryCollector collector;
  const Summary s = summarize(collector, SimTime::from_seconds(60), 3);
  EXPECT_EQ(*s.get("requests"), 0);
  EXPECT_EQ(*s.get("dropped"), 3);
  EXPECT_FALSE(s.get("avg_wait_s").has_value());
  EXPECT_FALSE(s.get("success_rate").has_value());
  EXPECT_FALSE(s.get("makespan_p50_s").has_value());
  EXPECT_DOUBLE_EQ(*s.get("energy_wh"), 420.0 * 60 / 3600);
  EXPECT_THROW(s.get("no_such_figure"), std::out_of_range);
}

TEST(SummaryCollector, EndIsTheLaterOfTheRunAndTheLastResponse) {
  SummaryCollector collector;
  const Request task = make_request(SimTime::zero(), 0, 0, RequestKnobs{});
  RequestOutcome o;
  o.response = SimTime::from_seconds(90);
  o.server_arrival = o.start = o.finish = o.first_token = SimTime::zero();
  collector.on_request(0, task, o);
  const Summary s = summarize(collector, SimTime::from_seconds(60), 0);
  EXPECT_DOUBLE_EQ(*s.get("end_s"), 90);
  EXPECT_DOUBLE_EQ(*s.get("run_length_s"), 60);
  EXPECT_EQ(*s.get("deadline_met"), 0);  // 90 s against a 2 s budget
  EXPECT_FALSE(s.get("avg_makespan_ok_s").has_value());
}

}  // namespace
}  // namespace infersim
