// Golden run folders: each folder under tests/golden/ holds a small hand-made
// trace, the flags of its run (`args`, one per line), the requests.csv and
// summary.json the run must write, byte for byte, and a README working out
// the key figures from MODEL.md by hand. tests/golden/regenerate rewrites the
// files on purpose; the hand figures (GoldenByHand, below) do not move with
// them, so a wrong answer written into the files still fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace infersim {
namespace {
namespace fs = std::filesystem;

fs::path golden_dir(const std::string& name) {
  return test::source_dir() / "tests" / "golden" / name;
}

std::vector<std::string> cases() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(golden_dir(""))) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Runs a case as tests/golden/regenerate does; the run folder, or empty on failure.
fs::path run_case(const std::string& name) {
  const fs::path golden = golden_dir(name);
  const fs::path out = test::fresh_dir(name) / "run";
  std::vector<std::string> args = {
      "run", "--recorded", "--trace", (golden / "trace.csv").string(), "--output", out.string()};
  std::istringstream lines(test::read_file(golden / "args"));
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) args.push_back(line);
  }
  const auto r = test::run_cli(args);
  EXPECT_EQ(r.status, 0) << r.err;
  return r.status == 0 ? out : fs::path();
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, RunWritesTheGoldenFiles) {
  const fs::path out = run_case(GetParam());
  ASSERT_FALSE(out.empty());
  for (const char* file : {"requests.csv", "summary.json"}) {
    EXPECT_EQ(test::read_file(out / file), test::read_file(golden_dir(GetParam()) / file))
        << GetParam() << "/" << file
        << " differs; if the change is meant, run tests/golden/regenerate";
  }
}

TEST_P(Golden, HasAHandDerivation) {
  EXPECT_TRUE(fs::exists(golden_dir(GetParam()) / "README.md"))
      << "a golden case says how its figures follow from MODEL.md";
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param; });

TEST(GoldenCases, ThereAreSome) {
  EXPECT_GE(cases().size(), 3u);
}

// One row of requests.csv as worked out by hand: times in nanoseconds.
struct HandRequest {
  int device;
  std::int64_t arrival;
  int context_tokens;
  int generated_tokens;
  std::int64_t server_arrival, start, finish, response, wait, ttft, makespan, budget;
  int met;
};

// A summary figure worked out by hand.
struct HandFigure {
  const char* key;
  double value;
};

// Runs the case and compares every request's row, exactly, and each figure,
// to 1e-12 relative (the hand figures carry 12 or more significant digits;
// the smallest thing they must catch, the radio's energy, is 1e-5 Wh).
void expect_hand_figures(const std::string& name, const std::vector<HandRequest>& requests,
                         const std::vector<HandFigure>& figures) {
  const fs::path out = run_case(name);
  ASSERT_FALSE(out.empty());
  const auto rows = test::read_csv(out / "requests.csv");
  ASSERT_EQ(rows.size(), requests.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    SCOPED_TRACE("request " + std::to_string(k));
    const auto& row = rows[k];
    const HandRequest& hand = requests[k];
    EXPECT_EQ(row.at("id"), std::to_string(k));
    EXPECT_EQ(row.at("device"), std::to_string(hand.device));
    EXPECT_EQ(test::ns_of(row.at("arrival_s")), hand.arrival);
    EXPECT_EQ(row.at("context_tokens"), std::to_string(hand.context_tokens));
    EXPECT_EQ(row.at("generated_tokens"), std::to_string(hand.generated_tokens));
    EXPECT_EQ(test::ns_of(row.at("server_arrival_s")), hand.server_arrival);
    EXPECT_EQ(test::ns_of(row.at("start_s")), hand.start);
    EXPECT_EQ(test::ns_of(row.at("finish_s")), hand.finish);
    EXPECT_EQ(test::ns_of(row.at("response_s")), hand.response);
    EXPECT_EQ(test::ns_of(row.at("wait_s")), hand.wait);
    EXPECT_EQ(test::ns_of(row.at("ttft_s")), hand.ttft);
    EXPECT_EQ(test::ns_of(row.at("makespan_s")), hand.makespan);
    EXPECT_EQ(test::ns_of(row.at("budget_s")), hand.budget);
    EXPECT_EQ(row.at("deadline_met"), std::to_string(hand.met));
  }
  const auto summary = nlohmann::json::parse(test::read_file(out / "summary.json"));
  for (const HandFigure& f : figures) {
    ASSERT_TRUE(summary.contains(f.key) && summary[f.key].is_number()) << f.key;
    EXPECT_NEAR(summary[f.key].get<double>(), f.value, 1e-12 * std::max(1.0, std::fabs(f.value)))
        << f.key;
  }
}

