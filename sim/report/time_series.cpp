#include "report/time_series.hpp"

#include <algorithm>

#include "core/input_error.hpp"
#include "report/number_format.hpp"
#include "report/summary.hpp"

namespace infersim {
namespace {

__extension__ typedef __int128 Int128;

// The slices' bounds: [k*S, (k+1)*S), the last one [(K-1)*S, end].
class SliceGrid {
 public:
  SliceGrid(std::int64_t slice_ns, std::int64_t end_ns, std::size_t count)
      : slice_ns_(slice_ns), end_ns_(end_ns), count_(count) {}
  std::size_t count() const { return count_; }
  std::size_t of(std::int64_t t) const {
    if (t <= 0) return 0;
    return static_cast<std::size_t>(std::min<std::int64_t>(t / slice_ns_, count_ - 1));
  }
  std::int64_t start(std::size_t k) const { return static_cast<std::int64_t>(k) * slice_ns_; }
  // (k+1)*S stays below the end for every slice but the last, so it fits.
  std::int64_t end(std::size_t k) const { return k + 1 == count_ ? end_ns_ : start(k + 1); }

 private:
  std::int64_t slice_ns_;
  std::int64_t end_ns_;
  std::size_t count_;
};

// A count that steps up at each interval's start and down at its end, swept
// over the slices: its integral (count x ns) and its largest value in each.
// At equal times the ends come first, so an interval [t, t) never counts.
struct Level {
  std::vector<Int128> integral_ns;
  std::vector<std::uint64_t> peak;
};

Level sweep(std::vector<std::pair<std::int64_t, int>> events, const SliceGrid& grid,
            std::int64_t end_ns) {
  std::sort(events.begin(), events.end());
  Level out{std::vector<Int128>(grid.count(), 0), std::vector<std::uint64_t>(grid.count(), 0)};
  std::int64_t level = 0;
  std::int64_t t = 0;
  auto hold_until = [&](std::int64_t to) {  // the level holds over [t, to)
    while (t < to) {
      const std::size_t k = grid.of(t);
      const std::int64_t upto = k + 1 == grid.count() ? to : std::min(to, grid.end(k));
      out.integral_ns[k] += static_cast<Int128>(level) * (upto - t);
      out.peak[k] = std::max(out.peak[k], static_cast<std::uint64_t>(level));
      t = upto;
    }
  };
  for (std::size_t i = 0; i < events.size();) {
    const std::int64_t time = events[i].first;
    hold_until(time);
    for (; i < events.size() && events[i].first == time; ++i)
      level += events[i].second;
    const std::size_t k = grid.of(time);
    out.peak[k] =
        std::max(out.peak[k], static_cast<std::uint64_t>(std::max<std::int64_t>(level, 0)));
  }
  hold_until(end_ns);
  return out;
}

}  // namespace

TimeSeriesCollector::TimeSeriesCollector(std::size_t expected_requests) {
  requests_.reserve(expected_requests);
}

void TimeSeriesCollector::on_issued(std::uint64_t, const Task& task, const RequestOutcome& o) {
  requests_.push_back(Request{task.arrival, o.server_arrival, o.start, o.finish, o.response,
                              o.response - task.arrival > task.budget, task.request_bits,
                              task.result_bits});
}

TimeSeries TimeSeriesCollector::compute(Duration slice, SimTime run_length, unsigned cores,
                                        const EnergyModel& energy) const {
  const std::string label = "report.slice_duration_s";
  if (slice.count_ns() <= 0) throw InputError("", 0, label, "must be greater than 0");
  SimTime end = run_length;
  for (const Request& r : requests_)
    end = std::max(end, r.response);
  const std::int64_t end_ns = std::max<std::int64_t>(end.count_ns(), 0);
  const std::int64_t s = slice.count_ns();
  const std::uint64_t count =
      std::max<std::uint64_t>(1, static_cast<std::uint64_t>(end_ns / s + (end_ns % s != 0)));
  if (count > kMaxSlices) {
    throw InputError("", 0, label,
                     shortest(slice.seconds()) + " s makes " + std::to_string(count) +
                         " slices of a run of " + shortest(end.seconds()) + " s; at most " +
                         std::to_string(kMaxSlices));
  }
  const SliceGrid grid(s, end_ns, count);

  TimeSeries series;
  series.slice = slice;
  series.slices.resize(count);
  std::vector<double> request_bits(count, 0), result_bits(count, 0);
  std::vector<std::pair<std::int64_t, int>> queue, busy;
  queue.reserve(2 * requests_.size());
  busy.reserve(2 * requests_.size());
  std::vector<std::size_t> starting(count + 1, 0);  // requests starting in each slice, then offsets
  for (const Request& r : requests_) {
    const std::size_t a = grid.of(r.arrival.count_ns());
    ++series.slices[a].arrivals;
    request_bits[a] += r.request_bits;
    result_bits[a] += r.result_bits;
    const std::size_t d = grid.of(r.response.count_ns());
    ++series.slices[d].completions;
    series.slices[d].deadline_misses += r.missed;
    queue.emplace_back(r.server_arrival.count_ns(), +1);
    queue.emplace_back(r.start.count_ns(), -1);
    busy.emplace_back(r.start.count_ns(), +1);
    busy.emplace_back(r.finish.count_ns(), -1);
    ++starting[grid.of(r.start.count_ns()) + 1];
  }
  const Level queued = sweep(std::move(queue), grid, end_ns);
  const Level running = sweep(std::move(busy), grid, end_ns);

  // Waits grouped by the slice their request starts in (a counting sort).
  for (std::size_t k = 0; k < count; ++k)
    starting[k + 1] += starting[k];
  std::vector<double> waits(requests_.size());
  {
    std::vector<std::size_t> next(starting.begin(), starting.end() - 1);
    for (const Request& r : requests_)
      waits[next[grid.of(r.start.count_ns())]++] = (r.start - r.server_arrival).seconds();
  }

  std::vector<double> in_slice;
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
    in_slice.assign(waits.begin() + static_cast<std::ptrdiff_t>(starting[k]),
                    waits.begin() + static_cast<std::ptrdiff_t>(starting[k + 1]));
    out.wait_p99_s = percentile(in_slice, 0.99);
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
