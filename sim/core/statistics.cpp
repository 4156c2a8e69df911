#include "core/statistics.hpp"

#include <cmath>
#include <stdexcept>

#include <boost/math/distributions/students_t.hpp>

namespace infersim {

double student_t_quantile(double q, double df) {
  if (!(q > 0 && q < 1) || !(df >= 1))
    throw std::invalid_argument("student_t_quantile: bad q or df");
  // Boost.Math inverts the distribution to double precision (0 exactly at q = 0.5).
  return boost::math::quantile(boost::math::students_t_distribution<double>(df), q);
}

MeanCi mean_ci95(const std::vector<double>& values) {
  MeanCi out;
  if (values.empty()) return out;
  double sum = 0;
  for (double v : values)
    sum += v;
  const double n = static_cast<double>(values.size());
  out.mean = sum / n;
  if (values.size() < 2) return out;
  double squares = 0;
  for (double v : values)
    squares += (v - out.mean) * (v - out.mean);
  const double sd = std::sqrt(squares / (n - 1));
  out.half_width = student_t_quantile(0.975, n - 1) * sd / std::sqrt(n);
  return out;
}

}  // namespace infersim