// tests/golden/one_core_queue/README.md works these out in full. Defaults but
// --cores 1 --devices 2: exec = (12c + 2000g) MI / 60000 MIPS, first token
// (12c + 2000) MI, bits 32c up and 32g down, up = 5 ms + bits/1.3 ns (wifi)
// + 10 ms + bits ns (man), down likewise, down latency 15 ms, budget 2 + 0.1g s.
TEST(GoldenByHand, OneCoreQueue) {
  expect_hand_figures(
      "one_core_queue",
      {
          // k0 (0 s, c 1000, g 10): 32000 MI, exec 533 333 333, first token 14000 MI =
          // 233 333 333; up 15e6 + 24615 + 32000, down 15e6 + 246 + 320. Idle core.
          {0, 0, 1000, 10, 15'056'615, 15'056'615, 548'389'948, 563'390'514, 0, 263'389'948,
           563'390'514, 3'000'000'000, 1},
          // k1 (0 s, c 500, g 0): 6000 MI, exec = first token = 100 000 000; up 15e6 + 12308 +
          // 16000; issued after k0 (same instant, later in the file): starts at k0's finish.
          {1, 0, 500, 0, 15'028'308, 548'389'948, 648'389'948, 663'389'948, 533'361'640,
           663'389'948, 663'389'948, 2'000'000'000, 1},
          // k2 (0.5 s, c 2000, g 20): 64000 MI, exec 1 066 666 667, first token 433 333 333;
          // up 15e6 + 49231 + 64000, down 15e6 + 492 + 640; starts at k1's finish.
          {0, 500'000'000, 2000, 20, 515'113'231, 648'389'948, 1'715'056'615, 1'730'057'747,
           133'276'717, 596'723'281, 1'230'057'747, 4'000'000'000, 1},
          // k3 (1 s, c 3000, g 40): 116000 MI, exec 1 933 333 333, first token 633 333 333;
          // up 15e6 + 73846 + 96000, down 15e6 + 985 + 1280; starts at k2's finish.
          {1, 1'000'000'000, 3000, 40, 1'015'169'846, 1'715'056'615, 3'648'389'948, 3'663'392'213,
           699'886'769, 1'363'389'948, 2'663'392'213, 6'000'000'000, 1},
          // k4 (1 s, c 10, g 1): 2120 MI, exec = first token = 35 333 333; up 15e6 + 246 + 320,
          // down 15e6 + 25 + 32; starts at k3's finish: makespan 2.699 s > 2.1 s, missed.
          {0, 1'000'000'000, 10, 1, 1'015'000'566, 3'648'389'948, 3'683'723'281, 3'698'723'338,
           2'633'389'382, 2'698'723'281, 2'698'723'338, 2'100'000'000, 0},
      },
      {
          {"requests", 5},
          {"dropped", 0},
          {"deadline_met", 4},
          {"deadline_missed", 1},
          {"success_rate", 0.8},
          // busy: 533 333 333 + 100 000 000 + 1 066 666 667 + 1 933 333 333 + 35 333 333 ns
          {"compute_s", 3.668666666},
          {"avg_exec_s", 0.7337333332},
          // 0.533361640 + 0.133276717 + 0.699886769 + 2.633389382
          {"waiting_total_s", 3.999914508},
          {"avg_wait_s", 0.7999829016},
          // (0.563390514 + 0.663389948 + 1.230057747 + 2.663392213) / 4
          {"avg_makespan_ok_s", 1.2800576055},
          {"run_length_s", 60},                 // ceil(1 s / 60 s) minutes
          {"end_s", 60},                        // max(60, 3.698723338)
          {"utilization", 0.0611444444333333},  // 3.668666666 / (1 × 60)
          {"traffic_mb",
           0.026324},  // (208 320 + 2272) bits / 8 / 1e6
                       // (420 × 60 + 300 × 3.668666666) / 3600 = 7.3057222221666…, plus the radio
                       // (208 320 × 283.17 + 2272 × 137.01) nJ / 3600 = 0.0000164725725…
          {"energy_wh", 7.3057386947392},
          // sorted makespans 0.563390514 0.663389948 1.230057747 2.663392213 2.698723338, at 4q
          {"makespan_p50_s", 1.230057747},
          {"makespan_p90_s", 2.684590888},  // v3 + 0.6 × 0.035331125
          {"makespan_p99_s", 2.697310093},  // v3 + 0.96 × 0.035331125
                                            // sorted TTFTs 0.263389948 0.596723281
                                            // 0.663389948 1.363389948 2.698723281
          {"ttft_p50_s", 0.663389948},
          {"ttft_p90_s", 2.1645899478},  // v3 + 0.6 × 1.335333333
          {"ttft_p99_s",
           2.64530994768},  // v3 + 0.96 × 1.335333333
                            // sorted waits 0 0.133276717 0.533361640 0.699886769 2.633389382
          {"wait_p50_s", 0.53336164},
          {"wait_p99_s", 2.55604927748},  // v3 + 0.96 × 1.933502613
      });
}

// tests/golden/equal_arrivals_many_cores/README.md. Six requests at offset 0
// (timestamps 12:00:00.1234567), --cores 4 --decode-budget 0.05: exec and
// bits as above, budget 2 + 0.05g s; T = 0 (the last arrival, 0, rounded up
// to a minute), so end is the last response.
TEST(GoldenByHand, EqualArrivalsManyCores) {
  expect_hand_figures(
      "equal_arrivals_many_cores",
      {
          // k0 (4808, 10): 77696 MI, exec 1 294 933 333, first token 59696 MI = 994 933 333;
          // up 15e6 + 118351 + 153856, down 15e6 + 246 + 320. Core 1.
          {0, 0, 4808, 10, 15'272'207, 15'272'207, 1'310'205'540, 1'325'206'106, 0, 1'025'205'540,
           1'325'206'106, 2'500'000'000, 1},
          // k1 (3180, 8): 54160 MI, exec 902 666 667, first token 669 333 333; up 15e6 + 78277 +
          // 101760, down 15e6 + 197 + 256. Core 2.
          {1, 0, 3180, 8, 15'180'037, 15'180'037, 917'846'704, 932'847'157, 0, 699'513'370,
           932'847'157, 2'400'000'000, 1},
          // k2 (120, 300): 601440 MI, exec 10 024 000 000, first token 57 333 333; up 15e6 +
          // 2954 + 3840, down 15e6 + 7385 + 9600. Core 3.
          {2, 0, 120, 300, 15'006'794, 15'006'794, 10'039'006'794, 10'054'023'779, 0, 87'340'127,
           10'054'023'779, 17'000'000'000, 1},
          // k3 (0, 0): nothing to run or send: core 4 free again at 0.015 s.
          {3, 0, 0, 0, 15'000'000, 15'000'000, 15'000'000, 30'000'000, 0, 30'000'000, 30'000'000,
           2'000'000'000, 1},
          // k4 (7000, 2): 88000 MI, exec 1 466 666 667, first token 1 433 333 333; up 15e6 +
          // 172308 + 224000, down 15e6 + 49 + 64. Takes core 4 (free at 0.015 s) at once.
          {4, 0, 7000, 2, 15'396'308, 15'396'308, 1'482'062'975, 1'497'063'088, 0, 1'463'729'641,
           1'497'063'088, 2'100'000'000, 1},
          // k5 (50, 50): 100600 MI, exec 1 676 666 667, first token 43 333 333; up = down = 15e6 +
          // 1231 + 1600. Cores free at 1.310, 0.918 (k1), 10.039, 1.482: waits for k1's.
          {5, 0, 50, 50, 15'002'831, 917'846'704, 2'594'513'371, 2'609'516'202, 902'843'873,
           976'180'037, 2'609'516'202, 4'500'000'000, 1},
      },
      {
          {"requests", 6},
          {"dropped", 0},
          {"deadline_met", 6},
          {"deadline_missed", 0},
          {"success_rate", 1},
          {"compute_s", 15.364933334},  // Σ exec
          {"avg_exec_s", 2.5608222223333333},
          {"waiting_total_s", 0.902843873},
          {"avg_wait_s", 0.1504739788333333},
          {"avg_makespan_ok_s", 2.741442722},  // 16.448656332 / 6
          {"run_length_s", 0},
          {"end_s", 10.054023779},
          {"utilization", 0.38205930460630555},  // 15.364933334 / (4 × 10.054023779)
          {"traffic_mb",
           0.062112},  // (485 056 + 11 840) / 8 / 1e6
                       // (420 × 10.054023779 + 300 × 15.364933334 / 4) / 3600 = 1.493072218675,
                       // plus (485 056 × 283.17 + 11 840 × 137.01) nJ / 3600 = 0.0000386043072
          {"energy_wh", 1.4931108229822},
          // sorted makespans 0.03 0.932847157 1.325206106 1.497063088 2.609516202 10.054023779,
          // at 5q
          {"makespan_p50_s", 1.411134597},    // (v2 + v3) / 2
          {"makespan_p90_s", 6.3317699905},   // v4 + 0.5 × 7.444507577
          {"makespan_p99_s", 9.68179840015},  // v4 + 0.95 × 7.444507577
                                              // sorted TTFTs 0.03 0.087340127 0.699513370
                                              // 0.976180037 1.025205540 1.463729641
          {"ttft_p50_s", 0.8378467035},
          {"ttft_p90_s", 1.2444675905},   // v4 + 0.5 × 0.438524101
          {"ttft_p99_s", 1.44180343595},  // v4 + 0.95 × 0.438524101
                                          // waits: five 0, then 0.902843873
          {"wait_p50_s", 0},
          {"wait_p99_s", 0.85770167935},
      });
}

// tests/golden/second_clock_with_drops/README.md. Offsets 0, 0.5200399,
// 0.52004, 5.22004 and 86.02004 s on the one-second clock: 0, 1, 1, 5, 86 s;
// --duration 60 drops the last. --cores 2 --mi-per-generated-token 6000:
// exec (12c + 6000g) MI, first token (12c + 6000) MI. Nobody waits.
TEST(GoldenByHand, SecondClockWithDrops) {
  expect_hand_figures(
      "second_clock_with_drops",
      {
          // k0 (100, 5): 31200 MI, exec 0.52 s, first token 7200 MI = 0.12 s; up 15e6 + 2462 +
          // 3200, down 15e6 + 123 + 160.
          {0, 0, 100, 5, 15'005'662, 15'005'662, 535'005'662, 550'005'945, 0, 150'005'662,
           550'005'945, 2'500'000'000, 1},
          // k1, k2 (2000, 20) at 1 s: 144000 MI, exec 2.4 s, first token 0.5 s; up 15e6 + 49231 +
          // 64000, down 15e6 + 492 + 640; one core each.
          {1, 1'000'000'000, 2000, 20, 1'015'113'231, 1'015'113'231, 3'415'113'231, 3'430'114'363,
           0, 530'113'231, 2'430'114'363, 4'000'000'000, 1},
          {2, 1'000'000'000, 2000, 20, 1'015'113'231, 1'015'113'231, 3'415'113'231, 3'430'114'363,
           0, 530'113'231, 2'430'114'363, 4'000'000'000, 1},
          // k3 (800, 100) at 5 s: 609600 MI, exec 10.16 s, first token 15600 MI = 0.26 s; up
          // 15e6 + 19692 + 25600, down 15e6 + 2462 + 3200.
          {3, 5'000'000'000, 800, 100, 5'015'045'292, 5'015'045'292, 15'175'045'292, 15'190'050'954,
           0, 290'045'292, 10'190'050'954, 12'000'000'000, 1},
      },
      {
          {"requests", 4},
          {"dropped", 1},
          {"deadline_met", 4},
          {"deadline_missed", 0},
          {"success_rate", 1},
          {"compute_s", 15.48},  // 0.52 + 2.4 + 2.4 + 10.16
          {"avg_exec_s", 3.87},
          {"waiting_total_s", 0},
          {"avg_wait_s", 0},
          {"avg_makespan_ok_s", 3.90007140625},  // 15.600285625 / 4
          {"run_length_s", 60},
          {"end_s", 60},
          {"utilization", 0.129},   // 15.48 / (2 × 60)
          {"traffic_mb", 0.02018},  // (156 800 + 4640) / 8 / 1e6
                                    // (420 × 60 + 300 × 15.48 / 2) / 3600 = 7.645, plus (156 800 ×
                                    // 283.17 + 4640 × 137.01) nJ / 3600 = 0.0000125102173…
          {"energy_wh", 7.6450125102173333},
          // sorted makespans 0.550005945 2.430114363 2.430114363 10.190050954, at 3q
          {"makespan_p50_s", 2.430114363},
          {"makespan_p90_s", 7.8620699767},  // v2 + 0.7 × 7.759936591
          {"makespan_p99_s",
           9.95725285627},  // v2 + 0.97 × 7.759936591
                            // sorted TTFTs 0.150005662 0.290045292 0.530113231 0.530113231
          {"ttft_p50_s", 0.4100792615},
          {"ttft_p90_s", 0.530113231},
          {"ttft_p99_s", 0.530113231},
          {"wait_p50_s", 0},
          {"wait_p99_s", 0},
      });
}

}  // namespace
}  // namespace infersim
