// Fleets from a settings file (BATCHING.md section 11), end to end: what the
// run folder gains, a run reproduced from its own settings.json, and the
// settings that are refused, each naming the file and the key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "trace/csv_rows.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;

const char* kFleet = R"({"server": {"kind": "batching"},
 "batching": {"router": "round-robin", "kv_blocks": 4000,
  "fleet": [
   {"name": "big", "replicas": 1, "gpus": 2, "price_per_gpu_hour": 3.5},
   {"name": "small", "replicas": 1, "step_base_s": 0.02, "price_per_gpu_hour": 1,
    "autoscale": {"min": 1, "max": 4, "interval_s": 5, "target_requests": 1,
                  "startup_s": 10, "scale_down_delay_s": 20}}]}})";

class FleetRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_dir();
    trace_ = test::write_file(dir_ / "trace.csv", test::forty_requests_trace()).string();
  }
  test::CliResult run(const std::string& settings_text, const std::string& folder,
                      std::vector<std::string> extra = {}) {
    const std::string settings = test::write_file(dir_ / (folder + ".json"), settings_text);
    std::vector<std::string> args = {"run",     "--settings", settings,
                                     "--trace", trace_,       "--plots",
                                     "none",    "--output",   (dir_ / folder).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_cli(args);
  }
  std::filesystem::path dir_;
  std::string trace_;
};

// A class's name is the user's word: one holding a comma and quotes is
// quoted as RFC 4180 says wherever it lands in a CSV, so that an RFC 4180
// reader finds the header's number of fields on every row, and the name.
TEST_F(FleetRun, AClassNamedWithACommaAndQuotesKeepsEveryCsvRowWhole) {
  const std::string name = "a,\"b\"";
  const char* settings = R"({"server": {"kind": "batching"},
 "batching": {"kv_blocks": 4000, "fleet": [
   {"name": "a,\"b\"", "price_per_gpu_hour": 2},
   {"name": "c", "price_per_gpu_hour": 1}]}})";
  const test::CliResult r = run(settings, "named", {"--recorded"});
  ASSERT_EQ(r.status, 0) << r.err;
  const test::CliResult search =
      test::run_cli({"capacity", "--settings",  (dir_ / "named.json").string(),
                     "--trace",  trace_,        "--plots",
                     "none",     "--output",    (dir_ / "cap").string(),
                     "--min",    "0",           "--max",
                     "1",        "--target",    "ttft_p99_s<=1000",
                     "--vary",   "fleet",       "--modes",
                     "recorded", "--exhaustive"});
  ASSERT_EQ(search.status, 0) << search.err;
  for (const auto& [path, column] : {std::pair{dir_ / "named" / "requests.csv", "replica_class"},
                                     std::pair{dir_ / "cap" / "capacity.csv", ""}}) {
    const std::string bytes = test::read_file(path);
    CsvRows rows(bytes, path.string());
    std::vector<std::string_view> fields;
    ASSERT_TRUE(rows.next(fields)) << path;
    const std::vector<std::string> header(fields.begin(), fields.end());
    const auto at = std::find(header.begin(), header.end(), *column ? column : name);
    ASSERT_NE(at, header.end()) << path;
    std::size_t read = 0, named = 0;
    while (rows.next(fields)) {
      ++read;
      ASSERT_EQ(fields.size(), header.size()) << path << " line " << rows.line();
      named += *column && fields[static_cast<std::size_t>(at - header.begin())] == name;
    }
    EXPECT_GT(read, 0u) << path;
    if (*column) {
      EXPECT_GT(named, 0u) << "no request served by class " << name;
    }
  }
}

