// What a fleet's run tells a capacity planner (BATCHING.md section 11), end
// to end: each mode's verdict and plots over the replicas it provisioned, not
// the fleet's slots; the replicas drawn by class; the page's engine settings
// those the classes run; the console's bill that adds up by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/number_format.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;
using ::testing::Not;

// Nine slots (one big, eight small) of which the small class's autoscaler,
// aiming at 1000 requests a replica, never starts a second: two replicas
// provisioned in either mode.
const char* kNineSlots = R"({"server": {"kind": "batching"},
 "batching": {"router": "round-robin", "kv_blocks": 4000,
  "fleet": [
   {"name": "big", "replicas": 1, "gpus": 2, "price_per_gpu_hour": 3.5},
   {"name": "small", "replicas": 1, "step_base_s": 0.02, "price_per_gpu_hour": 1,
    "autoscale": {"min": 1, "max": 8, "interval_s": 5, "target_requests": 1000}}]}})";

class FleetReport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_dir();
    trace_ = test::write_file(dir_ / "trace.csv", test::forty_requests_trace()).string();
  }
  test::CliResult run(const std::string& settings_text, const std::string& folder,
                      std::vector<std::string> extra = {}) {
    const std::string settings = test::write_file(dir_ / (folder + ".json"), settings_text);
    std::vector<std::string> args = {
        "run", "--settings", settings, "--trace", trace_, "--output", (dir_ / folder).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_cli(args);
  }
  std::string read(const std::string& path) { return test::read_file(dir_ / path); }
  std::filesystem::path dir_;
  std::string trace_;
};

TEST_F(FleetReport, VerdictAndPlotsCountEachModesOwnReplicas) {
  const test::CliResult r = run(kNineSlots, "nine");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(read("nine/summary.json"));
  const std::string page = read("nine/report.html");
  for (const char* mode : {"recorded", "synthetic"}) {
    ASSERT_EQ(summary[mode]["peak_replicas"].get<int>(), 2) << mode;
  }
  // The busy share is over the replicas provisioned, two at most, not nine.
  EXPECT_THAT(page, HasSubstr("the replicas provisioned (at most 2 at once) were busy "));
  EXPECT_THAT(page, Not(HasSubstr("the 9 replicas")));

  // The batch a replica: each slice's running requests over the replicas
  // provisioned in it, not over the nine slots (1/9).
  const std::string utilization = read("nine/plots/utilization.gp");
  EXPECT_THAT(utilization, HasSubstr("column(\"running_mean\") / "
                                     "column(\"replicas_provisioned_mean\")"));
  EXPECT_THAT(utilization, Not(HasSubstr(shortest(1.0 / 9))));

  // Replica by replica: named by class, the seven slots never filled left out.
  for (const char* mode : {"recorded", "synthetic"}) {
    const std::string replicas = read(std::string("nine/plots/replicas_") + mode + ".gp");
    EXPECT_THAT(replicas, HasSubstr("title \"big #0\""));
    EXPECT_THAT(replicas, HasSubstr("title \"small #1\""));
    EXPECT_THAT(replicas, Not(HasSubstr("column(\"replica\") == 2 ")));
    EXPECT_THAT(replicas, Not(HasSubstr("title \"replica ")));
  }
  const std::string csv = read("nine/recorded/replicas.csv");
  EXPECT_THAT(csv.substr(0, csv.find('\n')), ::testing::EndsWith(",kv_use_pct,replica_class"));
  EXPECT_THAT(csv, HasSubstr(",big\n"));
  EXPECT_THAT(csv, HasSubstr(",small\n"));
}

// Two classes of presets: the page shows each one's engine (27,610 and 12,298
// KV blocks, their step costs, their power) and the fleet-wide knobs, not the
// batching section's values no replica runs with.
TEST_F(FleetReport, ThePageShowsEachClassesEngine) {
  const test::CliResult r = run(R"({"server": {"kind": "batching"},
    "batching": {"router": "least-requests", "fleet": [
      {"name": "h100", "preset": "h100-llama-3.1-8b", "replicas": 2, "price_per_gpu_hour": 3},
      {"name": "l40s", "preset": "l40s-llama-3.1-8b", "replicas": 1,
       "autoscale": {"min": 1, "max": 3, "startup_s": 30}}]}})",
                                "presets", {"--recorded", "--plots", "none"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string page = read("presets/report.html");
  const auto at = page.find("id=\"class-knobs\"");
  ASSERT_NE(at, std::string::npos);
  const std::string classes = page.substr(at, page.find("</table>", at) - at);
  EXPECT_THAT(classes, HasSubstr("<th data-class=\"h100\">h100</th><th data-class=\"l40s\">l40s"));
  EXPECT_THAT(classes, HasSubstr("<code>kv_blocks</code></th><td>27610</td><td>12298</td>"));
  EXPECT_THAT(classes, HasSubstr("<code>replicas</code></th><td>2</td><td>1 to 3, autoscaled "
                                 "from 1</td>"));
  EXPECT_THAT(classes, HasSubstr("<td>$3</td><td>$0</td>"));
  EXPECT_THAT(classes, HasSubstr("start-up 30 s"));
  // The section's own engine values appear nowhere: no replica runs them.
  EXPECT_THAT(page, Not(HasSubstr("31250")));
  EXPECT_THAT(page, Not(HasSubstr("100 W / 700 W")));
  EXPECT_THAT(page, Not(HasSubstr("<code>batching.kv_blocks</code>")));
  EXPECT_THAT(page, Not(HasSubstr("<code>batching.step_base_s</code>")));
  // The fleet-wide knobs as the server runs them.
  EXPECT_THAT(page, HasSubstr("Router <code>batching.router</code></th><td>least-requests</td>"));
  EXPECT_THAT(page, HasSubstr("<code>batching.block_tokens</code></th><td>16</td>"));
}

