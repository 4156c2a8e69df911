// A server kind added as one entry of the kinds' table: a made-up "loom"
// (requests woven one a slot, each for a fixed time), with a struct of its own
// knobs and their rows, runs end to end from a settings file and a flag,
// touching no file of the program. Its own executable (with the made-up knob),
// so that no other test sees the kind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/run_options.hpp"
#include "model/server_kinds.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {

using ::testing::HasSubstr;

struct LoomKnobs {
  std::int64_t slots = 2;
  double weave_s = 0.5;  // each request, from its start to its last token
  double power_w = 10;
};

// Each request on the slot free first, from its arrival or that slot's last
// finish, for weave_s; its first token at its start. Decided at issue, as the
// edge server's cores are.
class LoomServer : public ServerModel {
 public:
  explicit LoomServer(const LoomKnobs& knobs)
      : knobs_(knobs), free_(static_cast<std::size_t>(knobs.slots), SimTime::zero()) {}
  void attach(ServerContext& context) override { context_ = &context; }
  void accept(std::uint64_t id, const Request&, SimTime server_arrival) override {
    const auto slot = std::min_element(free_.begin(), free_.end());
    const SimTime start = std::max(server_arrival, *slot);
    const SimTime finish = start + Duration::from_seconds(knobs_.weave_s);
    *slot = finish;
    const auto unit = static_cast<std::uint32_t>(slot - free_.begin());
    busy_ += finish - start;
    context_->started(id, unit, start);
    context_->busy(unit, start, finish);
    context_->first_token(id, start);
    context_->finished(id, finish, 0, 0);
  }
  void handle(std::uint32_t, std::uint64_t) override {}
  ServerUsage usage(SimTime end) const override {
    ServerUsage u;
    u.unit = "slot";
    u.units = static_cast<std::uint32_t>(knobs_.slots);
    u.busy = busy_;
    u.energy_wh = energy_wh(end - SimTime::zero(), busy_);
    return u;
  }
  ServerDescription describe() const override {
    ServerDescription d;
    d.kind = "loom";
    d.unit = "slot";
    d.units = static_cast<std::uint32_t>(knobs_.slots);
    d.headline = std::to_string(knobs_.slots) + " slots of a loom";
    d.knob_title = "Loom";
    d.knobs = {{"Slots", "loom", "slots", ""}, {"Weaving a request", "loom", "weave_s", " s"}};
    return d;
  }
  double energy_wh(Duration length, Duration) const override {
    return knobs_.power_w * length.seconds() / 3600;
  }

 private:
  LoomKnobs knobs_;
  std::vector<SimTime> free_;
  Duration busy_ = Duration::zero();
  ServerContext* context_ = nullptr;
};

// The one entry: its name, its section, its rows, its defaults, its build.
const bool kLoom = [] {
  const std::vector<Knob<LoomKnobs>> rows = {
      count_knob("slots", &LoomKnobs::slots, 1, 1000).help("loom: slots weaving at once"),
      real_knob("weave_s", &LoomKnobs::weave_s, json_check::positive)
          .help("loom: seconds a request is woven"),
      real_knob("power_w", &LoomKnobs::power_w, json_check::bounded_amount).file_only(),
  };
  add_server_kind({"loom", "loom", knobs_held(rows), LoomKnobs{},
                   [](const ServerChoice& choice, std::uint32_t) -> std::unique_ptr<ServerModel> {
                     return std::make_unique<LoomServer>(
                         std::any_cast<const LoomKnobs&>(choice.own.at("loom")));
                   }});
  return true;
}();

class MadeUpKind : public test::TraceFolder {
 protected:
  MadeUpKind() : TraceFolder(test::kBurstTrace) {}
  test::CliResult run(const std::vector<std::string>& extra, const std::string& folder = "run") {
    return run_on_trace({"run", "--plots", "none"}, folder, extra);
  }
};

TEST_F(MadeUpKind, RunsFromASettingsFileAndAFlag) {
  ASSERT_TRUE(kLoom);
  test::write_file(dir_ / "loom.json",
                   R"({"server": {"kind": "loom"}, "loom": {"weave_s": 0.25}})");
  const auto r = run({"--settings", (dir_ / "loom.json").string(), "--slots", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  // Eight requests of 0.25 s on one slot: 2 s busy, the bursts queued.
  const auto summary = nlohmann::json::parse(test::read_file(dir_ / "run" / "summary.json"));
  EXPECT_EQ(summary["recorded"]["requests"], 8);
  EXPECT_DOUBLE_EQ(summary["recorded"]["compute_s"].get<double>(), 2.0);
  EXPECT_GT(summary["recorded"]["avg_wait_s"].get<double>(), 0.1);
  // Its section written, no other kind's; the page in its words.
  const auto written = nlohmann::json::parse(test::read_file(dir_ / "run" / "settings.json"));
  EXPECT_EQ(written["loom"]["slots"], 1);
  EXPECT_EQ(written["loom"]["weave_s"], 0.25);
  EXPECT_EQ(written["loom"]["power_w"], 10.0);
  EXPECT_FALSE(written.contains("batching"));
  const std::string page = test::read_file(dir_ / "run" / "report.html");
  EXPECT_THAT(page, HasSubstr("1 slots of a loom"));
  EXPECT_THAT(page, HasSubstr("Slots <code>loom.slots</code>"));
  // The run again from what it wrote.
  const auto again = test::run_cli({"run", "--plots", "none", "--settings",
                                    (dir_ / "run" / "settings.json").string(), "--output",
                                    (dir_ / "again").string()});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(test::read_file(dir_ / "again" / "summary.json"),
            test::read_file(dir_ / "run" / "summary.json"));
}

TEST_F(MadeUpKind, ItsKnobsAreFlagsCheckedByTheirRows) {
  EXPECT_NE(find_knob_flag("slots"), nullptr);
  EXPECT_EQ(find_knob_flag("power-w"), nullptr);  // a file's only
  EXPECT_THAT(test::one_error_line(run({"--server", "loom", "--slots", "0"}, "none")),
              HasSubstr("--slots: must be a whole number from 1 to 1000, got 0"));
  // Another kind's run leaves the loom's section out, and refuses its knobs
  // naming the kind they belong to.
  ASSERT_EQ(run({}, "edge").status, 0);
  EXPECT_THAT(test::one_error_line(run({"--slots", "2"}, "edge-slots")),
              HasSubstr("--slots: applies to the loom server only, and this run's server is edge: "
                        "add --server loom"));
  EXPECT_FALSE(
      nlohmann::json::parse(test::read_file(dir_ / "edge" / "settings.json")).contains("loom"));
}

}  // namespace
}  // namespace infersim