TEST_F(FleetRun, WritesTheBillTheClassesAndEachRequestsClass) {
  const test::CliResult r = run(kFleet, "fleet", {"--recorded"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(test::read_file(dir_ / "fleet" / "summary.json"));
  for (const char* key : {"replica_hours", "gpu_hours", "cost_usd", "usd_per_million_tokens",
                          "peak_replicas", "scale_ups", "scale_downs", "classes"}) {
    EXPECT_TRUE(summary.contains(key)) << key;
  }
  ASSERT_EQ(summary["classes"].size(), 2u);
  EXPECT_EQ(summary["classes"][0]["name"], "big");
  double cost = 0;
  cost += 3.5 * 2 * summary["classes"][0]["replica_hours"].get<double>();
  cost += 1.0 * 1 * summary["classes"][1]["replica_hours"].get<double>();
  EXPECT_NEAR(summary["cost_usd"].get<double>(), cost, 1e-12);
  EXPECT_GE(summary["scale_ups"].get<int>(), 1);  // 40 requests on a target of 1 a replica
  const std::string csv = test::read_file(dir_ / "fleet" / "requests.csv");
  EXPECT_THAT(csv.substr(0, csv.find('\n')), ::testing::EndsWith(",rejected,replica_class"));
  EXPECT_THAT(csv, HasSubstr(",big\n"));
  EXPECT_THAT(csv, HasSubstr(",small\n"));

  // The time series: replicas provisioned and active a slice, and a slice's
  // energy at each class's power and cost at its price, summing to the run's.
  const std::string series = test::read_file(dir_ / "fleet" / "timeseries.csv");
  EXPECT_THAT(
      series.substr(0, series.find('\n')),
      ::testing::EndsWith(",ttft_p99_s,replicas_provisioned_mean,replicas_active_mean,cost_usd"));
  std::istringstream lines(series);
  std::string line;
  std::getline(lines, line);
  double energy = 0, most = 0, billed = 0;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');)
      cells.push_back(cell);
    ASSERT_GE(cells.size(), 12u);
    energy += std::stod(cells[9]);
    most = std::max(most, std::stod(cells[cells.size() - 3]));
    billed += std::stod(cells.back());
  }
  EXPECT_NEAR(energy, summary["energy_wh"].get<double>(), 1e-9 * energy);
  EXPECT_NEAR(billed, summary["cost_usd"].get<double>(), 1e-9 * billed);
  // Time-weighted means: at most the peak, and above the 2 replicas at 0 once
  // the autoscaler has started one.
  EXPECT_LE(most, summary["peak_replicas"].get<double>());
  EXPECT_GT(most, 2);
}

TEST_F(FleetRun, ItsOwnSettingsFileReproducesIt) {
  ASSERT_EQ(run(kFleet, "first", {"--recorded"}).status, 0);
  const std::string written = test::read_file(dir_ / "first" / "settings.json");
  const test::CliResult again = run(written, "again");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(test::read_file(dir_ / "first" / "requests.csv"),
            test::read_file(dir_ / "again" / "requests.csv"));
}

TEST_F(FleetRun, RefusedSettingsNameTheKey) {
  struct Case {
    const char* name;
    std::string settings;
    std::vector<std::string> extra;
    std::string has;
  };
  const std::string fleet_of = R"({"server": {"kind": "batching"}, "batching": {"fleet": )";
  const Case cases[] = {
      {"replicas beside a fleet", kFleet, {"--replicas", "3"}, "batching.fleet"},
      {"a class key misspelt",
       fleet_of + R"([{"name": "a", "kv_block": 10}]}})",
       {},
       "batching.fleet[0].kv_block: not a key of a replica class (did you mean 'kv_blocks'?)"},
      {"a fleet-wide knob in a class",
       fleet_of + R"([{"name": "a", "router": "prefix"}]}})",
       {},
       "batching.fleet[0].router: not a key of a replica class"},
      {"two classes of one name",
       fleet_of + R"([{"name": "a"}, {"name": "a"}]}})",
       {},
       "batching.fleet[1].name: 'a' names two classes"},
      {"autoscale without max",
       fleet_of + R"([{"name": "a", "autoscale": {"min": 1}}]}})",
       {},
       "batching.fleet[0].autoscale.max: missing"},
      {"replicas outside min and max",
       fleet_of + R"([{"name": "a", "replicas": 5, "autoscale": {"min": 1, "max": 2}}]}})",
       {},
       "need min <= replicas <= max"},
      {"a class whose S exceeds its Tb",
       fleet_of + R"([{"name": "a", "max_num_seqs": 900, "max_num_batched_tokens": 512}]}})",
       {},
       "batching.fleet[0] (a)"},
      {"lockstep with two classes",
       R"({"server": {"kind": "batching"}, "batching": {"lockstep": true,
           "fleet": [{"name": "a"}, {"name": "b"}]}})",
       {},
       "lockstep needs a fleet of one class"},
      {"a price without a fleet",
       R"({"server": {"kind": "batching"}, "batching": {"price_per_gpu_hour": 2}})",
       {},
       "batching.gpus, batching.price_per_gpu_hour"},
      {"a preset that does not exist, blamed on the file's key",
       fleet_of + R"([{"name": "a"}, {"name": "b", "preset": "no-such-gpu"}]}})",
       {},
       ".json: batching.fleet[1].preset: no preset 'no-such-gpu'"},
      {"the edge server over a fleet, both sides named",
       kFleet,
       {"--server", "edge"},
       ".json: batching.fleet: applies to the batching server only, and server.kind is edge "
       "(set by --server)"},
      {"a number too large for a double, with its line and key",
       fleet_of + "[{\"name\": \"a\",\n \"kv_blocks\": 1e999}]}}",
       {},
       ".json:2: batching.fleet[0].kv_blocks: number overflow parsing '1e999'"},
      {"a price whose bill no number holds",
       fleet_of + R"([{"name": "a", "gpus": 1000000, "price_per_gpu_hour": 1e308}]}})",
       {},
       ".json: batching.fleet[0].price_per_gpu_hour: must be at most 1e9"},
      {"a split's link beside a fleet with no split",
       R"({"server": {"kind": "batching"}, "batching": {"kv_link_gbps": 50,
           "fleet": [{"name": "a"}]}})",
       {},
       ".json: batching.kv_link_gbps: applies to a fleet split into prefill and decode"},
      {"a split's router by flag beside a fleet with no split",
       kFleet,
       {"--decode-router", "least-requests"},
       "--decode-router: applies to a fleet split into prefill and decode"},
  };
  int i = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string folder = "refused" + std::to_string(i++);
    const test::CliResult r = run(c.settings, folder, c.extra);
    EXPECT_NE(r.status, 0);
    EXPECT_THAT(r.err, HasSubstr(c.has));
    EXPECT_FALSE(std::filesystem::exists(dir_ / folder / "summary.json"));
  }
}

