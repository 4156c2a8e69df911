#include "report/time_series.hpp"

#include <algorithm>

#include "core/input_error.hpp"
#include "core/fixed_divisor.hpp"
#include "core/large_array.hpp"
#include "report/number_format.hpp"
#include "report/summary.hpp"

namespace infersim {
namespace {

__extension__ typedef __int128 Int128;

// The slices' bounds: [k*S, (k+1)*S), the last one [(K-1)*S, end].
class SliceGrid {
 public:
  SliceGrid(std::int64_t slice_ns, std::int64_t end_ns, std::size_t count)
      : slice_ns_(slice_ns), end_ns_(end_ns), count_(count), divide_(slice_ns) {}
  std::size_t count() const { return count_; }
  std::size_t of(std::int64_t t) const {
    return static_cast<std::size_t>(
        std::min<std::int64_t>(divide_(t), static_cast<std::int64_t>(count_) - 1));
  }
  std::int64_t start(std::size_t k) const { return static_cast<std::int64_t>(k) * slice_ns_; }
  // (k+1)*S stays below the end for every slice but the last, so it fits.
  std::int64_t end(std::size_t k) const { return k + 1 == count_ ? end_ns_ : start(k + 1); }

 private:
  std::int64_t slice_ns_;
  std::int64_t end_ns_;
  std::size_t count_;
  FixedDivisor divide_;
};

// A count that steps up at each of `ups` and down at each of `downs` (both
// sorted), swept over the slices: its integral (count x ns) and its largest
// value in each. At equal times the downs come first, so an interval [t, t)
// never counts.
struct Level {
  std::vector<Int128> integral_ns;
  std::vector<std::uint64_t> peak;
};

Level sweep(const std::vector<std::int64_t>& ups, const std::vector<std::int64_t>& downs,
            const SliceGrid& grid, std::int64_t end_ns) {
  Level out{std::vector<Int128>(grid.count(), 0), std::vector<std::uint64_t>(grid.count(), 0)};
  std::int64_t level = 0;
  std::int64_t t = 0;
  // The slice of an instant, the instants never decreasing: a pointer moved
  // forward rather than a division.
  std::size_t current = 0;
  auto slice_of = [&](std::int64_t x) {
    while (current + 1 < grid.count() && x >= grid.end(current))
      ++current;
    return current;
  };
  auto hold_until = [&](std::int64_t to) {  // the level holds over [t, to)
    while (t < to) {
      const std::size_t k = slice_of(t);
      const std::int64_t upto = k + 1 == grid.count() ? to : std::min(to, grid.end(k));
      out.integral_ns[k] += static_cast<Int128>(level) * (upto - t);
      out.peak[k] = std::max(out.peak[k], static_cast<std::uint64_t>(level));
      t = upto;
    }
  };
  std::size_t u = 0, d = 0;
  while (u < ups.size() || d < downs.size()) {
    const std::int64_t time =
        d < downs.size() && (u == ups.size() || downs[d] <= ups[u]) ? downs[d] : ups[u];
    hold_until(time);
    for (; d < downs.size() && downs[d] == time; ++d)
      --level;
    for (; u < ups.size() && ups[u] == time; ++u)
      ++level;
    const std::size_t k = slice_of(time);
    out.peak[k] =
        std::max(out.peak[k], static_cast<std::uint64_t>(std::max<std::int64_t>(level, 0)));
  }
  hold_until(end_ns);
  return out;
}

// Slice index t / S, at most kMaxSlices (the tallies past it fold into the
// last slice, or the run has too many slices and is refused).
std::size_t raw_slice(SimTime t, const FixedDivisor& divide) {
  return static_cast<std::size_t>(std::min<std::int64_t>(divide(t.count_ns()), kMaxSlices));
}

}  // namespace

TimeSeriesCollector::TimeSeriesCollector(Duration slice, std::size_t expected_requests)
    : slice_(slice), divide_(std::max<std::int64_t>(slice.count_ns(), 1)) {
  for (auto* v : {&server_arrival_ns_, &start_ns_, &finish_ns_})
    reserve_large(*v, expected_requests);
}

TimeSeriesCollector::Tally& TimeSeriesCollector::tally_at(SimTime t) {
  if (slice_.count_ns() <= 0) return tallies_.empty() ? tallies_.emplace_back() : tallies_[0];
  const std::size_t k = raw_slice(t, divide_);
  if (k >= tallies_.size()) tallies_.resize(std::max(k + 1, 2 * tallies_.size()));
  return tallies_[k];
}

void TimeSeriesCollector::on_issued(std::uint64_t, const Task& task, const RequestOutcome& o) {
  Tally& arrived = tally_at(task.arrival);
  ++arrived.arrivals;
  arrived.request_bits += task.request_bits;
  arrived.result_bits += task.result_bits;
  Tally& answered = tally_at(o.response);
  ++answered.completions;
  answered.misses += o.response - task.arrival > task.budget;
  last_response_ = std::max(last_response_, o.response);
  server_arrival_ns_.push_back(o.server_arrival.count_ns());
  start_ns_.push_back(o.start.count_ns());
  finish_ns_.push_back(o.finish.count_ns());
}

TimeSeries TimeSeriesCollector::compute(SimTime run_length, unsigned cores,
                                        const EnergyModel& energy) {
  if (computed_) throw std::logic_error("TimeSeriesCollector::compute called twice");
  const std::string label = "report.slice_duration_s";
  if (slice_.count_ns() <= 0) throw InputError("", 0, label, "must be greater than 0");
  const SimTime end = std::max(run_length, last_response_);
  const std::int64_t end_ns = std::max<std::int64_t>(end.count_ns(), 0);
  const std::int64_t s = slice_.count_ns();
  const std::uint64_t count =
      std::max<std::uint64_t>(1, static_cast<std::uint64_t>(end_ns / s + (end_ns % s != 0)));
  if (count > kMaxSlices) {
    throw InputError("", 0, label,
                     shortest(slice_.seconds()) + " s makes " + std::to_string(count) +
                         " slices of a run of " + shortest(end.seconds()) + " s; at most " +
                         std::to_string(kMaxSlices));
  }
  const SliceGrid grid(s, end_ns, count);
  TimeSeries series;
  series.slice = slice_;
  series.slices.resize(count);
  std::vector<double> request_bits(count, 0), result_bits(count, 0);
  // Tallies past the last slice belong to it (what happens at `end` exactly);
  // the bits are added in slice order, as the requests' own order had them.
  for (std::size_t k = 0; k < tallies_.size(); ++k) {
    const std::size_t into = std::min<std::size_t>(k, count - 1);
    TimeSlice& out = series.slices[into];
    out.arrivals += tallies_[k].arrivals;
    out.completions += tallies_[k].completions;
    out.deadline_misses += tallies_[k].misses;
    if (k < count) {
      request_bits[into] = tallies_[k].request_bits;
      result_bits[into] = tallies_[k].result_bits;
    } else {
      request_bits[into] += tallies_[k].request_bits;
      result_bits[into] += tallies_[k].result_bits;
    }
  }

  const std::size_t n = start_ns_.size();
  // Waits grouped by the slice their request starts in (a counting sort).
  std::vector<std::size_t> starting(count + 1, 0);
  for (const std::int64_t start : start_ns_)
    ++starting[grid.of(start) + 1];
  for (std::size_t k = 0; k < count; ++k)
    starting[k + 1] += starting[k];
  std::vector<std::optional<double>> wait_p99(count);
  {
    std::vector<double> waits(n);
    std::vector<std::size_t> next(starting.begin(), starting.end() - 1);
    for (std::size_t i = 0; i < n; ++i)
      waits[next[grid.of(start_ns_[i])]++] =
          Duration::ns(start_ns_[i] - server_arrival_ns_[i]).seconds();
    std::vector<double> in_slice;
    for (std::size_t k = 0; k < count; ++k) {
      in_slice.assign(waits.begin() + static_cast<std::ptrdiff_t>(starting[k]),
                      waits.begin() + static_cast<std::ptrdiff_t>(starting[k + 1]));
      wait_p99[k] = percentile(in_slice, 0.99);
    }
  }

  // The queue holds a request over [server arrival, start); a core over
  // [start, finish).
  // Each array sorted in place, one scratch buffer for the three.
  computed_ = true;
  {
    std::vector<std::int64_t> scratch;
    for (auto* v : {&server_arrival_ns_, &start_ns_, &finish_ns_})
      radix_sort(*v, scratch);
  }
  const Level queued = sweep(server_arrival_ns_, start_ns_, grid, end_ns);
  const Level running = sweep(start_ns_, finish_ns_, grid, end_ns);

  for (std::size_t k = 0; k < count; ++k) {
    TimeSlice& out = series.slices[k];
    out.start = SimTime::ns(grid.start(k));
    out.end = SimTime::ns(grid.end(k));
    const std::int64_t length_ns = grid.end(k) - grid.start(k);
    const auto busy_ns = static_cast<std::int64_t>(running.integral_ns[k]);
    if (length_ns > 0) {
      const double length = static_cast<double>(length_ns);
      out.queue_len_mean = static_cast<double>(queued.integral_ns[k]) / length;
      out.busy_cores_mean = static_cast<double>(busy_ns) / length;
      out.utilization = static_cast<double>(busy_ns) / (length * cores);
    }
    out.queue_len_max = queued.peak[k];
    out.energy_wh = energy.energy_wh(SimTime::ns(length_ns), Duration::ns(busy_ns), cores,
                                     request_bits[k], result_bits[k]);
    out.wait_p99_s = wait_p99[k];
  }
  return series;
}

std::string time_series_csv(const TimeSeries& series) {
  std::string out = kTimeSeriesCsvHeader;
  out += '\n';
  auto real = [&](const std::optional<double>& v) {
    out += ',';
    if (v) append_shortest(out, *v);
  };
  auto count = [&](std::uint64_t v) {
    out += ',';
    append_integer(out, static_cast<std::int64_t>(v));
  };
  for (const TimeSlice& s : series.slices) {
    append_seconds9(out, s.start.count_ns());
    out += ',';
    append_seconds9(out, s.end.count_ns());
    count(s.arrivals);
    count(s.completions);
    count(s.deadline_misses);
    real(s.queue_len_mean);
    count(s.queue_len_max);
    real(s.busy_cores_mean);
    real(s.utilization);
    real(s.energy_wh);
    real(s.wait_p99_s);
    out += '\n';
  }
  return out;
}

}  // namespace infersim
