// The plot scripts of a run: the figures a planner asked for are there
// (busy units, or KV use and batch size on the batching server; p99 TTFT and
// wait a slice; the E2E CDF; the budget lines), a curve that would lie flat
// at 0 beside another gets a panel of its own or shows where it is, a
// logarithmic axis where the curves span decades, and a replicated mode's
// curves their band.
#include "report/plots.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "core/number_format.hpp"
#include "scenario/scenario.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;
using ::testing::Not;

// 40 requests `spacing_s` apart on one core, of 500 context and 1 to 7
// generated tokens: (6000 + 2000 g) MI / 60000 MIPS, 0.13 to 0.33 s each.
ModeResult small_run(const std::string& mode, double spacing_s, int count = 40,
                     const std::string& server = "edge") {
  Settings settings;
  settings.cores = 1;
  settings.server_kind = server;
  RequestList tasks(settings.request_knobs());
  for (int i = 0; i < count; ++i)
    tasks.add(SimTime::from_seconds(i * spacing_s), 500, 1 + i % 7);
  return simulate(settings, mode, std::move(tasks), SimTime::from_seconds(60), 0, false);
}

const PlotScript& script(const std::vector<PlotScript>& scripts, const std::string& name) {
  const auto it = std::find_if(scripts.begin(), scripts.end(),
                               [&](const PlotScript& p) { return p.name == name; });
  if (it == scripts.end()) {
    ADD_FAILURE() << "no plot " << name;
    return scripts.front();
  }
  return *it;
}

class Plots : public ::testing::Test {
 protected:
  void SetUp() override {
    recorded_ = small_run("recorded", 0.1);    // a burst: waits up to seconds
    synthetic_ = small_run("synthetic", 1.5);  // spaced: no request waits
  }
  ModeResult recorded_, synthetic_;
};

TEST_F(Plots, DrawTheFiguresAPlannerAskedFor) {
  PlotContext context;
  context.ttft_budget_s = 2;
  context.e2el_slo_s = 3;
  const auto scripts = plot_scripts({&recorded_, &synthetic_}, context);
  std::vector<std::string> names;
  for (const PlotScript& p : scripts)
    names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"arrivals", "queue_length", "utilization", "ttft_p99",
                                             "wait_p99", "deadline_misses", "wait_cdf", "ttft_cdf",
                                             "e2el_cdf"}));
  // Busy cores against the server's one, each mode's curve named.
  const std::string& busy = script(scripts, "utilization").script;
  EXPECT_THAT(busy, HasSubstr("column(\"busy_cores_mean\")"));
  EXPECT_THAT(busy, HasSubstr("title \"1 core\""));
  EXPECT_THAT(busy, HasSubstr("title \"recorded trace\""));
  EXPECT_THAT(busy, HasSubstr("title \"synthetic poisson\""));
  EXPECT_THAT(script(scripts, "ttft_p99").script, HasSubstr("column(\"ttft_p99_s\")"));
  EXPECT_THAT(script(scripts, "wait_p99").script, HasSubstr("column(\"wait_p99_s\")"));
  // The budget and the goodput bound on the CDFs, as vertical lines.
  const std::string& ttft = script(scripts, "ttft_cdf").script;
  EXPECT_THAT(ttft, HasSubstr("set arrow from 2, graph 0 to 2, graph 1"));
  EXPECT_THAT(ttft, HasSubstr("title \"TTFT budget (2.000 s)\""));
  const std::string& e2el = script(scripts, "e2el_cdf").script;
  EXPECT_THAT(e2el, HasSubstr("column(\"e2el_s\")"));
  EXPECT_THAT(e2el, HasSubstr("set arrow from 3, graph 0 to 3, graph 1"));
  EXPECT_THAT(e2el, HasSubstr("title \"goodput E2E bound (3.000 s)\""));
  // The mean deadline budget: 2 s + 0.1 s × the mean generated tokens,
  // 155 / 40 = 3.875 (five cycles of 1..7 and then 1..5): 2.3875 s.
  EXPECT_THAT(e2el, HasSubstr("set arrow from 2.3875, graph 0"));
}

