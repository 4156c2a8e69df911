// Fitting the cost knobs to a measurement: least squares of the time to first
// token against the input tokens (a fixed part and a cost per token), and the
// mean decode time per generated token after the first; in MI at the given
// MIPS per core, these are the knobs of MODEL.md section 5.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "calibration/measurement_reader.hpp"
#include "scenario/settings.hpp"

namespace infersim {

struct Calibration {
  std::size_t requests = 0;         // in the TTFT fit
  std::size_t decode_requests = 0;  // with more than one output token
  double mips_per_core = 0;
  // TTFT = intercept + slope * input tokens, each with its standard error.
  double ttft_intercept_s = 0;
  double ttft_intercept_se_s = 0;
  double ttft_slope_s = 0;  // per input token
  double ttft_slope_se_s = 0;
  double ttft_r2 = 0;
  double residual_sd_s = 0;  // sqrt(SSR / (n - 2))
  // |residual| percentiles of the TTFT fit.
  double residual_p50_s = 0;
  double residual_p90_s = 0;
  double residual_p99_s = 0;
  // (e2e - ttft) / (output - 1), averaged, with the mean's standard error.
  double decode_s_per_token = 0;
  double decode_se_s = 0;
  // The knobs: slope and decode time in MI at mips_per_core.
  double mi_per_context_token = 0;
  double mi_per_context_token_se = 0;
  double mi_per_generated_token = 0;
  double mi_per_generated_token_se = 0;
  // The TTFT intercept beyond the first token's decode (the model's TTFT holds
  // one generated token): latency the cost knobs do not explain.
  double fixed_overhead_s = 0;
  // Requests whose TTFT lies above the fit by more than 3 robust standard
  // deviations (1.4826 x the median absolute deviation of the residuals).
  double queued_fraction = 0;
  // Requests in flight, from [start, start + e2e), averaged over the time at
  // least one is (1 for one request at a time), when there are start times.
  std::optional<double> mean_concurrency;
  std::vector<std::string> warnings;
};

// Fits the measurement. Throws InputError when it cannot: fewer than three
// requests, every input the same size, or no request with two output tokens.
Calibration calibrate(const Measurement& measurement, double mips_per_core);

// The default settings with the fitted knobs: mips_per_core, both MI costs,
// and the fixed overhead as one network hop each way (half of it each, at a
// bandwidth high enough to add no transfer time); no hop when there is none.
Settings calibrated_settings(const Calibration& calibration);

// The lines `calibrate` prints: each coefficient with its standard error, R2,
// the residual percentiles and the knobs (the warnings are the caller's to print).
std::string calibration_report(const Measurement& measurement, const Calibration& calibration);

}  // namespace infersim
