#include "request/closed_loop_requests.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/random.hpp"

namespace infersim {

LengthRange length_range(std::int64_t len, double ratio) {
  const double l = static_cast<double>(len);
  LengthRange r;
  r.low = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(l * (1 - ratio))));
  r.high = std::max<std::int64_t>(r.low, static_cast<std::int64_t>(std::ceil(l * (1 + ratio))));
  return r;
}

namespace {

// A whole number uniform in [r.low, r.high], from one uniform01 draw.
std::int64_t draw_length(pcg32& rng, LengthRange r) {
  const double span = static_cast<double>(r.high - r.low + 1);
  const auto k = static_cast<std::int64_t>(std::floor(uniform01(rng) * span));
  return r.low + std::min<std::int64_t>(k, r.high - r.low);
}

}  // namespace

RequestList random_dataset(const RandomDataset& dataset, const RequestKnobs& knobs,
                           std::uint64_t seed) {
  pcg32 rng(seed, 0);
  const LengthRange in = length_range(dataset.input_len, dataset.range_ratio);
  const LengthRange out = length_range(dataset.output_len, dataset.range_ratio);
  RequestList list(knobs);
  list.reserve(dataset.prompts);
  for (std::uint64_t k = 0; k < dataset.prompts; ++k) {
    const std::int64_t input = draw_length(rng, in);
    const std::int64_t output = draw_length(rng, out);
    list.add(SimTime::zero(), static_cast<double>(input), static_cast<double>(output));
  }
  return list;
}

void pace_requests(RequestList& requests, std::optional<double> rate, double burstiness,
                   std::uint64_t seed) {
  const std::size_t n = requests.size();
  if (!rate || n == 0) {
    for (std::size_t k = 0; k < n; ++k)
      requests.set_arrival(k, SimTime::zero());
    return;
  }
  pcg32 rng(seed, 1);
  std::vector<double> at(n);
  double sum = 0;
  for (std::size_t k = 0; k < n; ++k) {
    // Gamma of shape K and scale 1/(rate K): mean 1/rate.
    sum += burstiness == 1 ? exponential(rng, *rate)
                           : standard_gamma(rng, burstiness) / (*rate * burstiness);
    at[k] = sum;
  }
  const double scale = sum > 0 ? (static_cast<double>(n) / *rate) / sum : 0;
  for (std::size_t k = 0; k < n; ++k)
    requests.set_arrival(k, SimTime::zero() + Duration::from_seconds(at[k] * scale));
}

}  // namespace infersim
