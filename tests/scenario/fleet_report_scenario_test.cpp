// What a fleet's run tells a capacity planner (BATCHING.md section 11), end
// to end: each mode's verdict and plots over the replicas it provisioned, not
// the fleet's slots; the replicas drawn by class.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/number_format.hpp"
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

}  // namespace
}  // namespace infersim
