// The run sliced in time: an observer records each request's instants, and at
// the end sweep lines over them give, for each slice [k*S, (k+1)*S) of trace
// time from 0 to the run's end, the arrivals, completions, queue, busy cores
// and energy (timeseries.csv).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/fixed_divisor.hpp"
#include "core/sim_time.hpp"
#include "model/energy_model.hpp"
#include "model/request_observer.hpp"

namespace infersim {

struct TimeSlice {
  SimTime start;
  SimTime end;                        // start + S, but the run's end for the last slice
  std::uint64_t arrivals = 0;         // by arrival at the device's issue
  std::uint64_t completions = 0;      // by response time
  std::uint64_t deadline_misses = 0;  // by response time
  // Requests that reached the server and have not started: time-weighted mean
  // over the slice, and the largest count at any instant of it.
  std::optional<double> queue_len_mean;
  std::uint64_t queue_len_max = 0;
  std::optional<double> busy_cores_mean;  // time-weighted
  std::optional<double> utilization;      // busy core-time / (cores * slice length)
  // MODEL.md section 8 on the slice: idle power over it, the dynamic share of
  // its busy core-time, and the radio energy of the requests arriving in it.
  double energy_wh = 0;
  std::optional<double> wait_p99_s;  // of the requests starting in the slice
};

struct TimeSeries {
  Duration slice;
  std::vector<TimeSlice> slices;
};

// At most this many slices a run; a finer slice is refused.
inline constexpr std::uint64_t kMaxSlices = 1'000'000;

// Records, a request, what the slices need: its counts and radio bits go to
// their slice at once; its server arrival, start and finish are kept (24 bytes
// a request) for the queue and busy-core sweeps at the end. on_issued may come
// in any order.
class TimeSeriesCollector : public RequestObserver {
 public:
  explicit TimeSeriesCollector(Duration slice, std::size_t expected_requests = 0);
  void on_issued(std::uint64_t id, const Task& task, const RequestOutcome& outcome) override;
  void on_completed(std::uint64_t, const Task&, const RequestOutcome&) override {}
  // The slices from 0 to end = max(run_length, last response): ceil(end / S)
  // of them (one when end is 0), the last one ending at `end` and also holding
  // what happens at `end` exactly. Throws InputError naming
  // report.slice_duration_s when the slice is not positive or makes more than
  // kMaxSlices slices. Sorts the recorded instants in place (no copy of them
  // is made), so it is called once: a second call throws std::logic_error.
  TimeSeries compute(SimTime run_length, unsigned cores, const EnergyModel& energy);

 private:
  // What happened in slice k = t / S (the last one also holding every later
  // one, up to kMaxSlices).
  struct Tally {
    std::uint64_t arrivals = 0;
    std::uint64_t completions = 0;
    std::uint64_t misses = 0;
    double request_bits = 0;
    double result_bits = 0;
  };
  Tally& tally_at(SimTime t);
  Duration slice_;
  FixedDivisor divide_;  // by the slice's nanoseconds (1 when it is not positive)
  std::vector<Tally> tallies_;
  SimTime last_response_;
  std::vector<std::int64_t> server_arrival_ns_, start_ns_, finish_ns_;
  bool computed_ = false;
};

inline constexpr const char* kTimeSeriesCsvHeader =
    "slice_start_s,slice_end_s,arrivals,completions,deadline_misses,queue_len_mean,queue_len_max,"
    "busy_cores_mean,utilization,energy_wh,wait_p99_s";

// Header and one row a slice; times with nine decimals, a figure that does not
// exist as an empty field.
std::string time_series_csv(const TimeSeries& series);

}  // namespace infersim
