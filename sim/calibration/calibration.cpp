#include "calibration/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <Eigen/Dense>

#include "core/input_error.hpp"
#include "core/number_format.hpp"
#include "core/percentiles.hpp"

namespace infersim {
namespace {

// Above this time-averaged concurrency a measurement is no longer one request
// at a time: its times hold waiting (or batching) the cost knobs do not model.
constexpr double kQueuedConcurrency = 1.5;
// Above this fraction of TTFT outliers the data look queued.
constexpr double kQueuedFraction = 0.10;
// Below this, a TTFT excess is clock noise, not waiting.
constexpr double kOutlierFloorS = 1e-3;
// The overhead hop's bandwidth: high enough that no trace's bits take a
// nanosecond to cross it.
constexpr double kOverheadHopMbps = 1e12;

// 1.4826 x the median absolute deviation from the median: the standard
// deviation of normal residuals, unmoved by a minority of queued requests.
double robust_sd(const Eigen::VectorXd& residuals) {
  std::vector<double> values(residuals.data(), residuals.data() + residuals.size());
  const double median = *percentile(values, 0.5);
  for (double& v : values)
    v = std::abs(v - median);
  return 1.4826 * *percentile(values, 0.5);
}

// Requests in flight, averaged over the time at least one is: the sum of the
// intervals [start, start + e2e) over the length of their union. Exactly 1 for
// a benchmark that sends one request at a time, however idle between them.
double mean_concurrency(const std::vector<MeasuredRequest>& requests) {
  std::vector<std::pair<double, double>> intervals;
  const std::int64_t origin = *requests.front().start_ns;
  double busy_s = 0;
  for (const MeasuredRequest& r : requests) {
    const double start_s = static_cast<double>(*r.start_ns - origin) * 1e-9;
    intervals.emplace_back(start_s, start_s + r.e2e_s);
    busy_s += r.e2e_s;
  }
  std::sort(intervals.begin(), intervals.end());
  double union_s = 0;
  double open = intervals.front().first;
  double close = intervals.front().second;
  for (const auto& [begin, end] : intervals) {
    if (begin > close) {
      union_s += close - open;
      open = begin;
    }
    close = std::max(close, end);
  }
  union_s += close - open;
  return union_s > 0 ? busy_s / union_s : 1;
}

}  // namespace

Calibration calibrate(const Measurement& measurement, double mips_per_core) {
  const std::vector<MeasuredRequest>& requests = measurement.requests;
  const std::string& path = measurement.path;
  const auto n = static_cast<Eigen::Index>(requests.size());
  if (n < 3) {
    throw InputError(path, 0, "",
                     "calibrating needs at least 3 requests, the file holds " + std::to_string(n));
  }
  Calibration c;
  c.requests = requests.size();
  c.mips_per_core = mips_per_core;

  // TTFT = b0 + b1 * input tokens, by least squares (QR), with the covariance
  // sigma^2 (X'X)^-1 for the standard errors.
  Eigen::MatrixXd x(n, 2);
  Eigen::VectorXd ttft(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    x(i, 0) = 1;
    x(i, 1) = requests[static_cast<std::size_t>(i)].input_tokens;
    ttft(i) = requests[static_cast<std::size_t>(i)].ttft_s;
  }
  const double spread = x.col(1).maxCoeff() - x.col(1).minCoeff();
  if (!(spread > 0)) {
    throw InputError(path, 0, "input tokens",
                     "every request has the same input length: the cost per input token cannot "
                     "be told from the fixed part");
  }
  const Eigen::Vector2d beta = x.colPivHouseholderQr().solve(ttft);
  const Eigen::VectorXd residual = ttft - x * beta;
  const double ssr = residual.squaredNorm();
  const double sst = (ttft.array() - ttft.mean()).matrix().squaredNorm();
  const double sigma2 = ssr / static_cast<double>(n - 2);
  const Eigen::Matrix2d covariance = sigma2 * (x.transpose() * x).inverse();
  c.ttft_intercept_s = beta(0);
  c.ttft_slope_s = beta(1);
  c.ttft_intercept_se_s = std::sqrt(std::max(0.0, covariance(0, 0)));
  c.ttft_slope_se_s = std::sqrt(std::max(0.0, covariance(1, 1)));
  c.ttft_r2 = sst > 0 ? 1 - ssr / sst : 1;
  c.residual_sd_s = std::sqrt(sigma2);
  std::vector<double> absolute(static_cast<std::size_t>(n));
  for (Eigen::Index i = 0; i < n; ++i)
    absolute[static_cast<std::size_t>(i)] = std::abs(residual(i));
  c.residual_p50_s = *percentile(absolute, 0.5);
  c.residual_p90_s = *percentile(absolute, 0.9);
  c.residual_p99_s = *percentile(absolute, 0.99);

  // Decode time per token after the first: an intercept-only fit, the mean,
  // with its standard error s / sqrt(m).
  std::vector<double> per_token;
  for (const MeasuredRequest& r : requests) {
    if (r.output_tokens > 1) per_token.push_back((r.e2e_s - r.ttft_s) / (r.output_tokens - 1));
  }
  if (per_token.empty()) {
    throw InputError(path, 0, "output tokens",
                     "no request produced more than one token: the decode time per token cannot "
                     "be measured");
  }
  const Eigen::Map<const Eigen::VectorXd> decode(per_token.data(),
                                                 static_cast<Eigen::Index>(per_token.size()));
  c.decode_requests = per_token.size();
  c.decode_s_per_token = decode.mean();
  if (per_token.size() > 1) {
    const double variance = (decode.array() - c.decode_s_per_token).matrix().squaredNorm() /
                            static_cast<double>(per_token.size() - 1);
    c.decode_se_s = std::sqrt(variance / static_cast<double>(per_token.size()));
  }

  c.mi_per_context_token = c.ttft_slope_s * mips_per_core;
  c.mi_per_context_token_se = c.ttft_slope_se_s * mips_per_core;
  c.mi_per_generated_token = c.decode_s_per_token * mips_per_core;
  c.mi_per_generated_token_se = c.decode_se_s * mips_per_core;
  c.fixed_overhead_s = c.ttft_intercept_s - c.decode_s_per_token;

  const double threshold = std::max(3 * robust_sd(residual), kOutlierFloorS);
  std::size_t above = 0;
  for (Eigen::Index i = 0; i < n; ++i)
    above += residual(i) > threshold;
  c.queued_fraction = static_cast<double>(above) / static_cast<double>(n);
  const bool timed = std::all_of(requests.begin(), requests.end(),
                                 [](const MeasuredRequest& r) { return r.start_ns.has_value(); });
  if (timed) c.mean_concurrency = mean_concurrency(requests);

  if (c.queued_fraction > kQueuedFraction) {
    c.warnings.push_back(printf_text("%.1f %%", 100 * c.queued_fraction) +
                         " of the requests waited: their TTFT lies more than 3 standard "
                         "deviations above the fit. The data look queued; calibrate from a run "
                         "at low load, one request at a time");
  }
  if (c.mean_concurrency && *c.mean_concurrency > kQueuedConcurrency) {
    c.warnings.push_back(
        "the benchmark kept " + printf_text("%.2f", *c.mean_concurrency) +
        " requests in flight on average while busy, well above 1: the times include "
        "waiting and batching. The data look queued; calibrate from a run at "
        "low load, one request at a time");
  }
  if (c.ttft_slope_s < 0) {
    c.warnings.push_back(
        "the TTFT falls with the input length; the cost per input token is set to 0");
  }
  if (c.fixed_overhead_s < -kOutlierFloorS) {
    c.warnings.push_back(
        "the TTFT intercept is shorter than one decode step; no fixed overhead is modelled");
  }
  return c;
}

Settings calibrated_settings(const Calibration& c) {
  Settings s;
  s.mips_per_core = c.mips_per_core;
  s.mi_per_context_token = std::max(0.0, c.mi_per_context_token);
  s.mi_per_generated_token = std::max(0.0, c.mi_per_generated_token);
  s.hops.clear();
  // Overhead under a microsecond is the fit's rounding, not a latency.
  if (c.fixed_overhead_s >= 1e-6) {
    s.hops.push_back(Hop{"fixed overhead", c.fixed_overhead_s / 2, kOverheadHopMbps});
  }
  return s;
}

std::string calibration_report(const Measurement& m, const Calibration& c) {
  std::string out;
  auto line = [&](const std::string& text) { out += text + '\n'; };
  auto pm = [](const char* pattern, double value, double se) {
    return printf_text(pattern, value) + " ± " + printf_text(pattern, se);
  };
  line("Measurement: " + m.path + " (" + m.format + "), " + std::to_string(m.requests.size()) +
       " requests" +
       (m.skipped_errors > 0 ? ", " + std::to_string(m.skipped_errors) + " failed and skipped"
                             : std::string()));
  line("TTFT fit over " + std::to_string(c.requests) + " requests: TTFT = a + b × input tokens");
  line("  intercept a          " + pm("%.6g", c.ttft_intercept_s, c.ttft_intercept_se_s) + " s");
  line("  slope b              " + pm("%.6g", c.ttft_slope_s, c.ttft_slope_se_s) +
       " s per input token");
  line("  R²                   " + printf_text("%.6f", c.ttft_r2));
  line("  |residual| p50 " + printf_text("%.6g", c.residual_p50_s) + " s, p90 " +
       printf_text("%.6g", c.residual_p90_s) + " s, p99 " + printf_text("%.6g", c.residual_p99_s) +
       " s");
  line("Decode over " + std::to_string(c.decode_requests) +
       " requests with more than one output token: (e2e - ttft) / (output - 1)");
  line("  per token            " + pm("%.6g", c.decode_s_per_token, c.decode_se_s) + " s");
  line("Fixed overhead (intercept - one decode step): " + printf_text("%.6g", c.fixed_overhead_s) +
       " s");
  if (c.mean_concurrency) line("Mean concurrency: " + printf_text("%.3f", *c.mean_concurrency));
  line("Knobs at " + printf_text("%g", c.mips_per_core) + " MIPS per core:");
  line("  mi_per_context_token   " + pm("%.4f", c.mi_per_context_token, c.mi_per_context_token_se));
  line("  mi_per_generated_token " +
       pm("%.4f", c.mi_per_generated_token, c.mi_per_generated_token_se));
  return out;
}

}  // namespace infersim
