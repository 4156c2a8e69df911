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
#include "model/radio_energy.hpp"
#include "model/request_observer.hpp"
#include "model/server_model.hpp"

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
  std::optional<double> busy_cores_mean;  // busy units (cores, replicas), time-weighted
  // A fleet's replicas provisioned and active, time-weighted (BATCHING.md
  // section 11); none without a fleet.
  std::optional<double> replicas_provisioned_mean;
  std::optional<double> replicas_active_mean;
  std::optional<double> cost_usd;  // a fleet's: its replicas' provisioned time in the slice, priced
  std::optional<double> utilization;  // busy unit-time / (units * slice length)
  // The server's energy over the slice (ServerModel::energy_wh of its length
  // and busy unit-time) and the radio energy of the requests arriving in it.
  double energy_wh = 0;
  std::optional<double> wait_p99_s;  // of the requests starting in the slice
  // Of the served requests arriving in the slice (issued by their device):
  // what the users who sent a request then waited for its first token.
  std::optional<double> ttft_p99_s;
  // A batching server's steps (BATCHING.md section 5), summed over replicas:
  // the requests running and waiting and the KV blocks in use as each step
  // found them, held over the step (time-weighted over the slice; 0 while a
  // replica is idle); the steps starting in the slice, the tokens they
  // scheduled, the preemptions they made, and the share of the admitted
  // requests' tokens found in the prefix cache.
  std::optional<double> running_mean;
  std::optional<double> waiting_mean;
  std::optional<double> kv_blocks_used_mean;
  std::uint64_t steps = 0;
  std::uint64_t scheduled_tokens = 0;
  std::uint64_t preemptions = 0;
  std::optional<double> prefix_hit_rate;  // none: nothing admitted in the slice
  // Disaggregated (BATCHING.md section 12), time-weighted: requests whose KV
  // is on a link (queued or crossing: first token to transfer end), and
  // transferred requests waiting for their first decode admission.
  std::optional<double> kv_transfers_mean;
  std::optional<double> decode_waiting_mean;
};

