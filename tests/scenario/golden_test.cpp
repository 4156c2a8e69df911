// Golden run folders: each folder under tests/golden/ holds a small hand-made
// trace (one trace.* file: trace.csv, or trace.jsonl for a JSONL format), the
// flags of its run (`args`, one per line), the requests.csv and summary.json
// the run must write, byte for byte, and a README working out the key figures
// by hand from MODEL.md (BATCHING.md for a batching server's case).
// tests/golden/regenerate rewrites the files on purpose; the hand figures
// (GoldenByHand, below) do not move with them, so a wrong answer written into
// the files still fails here.
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

// A case's one trace.* file (trace.csv, or trace.jsonl for a JSONL format);
// empty unless there is exactly one.
fs::path trace_file(const fs::path& golden) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(golden)) {
    if (entry.is_regular_file() && entry.path().stem() == "trace") found.push_back(entry.path());
  }
  return found.size() == 1 ? found[0] : fs::path();
}

// Runs a case as tests/golden/regenerate does; the run folder, or empty on failure.
fs::path run_case(const std::string& name) {
  const fs::path golden = golden_dir(name);
  const fs::path out = test::fresh_dir(name) / "run";
  const fs::path trace = trace_file(golden);
  EXPECT_FALSE(trace.empty()) << name << ": expected one trace.* file";
  if (trace.empty()) return fs::path();
  std::vector<std::string> args = {"run",          "--recorded", "--trace",
                                   trace.string(), "--output",   out.string()};
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

// The columns of a row of requests.csv that every request has, served or
// rejected: id, device, arrival, tokens, server arrival and budget.
void expect_hand_request(const std::map<std::string, std::string>& row, std::size_t k,
                         const HandRequest& hand) {
  EXPECT_EQ(row.at("id"), std::to_string(k));
  EXPECT_EQ(row.at("device"), std::to_string(hand.device));
  EXPECT_EQ(test::ns_of(row.at("arrival_s")), hand.arrival);
  EXPECT_EQ(row.at("context_tokens"), std::to_string(hand.context_tokens));
  EXPECT_EQ(row.at("generated_tokens"), std::to_string(hand.generated_tokens));
  EXPECT_EQ(test::ns_of(row.at("server_arrival_s")), hand.server_arrival);
  EXPECT_EQ(test::ns_of(row.at("budget_s")), hand.budget);
}

// One row of requests.csv against the hand's, every figure exactly.
void expect_hand_row(const std::map<std::string, std::string>& row, std::size_t k,
                     const HandRequest& hand) {
  expect_hand_request(row, k, hand);
  EXPECT_EQ(test::ns_of(row.at("start_s")), hand.start);
  EXPECT_EQ(test::ns_of(row.at("finish_s")), hand.finish);
  EXPECT_EQ(test::ns_of(row.at("response_s")), hand.response);
  EXPECT_EQ(test::ns_of(row.at("wait_s")), hand.wait);
  EXPECT_EQ(test::ns_of(row.at("ttft_s")), hand.ttft);
  EXPECT_EQ(test::ns_of(row.at("makespan_s")), hand.makespan);
  EXPECT_EQ(row.at("deadline_met"), std::to_string(hand.met));
}

void expect_summary_figures(const fs::path& out, const std::vector<HandFigure>& figures) {
  const auto summary = nlohmann::json::parse(test::read_file(out / "summary.json"));
  for (const HandFigure& f : figures) {
    ASSERT_TRUE(summary.contains(f.key) && summary[f.key].is_number()) << f.key;
    EXPECT_NEAR(summary[f.key].get<double>(), f.value, 1e-12 * std::max(1.0, std::fabs(f.value)))
        << f.key;
  }
}

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
    expect_hand_row(rows[k], k, requests[k]);
  }
  expect_summary_figures(out, figures);
}

// A batching server's row (BATCHING.md §2, §7) as worked out by hand: the
// columns above, then its own. A rejected request keeps id, device, arrival,
// tokens, server arrival and budget; its other figures are empty.
struct BatchingColumns {
  bool rejected;
  int replica;
  std::int64_t first_token;  // at the server, ns
  std::int64_t tpot;         // ns; -1: empty (fewer than 2 tokens)
  int prefix_hit_tokens, preemptions;
};
struct HandBatchingRequest {
  HandRequest common;  // start .. makespan ignored when rejected
  BatchingColumns own;
};