// The report page names the fleet, bills it and shows each class's share.
TEST_F(FleetRun, TheReportPageShowsTheFleetAndItsBill) {
  const test::CliResult r = run(kFleet, "page", {"--recorded"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string page = test::read_file(dir_ / "page" / "report.html");
  EXPECT_THAT(page, HasSubstr("a fleet of big (1) and small (1 to 4, autoscaled from 1)"));
  EXPECT_THAT(page, HasSubstr("Fleet and bill"));
  EXPECT_THAT(page, HasSubstr("<tr data-key=\"cost_usd\">"));
  EXPECT_THAT(page, HasSubstr("The fleet, class by class"));
  EXPECT_THAT(page, HasSubstr("<tr data-class=\"big\"><th scope=\"row\">big</th><td>none</td>"
                              "<td>1</td><td>3.5</td>"));
  EXPECT_THAT(page, HasSubstr("<tr data-class=\"small\">"));
}

// The example of settings/README.md runs as it is and prices its classes.
TEST_F(FleetRun, TheCommittedExampleRuns) {
  const std::string example = (test::source_dir() / "settings" / "fleet_h100_l40s.json").string();
  const test::CliResult r =
      test::run_cli({"run", "--settings", example, "--trace", trace_, "--recorded", "--plots",
                     "none", "--output", (dir_ / "example").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Cost of the run ($)"));
  const auto summary = nlohmann::json::parse(test::read_file(dir_ / "example" / "summary.json"));
  ASSERT_EQ(summary["classes"].size(), 2u);
  EXPECT_GT(summary["cost_usd"].get<double>(), 0);
}

const char* kSplit = R"({"server": {"kind": "batching"},
 "batching": {"kv_blocks": 4000, "decode_router": "least-requests", "kv_link_gbps": 50,
  "fleet": [
   {"name": "pre", "role": "prefill", "replicas": 1},
   {"name": "dec", "role": "decode", "replicas": 2}]}})";

// Section 12 end to end: each request's decode side in requests.csv, the
// transfers in the summary, each class's role.
TEST_F(FleetRun, ADisaggregatedFleetWritesItsTransfers) {
  const test::CliResult r = run(kSplit, "split", {"--recorded"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(test::read_file(dir_ / "split" / "summary.json"));
  ASSERT_EQ(summary["classes"].size(), 2u);
  EXPECT_EQ(summary["classes"][0]["role"], "prefill");
  EXPECT_EQ(summary["classes"][1]["role"], "decode");
  for (const char* key : {"kv_transfers", "kv_transfer_gb", "kv_transfer_p50_s",
                          "kv_transfer_p99_s", "decode_wait_p99_s"}) {
    EXPECT_TRUE(summary.contains(key)) << key;
  }
  const std::filesystem::path requests = dir_ / "split" / "requests.csv";
  const std::vector<std::string> header =
      test::fields_of(test::lines_of(test::read_file(requests)).front());
  EXPECT_THAT(
      test::lines_of(test::read_file(requests)).front(),
      ::testing::EndsWith(",rejected,replica_class,decode_replica,kv_transfer_s,decode_wait_s"));
  ASSERT_EQ(header.size(), 24u);
  // Every request with two tokens or more went from replica 0 to 1 or 2, its
  // transfer at least the link's latency; the others stayed on replica 0.
  std::int64_t transfers = 0;
  double gb = 0, on_links = 0, in_decode_queue = 0;
  for (const auto& row : test::read_csv(requests)) {
    EXPECT_EQ(row.at("rejected"), "0");
    EXPECT_EQ(row.at("replica_class"), "pre");
    if (std::stod(row.at("generated_tokens")) >= 2) {
      ++transfers;
      gb += std::max(1.0, std::round(std::stod(row.at("context_tokens")))) * 131072 / 1e9;
      EXPECT_TRUE(row.at("decode_replica") == "1" || row.at("decode_replica") == "2");
      EXPECT_GE(std::stod(row.at("kv_transfer_s")), 0.0005);
      EXPECT_GE(std::stod(row.at("decode_wait_s")), 0.0);
      on_links += std::stod(row.at("kv_transfer_s"));
      in_decode_queue += std::stod(row.at("decode_wait_s"));
    } else {
      EXPECT_EQ(row.at("decode_replica"), "");
      EXPECT_EQ(row.at("kv_transfer_s"), "");
    }
  }
  EXPECT_GT(transfers, 0);
  EXPECT_EQ(summary["kv_transfers"].get<std::int64_t>(), transfers);
  // The time series' requests on a link, over the slices, are the requests'
  // transfer times summed; the same for the decode queue.
  const std::filesystem::path series = dir_ / "split" / "timeseries.csv";
  EXPECT_THAT(test::lines_of(test::read_file(series)).front(),
              ::testing::EndsWith(",cost_usd,kv_transfers_mean,decode_waiting_mean"));
  double link_s = 0, queue_s = 0;
  for (const auto& slice : test::read_csv(series)) {
    const double length = std::stod(slice.at("slice_end_s")) - std::stod(slice.at("slice_start_s"));
    link_s += length * std::stod(slice.at("kv_transfers_mean"));
    queue_s += length * std::stod(slice.at("decode_waiting_mean"));
  }
  EXPECT_GT(on_links, 0);
  EXPECT_NEAR(link_s, on_links, 1e-6 * on_links + 1e-6);
  EXPECT_NEAR(queue_s, in_decode_queue, 1e-6 * in_decode_queue + 1e-6);
  EXPECT_NEAR(summary["kv_transfer_gb"].get<double>(), gb, 1e-9 * gb);
  // The page and the console name the split.
  EXPECT_THAT(r.out, HasSubstr("KV transfers, prefill to decode"));
}

// A split's settings.json (roles, the decode router, the link) reproduces it,
// and the committed example runs as it is.
TEST_F(FleetRun, ASplitsOwnSettingsFileReproducesIt) {
  ASSERT_EQ(run(kSplit, "split_first", {"--recorded"}).status, 0);
  const std::string written = test::read_file(dir_ / "split_first" / "settings.json");
  EXPECT_THAT(written, HasSubstr("\"role\": \"prefill\""));
  EXPECT_THAT(written, HasSubstr("\"decode_router\": \"least-requests\""));
  const test::CliResult again = run(written, "split_again");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(test::read_file(dir_ / "split_first" / "requests.csv"),
            test::read_file(dir_ / "split_again" / "requests.csv"));

  const std::string example =
      (test::source_dir() / "settings" / "disaggregated_h100.json").string();
  const test::CliResult r =
      test::run_cli({"run", "--settings", example, "--trace", trace_, "--recorded", "--plots",
                     "none", "--output", (dir_ / "split_example").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary =
      nlohmann::json::parse(test::read_file(dir_ / "split_example" / "summary.json"));
  EXPECT_GT(summary["kv_transfers"].get<int>(), 0);
  EXPECT_EQ(summary["classes"][1]["role"], "decode");
}

// The page names each class's side, the link's knobs and the transfers.
TEST_F(FleetRun, TheReportPageShowsTheSplit) {
  const test::CliResult r = run(kSplit, "split_page", {"--recorded"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string page = test::read_file(dir_ / "split_page" / "report.html");
  EXPECT_THAT(page, HasSubstr("a fleet of pre (1, prefill) and dec (2, decode)"));
  EXPECT_THAT(page, HasSubstr("decode router least-requests"));
  EXPECT_THAT(page, HasSubstr("<th scope=\"row\">pre (prefill)</th>"));
  EXPECT_THAT(page, HasSubstr("Disaggregated prefill and decode"));
  EXPECT_THAT(page, HasSubstr("<tr data-key=\"kv_transfer_p99_s\">"));
  EXPECT_THAT(page, HasSubstr("A prefill replica&#39;s link"));
}

TEST_F(FleetRun, RefusedSplitsNameTheKey) {
  struct Case {
    const char* name;
    std::string settings;
    std::string has;
  };
  const std::string fleet_of = R"({"server": {"kind": "batching"}, "batching": {"fleet": )";
  const Case cases[] = {
      {"a role on one class only",
       fleet_of + R"([{"name": "a", "role": "prefill"}, {"name": "b"}]}})",
       "batching.fleet[1].role: missing"},
      {"both in a split",
       fleet_of +
           R"([{"name": "a", "role": "prefill"}, {"name": "b", "role": "both"},
               {"name": "c", "role": "decode"}]}})",
       "batching.fleet[1].role: 'both' in a disaggregated fleet"},
      {"no decode class",
       fleet_of + R"([{"name": "a", "role": "prefill"}, {"name": "b", "role": "prefill"}]}})",
       "needs a prefill class and a decode class; it has no decode class"},
      {"a role misspelt",
       fleet_of + R"([{"name": "a", "role": "prefil"}, {"name": "b", "role": "decode"}]}})",
       "batching.fleet[0].role: must be prefill or decode"},
      {"lockstep in a split",
       R"({"server": {"kind": "batching"}, "batching": {"lockstep": true, "fleet":
           [{"name": "a", "role": "prefill"}, {"name": "b", "role": "decode"}]}})",
       "lockstep does not apply to disaggregated prefill and decode"},
      {"the prefix router for decode",
       R"({"server": {"kind": "batching"}, "batching": {"decode_router": "prefix"}})",
       "batching.decode_router: must be round-robin, least-requests, kv-aware, vllm-dp or dynamo"},
      {"a link of no bandwidth",
       R"({"server": {"kind": "batching"}, "batching": {"kv_link_gbps": 0}})",
       "batching.kv_link_gbps: must be greater than 0"},
      {"a negative transfer latency",
       R"({"server": {"kind": "batching"}, "batching": {"kv_link_latency_s": -1}})",
       "batching.kv_link_latency_s"},
  };
  int i = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string folder = "split_refused" + std::to_string(i++);
    const test::CliResult r = run(c.settings, folder);
    EXPECT_NE(r.status, 0);
    EXPECT_THAT(r.err, HasSubstr(c.has));
    EXPECT_FALSE(std::filesystem::exists(dir_ / folder / "summary.json"));
  }
}

