// `infersim calibrate` and `run --measured`: the knobs a simulated benchmark
// was made with are recovered from its measurements in every input format,
// bad files fail with one line naming the field, queued data are flagged, and
// a replay with the recovered knobs matches the measurement.
#include "cli/calibrate_command.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "calibration/calibration.hpp"
#include "calibration/measurement_reader.hpp"
#include "core/input_error.hpp"
#include "scenario/scenario.hpp"
#include "test_support.hpp"
#include "trace/trace_reader.hpp"

namespace infersim {
namespace {
using test::fresh_dir;
using test::read_file;
using test::run_cli;
using test::write_file;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kContextMi = 20;
constexpr double kGeneratedMi = 1500;
constexpr double kMips = 60000;
constexpr std::int64_t kEpochNs = 1'759'813'207'532'900'363;

// 200 requests 60 s apart (nothing waits), sizes varied, unless `burst`:
// then the last 40 arrive 1 ms apart on one core and queue.
Trace low_load_trace(bool burst = false) {
  Trace trace;
  trace.format = "test";
  for (std::uint32_t k = 0; k < 200; ++k) {
    TraceRecord r;
    r.offset_ns = burst && k >= 160 ? 160LL * 60'000'000'000 + (k - 160) * 1'000'000LL
                                    : static_cast<std::int64_t>(k) * 60'000'000'000;
    r.context_tokens = 50 + (k * 137) % 3000;
    r.generated_tokens = 1 + (k * 53) % 400;
    trace.records.push_back(r);
  }
  return trace;
}

Settings known_knobs(unsigned cores = 8) {
  Settings s;
  s.mode = "recorded";
  s.mi_per_context_token = kContextMi;
  s.mi_per_generated_token = kGeneratedMi;
  s.mips_per_core = kMips;
  s.cores = cores;
  s.hops.clear();  // TTFT is then the first token's exec time alone
  return s;
}

struct Simulated {
  Trace trace;
  ModeResult result;
};

Simulated simulate_benchmark(bool burst = false) {
  Simulated s;  // default-initialized: the result's request log has an explicit constructor
  s.trace = low_load_trace(burst);
  s.result = test::run_recorded(known_knobs(burst ? 1 : 8), s.trace, true);
  return s;
}

double ttft_s(const Simulated& s, std::size_t k) {
  return (s.result.log[k].first_token - s.result.tasks[k].arrival).seconds();
}
double e2e_s(const Simulated& s, std::size_t k) {
  return (s.result.log[k].response - s.result.tasks[k].arrival).seconds();
}

std::string number(double v) {
  char text[40];
  std::snprintf(text, sizeof(text), "%.17g", v);
  return text;
}

// The simulated requests in aiperf's profile_export.jsonl shape, times in ms,
// with one failed request among them.
std::string aiperf_jsonl(const Simulated& s) {
  std::string out;
  for (std::size_t k = 0; k < s.result.tasks.size(); ++k) {
    nlohmann::ordered_json r;
    r["metadata"]["session_num"] = k;
    r["metadata"]["request_start_ns"] = kEpochNs + s.result.tasks[k].arrival.count_ns();
    r["metadata"]["benchmark_phase"] = "profiling";
    auto& m = r["metrics"];
    m["input_sequence_length"] = {{"value", s.trace.records[k].context_tokens}, {"unit", "tokens"}};
    m["time_to_first_token"] = {{"value", ttft_s(s, k) * 1e3}, {"unit", "ms"}};
    m["request_latency"] = {{"value", e2e_s(s, k) * 1e3}, {"unit", "ms"}};
    m["output_sequence_length"] = {{"value", s.trace.records[k].generated_tokens},
                                   {"unit", "tokens"}};
    r["error"] = nullptr;
    out += r.dump() + "\n";
    if (k == 10) {
      out += R"({"metadata":{"session_num":999,"request_start_ns":1759813207532900363},)"
             R"("metrics":{"error_isl":{"value":550,"unit":"tokens"}},)"
             R"("error":{"code":499,"type":"RequestCancellationError","message":"cancelled"}})"
             "\n";
    }
  }
  return out;
}

std::string vllm_json(const Simulated& s, bool with_e2els) {
  nlohmann::json doc;
  doc["completed"] = s.result.tasks.size();
  for (std::size_t k = 0; k < s.result.tasks.size(); ++k) {
    const auto g = s.trace.records[k].generated_tokens;
    doc["input_lens"].push_back(s.trace.records[k].context_tokens);
    doc["output_lens"].push_back(g);
    doc["ttfts"].push_back(ttft_s(s, k));
    const double gap = g > 1 ? (e2e_s(s, k) - ttft_s(s, k)) / (g - 1) : 0;
    doc["itls"].push_back(std::vector<double>(g > 1 ? g - 1 : 0, gap));
    if (with_e2els) doc["e2els"].push_back(e2e_s(s, k));
    doc["errors"].push_back("");
  }
  return doc.dump();
}

std::string plain_csv(const Simulated& s) {
  std::string out = "input_tokens,output_tokens,ttft_s,e2e_s\n";
  for (std::size_t k = 0; k < s.result.tasks.size(); ++k) {
    out += std::to_string(s.trace.records[k].context_tokens) + "," +
           std::to_string(s.trace.records[k].generated_tokens) + "," + number(ttft_s(s, k)) + "," +
           number(e2e_s(s, k)) + "\n";
  }
  return out;
}

void expect_known_knobs(const Calibration& c) {
  EXPECT_NEAR(c.mi_per_context_token, kContextMi, 0.01 * kContextMi);
  EXPECT_NEAR(c.mi_per_generated_token, kGeneratedMi, 0.01 * kGeneratedMi);
  EXPECT_GT(c.ttft_r2, 0.999999);
  EXPECT_NEAR(c.fixed_overhead_s, 0, 1e-6);
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
}

TEST(Calibrate, RecoversTheKnobsFromAnAiperfExportAndWritesSettingsRunTakes) {
  const Simulated s = simulate_benchmark();
  const auto dir = fresh_dir();
  const auto from = write_file(dir / "profile_export.jsonl", aiperf_jsonl(s));
  const auto settings = dir / "calibrated.json";
  const auto r = run_cli({"calibrate", "--from", from.string(), "--output", settings.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("200 requests, 1 failed and skipped"));
  EXPECT_THAT(r.out, HasSubstr("R²"));
  EXPECT_THAT(r.out, HasSubstr("p99"));
  const auto doc = nlohmann::json::parse(read_file(settings));
  EXPECT_NEAR(doc["tokens"]["mi_per_context_token"].get<double>(), kContextMi, 0.01 * kContextMi);
  EXPECT_NEAR(doc["tokens"]["mi_per_generated_token"].get<double>(), kGeneratedMi,
              0.01 * kGeneratedMi);
  EXPECT_EQ(doc["server"]["mips_per_core"].get<double>(), kMips);
  EXPECT_EQ(doc["server"]["cores"].get<int>(), 8);  // every other key at its default
  EXPECT_TRUE(doc["network"]["hops"].empty());      // no fixed overhead in the data
  Settings applied;
  apply_settings_file(applied, settings.string());
  EXPECT_NEAR(applied.mi_per_generated_token, kGeneratedMi, 0.01 * kGeneratedMi);
}

// Five noisy requests, worked out by hand. TTFT = 0.1 + 0.002 x + e with
// noise e = +0.01, -0.02, 0, +0.03, -0.02 at x = 100 ... 500 input tokens.
// The normal equations of TTFT = a + b x,
//   n a + Sx b = Sy,   Sx a + Sxx b = Sxy,
// with n = 5, Sx = 1500, Sxx = 550 000, Sy = 3.5 (the noise sums to 0) and
// Sxy = 0.1 Sx + 0.002 Sxx + Sum(x e) = 150 + 1100 - 1 = 1249, give
//   D = n Sxx - Sx^2 = 500 000,
//   b = (n Sxy - Sx Sy) / D = (6245 - 5250) / 500 000 = 0.00199,
//   a = (Sy - b Sx) / n = (3.5 - 2.985) / 5 = 0.103.
// Residuals y - a - b x = e - 0.003 + 0.00001 x: 0.008, -0.021, 0, 0.031,
// -0.018; SSR = 0.000064 + 0.000441 + 0 + 0.000961 + 0.000324 = 0.00179.
// SST about the mean 0.7: 0.39^2 + 0.22^2 + 0 + 0.23^2 + 0.38^2 = 0.3978.
// sigma^2 = SSR / (n - 2) = 0.00179 / 3; (X'X)^-1 = [[Sxx, -Sx], [-Sx, n]] / D.
// Decode per token after the first, (e2e - ttft) / (output - 1), on the four
// requests with more than one output token: 0.050, 0.052, 0.047, 0.049.
TEST(Calibrate, NoisyDataFitAsTheNormalEquationsSay) {
  struct Point {
    double input, output, ttft_s, e2e_s;
  };
  const std::vector<Point> points = {{100, 11, 0.31, 0.81},  // decode 0.5 s over 10 tokens: 0.050
                                     {200, 21, 0.48, 1.52},  // 1.04 s over 20: 0.052
                                     {300, 1, 0.70, 0.70},   // one token: no decode time to measure
                                     {400, 41, 0.93, 2.81},  // 1.88 s over 40: 0.047
                                     {500, 6, 1.08, 1.325}};  // 0.245 s over 5: 0.049
  Measurement m;
  m.path = "noisy.csv";
  m.format = "csv";
  for (std::size_t i = 0; i < points.size(); ++i) {
    MeasuredRequest r;
    r.line = i + 2;
    r.input_tokens = points[i].input;
    r.output_tokens = points[i].output;
    r.ttft_s = points[i].ttft_s;
    r.e2e_s = points[i].e2e_s;
    m.requests.push_back(r);
  }
  const Calibration c = calibrate(m, kMips);

  // The normal equations in code, beside the hand figures above.
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const Point& p : points) {
    sx += p.input;
    sy += p.ttft_s;
    sxx += p.input * p.input;
    sxy += p.input * p.ttft_s;
  }
  const double n = 5, d = n * sxx - sx * sx;
  const double b = (n * sxy - sx * sy) / d;
  const double a = (sy - b * sx) / n;
  EXPECT_NEAR(b, 0.00199, 1e-15);
  EXPECT_NEAR(a, 0.103, 1e-14);

  const double sigma2 = 0.00179 / 3;
  EXPECT_EQ(c.requests, 5u);
  EXPECT_NEAR(c.ttft_slope_s, 0.00199, 1e-9);
  EXPECT_NEAR(c.ttft_intercept_s, 0.103, 1e-9);
  EXPECT_NEAR(c.ttft_slope_se_s, std::sqrt(sigma2 * n / d), 1e-9);        // 7.7244e-5
  EXPECT_NEAR(c.ttft_intercept_se_s, std::sqrt(sigma2 * sxx / d), 1e-9);  // 0.025619
  EXPECT_NEAR(c.ttft_slope_se_s, 7.724420150837e-05, 1e-9);
  EXPECT_NEAR(c.ttft_intercept_se_s, 0.025619003363389, 1e-9);
  EXPECT_NEAR(c.ttft_r2, 1 - 0.00179 / 0.3978, 1e-9);  // 0.99550025138
  EXPECT_NEAR(c.residual_sd_s, std::sqrt(sigma2), 1e-9);
  // |residuals| sorted 0, 0.008, 0.018, 0.021, 0.031, at position 4q.
  EXPECT_NEAR(c.residual_p50_s, 0.018, 1e-9);
  EXPECT_NEAR(c.residual_p90_s, 0.021 + 0.6 * 0.010, 1e-9);   // 0.027
  EXPECT_NEAR(c.residual_p99_s, 0.021 + 0.96 * 0.010, 1e-9);  // 0.0306
  // Decode: mean 0.198 / 4 = 0.0495; deviations +-0.0005, +-0.0025: sample
  // variance 1.3e-5 / 3, standard error sqrt(1.3e-5 / 3 / 4) = 0.00104083.
  EXPECT_EQ(c.decode_requests, 4u);
  EXPECT_NEAR(c.decode_s_per_token, 0.0495, 1e-9);
  EXPECT_NEAR(c.decode_se_s, std::sqrt(1.3e-5 / 12), 1e-9);
  // Knobs at 60000 MIPS: 0.00199 s a token = 119.4 MI, 0.0495 s = 2970 MI.
  EXPECT_NEAR(c.mi_per_context_token, 119.4, 1e-9 * 60000);
  EXPECT_NEAR(c.mi_per_context_token_se, std::sqrt(sigma2 * n / d) * 60000, 1e-9 * 60000);
  EXPECT_NEAR(c.mi_per_generated_token, 2970, 1e-9 * 60000);
  EXPECT_NEAR(c.mi_per_generated_token_se, std::sqrt(1.3e-5 / 12) * 60000, 1e-9 * 60000);
  EXPECT_NEAR(c.fixed_overhead_s, 0.103 - 0.0495, 1e-9);  // 0.0535
  // Robust sd: residuals' median 0, median |residual| 0.018: threshold
  // 3 x 1.4826 x 0.018 = 0.080 s, above every residual.
  EXPECT_EQ(c.queued_fraction, 0);
  EXPECT_FALSE(c.mean_concurrency.has_value());  // no start times
  EXPECT_TRUE(c.warnings.empty());
}

TEST(Calibrate, RefusesToOverwriteWithoutForce) {
  const Simulated s = simulate_benchmark();
  const auto dir = fresh_dir();
  const auto from = write_file(dir / "data.csv", plain_csv(s));
  const auto settings = write_file(dir / "calibrated.json", "{}");
  const std::vector<std::string> args = {"calibrate", "--from", from.string(), "--output",
                                         settings.string()};
  const auto refused = run_cli(args);
  EXPECT_EQ(refused.status, 2);
  EXPECT_THAT(refused.err, HasSubstr("--force"));
  EXPECT_EQ(read_file(settings), "{}");
  auto forced = args;
  forced.push_back("--force");
  EXPECT_EQ(run_cli(forced).status, 0);
  EXPECT_NE(read_file(settings), "{}");
}

TEST(Calibrate, MipsPerCoreScalesTheKnobs) {
  const Simulated s = simulate_benchmark();
  Measurement m = read_measurement(write_file(fresh_dir() / "d.csv", plain_csv(s)).string());
  const Calibration c = calibrate(m, 2 * kMips);
  EXPECT_NEAR(c.mi_per_context_token, 2 * kContextMi, 0.02 * kContextMi);
  EXPECT_NEAR(c.mi_per_generated_token, 2 * kGeneratedMi, 0.02 * kGeneratedMi);
  EXPECT_EQ(calibrated_settings(c).mips_per_core, 2 * kMips);
}

TEST(Calibrate, ReadsAiperfSkippingTheFailedRecord) {
  const Simulated s = simulate_benchmark();
  const auto path = write_file(fresh_dir() / "export.jsonl", aiperf_jsonl(s));
  const Measurement m = read_measurement(path.string());
  EXPECT_EQ(m.format, "aiperf");
  EXPECT_EQ(m.requests.size(), 200u);
  EXPECT_EQ(m.skipped_errors, 1u);
  EXPECT_NEAR(m.requests[5].ttft_s, ttft_s(s, 5), 1e-12);
  expect_known_knobs(calibrate(m, kMips));
}

TEST(Calibrate, ReadsVllmWithAndWithoutEndToEndLatencies) {
  const Simulated s = simulate_benchmark();
  const auto dir = fresh_dir();
  for (const bool with_e2els : {true, false}) {
    const auto path =
        write_file(dir / (with_e2els ? "with.json" : "without.json"), vllm_json(s, with_e2els));
    const Measurement m = read_measurement(path.string());
    EXPECT_EQ(m.format, "vllm");
    ASSERT_EQ(m.requests.size(), 200u);
    EXPECT_NEAR(m.requests[7].e2e_s, e2e_s(s, 7), 1e-9) << with_e2els;
    expect_known_knobs(calibrate(m, kMips));
  }
}

TEST(Calibrate, ReadsPlainCsvAndDetectsFormatsByContent) {
  const Simulated s = simulate_benchmark();
  const auto dir = fresh_dir();
  const Measurement m = read_measurement(write_file(dir / "data.csv", plain_csv(s)).string());
  EXPECT_EQ(m.format, "csv");
  expect_known_knobs(calibrate(m, kMips));
  EXPECT_EQ(detect_measurement_format(write_file(dir / "a.txt", aiperf_jsonl(s)).string()),
            "aiperf");
  EXPECT_EQ(detect_measurement_format(write_file(dir / "v.txt", vllm_json(s, true)).string()),
            "vllm");
  EXPECT_EQ(detect_measurement_format(write_file(dir / "c.txt", plain_csv(s)).string()), "csv");
}

// Each bad file: exit status 2 and one line naming the file, line and field.
TEST(Calibrate, BadInputFailsWithOneLineNamingFileLineAndField) {
  const auto dir = fresh_dir();
  const auto out = (dir / "out.json").string();
  auto error_of = [&](const std::string& name, const std::string& content) {
    const auto path = write_file(dir / name, content).string();
    const std::string line =
        test::one_error_line(run_cli({"calibrate", "--from", path, "--output", out}));
    EXPECT_FALSE(std::filesystem::exists(out)) << name;
    return line;
  };
  EXPECT_THAT(error_of("bad.csv",
                       "input_tokens,output_tokens,ttft_s,e2e_s\n10,5,0.1,0.5\n"
                       "20,5,fast,0.5\n"),
              HasSubstr("bad.csv:3: ttft_s: expected a number, got 'fast'"));
  EXPECT_THAT(error_of("empty.csv", ""), HasSubstr("empty.csv:1: empty file"));
  EXPECT_THAT(error_of("header.csv", "input_tokens,output_tokens,ttft_s\n"),
              HasSubstr("header.csv:1: e2e_s: column missing"));
  EXPECT_THAT(error_of("short.csv", "input_tokens,output_tokens,ttft_s,e2e_s\n10,5,0.5,0.1\n"),
              HasSubstr("short.csv:2: e2e_s: expected a latency no shorter than the TTFT"));
  EXPECT_THAT(error_of("few.csv", "input_tokens,output_tokens,ttft_s,e2e_s\n10,5,0.1,0.5\n"),
              HasSubstr("at least 3 requests"));
  EXPECT_THAT(
      error_of(
          "unit.jsonl",
          R"({"metadata":{"request_start_ns":1},"metrics":{"input_sequence_length":{"value":5,"unit":"tokens"},)"
          R"("output_sequence_length":{"value":5,"unit":"tokens"},"time_to_first_token":{"value":5,"unit":"min"},)"
          R"("request_latency":{"value":9,"unit":"ms"}},"error":null})"
          "\n"),
      HasSubstr("unit.jsonl:1: metrics.time_to_first_token.unit: unknown time unit 'min'"));
  EXPECT_THAT(error_of("broken.jsonl", "{\"metadata\": {}, \"metrics\": \n"),
              HasSubstr("broken.jsonl:1: not a JSON object"));
  EXPECT_THAT(error_of("v.json", R"({"input_lens":[1,2,3],"output_lens":[4,5,6]})"),
              HasSubstr("v.json: ttfts: missing"));
  EXPECT_THAT(error_of("same.csv",
                       "input_tokens,output_tokens,ttft_s,e2e_s\n10,5,0.1,0.5\n"
                       "10,5,0.1,0.5\n10,5,0.1,0.5\n"),
              HasSubstr("same input length"));
  const auto r = run_cli({"calibrate", "--from", (dir / "none.csv").string(), "--output", out});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("none.csv: cannot open"));
  EXPECT_EQ(run_cli({"calibrate", "--output", out}).status, 2);
  EXPECT_EQ(run_cli({"calibrate", "--from", "x.csv", "--output", out, "--format", "xml"}).status,
            2);
}

TEST(Calibrate, WarnsWhenTheDataLookQueued) {
  const Simulated queued = simulate_benchmark(true);
  const auto dir = fresh_dir();
  // Without start times, from the TTFTs far above the fit.
  const auto csv = write_file(dir / "queued.csv", plain_csv(queued));
  const auto r =
      run_cli({"calibrate", "--from", csv.string(), "--output", (dir / "a.json").string()});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr("of the requests waited"));
  EXPECT_THAT(r.err, HasSubstr("look queued"));
  // With start times, from the concurrency too.
  const Calibration c = calibrate(
      read_measurement(write_file(dir / "q.jsonl", aiperf_jsonl(queued)).string()), kMips);
  ASSERT_TRUE(c.mean_concurrency.has_value());
  EXPECT_GT(*c.mean_concurrency, 1.5);
  EXPECT_GT(c.queued_fraction, 0.1);
  // The same sizes at low load: no warning.
  const auto calm = write_file(dir / "calm.csv", plain_csv(simulate_benchmark()));
  const auto quiet =
      run_cli({"calibrate", "--from", calm.string(), "--output", (dir / "b.json").string()});
  EXPECT_THAT(quiet.err, Not(HasSubstr("warning")));
}