// Reads the console's bill: its rows by first cell.
std::vector<std::vector<std::string>> bill_rows(const std::string& out) {
  std::vector<std::vector<std::string>> rows;
  const auto at = out.find("The bill: ");
  if (at == std::string::npos) return rows;
  std::istringstream lines(out.substr(at));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line) && !line.empty()) {
    // Cells are two spaces or more apart (a class's line opens with two).
    std::vector<std::string> cells;
    std::size_t from = line.find_first_not_of(' ');
    while (from != std::string::npos) {
      const std::size_t gap = line.find("  ", from);
      cells.push_back(line.substr(from, gap == std::string::npos ? gap : gap - from));
      from = gap == std::string::npos ? gap : line.find_first_not_of(' ', gap);
    }
    rows.push_back(cells);
  }
  return rows;
}

// A class on 4 GPUs a replica (a preset of tensor parallelism 4) beside one
// on 2: the console's bill gives each class's replica-hours, GPUs, GPU-hours,
// price and cost, and the mode's GPU-hours and scale-downs, so that cost = Σ
// price x GPUs x replica-hours is checked from the lines printed.
TEST_F(FleetReport, TheConsoleBillAddsUpByHand) {
  const test::CliResult r = run(R"({"server": {"kind": "batching"},
    "batching": {"fleet": [
      {"name": "big", "replicas": 1, "gpus": 2, "price_per_gpu_hour": 3.5},
      {"name": "tp4", "preset": "l40s-llama-3.1-70b", "price_per_gpu_hour": 1.25,
       "autoscale": {"min": 1, "max": 3, "interval_s": 1, "target_requests": 1,
                     "startup_s": 1, "scale_down_delay_s": 1}}]}})",
                                "bill", {"--recorded", "--plots", "none"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(read("bill/summary.json"));
  const auto rows = bill_rows(r.out);
  ASSERT_EQ(rows.size(), 4u) << r.out;
  EXPECT_EQ(rows[0], (std::vector<std::string>{"Bill", "replica-hours", "GPUs a replica",
                                               "GPU-hours", "$ a GPU-hour", "cost",
                                               "$ a million tokens", "scale-ups", "scale-downs"}));
  // The mode's line: replica-hours, GPU-hours, cost, $ a million tokens, scale-ups, -downs.
  ASSERT_EQ(rows[1].size(), 7u) << r.out;
  EXPECT_EQ(rows[1][0], "Recorded trace");
  EXPECT_EQ(rows[1][2], fixed(summary["gpu_hours"].get<double>(), 4));
  EXPECT_EQ(rows[1][5], std::to_string(summary["scale_ups"].get<int>()));
  EXPECT_EQ(rows[1][6], std::to_string(summary["scale_downs"].get<int>()));
  // The classes' lines add up to the mode's cost, each price x GPUs x hours.
  double cost = 0, gpu_hours = 0;
  for (std::size_t i = 2; i < 4; ++i) {
    ASSERT_EQ(rows[i].size(), 6u) << r.out;
    const double hours = std::stod(rows[i][1]);
    const double gpus = std::stod(rows[i][2]);
    const double price = std::stod(rows[i][4]);
    EXPECT_NEAR(std::stod(rows[i][3]), gpus * hours, 1e-4);
    EXPECT_NEAR(std::stod(rows[i][5].substr(1)), price * gpus * hours, 0.006);
    cost += std::stod(rows[i][5].substr(1));
    gpu_hours += std::stod(rows[i][3]);
  }
  EXPECT_EQ(rows[3][0], "tp4");
  EXPECT_EQ(rows[3][2], "4");
  EXPECT_NEAR(std::stod(rows[1][3].substr(1)), cost, 0.011);
  EXPECT_NEAR(std::stod(rows[1][2]), gpu_hours, 2e-4);
  EXPECT_EQ(rows[1][3], "$" + fixed(summary["cost_usd"].get<double>(), 2));
  // summary.json's classes carry the same.
  EXPECT_EQ(summary["classes"][1]["gpus"].get<int>(), 4);
  EXPECT_DOUBLE_EQ(summary["classes"][1]["price_per_gpu_hour"].get<double>(), 1.25);
  EXPECT_NEAR(summary["classes"][1]["gpu_hours"].get<double>(),
              4 * summary["classes"][1]["replica_hours"].get<double>(), 1e-12);
}

}  // namespace
}  // namespace infersim