// The synthetic run never queues: its wait curve stands at 0, where a
// linear axis's edge would hide it, and its queue would lie flat under the
// recorded burst's.
TEST_F(Plots, ACurveAtZeroIsShownNotHidden) {
  ASSERT_TRUE(std::all_of(synthetic_.latency_cdf.wait_s.begin(),
                          synthetic_.latency_cdf.wait_s.end(), [](double w) { return w == 0; }));
  const auto scripts = plot_scripts({&recorded_, &synthetic_});
  const PlotScript& wait = script(scripts, "wait_cdf");
  EXPECT_THAT(wait.script, HasSubstr("title \"synthetic poisson (every request at 0 s)\""));
  EXPECT_THAT(wait.script, HasSubstr("set xrange [-"));
  EXPECT_THAT(wait.script, HasSubstr("title \"recorded trace\""));
  const PlotScript& queue = script(scripts, "queue_length");
  EXPECT_THAT(queue.script, HasSubstr("set multiplot layout 2,1"));
  EXPECT_THAT(queue.caption, HasSubstr("Each mode has a panel of its own"));
  // Where both queue alike, one axis.
  const auto alike = plot_scripts({&recorded_, &recorded_});
  EXPECT_THAT(script(alike, "queue_length").script, Not(HasSubstr("multiplot")));
}

// 200 requests 10 ms apart on one core: the first waits nothing and the last
// over 40 s, so the waits span far more than two decades and the axis is
// logarithmic; the spaced run's TTFTs (0.13 to 0.33 s plus the network) do
// not, so its axis stays linear.
TEST_F(Plots, LogarithmicAxisWhereTheCurvesSpanDecades) {
  const ModeResult burst = small_run("recorded", 0.01, 200);
  const auto& wait = burst.latency_cdf.wait_s;
  ASSERT_GT(wait.back(), 40);
  const double smallest_positive =
      *std::find_if(wait.begin(), wait.end(), [](double w) { return w > 0; });
  ASSERT_LT(smallest_positive * 100, wait.back());
  EXPECT_THAT(script(plot_scripts({&burst}), "wait_cdf").script, HasSubstr("set logscale x"));
  EXPECT_THAT(script(plot_scripts({&synthetic_}), "ttft_cdf").script,
              Not(HasSubstr("set logscale")));
}

// Three seeds: the curves carry the band of their seeds, read from the
// band files beside the first seed's.
TEST_F(Plots, ReplicatedModeDrawsItsSeedsBand) {
  ModeResult replicated = synthetic_;
  replicated.replication_series = {synthetic_.time_series, synthetic_.time_series,
                                   synthetic_.time_series};
  replicated.replication_cdfs = {synthetic_.latency_cdf, synthetic_.latency_cdf,
                                 synthetic_.latency_cdf};
  const auto scripts = plot_scripts({&recorded_, &replicated});
  EXPECT_THAT(script(scripts, "utilization").script,
              HasSubstr("'synthetic/timeseries_band.csv' using"));
  EXPECT_THAT(script(scripts, "utilization").script,
              HasSubstr("title \"synthetic poisson, range of 3 seeds\""));
  EXPECT_THAT(script(scripts, "ttft_cdf").script, HasSubstr("'synthetic/cdf_band.csv' using"));
  EXPECT_THAT(script(scripts, "deadline_misses").script, HasSubstr("column(\"miss_rate_min\")"));
  // The recorded trace has one run: no band.
  EXPECT_THAT(script(scripts, "utilization").script, Not(HasSubstr("recorded/timeseries_band")));
}

// The batching server has no cores: its KV cache in use and its batch size.
TEST(BatchingPlots, KvCacheAndBatchSizeOverTime) {
  const ModeResult recorded = small_run("recorded", 0.1, 40, "batching");
  const ModeResult synthetic = small_run("synthetic", 1.5, 40, "batching");
  const auto scripts = plot_scripts({&recorded, &synthetic}, PlotContext{});
  const PlotScript& use = script(scripts, "utilization");
  EXPECT_EQ(use.title, "KV cache use and batch size");
  // The server's KV blocks in all are the plot's 100 %.
  ASSERT_TRUE(recorded.server.kv_blocks);
  EXPECT_THAT(use.caption,
              HasSubstr("of all of them (" + shortest(*recorded.server.kv_blocks) + ")"));
  EXPECT_THAT(use.script, HasSubstr("set yrange [0:100]"));
  EXPECT_THAT(use.script, HasSubstr("column(\"kv_blocks_used_mean\")"));
  EXPECT_THAT(use.script, HasSubstr("column(\"running_mean\")"));
  EXPECT_THAT(use.script, HasSubstr("'recorded/timeseries.csv'"));
  EXPECT_THAT(use.script, HasSubstr("'synthetic/timeseries.csv'"));
  for (const PlotScript& p : scripts) {
    EXPECT_THAT(p.title + p.caption, Not(HasSubstr("core"))) << p.name;
    EXPECT_THAT(p.script, Not(HasSubstr("core"))) << p.name;
  }
}

}  // namespace
}  // namespace infersim
