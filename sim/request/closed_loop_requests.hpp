// The requests of a closed-loop run (MODEL.md section 4b), as `vllm bench
// serve` makes them: its random dataset's lengths, and the pacing instants of
// --request-rate that a closed loop issues no earlier than.
#pragma once

#include <cstdint>
#include <optional>

#include "request/request_list.hpp"

namespace infersim {

// vLLM's random dataset: each prompt's length uniform among the whole numbers
// in [floor(I * (1 - R)), ceil(I * (1 + R))], each output's likewise in O's
// range, pinned as `ignore_eos` pins it; the bounds at least 1.
struct RandomDataset {
  std::int64_t input_len = 1024;  // I
  std::int64_t output_len = 128;  // O
  double range_ratio = 0;         // R, in [0, 1)
  std::uint64_t prompts = 1000;   // --num-prompts
};

// The whole numbers a length of `len` at ratio `ratio` is drawn from.
struct LengthRange {
  std::int64_t low = 1;
  std::int64_t high = 1;
};
LengthRange length_range(std::int64_t len, double ratio);

// The dataset's prompts in order, every arrival 0, drawn from pcg32 seeded
// with `seed` (stream 0): a prompt's input length, then its output length.
RequestList random_dataset(const RandomDataset& dataset, const RequestKnobs& knobs,
                           std::uint64_t seed);

// vLLM's pacing at `rate` requests a second: gamma intervals of shape
// `burstiness` (1: exponential) and mean 1/rate, summed, then scaled so that
// the last request's instant is exactly n / rate; drawn from pcg32 seeded with
// `seed` (stream 1). Writes them as the list's arrivals; none: every arrival 0.
void pace_requests(RequestList& requests, std::optional<double> rate, double burstiness,
                   std::uint64_t seed);

}  // namespace infersim
