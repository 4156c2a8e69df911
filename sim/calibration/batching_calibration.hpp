// Fitting the batching server's step costs (BATCHING.md section 5: c0, cp, cq,
// cd, ckv; with the extensions of model/step_cost.hpp, the weights and the
// experts read) to a measured run, with the simulation in the loop: each iterate
// replays the run, and the loss is over the requests' own TTFT and TPOT
// (calibration/measured_report.hpp states it). For a fixed schedule every token
// instant is the start of its replica's busy stretch plus the steps' costs
// since, each linear in the coefficients (the roofline's, on the side of its
// max that binds), so the replay gives the exact
// Jacobian of the residuals, not a finite difference across the schedule's
// jumps; a Levenberg-Marquardt iteration with the coefficients held at or
// above 0 then moves them, from several starts. When meta.json does not give
// the KV blocks and the run needed fewer than the unbounded replay used, the
// blocks are scanned too.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "calibration/hardware_model.hpp"
#include "calibration/measured_replay.hpp"
#include "model/batching_knobs.hpp"
#include "model/step_cost.hpp"
#include "scenario/settings.hpp"

namespace infersim {

// Which of the step cost's coefficients (model/step_cost.hpp) a fit moves;
// the others keep the engine's values.
using StepTermMask = std::array<bool, kStepTerms>;
// Section 5's five; with the roofline, the weights read too (in the sum form
// it is one with c0); for a mixture-of-experts model, the experts read.
StepTermMask fitted_terms(const BatchingKnobs& knobs);

struct BatchingFitOptions {
  int max_iterations = 60;  // accepted or refused steps, a start
  // Starts beside the engine's own knobs (and those the measurement
  // suggests): the engine's scaled by these factors.
  std::vector<double> start_scales = {};
  unsigned threads = 1;  // the starts run on this many threads
  // The coefficients fitted; none given: fitted_terms(the engine's knobs).
  std::optional<StepTermMask> terms;
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
  StepTermMask terms{};  // those fitted
  // From the Jacobian at the fit, taking the residuals as independent: the
  // queue makes them correlated, so read them as a lower bound.
  StepCoefficients standard_errors{};
  MeasuredLoss loss;
  std::vector<FitStartResult> starts;
  int replays = 0;   // simulations run
  int searched = 0;  // points tried at random around the optimum (the figures term)
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

// Efficiency factors (calibration/hardware_model.hpp) fitted across measured
// runs at once: each run's step costs are its GPU's, model's and
// deployment's cost map at the shared factors, its knobs otherwise the
// engine's; the loss is the sum of the runs' losses.
struct HardwareRun {
  std::string name;
  const MeasuredReplay* replay = nullptr;
  BatchingKnobs knobs;  // the engine's (its costs are replaced)
  CostMap map;
};
struct EfficiencyFit {
  Efficiency factors;
  EfficiencyVector standard_errors{};  // of θ's entries
  std::vector<MeasuredLoss> losses;    // a run each
  int replays = 0;
  double seconds = 0;
};
EfficiencyFit fit_efficiency(const std::vector<HardwareRun>& runs,
                             const BatchingFitOptions& options = {});

}  // namespace infersim