TEST_F(FleetRun, AClassTakesItsPresetsKnobsAndGpus) {
  const test::CliResult r = run(R"({"server": {"kind": "batching"}, "batching": {"fleet": [
             {"name": "l40s", "preset": "l40s-llama-3.1-70b", "price_per_gpu_hour": 1}]}})",
                                "preset", {"--recorded"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(test::read_file(dir_ / "preset" / "summary.json"));
  // The 70B preset runs on 4 GPUs a replica (its tensor parallelism).
  EXPECT_NEAR(summary["gpu_hours"].get<double>(), 4 * summary["replica_hours"].get<double>(),
              1e-12);
}

// BATCHING.md section 13.1 (version 2.1): a fleet-wide knob the section does
// not set comes from the classes' presets when they agree; the console says
// where each knob of each class came from.
TEST_F(FleetRun, FleetWideKnobsComeFromTheClassesPresetsWhenTheyAgree) {
  const test::CliResult r = run(R"({"server": {"kind": "batching"}, "batching": {"fleet": [
             {"name": "h100", "preset": "h100-llama-3.1-70b"},
             {"name": "l40s", "preset": "l40s-llama-3.1-70b", "max_num_seqs": 64}]}})",
                                "agree", {"--recorded"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "agree" / "settings.json"));
  // Every preset was derived with asynchronous scheduling on, and the 70B
  // model's KV is 320 KiB a token.
  EXPECT_EQ(settings["batching"]["async_scheduling"], true);
  EXPECT_EQ(settings["batching"]["kv_bytes_per_token"].get<double>(), 327680.0);
  EXPECT_THAT(r.out, HasSubstr("fleet-wide  presets of h100, l40s: block_tokens = 16, "
                               "async_scheduling = true, kv_bytes_per_token = 327680.0"));
  EXPECT_THAT(r.out, HasSubstr("l40s        class: replicas = 1, max_num_seqs = 64"));
  EXPECT_THAT(r.out, HasSubstr("l40s        preset l40s-llama-3.1-70b: max_num_batched_tokens"));
  EXPECT_THAT(r.out, HasSubstr("h100        default: step_expert_s = 0.0"));

  // The run reproduces from its own settings.json, which now sets them.
  const test::CliResult again =
      test::run_cli({"run", "--settings", (dir_ / "agree" / "settings.json").string(), "--plots",
                     "none", "--output", (dir_ / "again").string()});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(test::read_file(dir_ / "agree" / "requests.csv"),
            test::read_file(dir_ / "again" / "requests.csv"));
}

