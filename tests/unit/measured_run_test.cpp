// Measured vLLM runs: the reader on the three published runs (counts, a
// request's instants, the engine's knobs, what is assumed), bad folders
// failing with one line naming the file, line and field, and calibrate
// recovering known step costs from a run infersim simulated itself.
#include "calibration/measured_run_reader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>

#include "calibration/batching_calibration.hpp"
#include "calibration/measured_replay.hpp"
#include "core/input_error.hpp"
#include "core/sha256.hpp"
#include "test_support.hpp"
#include "trace/trace_reader.hpp"

namespace infersim {
namespace {
using test::error_of;
using test::fresh_dir;
using test::measured_path;
using test::read_file;
using test::write_file;
using ::testing::HasSubstr;

constexpr const char* kLlama = "RTXPRO6000-Llama-3.1-8B";
constexpr const char* kQwen32 = "RTXPRO6000-Qwen3-32B";
constexpr const char* kMoe = "RTXPRO6000-Qwen3-30B-A3B-Instruct-2507";

Trace workload(const std::string& name) {
  TraceSource source;
  source.path = measured_path("workloads/" + name);
  return read_trace(source);
}

bool has_line(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& line : lines) {
    if (line.find(part) != std::string::npos) return true;
  }
  return false;
}

// Counts and instants read off the files by hand (requests.jsonl's first and
// last lines, timeseries.csv's rows, the summary's first line).
TEST(MeasuredRunReader, LlamaRun) {
  const MeasuredRun run = read_measured_run(measured_path(kLlama));
  ASSERT_EQ(run.requests.size(), 300u);
  EXPECT_EQ(run.unserved, 0u);
  const MeasuredRunRequest& first = run.requests.front();
  EXPECT_EQ(first.line, 1u);
  EXPECT_EQ(first.index, 0u);
  EXPECT_EQ(first.input_tokens, 2358u);
  EXPECT_EQ(first.output_tokens, 531u);
  EXPECT_TRUE(first.served);
  EXPECT_DOUBLE_EQ(first.queued_s, 479748.340626232);
  EXPECT_DOUBLE_EQ(first.scheduled_s, 479748.34067238);
  EXPECT_DOUBLE_EQ(first.first_token_s, 479748.510151426);
  EXPECT_DOUBLE_EQ(first.last_token_s, 479764.054028055);
  ASSERT_TRUE(first.arrival_time_s);
  EXPECT_DOUBLE_EQ(*first.arrival_time_s, 1777142838.338653);
  const MeasuredRunRequest* last = run.by_index(299);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->line, 300u);
  EXPECT_EQ(last->input_tokens, 582u);
  EXPECT_EQ(last->output_tokens, 768u);
  EXPECT_DOUBLE_EQ(last->scheduled_s, 479797.689729947);
  EXPECT_EQ(run.by_index(300), nullptr);

