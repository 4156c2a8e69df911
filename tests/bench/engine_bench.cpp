// The event engine alone, under the hold model: pop the earliest event and
// push one at a random later time, at steady queue sizes from 10 to 10^6; one
// benchmark per queue implementation behind the EventQueue interface.
#include <benchmark/benchmark.h>

#include <vector>

#include <pcg_random.hpp>

#include "core/large_array.hpp"
#include "engine/engine.hpp"

namespace infersim {
namespace {

template <typename Queue>
void Hold(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  pcg32 rng(42);
  Engine<Queue> engine;
  for (std::size_t i = 0; i < size; ++i) {
    engine.schedule_at(SimTime::ns(rng(1'000'000)), Phase::kArrival, 0, i);
  }
  std::int64_t executed = 0;
  auto hold = [&](const Event& e) {
    engine.schedule_in(Duration::ns(1 + rng(1'000'000)), Phase::kArrival, 0, e.subject);
  };
  for (auto _ : state) {
    engine.step(hold);  // pop the earliest; the handler pushes one at a later time
    ++executed;
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(executed), benchmark::Counter::kIsRate);
}

// What a byte of fresh memory costs against a byte of memory already touched:
// a recorded run keeps about 40 bytes a request, each first written once. Fills 256
// MiB of int64 a time: into a new array (its pages faulted in and zeroed by the
// kernel, with huge pages where reserve_large gets them), or over one filled
// before (the baseline).
constexpr std::size_t kFillCount = std::size_t{32} << 20;

void FillFreshMemory(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<std::int64_t> v;
    reserve_large(v, kFillCount);
    for (std::size_t i = 0; i < kFillCount; ++i)
      v.push_back(static_cast<std::int64_t>(i));
    benchmark::DoNotOptimize(v.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kFillCount * 8));
}

void FillTouchedMemory(benchmark::State& state) {
  std::vector<std::int64_t> v(kFillCount, 1);
  for (auto _ : state) {
    for (std::size_t i = 0; i < kFillCount; ++i)
      v[i] = static_cast<std::int64_t>(i);
    benchmark::DoNotOptimize(v.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kFillCount * 8));
}

BENCHMARK(FillFreshMemory)->Unit(benchmark::kMillisecond);
BENCHMARK(FillTouchedMemory)->Unit(benchmark::kMillisecond);

BENCHMARK_TEMPLATE(Hold, BinaryHeapQueue)->RangeMultiplier(10)->Range(10, 1'000'000);
BENCHMARK_TEMPLATE(Hold, QuaternaryHeapQueue)->RangeMultiplier(10)->Range(10, 1'000'000);
BENCHMARK_TEMPLATE(Hold, LinearScanQueue)->RangeMultiplier(10)->Range(10, 1'000);

}  // namespace
}  // namespace infersim

BENCHMARK_MAIN();
