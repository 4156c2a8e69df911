// The run sliced in time: an observer records each request's instants, and at
// the end sweep lines over them give, for each slice [k*S, (k+1)*S) of trace
// time from 0 to the run's end, the arrivals, completions, queue, busy cores
// and energy (timeseries.csv).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/sim_time.hpp"
#include "core/sorted_queue.hpp"
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

// Builds the slices as requests come, keeping no per-request array: counts,
// radio bits and the time the queue and the cores are occupied go to their
// slices at once (an interval spanning whole slices through a difference
// array); the queue's largest length and the waits of the requests starting
// in a slice need the queue's changes in time order, which a sweep takes from
// two priority queues of the pending changes: a later request changes the queue no
// earlier than its arrival, so every change before it is final. What is held
// follows the requests queued, not the run. on_issued must come in
// non-decreasing arrival order (as EdgeSimulation calls it).
class TimeSeriesCollector : public RequestObserver {
 public:
  explicit TimeSeriesCollector(Duration slice);
  void on_issued(std::uint64_t id, const Request& task, const RequestOutcome& outcome) override;
  bool wants_completions() const override { return false; }
  // The slices from 0 to end = max(run_length, last response): ceil(end / S)
  // of them (one when end is 0), the last one ending at `end` and also holding
  // what happens at `end` exactly. Throws InputError naming
  // report.slice_duration_s when the slice is not positive or makes more than
  // kMaxSlices slices. Call once: a second call throws std::logic_error.
  TimeSeries compute(SimTime run_length, unsigned cores, const EnergyModel& energy);

 private:
  __extension__ using Int128 = __int128;
  // What happened in [j*S, (j+1)*S), slice j = t / S of trace time (up to
  // kMaxSlices; the run's last slice also takes every later one).
  struct Raw {
    std::uint64_t arrivals = 0;     // by arrival
    std::uint64_t completions = 0;  // by response
    std::uint64_t misses = 0;       // by response
    double request_bits = 0;        // by arrival
    double result_bits = 0;
    // Request-nanoseconds in the queue ([server arrival, start)) and on a
    // core ([start, finish)) of the intervals that end or begin in the slice;
    // those covering it whole are counted by the *_whole differences.
    Int128 queued_ns = 0;
    Int128 busy_ns = 0;
    std::int64_t queued_whole = 0;
    std::int64_t busy_whole = 0;
    std::uint64_t queue_peak = 0;
    std::uint64_t unqueued_starts = 0;  // requests starting here without waiting
    bool wait_final = false;            // wait_p99_s is known
    std::optional<double> wait_p99_s;
  };
  Raw& raw(std::size_t j) { return j < raw_.size() ? raw_[j] : grow(j); }
  Raw& grow(std::size_t j);
  std::size_t slice_of(std::int64_t t);
  void occupy(std::int64_t from, std::int64_t to, Int128 Raw::*part, std::int64_t Raw::*whole);
  // Sweeps the queue's changes before `bound` (all of them when none).
  void sweep(std::optional<std::int64_t> bound);
  // The waits of the slices below `slice` are complete: their percentile.
  void close_waits_below(std::size_t slice);

  Duration slice_;
  std::int64_t slice_ns_;  // the slice's nanoseconds (1 when it is not positive)
  // The slice slice_of found last: [cached_start_, cached_start_ + cached_width_).
  std::size_t cached_slice_ = 0;
  std::int64_t cached_start_ = 0;
  std::int64_t cached_width_ = 0;
  std::vector<Raw> raw_;
  // The queue's pending changes: server arrivals of the requests that wait,
  // and their starts with their waits (both come nearly in order).
  SortedQueue<std::int64_t> joins_;
  SortedQueue<std::pair<std::int64_t, std::int64_t>> leaves_;
  std::int64_t queued_ = 0;      // the queue's length after the last change swept
  std::size_t swept_slice_ = 0;  // the slice of that change
  // Waits (in seconds) of the requests that waited, for the slices whose
  // percentile is still open.
  struct OpenWaits {
    std::size_t slice;
    std::vector<double> waits_s;
  };
  std::vector<OpenWaits> open_waits_;
  SimTime last_arrival_;
  SimTime last_response_;
  bool computed_ = false;
};

inline constexpr const char* kTimeSeriesCsvHeader =
    "slice_start_s,slice_end_s,arrivals,completions,deadline_misses,queue_len_mean,queue_len_max,"
    "busy_cores_mean,utilization,energy_wh,wait_p99_s";

// Header and one row a slice; times with nine decimals, a figure that does not
// exist as an empty field.
std::string time_series_csv(const TimeSeries& series);

}  // namespace infersim
