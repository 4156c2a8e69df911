#include "core/statistics.hpp"

#include <cmath>
#include <stdexcept>

namespace infersim {
namespace {

// Continued fraction of the regularized incomplete beta (Lentz's method).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 1000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-15) break;
  }
  return h;
}

double regularized_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

double student_t_cdf(double t, double df) {
  const double tail = 0.5 * regularized_beta(df / 2, 0.5, df / (df + t * t));
  return t >= 0 ? 1 - tail : tail;
}

}  // namespace

double student_t_quantile(double q, double df) {
  if (!(q > 0 && q < 1) || !(df >= 1))
    throw std::invalid_argument("student_t_quantile: bad q or df");
  double lo = -1e6, hi = 1e6;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < q ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
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