struct TimeSeries {
  Duration slice;
  std::string unit = "core";  // what the server is made of (busy_<unit>s_mean)
  bool steps = false;         // the server told its steps: the step columns exist
  std::vector<TimeSlice> slices;
  bool fleet = false;      // replicas_provisioned_mean, replicas_active_mean and cost_usd exist
  bool handovers = false;  // kv_transfers_mean and decode_waiting_mean exist
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
// follows the requests queued, not the run. on_request must come in
// id order, so non-decreasing arrival order (as Simulation calls it). The busy time comes
// from the server (ServerObserver::on_busy, and on_step for a step's replica). A rejected request
// counts as an arrival and as a miss at its rejection, and is never queued.
class TimeSeriesCollector : public RequestObserver, public ServerObserver {
 public:
  explicit TimeSeriesCollector(Duration slice);
  // A fleet's (BATCHING.md section 11): each unit's dynamic power (max minus
  // idle, W), so that a slice's energy counts each replica's busy time at
  // its class's power; its idle part comes from ServerUsage::spans.
  void set_unit_dynamic_w(std::vector<double> watts) { unit_dynamic_w_ = std::move(watts); }
  // A server that hands requests from prefill to decode replicas (BATCHING.md
  // section 12): the transfer and decode-queue columns.
  void set_handovers(bool handovers) { handovers_ = handovers; }
  void on_request(std::uint64_t id, const Request& request, const RequestOutcome& outcome) override;
  void on_busy(std::uint32_t unit, SimTime from, SimTime to) override;
  void on_step(const StepRecord& step) override;
  unsigned reads() const override { return kBusy | kSteps; }
  // The slices from 0 to end = max(run_length, last response): ceil(end / S)
  // of them (one when end is 0), the last one ending at `end` and also holding
  // what happens at `end` exactly. Throws InputError naming
  // report.slice_duration_s when the slice is not positive or makes more than
  // kMaxSlices slices. Call once: a second call throws std::logic_error.
  TimeSeries compute(SimTime run_length, const ServerModel& server, const ServerUsage& usage,
                     const RadioEnergy& radio);

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
    // Steps: request- and block-nanoseconds as queued_ns and busy_ns are
    // counted, with the whole slices' weights in the *_whole differences.
    Int128 running_ns = 0;
    Int128 waiting_ns = 0;
    Int128 kv_ns = 0;
    std::int64_t running_whole = 0;
    std::int64_t waiting_whole = 0;
    std::int64_t kv_whole = 0;
    std::uint64_t steps = 0;
    std::uint64_t scheduled_tokens = 0;
    std::uint64_t preemptions = 0;
    std::uint64_t admitted_tokens = 0;
    std::uint64_t hit_tokens = 0;
    // Disaggregated: request-nanoseconds on a link and waiting for a decode
    // replica, as queued_ns.
    Int128 transfer_ns = 0;
    Int128 decode_wait_ns = 0;
    std::int64_t transfer_whole = 0;
    std::int64_t decode_wait_whole = 0;
    std::uint64_t queue_peak = 0;
    std::uint64_t unqueued_starts = 0;  // requests starting here without waiting
    bool wait_final = false;            // wait_p99_s is known
    std::optional<double> wait_p99_s;
    bool ttft_final = false;  // ttft_p99_s is known
    std::optional<double> ttft_p99_s;
  };
  std::vector<double> unit_dynamic_w_;
  std::vector<double> dynamic_ws_;  // a fleet's: busy W·ns a slice
  bool handovers_ = false;
  Raw& raw(std::size_t j) { return j < raw_.size() ? raw_[j] : grow(j); }
  Raw& grow(std::size_t j);
  // Throws the InputError naming report.slice_duration_s: the slice makes
  // `reason` (e.g. "N slices of a run of T s").
  [[noreturn]] void too_many_slices(const std::string& reason) const;
  // The slice of instant t (kMaxSlices at most); throws when t lies past
  // kMaxSlices slices.
  std::size_t slice_of(std::int64_t t);
  // `unit` busy over [a, b) ns.
  void add_busy(std::uint32_t unit, std::int64_t a, std::int64_t b);
  // A fleet's busy energy: `unit` busy `ns` within `slice`. Inline, with the
  // rare growth out of line (inline, it made every call save six registers).
  void add_dynamic(std::uint32_t unit, std::size_t slice, std::int64_t ns) {
    const double w = unit_dynamic_w_.at(unit);
    if (slice >= dynamic_ws_.size()) grow_dynamic(slice);
    dynamic_ws_[slice] += w * static_cast<double>(ns);
  }
  void grow_dynamic(std::size_t slice);
  // [from, to) held `weight` times (a request, a step's running requests).
  void occupy(std::int64_t from, std::int64_t to, Int128 Raw::*part, std::int64_t Raw::*whole,
              std::int64_t weight = 1);
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
  // A slice's values (in seconds) while its percentile is still open.
  struct OpenSlice {
    std::size_t slice;
    std::vector<double> values_s;
  };
  // Waits of the requests that waited.
  std::vector<OpenSlice> open_waits_;
  // TTFTs (in seconds) of the served requests arriving in the slices still
  // open: the slice of the latest arrival and the one before it (an arrival
  // at the run's end exactly falls in the slice after the last, which takes
  // it), closed as the arrivals pass them.
  std::vector<OpenSlice> open_ttfts_;
  void close_ttfts_below(std::size_t slice);
  SimTime last_arrival_;
  SimTime last_response_;
  bool computed_ = false;
  bool steps_ = false;
};

// The header: busy_<unit>s_mean names what the server is made of
// (busy_cores_mean for the edge server).
std::string time_series_csv_header(const TimeSeries& series);

// Header and one row a slice; times with nine decimals, a figure that does not
// exist as an empty field.
std::string time_series_csv(const TimeSeries& series);

}  // namespace infersim