void expect_batching_hand_figures(const std::string& name,
                                  const std::vector<HandBatchingRequest>& requests,
                                  const std::vector<HandFigure>& figures) {
  const fs::path out = run_case(name);
  ASSERT_FALSE(out.empty());
  const auto rows = test::read_csv(out / "requests.csv");
  ASSERT_EQ(rows.size(), requests.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    SCOPED_TRACE("request " + std::to_string(k));
    const auto& row = rows[k];
    const BatchingColumns& hand = requests[k].own;
    EXPECT_EQ(row.at("rejected"), hand.rejected ? "1" : "0");
    if (hand.rejected) {
      expect_hand_request(row, k, requests[k].common);
      EXPECT_EQ(row.at("deadline_met"), "0");
      for (const char* empty :
           {"start_s", "finish_s", "response_s", "wait_s", "ttft_s", "makespan_s", "replica",
            "first_token_s", "tpot_s", "prefix_hit_tokens", "preemptions"}) {
        EXPECT_EQ(row.at(empty), "") << empty;
      }
      continue;
    }
    expect_hand_row(row, k, requests[k].common);
    EXPECT_EQ(row.at("replica"), std::to_string(hand.replica));
    EXPECT_EQ(test::ns_of(row.at("first_token_s")), hand.first_token);
    if (hand.tpot < 0) {
      EXPECT_EQ(row.at("tpot_s"), "");
    } else {
      EXPECT_EQ(test::ns_of(row.at("tpot_s")), hand.tpot);
    }
    EXPECT_EQ(row.at("prefix_hit_tokens"), std::to_string(hand.prefix_hit_tokens));
    EXPECT_EQ(row.at("preemptions"), std::to_string(hand.preemptions));
  }
  expect_summary_figures(out, figures);
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

// tests/golden/batching_chunked_preempt/README.md works these out step by
// step. One replica, S 2, Tb 7, B 4, K 5, L 16; a step lasts 10 ms + 100 us P
// + 1 us Q + 1 ms D + 10 us A. Up = 15e6 + llround(32c/1.3) + 32c ns, down
// likewise with 32g, down latency 15 ms, budget 2 + 0.1g s. The steps start
// at 15 000 566 (0's first 7 tokens, 10 728 000 ns), 25 728 566 (0's last 3,
// 1's 4: 10 737 000), 36 465 566 and 48 625 566 (two decodes, 12 160 000 and
// 12 180 000; S stops admission), 60 805 566 (0 needs a 5th block: 1, the
// last running, is preempted; 0 decodes alone, 11 130 000), 71 935 566 (1
// recomputes its 4 + 3 tokens as a prefill, 10 728 000; the budget stops
// admission), 82 663 566 (1 decodes, 2 prefills, 11 490 000; S stops 3),
// 94 153 566 (1 decodes, 3 prefills, 11 500 000), ending at 105 653 566.
TEST(GoldenByHand, BatchingChunkedPreempt) {
  expect_batching_hand_figures(
      "batching_chunked_preempt",
      {
          // k0 (10, 4): up 15e6 + 246 + 320, down 15e6 + 98 + 128. Tokens at the ends of
          // steps 2-5; tpot (71 935 566 - 36 465 566) / 3 = 11 823 333.33.
          {{0, 0, 10, 4, 15'000'566, 15'000'566, 71'935'566, 86'935'792, 0, 51'465'566, 86'935'792,
            2'400'000'000, 1},
           {false, 0, 36'465'566, 11'823'333, 0, 0}},
          // k1 (4, 6) at 5 ms: up 15e6 + 98 + 128, down 15e6 + 148 + 192. Admitted at
          // step 2, preempted at step 5 with 3 tokens, recomputed at step 6; tokens at
          // the ends of steps 2, 3, 4, 6, 7, 8: tpot 69 188 000 / 5.
          {{1, 5'000'000, 4, 6, 20'000'226, 25'728'566, 105'653'566, 120'653'906, 5'728'340,
            46'465'566, 115'653'906, 2'600'000'000, 1},
           {false, 0, 36'465'566, 13'837'600, 0, 1}},
          // k2 (4, 1) at 5 ms, behind k1 (same server arrival, later k); down 15e6 + 25 +
          // 32. Admitted at step 7; its one token ends it.
          {{2, 5'000'000, 4, 1, 20'000'226, 82'663'566, 94'153'566, 109'153'623, 62'663'340,
            104'153'566, 104'153'623, 2'100'000'000, 1},
           {false, 0, 94'153'566, -1, 0, 0}},
          // k3 (4, 0) at 6 ms: admitted at step 8, finishes at its end with no token.
          {{3, 6'000'000, 4, 0, 21'000'226, 94'153'566, 105'653'566, 120'653'566, 73'153'340,
            114'653'566, 114'653'566, 2'000'000'000, 1},
           {false, 0, 105'653'566, -1, 0, 0}},
          // k4 (12, 8) at 50 ms: 12 + 8 > 16, rejected; up 15e6 + 295 + 384.
          {{4, 50'000'000, 12, 8, 65'000'679, 0, 0, 0, 0, 0, 0, 2'800'000'000, 0},
           {true, 0, 0, -1, 0, 0}},
      },
      {
          {"requests", 5},
          {"dropped", 0},
          {"deadline_met", 4},
          {"deadline_missed", 1},
          {"success_rate", 0.8},
          {"rejected", 1},
          // the eight steps: 10 728 000 + 10 737 000 + 12 160 000 + 12 180 000 + 11 130 000 +
          // 10 728 000 + 11 490 000 + 11 500 000 ns
          {"compute_s", 0.090653},
          {"waiting_total_s", 0.14154502},  // 5 728 340 + 62 663 340 + 73 153 340
          {"avg_wait_s",
           0.035386255},  // over the 4 served
                          // (86 935 792 + 115 653 906 + 104 153 623 + 114 653 566) / 4
          {"avg_makespan_ok_s", 0.10534922175},
          {"run_length_s", 60},
          {"end_s", 60},
          {"utilization", 0.0015108833333333333},  // 0.090653 / (1 × 60)
          {"traffic_mb", 0.00018},  // (1088 + 352) bits / 8 / 1e6: the rejected request's up only
                                    // (100 × 60 + 600 × 0.090653) / 3600 + (1088 × 283.17 + 352 ×
                                    // 137.01) nJ / 3600
          {"energy_wh", 1.6817755989768},
          {"steps", 8},
          {"avg_batch_requests", 1.625},  // (1 + 2 + 2 + 2 + 1 + 1 + 2 + 2) / 8
          {"preemptions", 1},
          {"evicted_blocks", 0},
          {"prefix_hit_rate", 0},  // no block ids: 0 / (10 + 4 + 4 + 4 + 7)
          {"kv_peak_utilization",
           1},  // 5 of 5 blocks after step 3's scheduling
                // sorted makespans 86 935 792 104 153 623 114 653 566 115 653 906 ns, at 3q
          {"makespan_p50_s", 0.1094035945},
          {"makespan_p90_s", 0.115353804},  // v2 + 0.7 × 1 000 340
          {"makespan_p99_s",
           0.1156238958},  // v2 + 0.97 × 1 000 340
                           // sorted TTFTs 46 465 566 51 465 566 104 153 566 114 653 566
          {"ttft_p50_s", 0.077809566},
          {"ttft_p90_s", 0.111503566},  // v2 + 0.7 × 10 500 000
          {"ttft_p99_s", 0.114338566},  // v2 + 0.97 × 10 500 000
                                        // sorted waits 0 5 728 340 62 663 340 73 153 340
          {"wait_p50_s", 0.03419584},
          {"wait_p99_s", 0.07283864},  // v2 + 0.97 × 10 490 000
                                       // TPOTs 0.011823333 0.0138376, at q
          {"tpot_p50_s", 0.0128304665},
          {"tpot_p90_s", 0.0136361733},
          {"tpot_p99_s", 0.01381745733},
          // gaps 11 130 000 11 490 000 11 500 000 12 160 000 12 160 000 12 180 000
          // 12 180 000 21 858 000 (k1's recompute), at 7q
          {"itl_p50_s", 0.01216},
          {"itl_p90_s", 0.0150834},   // v6 + 0.3 × 9 678 000
          {"itl_p99_s", 0.02118054},  // v6 + 0.93 × 9 678 000
      });
}

// tests/golden/batching_prefix_two_replicas/README.md. Mooncake ids (512
// tokens each) over B 256: a request's blocks 0-3 are (h0,0) (h0,1) (h1,0)
// (h1,1). Two replicas of K 6, --router prefix; a step lasts 10 ms + 10 us P
// + 1 ms D. Every prompt is 1024 tokens: up 15e6 + 25 206 + 32 768 ns.
TEST(GoldenByHand, BatchingPrefixTwoReplicas) {
  expect_batching_hand_figures(
      "batching_prefix_two_replicas",
      {
          // k0 [1, 2], o 1: replica 0 (no hit anywhere, tie); one 1024-token prefill,
          // 20 240 000 ns; its 4 blocks stay cached. Down 15e6 + 25 + 32.
          {{0, 0, 1024, 1, 15'057'974, 15'057'974, 35'297'974, 50'298'031, 0, 50'297'974,
            50'298'031, 2'100'000'000, 1},
           {false, 0, 35'297'974, -1, 0, 0}},
          // k1 [1, 2], o 3, at 200 ms: 4 blocks cached on replica 0, capped at 1023 div 256 =
          // 3: hit 768 > 0.5 × 1024, replica 0; prefill 256 (12 560 000), two decodes
          // (11 000 000). Down 15e6 + 74 + 96.
          {{1, 200'000'000, 1024, 3, 215'057'974, 215'057'974, 249'617'974, 264'618'144, 0,
            42'617'974, 64'618'144, 2'300'000'000, 1},
           {false, 0, 227'617'974, 11'000'000, 768, 0}},
          // k2 [3, 4], o 1, at the same instant: no hit; loads 1 (k1 waiting) and 0:
          // replica 1; a 1024-token prefill.
          {{2, 200'000'000, 1024, 1, 215'057'974, 215'057'974, 235'297'974, 250'298'031, 0,
            50'297'974, 50'298'031, 2'100'000'000, 1},
           {false, 1, 235'297'974, -1, 0, 0}},
          // k3 [1, 5], o 2, at 225 ms: hit 512 on replica 0 is exactly half its prompt, not
          // more: least-requests (loads 1, 0), replica 1, with no hit there; it evicts
          // (4,1) and (4,0) at admission, (3,1) at its decode. Down 15e6 + 49 + 64.
          {{3, 225'000'000, 1024, 2, 240'057'974, 240'057'974, 271'297'974, 286'298'087, 0,
            50'297'974, 61'298'087, 2'200'000'000, 1},
           {false, 1, 260'297'974, 11'000'000, 0, 0}},
      },
      {
          {"requests", 4},
          {"dropped", 0},
          {"deadline_met", 4},
          {"deadline_missed", 0},
          {"success_rate", 1},
          {"rejected", 0},
          // replica 0: 20 240 000 + 12 560 000 + 11 000 000 × 2; replica 1: 20 240 000 × 2 +
          // 11 000 000
          {"compute_s", 0.10628},
          {"waiting_total_s", 0},
          {"avg_wait_s", 0},
          {"avg_makespan_ok_s", 0.05662807325},  // 226 512 293 / 4 ns
          {"run_length_s", 60},
          {"end_s", 60},
          {"utilization", 0.00088566666666666667},  // 0.10628 / (2 × 60)
          {"traffic_mb", 0.016412},                 // (131 072 + 224) / 8 / 1e6
                                     // (2 × 100 × 60 + 600 × 0.10628) / 3600 + (131 072 × 283.17 +
                                     // 224 × 137.01) nJ / 3600
          {"energy_wh", 3.3510569850968},
          {"steps", 7},
          {"avg_batch_requests", 1},
          {"preemptions", 0},
          {"evicted_blocks", 3},
          {"prefix_hit_rate", 0.1875},  // 768 / (4 × 1024)
          {"kv_peak_utilization", 5.0 / 6},
          // sorted makespans 50 298 031 50 298 031 61 298 087 64 618 144, at 3q
          {"makespan_p50_s", 0.055798059},
          {"makespan_p90_s", 0.0636221269},   // v2 + 0.7 × 3 320 057
          {"makespan_p99_s", 0.06451854229},  // v2 + 0.97 × 3 320 057
          {"ttft_p50_s", 0.050297974},        // 42 617 974, then 50 297 974 three times
          {"ttft_p90_s", 0.050297974},
          {"ttft_p99_s", 0.050297974},
          {"wait_p50_s", 0},
          {"wait_p99_s", 0},
          {"tpot_p50_s", 0.011},
          {"tpot_p99_s", 0.011},
          {"itl_p50_s", 0.011},
          {"itl_p99_s", 0.011},
      });
}

}  // namespace
}  // namespace infersim