TEST(Calibrate, AiperfExportIsATrace) {
  const Simulated s = simulate_benchmark();
  const auto path = write_file(fresh_dir() / "profile_export.jsonl", aiperf_jsonl(s));
  TraceSource source;
  source.path = path.string();
  const Trace trace = read_trace(source);
  EXPECT_EQ(trace.format, "aiperf-jsonl");
  EXPECT_EQ(trace.filtered_out, 1u);
  ASSERT_EQ(trace.records.size(), 200u);
  EXPECT_EQ(trace.origin_ns, kEpochNs);
  EXPECT_EQ(trace.records[3].offset_ns, 180'000'000'000);
  EXPECT_EQ(trace.records[3].context_tokens, s.trace.records[3].context_tokens);
  EXPECT_EQ(trace.records[3].generated_tokens, s.trace.records[3].generated_tokens);
}

TEST(Calibrate, RunWithTheCalibratedKnobsMatchesTheMeasurement) {
  const Simulated s = simulate_benchmark();
  const auto dir = fresh_dir();
  const auto measured = write_file(dir / "profile_export.jsonl", aiperf_jsonl(s)).string();
  const auto settings = (dir / "calibrated.json").string();
  ASSERT_EQ(run_cli({"calibrate", "--from", measured, "--output", settings}).status, 0);
  const auto run_dir = dir / "run";
  const auto r = run_cli({"run", "--settings", settings, "--trace", measured, "--recorded",
                          "--measured", measured, "--output", run_dir.string(), "--plots", "none"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ttft_mape="));
  const auto summary = nlohmann::json::parse(read_file(run_dir / "summary.json"));
  ASSERT_TRUE(summary.contains("measured"));
  EXPECT_EQ(summary["measured"]["requests"].get<int>(), 200);
  EXPECT_LT(summary["measured"]["ttft_mape"].get<double>(), 0.5);  // percent
  EXPECT_LT(summary["measured"]["e2e_mape"].get<double>(), 0.5);
  const std::string csv = read_file(run_dir / "measured.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "id,measured_ttft_s,simulated_ttft_s,measured_e2e_s,simulated_e2e_s");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 201);

  // Other knobs: the error shows.
  const auto off = run_cli({"run", "--settings", settings, "--trace", measured, "--recorded",
                            "--mi-per-generated-token", "3000", "--measured", measured, "--output",
                            (dir / "off").string(), "--plots", "none"});
  ASSERT_EQ(off.status, 0) << off.err;
  const auto off_summary = nlohmann::json::parse(read_file(dir / "off" / "summary.json"));
  EXPECT_GT(off_summary["measured"]["e2e_mape"].get<double>(), 50);
}

TEST(Calibrate, MeasuredCountMustMatchTheTrace) {
  const Simulated s = simulate_benchmark();
  const auto dir = fresh_dir();
  const auto trace = write_file(dir / "profile_export.jsonl", aiperf_jsonl(s)).string();
  const auto csv = write_file(dir / "m.csv",
                              "input_tokens,output_tokens,ttft_s,e2e_s\n"
                              "10,5,0.1,0.5\n")
                       .string();
  const auto r = run_cli({"run", "--trace", trace, "--recorded", "--measured", csv, "--output",
                          (dir / "run").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("holds 1 measured requests, the trace replays 200"));
  EXPECT_FALSE(std::filesystem::exists(dir / "run" / "summary.json"));
}

}  // namespace
}  // namespace infersim