TEST_F(FleetRun, TheSectionOrAFlagOverridesThePresetsFleetWideKnobs) {
  const std::string fleet = R"({"server": {"kind": "batching"}, "batching": {FIRST "fleet": [
             {"name": "h100", "preset": "h100-llama-3.1-8b"}]}})";
  std::string in_file = fleet;
  in_file.replace(in_file.find("FIRST"), 5, R"("async_scheduling": false,)");
  const test::CliResult file = run(in_file, "section", {"--recorded"});
  ASSERT_EQ(file.status, 0) << file.err;
  EXPECT_EQ(nlohmann::json::parse(test::read_file(dir_ / "section" /
                                                  "settings.json"))["batching"]["async_scheduling"],
            false);
  EXPECT_THAT(file.out, HasSubstr("section.json: async_scheduling = false"));
  std::string plain = fleet;
  plain.replace(plain.find("FIRST"), 5, "");
  const test::CliResult flag = run(plain, "flag", {"--recorded", "--async-scheduling", "off"});
  ASSERT_EQ(flag.status, 0) << flag.err;
  EXPECT_EQ(nlohmann::json::parse(
                test::read_file(dir_ / "flag" / "settings.json"))["batching"]["async_scheduling"],
            false);
  EXPECT_THAT(flag.out, HasSubstr("--async-scheduling: async_scheduling = false"));
}

