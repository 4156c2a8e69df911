// Random draws written out from pcg32's raw output (MODEL.md section 9), so
// that every standard library and every implementation of the model draws the
// same numbers: std::*_distribution is deliberately not used.
#pragma once

#include <cmath>
#include <cstdint>

#include <pcg_random.hpp>

namespace infersim {

// A uniform double in [0, 1) from two 32-bit outputs: 53 random bits.
inline double uniform01(pcg32& rng) {
  const std::uint32_t high = rng() >> 5;  // drawn first: the order is part of the contract
  const std::uint32_t low = rng() >> 6;
  return (high * 67108864.0 + low) / 9007199254740992.0;
}

// Exponential with the given rate: -log1p(-u) / rate.
inline double exponential(pcg32& rng, double rate) {
  return -std::log1p(-uniform01(rng)) / rate;
}

// Standard normal by the Box-Muller transform (one of the pair; two uniforms).
inline double standard_normal(pcg32& rng) {
  const double u1 = uniform01(rng);
  const double u2 = uniform01(rng);
  return std::sqrt(-2 * std::log1p(-u1)) * std::cos(2 * 3.14159265358979323846 * u2);
}

// Gamma of the given shape and scale 1 by Marsaglia and Tsang's method (2000);
// a shape below 1 is boosted: Gamma(k) = Gamma(k + 1) * U^(1/k).
inline double standard_gamma(pcg32& rng, double shape) {
  if (shape < 1) {
    const double boosted = standard_gamma(rng, shape + 1);
    return boosted * std::pow(1 - uniform01(rng), 1 / shape);
  }
  const double d = shape - 1.0 / 3;
  const double c = 1 / std::sqrt(9 * d);
  for (;;) {
    double x, v;
    do {
      x = standard_normal(rng);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = uniform01(rng);
    if (u < 1 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) return d * v;
  }
}

}  // namespace infersim