  ASSERT_TRUE(run.engine);
  const MeasuredEngine& e = *run.engine;
  EXPECT_EQ(e.model, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(e.vllm_version, "0.19.0");
  EXPECT_EQ(e.tensor_parallel_size, 1);
  EXPECT_EQ(e.data_parallel_size, 1);
  EXPECT_EQ(e.enable_expert_parallel, false);
  EXPECT_EQ(e.max_num_seqs, 128);
  EXPECT_EQ(e.max_num_batched_tokens, 2048);
  EXPECT_FALSE(e.max_model_len);  // null in the file
  EXPECT_FALSE(e.num_gpu_blocks);
  EXPECT_FALSE(e.async_scheduling);
  EXPECT_EQ(e.dataset_hash,
            std::string("05e48b32da530d4a3dd77f3d47c6fe694ac8308d611aa088e38bb10fba2b3b3a"));
  EXPECT_EQ(e.tick_seconds, 1.0);

  ASSERT_EQ(run.ticks.size(), 67u);
  EXPECT_DOUBLE_EQ(run.ticks[0].t_s, 1.0);
  EXPECT_DOUBLE_EQ(run.ticks[0].running, 9);
  EXPECT_DOUBLE_EQ(run.ticks[1].waiting, 1);
  EXPECT_EQ(run.ticks[1].prompt_throughput, 10012.0);
  ASSERT_EQ(run.published.size(), 15u);
  EXPECT_EQ(run.published[0].metric, "TTFT");
  EXPECT_EQ(run.published[0].statistic, "Mean");
  EXPECT_DOUBLE_EQ(run.published[0].measured_ms, 7097.2);
  EXPECT_DOUBLE_EQ(run.published[0].simulated_ms, 6815.7);
  EXPECT_EQ(run.published[14].statistic, "P99");
  EXPECT_DOUBLE_EQ(run.published[14].simulated_ms, 37027.3);
}

TEST(MeasuredRunReader, QwenRuns) {
  const MeasuredRun dense = read_measured_run(measured_path(kQwen32));
  EXPECT_EQ(dense.requests.size(), 300u);
  EXPECT_EQ(dense.ticks.size(), 160u);
  ASSERT_TRUE(dense.engine);
  EXPECT_EQ(dense.engine->tensor_parallel_size, 2);
  EXPECT_EQ(dense.engine->data_parallel_size, 1);
  EXPECT_DOUBLE_EQ(dense.by_index(1)->queued_s, 479895.000621165);
  EXPECT_DOUBLE_EQ(dense.by_index(299)->first_token_s, 480018.452484678);

  const MeasuredRun moe = read_measured_run(measured_path(kMoe));
  EXPECT_EQ(moe.requests.size(), 300u);
  EXPECT_EQ(moe.ticks.size(), 65u);
  ASSERT_TRUE(moe.engine);
  EXPECT_EQ(moe.engine->data_parallel_size, 2);
  EXPECT_EQ(moe.engine->enable_expert_parallel, true);
  EXPECT_EQ(moe.engine->model, "Qwen/Qwen3-30B-A3B-Instruct-2507");
  EXPECT_DOUBLE_EQ(moe.by_index(299)->last_token_s, 481858.906949708);
  // Two engines: timeseries.csv sums their running requests, 2 x 128 at most.
  double most = 0;
  for (const MeasuredTick& t : moe.ticks)
    most = std::max(most, t.running);
  EXPECT_DOUBLE_EQ(most, 256);
}

// One request a line, as requests.jsonl holds them.
std::string request_line(int i, int input, int output, double queued) {
  char text[400];
  std::snprintf(text, sizeof(text),
                "{\"request_id\": \"bench-%d\", \"input_toks\": %d, \"output_toks\": %d, "
                "\"arrival_time\": null, \"queued_ts\": %.9f, \"scheduled_ts\": %.9f, "
                "\"first_token_ts\": %.9f, \"last_token_ts\": %.9f}\n",
                i, input, output, queued, queued + 0.001, queued + 0.1, queued + 1.0);
  return text;
}

// The knobs the replay takes from meta.json, and what it says it assumed.
TEST(MeasuredRunReader, EngineSetupSaysWhatItAssumes) {
  const MeasuredRun dense = read_measured_run(measured_path(kLlama));
  const EngineSetup e = engine_setup(dense, BatchingKnobs{}, {});
  EXPECT_EQ(e.knobs.max_num_seqs, 128);
  EXPECT_EQ(e.knobs.max_num_batched_tokens, 2048);
  EXPECT_EQ(e.knobs.replicas, 1);
  EXPECT_FALSE(e.knobs.lockstep);
  EXPECT_TRUE(e.knobs.async_scheduling);
  EXPECT_TRUE(e.knobs.prefix_caching);
  EXPECT_TRUE(e.knobs.reserve_full_prompt);
  EXPECT_EQ(e.knobs.block_tokens, 16);
  EXPECT_FALSE(e.kv_blocks_known);
  EXPECT_TRUE(has_line(e.facts, "max_num_seqs = 128 (meta.json)"));
  EXPECT_TRUE(has_line(e.assumptions, "async_scheduling = on"));
  EXPECT_TRUE(has_line(e.assumptions, "kv_blocks: not recorded"));
  EXPECT_TRUE(has_line(e.assumptions, "block_tokens = 16"));
  EXPECT_TRUE(has_line(e.assumptions, "prefix_caching = on"));

  const MeasuredRun moe = read_measured_run(measured_path(kMoe));
  const EngineSetup m = engine_setup(moe, BatchingKnobs{}, {});
  EXPECT_EQ(m.knobs.replicas, 2);
  EXPECT_TRUE(m.knobs.lockstep);
  EXPECT_TRUE(has_line(m.facts, "lockstep = on"));
  EXPECT_TRUE(has_line(m.assumptions, "router = "));

  // A knob given by a flag keeps its value and is said to be given.
  BatchingKnobs base;
  base.async_scheduling = false;
  const EngineSetup g =
      engine_setup(dense, base, {.flags = {"batching.async_scheduling"}, .files = {}});
  EXPECT_FALSE(g.knobs.async_scheduling);
  EXPECT_TRUE(has_line(g.facts, "async_scheduling = off (flag)"));
}

// A flag over meta.json over a settings file or preset over vLLM's default,
// each said with where it came from: a preset's 1024 sequences do not
// replace the 128 the run recorded, while its KV blocks (not recorded) stand.
TEST(MeasuredRunReader, TheRunsOwnKnobsComeBeforeASettingsFilesAndAFlagBeforeBoth) {
  const MeasuredRun dense = read_measured_run(measured_path(kLlama));
  BatchingKnobs preset;
  preset.max_num_seqs = 1024;
  preset.max_num_batched_tokens = 8192;
  preset.kv_blocks = 34881;
  preset.max_model_len = 131072;
  preset.async_scheduling = true;
  const GivenKnobs files{
      .flags = {},
      .files = {"batching.max_num_seqs", "batching.max_num_batched_tokens", "batching.kv_blocks",
                "batching.max_model_len", "batching.async_scheduling"}};
  const EngineSetup e = engine_setup(dense, preset, files);
  EXPECT_EQ(e.knobs.max_num_seqs, 128);
  EXPECT_EQ(e.knobs.max_num_batched_tokens, 2048);
  EXPECT_EQ(e.knobs.kv_blocks, 34881);
  EXPECT_TRUE(e.kv_blocks_known);
  EXPECT_TRUE(has_line(e.facts, "max_num_seqs = 128 (meta.json; the settings' 1024 set aside)"));
  EXPECT_TRUE(
      has_line(e.facts, "kv_blocks = 34881 (settings file or preset; not recorded in meta.json)"));
  EXPECT_TRUE(has_line(
      e.facts, "async_scheduling = on (settings file or preset; not recorded in meta.json)"));
  // A flag wins over both, and says what it set aside.
  BatchingKnobs flagged = preset;
  flagged.max_num_seqs = 64;
  GivenKnobs with_flag = files;
  with_flag.flags.insert("batching.max_num_seqs");
  const EngineSetup f = engine_setup(dense, flagged, with_flag);
  EXPECT_EQ(f.knobs.max_num_seqs, 64);
  EXPECT_TRUE(has_line(f.facts, "max_num_seqs = 64 (flag; meta.json's 128 set aside)"));
}

// meta.json that contradicts itself, or holds a wrong type where a number
// goes, is refused naming meta.json and the key, never a settings key.
TEST(MeasuredRunReader, AMalformedMetaJsonIsRefusedNamingItsKey) {
  const struct {
    const char* name;
    const char* engine_kwargs;
    const char* error;
  } cases[] = {
      {"a word for a count", R"("max_num_seqs": "lots", "max_num_batched_tokens": 2048)",
       "meta.json: engine_kwargs.max_num_seqs: expected a whole number, got \"lots\""},
      {"more sequences than batched tokens",
       R"("max_num_seqs": 4096, "max_num_batched_tokens": 2048)",
       "meta.json: max_num_seqs, max_num_batched_tokens: max_num_seqs 4096 exceeds "
       "max_num_batched_tokens 2048"},
      {"a negative count", R"("max_num_seqs": -3)", "meta.json: max_num_seqs: must be at least 1"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto dir = fresh_dir("meta");
    write_file(dir / "requests.jsonl", request_line(0, 10, 5, 100.0));
    write_file(dir / "meta.json", std::string("{\"engine_kwargs\": {") + c.engine_kwargs + "}}\n");
    EXPECT_THAT(error_of([&] { engine_setup(read_measured_run(dir), BatchingKnobs{}, {}); }),
                HasSubstr(c.error));
  }
  // A value the writer could not record ("<type>") is not recorded.
  const auto dir = fresh_dir("meta");
  write_file(dir / "requests.jsonl", request_line(0, 10, 5, 100.0));
  write_file(dir / "meta.json", "{\"engine_kwargs\": {\"max_num_seqs\": \"<LazyInt>\"}}\n");
  const EngineSetup e = engine_setup(read_measured_run(dir), BatchingKnobs{}, {});
  EXPECT_TRUE(has_line(e.assumptions, "max_num_seqs = 256"));
}

TEST(MeasuredRunReader, BadFoldersNameFileLineAndField) {
  const auto dir = fresh_dir("bad");
  // No requests.jsonl at all.
  EXPECT_THAT(error_of([&] { read_measured_run(dir); }), HasSubstr("requests.jsonl"));

  // A malformed second line: input_toks is a string.
  write_file(dir / "requests.jsonl",
             request_line(0, 10, 5, 100.0) +
                 "{\"request_id\": \"bench-1\", \"input_toks\": \"ten\", \"output_toks\": 5, "
                 "\"queued_ts\": 1, \"scheduled_ts\": 1, \"first_token_ts\": 1, "
                 "\"last_token_ts\": 1}\n");
  EXPECT_THAT(error_of([&] { read_measured_run(dir); }),
              HasSubstr((dir / "requests.jsonl").string() + ":2: input_toks:"));

  // A request id that is not bench-N.
  write_file(dir / "requests.jsonl", request_line(0, 10, 5, 100.0) +
                                         "{\"request_id\": \"chat-7\", \"input_toks\": 3, "
                                         "\"output_toks\": 5, \"queued_ts\": 1, "
                                         "\"scheduled_ts\": 1, \"first_token_ts\": 1, "
                                         "\"last_token_ts\": 1}\n");
  EXPECT_THAT(error_of([&] { read_measured_run(dir); }),
              HasSubstr((dir / "requests.jsonl").string() + ":2: request_id:"));

  // Instants going back: the first token before the scheduling.
  write_file(dir / "requests.jsonl",
             "{\"request_id\": \"bench-0\", \"input_toks\": 3, \"output_toks\": 5, "
             "\"queued_ts\": 2, \"scheduled_ts\": 3, \"first_token_ts\": 2.5, "
             "\"last_token_ts\": 4}\n");
  EXPECT_THAT(error_of([&] { read_measured_run(dir); }),
              HasSubstr((dir / "requests.jsonl").string() + ":1: first_token_ts:"));

  // meta.json with a count of the wrong type.
  write_file(dir / "requests.jsonl", request_line(0, 10, 5, 100.0));
  write_file(dir / "meta.json", "{\"engine_kwargs\": {\"max_num_seqs\": 1.5}}\n");
  EXPECT_THAT(error_of([&] { read_measured_run(dir); }),
              HasSubstr("meta.json: engine_kwargs.max_num_seqs:"));

  // timeseries.csv without a running column.
  write_file(dir / "meta.json", "{}\n");
  write_file(dir / "timeseries.csv", "t,waiting\n1.0,0\n");
  EXPECT_THAT(error_of([&] { read_measured_run(dir); }),
              HasSubstr("timeseries.csv:1: running: missing from the header"));
}

// The run and its workload must hold the same requests: a workload of
// another length is another workload.
TEST(MeasuredRunReader, WorkloadOfAnotherLengthIsRefused) {
  const auto dir = fresh_dir("count");
  // The Llama workload's first two lines, with the run's first three requests.
  const std::string text =
      read_file(measured_path("workloads/sharegpt-llama-3.1-8b-300-sps10.jsonl"));
  const std::size_t one = text.find('\n');
  const std::size_t two = text.find('\n', one + 1);
  const auto short_workload = write_file(dir / "two.jsonl", text.substr(0, two + 1));
  const MeasuredRun run = read_measured_run(measured_path(kLlama));
  TraceSource source;
  source.path = short_workload.string();
  const Trace two_lines = read_trace(source);
  ASSERT_EQ(two_lines.records.size(), 2u);
  EXPECT_THAT(error_of([&] { prepare_replay(run, two_lines, ""); }),
              HasSubstr("requests.jsonl: request_id: 300 requests, the workload " +
                        short_workload.string() + " 2 lines"));
  // The other dense run's workload has 300 lines but other prompts: its
  // digest is not meta.json's dataset_hash.
  const std::string other = measured_path("workloads/sharegpt-qwen3-32b-300-sps10.jsonl");
  TraceSource qwen;
  qwen.path = other;
  EXPECT_THAT(error_of([&] { prepare_replay(run, read_trace(qwen), sha256_file_hex(other)); }),
              HasSubstr("meta.json: dataset_hash:"));
}

// A run infersim simulated itself, with known step costs, written as a run
// folder and fitted: the fit finds the costs again. The schedule it replays
// is then the one that made the run, so every instant is exact up to the
// nine decimals written, and the coefficients come back within 1 %; so too
// with arrivals taken at the engine's turns (section 10b), the run's
// queued_ts then being the turns that took them.
TEST(MeasuredCalibration, RecoversKnownStepCostsFromASimulatedRun) {
  const MeasuredRun real = read_measured_run(measured_path(kQwen32));
  const Trace work = workload("sharegpt-qwen3-32b-300-sps10.jsonl");
  const MeasuredReplay real_replay = prepare_replay(real, work, "");
  // Taken as they come, at turns, and at turns with the figures term (its
  // rows in the Jacobian, then the search at random around the optimum).
  const std::pair<bool, double> cases[] = {{false, 0}, {true, 0}, {true, 1}};
  for (const auto& [turns, figures_weight] : cases) {
    SCOPED_TRACE(std::string(turns ? "taken at turns" : "taken as they come") +
                 (figures_weight > 0 ? ", with the figures term" : ""));
    BatchingKnobs base;
    base.replay_turns = turns;
    EngineSetup engine = engine_setup(real, base, {});
    engine.knobs.kv_blocks = 20000;
    engine.kv_blocks_known = true;
    const StepCoefficients truth = {0.025, 1.5e-4, 2e-8, 4e-5, 2.5e-7};
    BatchingKnobs knobs = engine.knobs;
    set_coefficients(knobs, truth);
    const Replay made = replay_measured(real_replay, knobs);

    // requests.jsonl with the replay's instants (bench-i in replay order, on
    // an engine clock starting at 1000 s), meta.json with the knobs.
    const auto dir = fresh_dir(turns ? "simulated-turns" : "simulated");
    std::string lines;
    std::size_t moved = 0;
    for (std::size_t k = 0; k < made.requests.size(); ++k) {
      const RequestOutcome r = made.requests[k];
      const MeasuredFigures& m = real_replay.measured[k];
      // The engine stamps queued_ts at the turn that took the request.
      moved += r.queued != r.server_arrival;
      const double arrival = 1000 + r.queued.seconds();
      char text[400];
      std::snprintf(text, sizeof(text),
                    "{\"request_id\": \"bench-%llu\", \"input_toks\": %u, \"output_toks\": %u, "
                    "\"queued_ts\": %.9f, \"scheduled_ts\": %.9f, \"first_token_ts\": %.9f, "
                    "\"last_token_ts\": %.9f}\n",
                    static_cast<unsigned long long>(m.request), m.input_tokens, m.output_tokens,
                    arrival, 1000 + r.start.seconds(), 1000 + r.first_token_server.seconds(),
                    1000 + r.finish.seconds());
      lines += text;
    }
    // Taken at turns, most requests (which arrive while a step runs) move.
    if (turns) {
      EXPECT_GT(moved, 200u);
    } else {
      EXPECT_EQ(moved, 0u);
    }
    write_file(dir / "requests.jsonl", lines);
    write_file(dir / "meta.json",
               "{\"engine_kwargs\": {\"max_num_seqs\": 128, \"max_num_batched_tokens\": 2048, "
               "\"data_parallel_size\": 1}, \"kv_cache\": {\"num_gpu_blocks\": 20001, "
               "\"block_size\": 16}}\n");
    const MeasuredRun simulated = read_measured_run(dir);
    MeasuredReplay replay = prepare_replay(simulated, work, "");
    replay.figures_weight = figures_weight;
    const EngineSetup setup = engine_setup(simulated, base, {});
    ASSERT_TRUE(setup.kv_blocks_known);
    ASSERT_EQ(setup.knobs.kv_blocks, 20000);
    const BatchingFit fit = fit_batching(replay, setup);
    for (std::size_t i = 0; i < kStepTerms; ++i) {
      EXPECT_NEAR(fit.coefficients[i], truth[i], 0.01 * truth[i]) << kStepTermKeys[i];
    }
    EXPECT_LT(fit.loss.total, 1e-8);
    EXPECT_EQ(fit.searched, figures_weight > 0 ? 192 : 0);
  }
}

// The figures term (calibrate --figures-weight): its twelve residuals are
// the table's diffs (TTFT, TPOT, latency: mean, median, p90, p99) scaled by
// sqrt(w / 12), the loss is the residuals' squared norm, and each row of the
// Jacobian is the gradient of its figure: moving every coefficient by a
// small step moves the figure by the row's product with it while the
// schedule stays the same.
TEST(MeasuredCalibration, TheFiguresTermIsTheTablesDiffsAndTheirGradients) {
  const MeasuredRun run = read_measured_run(measured_path(kQwen32));
  MeasuredReplay replay = prepare_replay(run, workload("sharegpt-qwen3-32b-300-sps10.jsonl"), "");
  const EngineSetup engine = engine_setup(run, {}, {});
  BatchingKnobs knobs = engine.knobs;
  knobs.kv_blocks = 20000;
  const StepCoefficients at = {0.02, 1.2e-4, 1e-8, 5e-5, 3e-7};
  set_coefficients(knobs, at);
  const ReplayResiduals plain = replay_residuals(replay, knobs);
  EXPECT_EQ(plain.loss.figures_term, 0);
  replay.figures_weight = 3;
  const ReplayResiduals r = replay_residuals(replay, knobs);
  ASSERT_EQ(r.residuals.size(), plain.residuals.size() + 12);
  EXPECT_EQ(r.loss.ttft_term, plain.loss.ttft_term);
  EXPECT_EQ(r.loss.tpot_term, plain.loss.tpot_term);
  double norm = 0;
  for (const double x : r.residuals)
    norm += x * x;
  EXPECT_NEAR(r.loss.total, norm, 1e-12 * norm);
  EXPECT_GT(r.loss.figures_term, 0);
  EXPECT_NEAR(r.loss.total, plain.loss.total + r.loss.figures_term, 1e-15);

  const Replay result = replay_measured(replay, knobs);
  const MeasuredReport report = compare_replay(replay, result, engine);
  const double scale = std::sqrt(3.0 / 12);
  std::size_t f = plain.residuals.size();
  for (const MeasuredTableRow& row : report.table) {
    if (row.statistic == std::string("P95")) continue;
    SCOPED_TRACE(row.metric + " " + row.statistic);
    EXPECT_NEAR(r.residuals[f], scale * row.diff_pct() / 100, 1e-9);
    ++f;
  }
  ASSERT_EQ(f, r.residuals.size());

  // A step of 1e-5 of each coefficient moves the instants by a few
  // microseconds: the schedule holds, the figures move as their rows say.
  StepCoefficients step{};
  for (std::size_t i = 0; i < kStepTerms; ++i)
    step[i] = 1e-5 * at[i];
  BatchingKnobs moved = knobs;
  StepCoefficients there = at;
  for (std::size_t i = 0; i < kStepTerms; ++i)
    there[i] += step[i];
  set_coefficients(moved, there);
  const ReplayResiduals m = replay_residuals(replay, moved);
  for (std::size_t k = plain.residuals.size(); k < r.residuals.size(); ++k) {
    double predicted = r.residuals[k];
    for (std::size_t i = 0; i < kStepTerms; ++i)
      predicted += r.jacobian[k][i] * step[i];
    EXPECT_NEAR(m.residuals[k], predicted, 2e-3 * std::abs(m.residuals[k] - r.residuals[k]) + 1e-9)
        << "figure " << k - plain.residuals.size();
    EXPECT_NE(m.residuals[k], r.residuals[k]);
  }
}

// A calibrated settings file serves any trace as it is: the format is found
// anew and no digest is pinned; and, the run's GPU given, its KV blocks are
// what that GPU's memory holds, not the run's own peak.
TEST(MeasuredCalibration, ACalibratedFileRunsAnotherTraceAsItIs) {
  const auto dir = fresh_dir("reuse");
  const std::string fit = (dir / "fit.json").string();
  const test::CliResult c =
      test::run_cli({"calibrate", "--server", "batching", "--measured", measured_path(kLlama),
                     "--trace", measured_path("workloads/sharegpt-llama-3.1-8b-300-sps10.jsonl"),
                     "--gpu", "rtx-pro-6000", "--output", fit});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_THAT(c.out, HasSubstr("kv_blocks = 35668 (settings/hardware's rtx-pro-6000"));
  const nlohmann::json settings = nlohmann::json::parse(test::read_file(fit));
  EXPECT_EQ(settings["trace"]["format"], "auto");
  EXPECT_FALSE(settings["trace"].contains("sha256") && !settings["trace"]["sha256"].is_null());
  EXPECT_EQ(settings["batching"]["kv_blocks"], 35668);
  EXPECT_EQ(settings["meta"]["calibrated_on_trace"]["format"], "token-ids-jsonl");
  // A Mooncake trace, with no other flag.
  const std::string mooncake = test::write_file(dir / "mooncake.jsonl",
                                                "{\"timestamp\": 0, \"input_length\": 600, "
                                                "\"output_length\": 20, \"hash_ids\": [1, 2]}\n"
                                                "{\"timestamp\": 500, \"input_length\": 700, "
                                                "\"output_length\": 30, \"hash_ids\": [1, 3]}\n")
                                   .string();
  const test::CliResult r = test::run_cli({"run", "--settings", fit, "--trace", mooncake,
                                           "--output", (dir / "run").string(), "--plots", "none"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("mooncake-jsonl"));
}

// Costs fitted to a measured run are no longer a preset's: calibrating from
// one writes no preset's expected error, and the file runs without its line.
TEST(MeasuredCalibration, AFileFittedFromAPresetCarriesNoPresetError) {
  const auto dir = fresh_dir("from_preset");
  const std::string fit = (dir / "fit.json").string();
  const test::CliResult c = test::run_cli(
      {"calibrate", "--server", "batching", "--preset", "rtx-pro-6000-llama-3.1-8b", "--measured",
       measured_path(kLlama), "--trace",
       measured_path("workloads/sharegpt-llama-3.1-8b-300-sps10.jsonl"), "--output", fit});
  ASSERT_EQ(c.status, 0) << c.err;
  const nlohmann::json settings = nlohmann::json::parse(test::read_file(fit));
  EXPECT_FALSE(settings["meta"].contains("presets_expected_error")) << settings["meta"].dump();
  const test::CliResult r = test::run_cli(
      {"run", "--settings", fit, "--trace",
       measured_path("workloads/sharegpt-llama-3.1-8b-300-sps10.jsonl"), "--recorded", "--output",
       (dir / "run").string(), "--plots", "none", "--per-request", "none"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("Preset ")));
}

// calibrate --figures-weight: a number of 0 or more, for the batching
// server only; the weight is said in the loss and kept in the settings'
// meta.
TEST(MeasuredCalibration, TheFiguresWeightIsANumberOfZeroOrMore) {
  const auto dir = fresh_dir("figures_weight");
  const std::string fit = (dir / "fit.json").string();
  const std::vector<std::string> base = {
      "calibrate",
      "--server",
      "batching",
      "--measured",
      measured_path(kLlama),
      "--trace",
      measured_path("workloads/sharegpt-llama-3.1-8b-300-sps10.jsonl"),
      "--output",
      fit};
  for (const char* bad : {"-1", "x", "nan", "1e999"}) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--figures-weight", bad});
    EXPECT_THAT(test::one_error_line(test::run_cli(args)),
                HasSubstr(std::string("--figures-weight: expected a number of 0 or more, got '") +
                          bad + "'"));
    EXPECT_FALSE(std::filesystem::exists(fit));
  }
  EXPECT_THAT(test::one_error_line(test::run_cli(
                  {"calibrate", "--from", "m.csv", "--output", fit, "--figures-weight", "1"})),
              HasSubstr("--figures-weight: applies to the batching server"));
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--figures-weight", "0.5"});
  const test::CliResult r = test::run_cli(args);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(" + 0.5 x mean ((figure_sim - figure)/figure)^2 over the table's"));
  EXPECT_THAT(r.out, HasSubstr("then 192 points at random around the best"));
  EXPECT_THAT(r.out, HasSubstr(", weight 0.5)"));
  const nlohmann::json settings = nlohmann::json::parse(test::read_file(fit));
  EXPECT_EQ(settings["meta"]["figures_weight"], 0.5);
}

// The run's timeseries.csv holds 0 at every tick for the KV use its stat
// logger did not record: no measured line is drawn for it.
TEST(MeasuredReportPlots, AnUnrecordedKvUseIsNotDrawn) {
  MeasuredReport report;
  MeasuredTickRow tick;
  tick.measured_kv_pct = 0;
  tick.simulated_kv_pct = 12;
  report.ticks = {tick, tick};
  EXPECT_FALSE(kv_use_recorded(report));
  const auto kv_script = [&] {
    for (const PlotScript& p : measured_plot_scripts(report)) {
      if (p.name == "measured_kv") return p.script;
    }
    return std::string();
  };
  EXPECT_THAT(kv_script(), ::testing::Not(HasSubstr("measured_kv_pct")));
  EXPECT_THAT(kv_script(), HasSubstr("simulated_kv_pct"));
  report.ticks[1].measured_kv_pct = 3.5;
  EXPECT_TRUE(kv_use_recorded(report));
  EXPECT_THAT(kv_script(), HasSubstr("measured_kv_pct"));
}

// What a measured replay refuses, each in one line naming the flag or the
// file: a window or a rescaling of the trace (the measured side cannot
// follow), a folder without requests.jsonl; and with no --trace the run's own
// workload is found beside it.
TEST(MeasuredRunCommand, RefusesWhatCannotApplyAndFindsItsWorkload) {
  const std::string run = measured_path(kLlama);
  const std::string workload = measured_path("workloads/sharegpt-llama-3.1-8b-300-sps10.jsonl");
  const auto dir = fresh_dir("measured_cli");
  const std::vector<std::string> base = {"run",        "--server", "batching",
                                         "--measured", run,        "--trace",
                                         workload,     "--output", (dir / "x").string()};
  const std::string cannot =
      ": cannot apply to --measured: the replay takes every measured request at the engine's own "
      "instants";
  const struct {
    std::vector<std::string> extra;
    std::string error;
  } cases[] = {
      {{"--end-offset", "10"}, "--end-offset" + cannot},
      {{"--start-offset", "5"}, "--start-offset" + cannot},
      {{"--speedup", "2"}, "--speedup" + cannot},
      {{"--time-scale", "0.5"}, "--time-scale" + cannot},
      {{"--max-idle-gap", "1"}, "--max-idle-gap" + cannot},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.error);
    std::vector<std::string> args = base;
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    EXPECT_THAT(test::one_error_line(test::run_cli(args)), HasSubstr(c.error));
    EXPECT_FALSE(std::filesystem::exists(dir / "x"));
  }
  const auto empty = fresh_dir("no_requests");
  EXPECT_EQ(test::one_error_line(test::run_cli({"run", "--server", "batching", "--measured",
                                                empty.string(), "--trace", workload})),
            (empty / "requests.jsonl").string() +
                ": missing: a measured run's folder holds requests.jsonl (one request a line), "
                "and meta.json beside it");
  // No --trace: meta.json's dataset_path, beside the run.
  const test::CliResult found =
      test::run_cli({"run", "--server", "batching", "--measured", run, "--output",
                     (dir / "found").string(), "--plots", "none", "--per-request", "none"});
  ASSERT_EQ(found.status, 0) << found.err;
  EXPECT_THAT(found.out, HasSubstr("Workload: " + workload));
  // The validation is in the page and in summary.json, not only in files of
  // its own.
  const nlohmann::json summary = nlohmann::json::parse(read_file(dir / "found" / "summary.json"));
  ASSERT_TRUE(summary.contains("measured"));
  EXPECT_EQ(summary["measured"]["table"].size(), 15u);
  EXPECT_EQ(summary["measured"]["table"][0]["metric"], "TTFT");
  EXPECT_NEAR(summary["measured"]["table"][0]["measured_ms"].get<double>(), 7097.2, 0.05);
  const std::string page = read_file(dir / "found" / "report.html");
  EXPECT_THAT(page, HasSubstr("<section id=\"measured\">"));
  EXPECT_THAT(page, HasSubstr("<th scope=\"row\">TTFT Mean</th><td>7097.2</td>"));
  // A measurement file has no meta.json to say it: --trace is missing.
  const std::string file =
      test::write_file(dir / "m.csv", "input_tokens,output_tokens,ttft_s,e2e_s\n10,2,0.1,0.2\n")
          .string();
  EXPECT_THAT(test::one_error_line(test::run_cli({"run", "--measured", file})),
              HasSubstr("--trace: missing: --measured replays the workload the run was given"));
}

}  // namespace
}  // namespace infersim