TEST_F(FleetRun, PresetsThatDisagreeOnAFleetWideKnobAreRefused) {
  const test::CliResult r = run(R"({"server": {"kind": "batching"}, "batching": {"fleet": [
             {"name": "big", "preset": "h100-llama-3.1-70b"},
             {"name": "small", "preset": "l40s-llama-3.1-8b"}]}})",
                                "disagree", {"--recorded"});
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr("disagree.json: batching.fleet[0] (big, preset h100-llama-3.1-70b), "
                               "batching.fleet[1] (small, preset l40s-llama-3.1-8b): "
                               "batching.kv_bytes_per_token: the classes' presets disagree"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "disagree" / "summary.json"));
  // Set for the whole fleet, the two run (the section's value is the fleet's).
  const test::CliResult set = run(R"({"server": {"kind": "batching"}, "batching": {
             "kv_bytes_per_token": 327680, "fleet": [
             {"name": "big", "preset": "h100-llama-3.1-70b"},
             {"name": "small", "preset": "l40s-llama-3.1-8b"}]}})",
                                  "set", {"--recorded"});
  EXPECT_EQ(set.status, 0) << set.err;
}

// A class's preset's max_model_len stands in for 131072 in its term of the
// fleet's default max_model_len (Qwen3-32B's 40,960 tokens).
TEST_F(FleetRun, AClassPresetsModelLengthBoundsTheFleets) {
  const test::CliResult r = run(R"({"server": {"kind": "batching"}, "batching": {"fleet": [
             {"name": "q", "preset": "h100-qwen3-32b"}]}})",
                                "len", {"--recorded"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("the least over the classes: max_model_len = 40960"));
}

// A run's preset sets the batching section (section 13.1): beside a fleet the
// console says so, and the classes show what they took from it.
TEST_F(FleetRun, ARunsPresetBesideAFleetIsSaidToSetTheSection) {
  const test::CliResult r = run(R"({"server": {"kind": "batching"}, "batching": {"fleet": [
             {"name": "plain"}]}})",
                                "run_preset", {"--recorded", "--preset", "h100-llama-3.1-8b"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("; --preset h100-llama-3.1-8b sets the section."));
  EXPECT_THAT(r.out, HasSubstr("plain       --preset h100-llama-3.1-8b: max_num_seqs = 1024"));
}

}  // namespace
}  // namespace infersim
