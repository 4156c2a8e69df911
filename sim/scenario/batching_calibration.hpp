// Fitting the batching server's step costs (BATCHING.md section 5: c0, cp, cq,
// cd, ckv) to a measured run, with the simulation in the loop: each iterate
// replays the run, and the loss is over the requests' own TTFT and TPOT
// (report/measured_report.hpp states it). For a fixed schedule every token
// instant is the start of its replica's busy stretch plus the steps' costs
// since, each linear in the coefficients, so the replay gives the exact
// Jacobian of the residuals, not a finite difference across the schedule's
// jumps; a Levenberg-Marquardt iteration with the coefficients held at or
// above 0 then moves them, from several starts. When meta.json does not give
// the KV blocks and the run needed fewer than the unbounded replay used, the
// blocks are scanned too.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/batching_knobs.hpp"
#include "scenario/measured_replay.hpp"
#include "scenario/settings.hpp"

namespace infersim {

// c0, cp, cq, cd, ckv, in that order.
inline constexpr std::size_t kStepCoefficients = 5;
using StepCoefficients = std::array<double, kStepCoefficients>;
inline constexpr const char* kStepCoefficientKeys[kStepCoefficients] = {
    "step_base_s", "step_prefill_token_s", "step_prefill_pair_s", "step_decode_token_s",
    "step_decode_context_s"};

StepCoefficients coefficients_of(const BatchingKnobs& knobs);
void set_coefficients(BatchingKnobs& knobs, const StepCoefficients& c);

struct BatchingFitOptions {
  int max_iterations = 60;  // accepted or refused steps, a start
  // Starts beside the engine's own knobs (and those the measurement
  // suggests): the engine's scaled by these factors.
  std::vector<double> start_scales = {};
  unsigned threads = 1;  // the starts run on this many threads
};

struct FitStartResult {
  StepCoefficients from{};
  StepCoefficients to{};
  double loss = 0;
  int iterations = 0;
};

struct BatchingFit {
  BatchingKnobs knobs;  // the engine's, with the fitted costs (and blocks)
  StepCoefficients coefficients{};
  // From the Jacobian at the fit, taking the residuals as independent: the
  // queue makes them correlated, so read them as a lower bound.
  StepCoefficients standard_errors{};
  MeasuredLoss loss;
  std::vector<FitStartResult> starts;
  int replays = 0;  // simulations run
  double seconds = 0;
  // The KV blocks: what the fit did and found.
  bool kv_fitted = false;
  std::int64_t kv_peak_blocks = 0;  // the most the replay used with no limit
  std::string kv_note;
};

// Fits `engine.knobs`' step costs to the replay; with the KV blocks unknown
// (engine.kv_blocks_known false), also the blocks. Throws InputError when the
// replay has no request to fit.
BatchingFit fit_batching(const MeasuredReplay& replay, const EngineSetup& engine,
                         const BatchingFitOptions& options = {});

// The settings a fit writes: `base` with the batching server, the fitted
// knobs, no network hop (the replay's: the measured instants are the
// engine's), the recorded mode and one-second time-series slices.
Settings batching_fit_settings(const Settings& base, const BatchingFit& fit);

// What `calibrate --server batching` prints before the table: the source and
// its engine (what was read, what was assumed), the loss and its terms, each
// coefficient with its standard error, the starts, the KV blocks, the time.
std::string batching_fit_report(const MeasuredSource& source, const BatchingFit& fit);

// The residual vector and its Jacobian for `knobs` (the loss is the squared
// norm of the residuals): exposed for the tests.
struct ReplayResiduals {
  std::vector<double> residuals;
  std::vector<StepCoefficients> jacobian;  // a row a residual
  MeasuredLoss loss;
};
ReplayResiduals replay_residuals(const MeasuredReplay& replay, const BatchingKnobs& knobs);

}  // namespace infersim
