// The summary's figures: SummaryCollector's nulls and run end, and the
// LatencySamples it reads the percentiles from.
#include "report/summary.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/percentiles.hpp"
#include "model/edge_server.hpp"

namespace infersim {
namespace {

// The summary of what `collector` heard, for an idle edge server of 8 cores
// (busy time is the server's to say).
Summary summarize(SummaryCollector& collector, SimTime run_length, std::uint64_t dropped) {
  const EdgeServer server(8);
  const ServerUsage usage = server.usage(collector.end(run_length));
  const RadioEnergy radio(EnergyKnobs{});
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

TEST(LatencySamples, PercentilesWantedOrNotAreThoseOfTheSortedValues) {
  std::mt19937_64 bits(2);
  LatencySamples samples;
  std::vector<std::int64_t> waits;
  for (int i = 0; i < 30000; ++i) {
    const auto w = static_cast<std::int64_t>(bits() % 5 == 0 ? bits() % 9'000'000'000 : 0);
    waits.push_back(w);
    samples.add(Duration::ns(w + 100), Duration::ns(w + 50), Duration::ns(w));
  }
  samples.want(LatencySamples::kWait, 0.5);
  samples.want_cdf(LatencySamples::kWait, 101);
  for (const double q : {0.5, 0.77, 0.99, 1.0}) {
    std::vector<std::int64_t> copy = waits;
    EXPECT_EQ(*samples.percentile(LatencySamples::kWait, q), *percentile_seconds(copy, q)) << q;
  }
  for (const double q : LatencySamples::cdf_fractions(waits.size(), 101)) {
    std::vector<std::int64_t> copy = waits;
    EXPECT_EQ(*samples.percentile(LatencySamples::kWait, q), *percentile_seconds(copy, q)) << q;
  }
  // A value added after a percentile was read is seen by the next one.
  samples.add(Duration::zero(), Duration::zero(), Duration::ns(std::int64_t{1} << 50));
  EXPECT_EQ(*samples.percentile(LatencySamples::kWait, 1.0),
            Duration::ns(std::int64_t{1} << 50).seconds());
  EXPECT_FALSE(LatencySamples().percentile(LatencySamples::kTtft, 0.5).has_value());
}

TEST(LatencySamples, CdfFractionsAreEvenlySpacedOrOneAValue) {
  EXPECT_TRUE(LatencySamples::cdf_fractions(0, 1001).empty());
  EXPECT_EQ(LatencySamples::cdf_fractions(1, 1001), std::vector<double>{1.0});
  EXPECT_EQ(LatencySamples::cdf_fractions(3, 1001), (std::vector<double>{0, 0.5, 1}));
  const std::vector<double> f = LatencySamples::cdf_fractions(100000, 1001);
  ASSERT_EQ(f.size(), 1001u);
  EXPECT_EQ(f[100], 0.1);
  EXPECT_EQ(f.back(), 1.0);
}

}  // namespace
}  // namespace infersim
