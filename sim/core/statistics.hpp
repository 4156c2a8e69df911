// Small statistics used by the reports: Student's t quantile for confidence
// intervals, and a mean with its 95 % confidence half-width.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace infersim {

// The q quantile (0 < q < 1) of Student's t with `df` >= 1 degrees of freedom.
double student_t_quantile(double q, double df);

struct MeanCi {
  double mean = 0;
  std::optional<double> half_width;  // none with fewer than two values
};

// Mean and the half-width of its two-sided 95 % confidence interval, t-based.
MeanCi mean_ci95(const std::vector<double>& values);

}  // namespace infersim
