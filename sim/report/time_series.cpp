#include "report/time_series.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/input_error.hpp"
#include "core/number_format.hpp"
#include "model/replica_power.hpp"
#include "report/summary.hpp"

namespace infersim {
namespace {

__extension__ typedef __int128 Int128;

// Nothing in the run reaches back before 0, and every request's instants come
// in the model's order.
void check_order(const Request& task, const RequestOutcome& o) {
  if (task.arrival < SimTime::zero() || o.server_arrival < task.arrival) {
    throw std::logic_error("TimeSeriesCollector: a request's instants are out of order");
  }
  if (o.rejected) return;
  if (o.start < o.server_arrival || o.finish < o.start || o.response < o.finish) {
    throw std::logic_error("TimeSeriesCollector: a request's instants are out of order");
  }
}

}  // namespace

TimeSeriesCollector::TimeSeriesCollector(Duration slice)
    : slice_(slice), slice_ns_(std::max<std::int64_t>(slice.count_ns(), 1)) {}

TimeSeriesCollector::Raw& TimeSeriesCollector::grow(std::size_t j) {
  // slice_of keeps j within kMaxSlices (the last slice's end, exactly).
  raw_.resize(std::min<std::size_t>(kMaxSlices + 1, std::max(j + 1, 2 * raw_.size())));
  return raw_[j];
}

void TimeSeriesCollector::too_many_slices(const std::string& reason) const {
  throw InputError("", 0, "report.slice_duration_s",
                   shortest(slice_.seconds()) + " s makes " + reason + "; at most " +
                       std::to_string(kMaxSlices));
}

std::size_t TimeSeriesCollector::slice_of(std::int64_t t) {
  // Most instants fall in the slice of the one before.
  if (static_cast<std::uint64_t>(t - cached_start_) < static_cast<std::uint64_t>(cached_width_)) {
    return cached_slice_;
  }
  // An instant past kMaxSlices slices makes the run longer than that: refused
  // now, before the slices grow (compute would refuse it at the end).
  if (t > 0 && (t / slice_ns_ > static_cast<std::int64_t>(kMaxSlices) ||
                (t / slice_ns_ == static_cast<std::int64_t>(kMaxSlices) && t % slice_ns_ != 0))) {
    too_many_slices("more than " + std::to_string(kMaxSlices) + " slices of a run reaching " +
                    shortest(static_cast<double>(t) / 1e9) + " s");
  }
  const auto j =
      static_cast<std::size_t>(std::min<std::int64_t>(t <= 0 ? 0 : t / slice_ns_, kMaxSlices));
  if (j < kMaxSlices && t >= 0) {
    cached_slice_ = j;
    cached_start_ = static_cast<std::int64_t>(j) * slice_.count_ns();
    cached_width_ = slice_.count_ns();
  }
  return j;
}

void TimeSeriesCollector::occupy(std::int64_t from, std::int64_t to, Int128 Raw::*part,
                                 std::int64_t Raw::*whole, std::int64_t weight) {
  if (to <= from || weight == 0) return;
  const std::size_t first = slice_of(from);
  const std::size_t last = slice_of(to);
  const std::int64_t s = slice_.count_ns();
  if (first == last) {
    raw(first).*part += static_cast<Int128>(to - from) * weight;
    return;
  }
  // (first + 1) * S and last * S lie within [from, to].
  raw(last).*part += static_cast<Int128>(to - static_cast<std::int64_t>(last) * s) * weight;
  raw(first).*part += static_cast<Int128>(static_cast<std::int64_t>(first + 1) * s - from) * weight;
  raw(first + 1).*whole += weight;
  raw(last).*whole -= weight;
}

void TimeSeriesCollector::on_busy(std::uint32_t unit, SimTime from, SimTime to) {
  if (slice_.count_ns() <= 0) return;  // compute refuses it
  add_busy(unit, from.count_ns(), to.count_ns());
}

void TimeSeriesCollector::add_busy(std::uint32_t unit, std::int64_t a, std::int64_t b) {
  if (b > a && a >= 0) {
    const std::size_t j = slice_of(a);
    if (j < kMaxSlices && slice_of(b) == j) {
      // Within one slice, the usual case: what the loops below add, at once.
      if (!unit_dynamic_w_.empty()) add_dynamic(unit, j, b - a);
      raw(j).busy_ns += b - a;
      return;
    }
  }
  if (!unit_dynamic_w_.empty() && b > a) {
    // A fleet's busy energy, slice by slice.
    const std::int64_t s = slice_.count_ns();
    for (std::int64_t j = a / s; slice_start_ns(j, s) < b; ++j) {
      const std::int64_t lo = std::max(a, j * s), hi = std::min(b, slice_start_ns(j + 1, s));
      add_dynamic(unit, static_cast<std::size_t>(std::min<std::int64_t>(j, kMaxSlices)), hi - lo);
    }
  }
  occupy(a, b, &Raw::busy_ns, &Raw::busy_whole);
}

void TimeSeriesCollector::grow_dynamic(std::size_t slice) {
  dynamic_ws_.resize(slice + 1, 0.0);
}

void TimeSeriesCollector::on_step(const StepRecord& step) {
  if (slice_.count_ns() <= 0) return;  // compute refuses it
  steps_ = true;
  const std::int64_t from = step.start.count_ns();
  const std::int64_t to = step.end.count_ns();
  const std::size_t first = slice_of(from);
  const auto count = [&](Raw& here) {
    ++here.steps;
    here.scheduled_tokens += step.scheduled_tokens;
    here.preemptions += step.preemptions;
    here.admitted_tokens += step.admitted_tokens;
    here.hit_tokens += step.hit_tokens;
  };
  if (to > from && from >= 0 && first < kMaxSlices && slice_of(to) == first) {
    // Most steps lie within a slice: the replica's busy time (on_step's
    // contract; add_busy's case of one slice, with the slice found once) and
    // what the step holds, at once.
    const std::int64_t length = to - from;
    if (!unit_dynamic_w_.empty()) add_dynamic(step.replica, first, length);
    Raw& here = raw(first);
    here.busy_ns += length;
    count(here);
    here.running_ns += Int128{length} * step.running;
    here.waiting_ns += Int128{length} * step.waiting;
    here.kv_ns += Int128{length} * step.kv_blocks_used;
    return;
  }
  add_busy(step.replica, from, to);
  count(raw(first));
  occupy(from, to, &Raw::running_ns, &Raw::running_whole, step.running);
  occupy(from, to, &Raw::waiting_ns, &Raw::waiting_whole, step.waiting);
  occupy(from, to, &Raw::kv_ns, &Raw::kv_whole, step.kv_blocks_used);
}

void TimeSeriesCollector::on_request(std::uint64_t, const Request& task, const RequestOutcome& o) {
  if (slice_.count_ns() <= 0) return;  // compute refuses it
  check_order(task, o);
  if (task.arrival < last_arrival_) {
    throw std::logic_error("TimeSeriesCollector: requests not in arrival order");
  }
  last_arrival_ = task.arrival;
  // Every change of the queue before this arrival is known: a later request
  // joins it no earlier than it arrives.
  sweep(task.arrival.count_ns());

  Raw& arrived = raw(slice_of(task.arrival.count_ns()));
  ++arrived.arrivals;
  arrived.request_bits += task.request_bits;
  if (o.rejected) {
    // Missed where it was refused; its result is never sent.
    ++raw(slice_of(o.server_arrival.count_ns())).misses;
    return;
  }
  arrived.result_bits += task.result_bits;
  const std::size_t arrival_slice = slice_of(task.arrival.count_ns());
  if (open_ttfts_.empty() || open_ttfts_.back().slice != arrival_slice) {
    if (arrival_slice > 0) close_ttfts_below(arrival_slice - 1);
    open_ttfts_.push_back({arrival_slice, {}});
  }
  open_ttfts_.back().values_s.push_back((o.first_token - task.arrival).seconds());
  Raw& answered = raw(slice_of(o.response.count_ns()));
  ++answered.completions;
  answered.misses += o.response - task.arrival > task.budget;
  last_response_ = std::max(last_response_, o.response);
  if (o.handed_over) {
    occupy(o.first_token_server.count_ns(), o.transfer_end.count_ns(), &Raw::transfer_ns,
           &Raw::transfer_whole);
    occupy(o.transfer_end.count_ns(), o.decode_start.count_ns(), &Raw::decode_wait_ns,
           &Raw::decode_wait_whole);
  }

  const std::int64_t joined = o.server_arrival.count_ns();
  const std::int64_t started = o.start.count_ns();
  if (started == joined) {
    // In the queue for no time: it never counts in its length.
    ++raw(slice_of(started)).unqueued_starts;
    return;
  }
  occupy(joined, started, &Raw::queued_ns, &Raw::queued_whole);
  joins_.push(joined);
  leaves_.push({started, started - joined});
}

void TimeSeriesCollector::sweep(std::optional<std::int64_t> bound) {
  const std::int64_t s = slice_.count_ns();
  for (;;) {
    // The next instant the queue changes at, with every change at it.
    std::optional<std::int64_t> next;
    if (!joins_.empty()) next = joins_.front();
    if (!leaves_.empty() && (!next || leaves_.front().first < *next)) next = leaves_.front().first;
    if (!next || (bound && *next >= *bound)) return;
    const std::int64_t t = *next;
    const std::size_t j = slice_of(t);
    Raw& here = raw(j);
    if (j > swept_slice_) {
      // The length held since the last change covers the slices between
      // whole, and this one from its start, unless the change is at its start.
      if (queued_ > 0) {
        for (std::size_t k = swept_slice_ + 1; k < j; ++k)
          raw_[k].queue_peak = std::max(raw_[k].queue_peak, static_cast<std::uint64_t>(queued_));
        if (t > static_cast<std::int64_t>(j) * s) {
          here.queue_peak = std::max(here.queue_peak, static_cast<std::uint64_t>(queued_));
        }
      }
      swept_slice_ = j;
    }
    while (!leaves_.empty() && leaves_.front().first == t) {
      if (open_waits_.empty() || open_waits_.back().slice != j) {
        // The slices before the previous one cannot be the run's last
        // (which takes every later slice): their waits are complete.
        if (j > 0) close_waits_below(j - 1);
        open_waits_.push_back({j, {}});
      }
      open_waits_.back().values_s.push_back(Duration::ns(leaves_.front().second).seconds());
      leaves_.pop();
      --queued_;
    }
    while (!joins_.empty() && joins_.front() == t) {
      joins_.pop();
      ++queued_;
    }
    here.queue_peak = std::max(here.queue_peak, static_cast<std::uint64_t>(queued_));
  }
}

void TimeSeriesCollector::close_waits_below(std::size_t slice) {
  std::vector<double> values;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < open_waits_.size(); ++i) {
    OpenSlice& open = open_waits_[i];
    if (open.slice >= slice) {
      if (kept != i) open_waits_[kept] = std::move(open);
      ++kept;
      continue;
    }
    // Every request starting in the slice has been seen: those that waited
    // are here, and no later one can start before its own arrival.
    Raw& r = raw(open.slice);
    values = std::move(open.values_s);
    values.resize(values.size() + r.unqueued_starts, Duration::zero().seconds());
    r.wait_p99_s = percentile(values, 0.99);
    r.wait_final = true;
  }
  open_waits_.resize(kept);
}

void TimeSeriesCollector::close_ttfts_below(std::size_t slice) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < open_ttfts_.size(); ++i) {
    OpenSlice& open = open_ttfts_[i];
    if (open.slice >= slice) {
      if (kept != i) open_ttfts_[kept] = std::move(open);
      ++kept;
      continue;
    }
    // Arrivals come in order: no later request arrives in this slice.
    Raw& r = raw(open.slice);
    r.ttft_p99_s = percentile(open.values_s, 0.99);
    r.ttft_final = true;
  }
  open_ttfts_.resize(kept);
}

TimeSeries TimeSeriesCollector::compute(SimTime run_length, const ServerModel& server,
                                        const ServerUsage& usage, const RadioEnergy& radio) {
  if (computed_) throw std::logic_error("TimeSeriesCollector::compute called twice");
  const std::string label = "report.slice_duration_s";
  if (slice_.count_ns() <= 0) throw InputError("", 0, label, "must be greater than 0");
  const SimTime end = std::max(run_length, last_response_);
  const std::int64_t end_ns = std::max<std::int64_t>(end.count_ns(), 0);
  const std::int64_t s = slice_.count_ns();
  const std::uint64_t count =
      std::max<std::uint64_t>(1, static_cast<std::uint64_t>(end_ns / s + (end_ns % s != 0)));
  if (count > kMaxSlices) {
    too_many_slices(std::to_string(count) + " slices of a run of " + shortest(end.seconds()) +
                    " s");
  }
  computed_ = true;
  sweep(std::nullopt);
  raw(count - 1);  // every slice of the run exists

  // The run's slices: slice k of the raw ones, the last also every later one
  // (what happens at `end` exactly), its bits added in slice order.
  TimeSeries series;
  series.slice = slice_;
  series.unit = usage.unit;
  series.fleet = !usage.spans.empty();
  // A fleet's replicas provisioned and active, and their idle energy, a slice.
  std::vector<double> provisioned_ns(count, 0), active_ns(count, 0), idle_ws(count, 0),
      usd_ns(count, 0);
  for (const ReplicaSpan& span : usage.spans) {
    const auto add = [&](std::int64_t from, std::int64_t to, std::vector<double>& into,
                         double weight) {
      if (to <= from) return;
      for (std::int64_t j = from / s;
           slice_start_ns(j, s) < to && static_cast<std::uint64_t>(j) < count; ++j) {
        const std::int64_t lo = std::max(from, j * s);
        const std::int64_t hi = static_cast<std::uint64_t>(j) + 1 == count
                                    ? to
                                    : std::min(to, slice_start_ns(j + 1, s));
        into[static_cast<std::size_t>(j)] += weight * static_cast<double>(hi - lo);
      }
    };
    const std::int64_t to = std::min(span.to.count_ns(), end_ns);
    add(span.from.count_ns(), to, provisioned_ns, 1);
    add(span.from.count_ns(), to, idle_ws, usage.class_idle_w.at(span.cls));
    add(span.from.count_ns(), to, usd_ns, usage.class_usd_per_hour.at(span.cls));
    if (span.active_from) add(span.active_from->count_ns(), to, active_ns, 1);
  }
  series.steps = steps_;
  const double units = usage.units;
  series.slices.resize(count);
  std::vector<double> request_bits(count, 0), result_bits(count, 0);
  std::vector<Int128> queued_ns(count, 0), busy_ns(count, 0);
  std::vector<std::uint64_t> unqueued(count, 0);
  std::int64_t queued_whole = 0, busy_whole = 0;
  std::vector<Int128> running_ns(count, 0), waiting_ns(count, 0), kv_ns(count, 0);
  std::vector<std::uint64_t> admitted(count, 0), hits(count, 0);
  std::int64_t running_whole = 0, waiting_whole = 0, kv_whole = 0;
  std::vector<Int128> transfer_ns(count, 0), decode_wait_ns(count, 0);
  std::int64_t transfer_whole = 0, decode_wait_whole = 0;
  series.handovers = handovers_;
  for (std::size_t j = 0; j < raw_.size(); ++j) {
    const Raw& r = raw_[j];
    const std::size_t k = std::min<std::size_t>(j, count - 1);
    TimeSlice& out = series.slices[k];
    out.arrivals += r.arrivals;
    out.completions += r.completions;
    out.deadline_misses += r.misses;
    out.queue_len_max = std::max(out.queue_len_max, r.queue_peak);
    request_bits[k] = j < count ? r.request_bits : request_bits[k] + r.request_bits;
    result_bits[k] = j < count ? r.result_bits : result_bits[k] + r.result_bits;
    queued_whole += r.queued_whole;
    busy_whole += r.busy_whole;
    queued_ns[k] += r.queued_ns + static_cast<Int128>(queued_whole) * s;
    busy_ns[k] += r.busy_ns + static_cast<Int128>(busy_whole) * s;
    unqueued[k] += r.unqueued_starts;
    if (r.wait_final) out.wait_p99_s = r.wait_p99_s;
    if (r.ttft_final) out.ttft_p99_s = r.ttft_p99_s;
    running_whole += r.running_whole;
    waiting_whole += r.waiting_whole;
    kv_whole += r.kv_whole;
    running_ns[k] += r.running_ns + static_cast<Int128>(running_whole) * s;
    waiting_ns[k] += r.waiting_ns + static_cast<Int128>(waiting_whole) * s;
    kv_ns[k] += r.kv_ns + static_cast<Int128>(kv_whole) * s;
    transfer_whole += r.transfer_whole;
    decode_wait_whole += r.decode_wait_whole;
    transfer_ns[k] += r.transfer_ns + static_cast<Int128>(transfer_whole) * s;
    decode_wait_ns[k] += r.decode_wait_ns + static_cast<Int128>(decode_wait_whole) * s;
    out.steps += r.steps;
    out.scheduled_tokens += r.scheduled_tokens;
    out.preemptions += r.preemptions;
    admitted[k] += r.admitted_tokens;
    hits[k] += r.hit_tokens;
  }
  // The waits still open, and the slices where no request waited.
  std::vector<std::vector<double>> waits(count);
  for (OpenSlice& open : open_waits_) {
    std::vector<double>& into = waits[std::min<std::size_t>(open.slice, count - 1)];
    into.insert(into.end(), open.values_s.begin(), open.values_s.end());
  }
  open_waits_.clear();
  for (std::size_t k = 0; k < count; ++k) {
    if (k < raw_.size() && raw_[k].wait_final) continue;
    waits[k].resize(waits[k].size() + unqueued[k], Duration::zero().seconds());
    series.slices[k].wait_p99_s = percentile(waits[k], 0.99);
  }

  // The TTFTs still open: the run's last slices (the last takes every later one).
  std::vector<std::vector<double>> ttfts(count);
  std::vector<bool> ttft_open(count, false);
  for (OpenSlice& open : open_ttfts_) {
    const std::size_t k = std::min<std::size_t>(open.slice, count - 1);
    ttfts[k].insert(ttfts[k].end(), open.values_s.begin(), open.values_s.end());
    ttft_open[k] = true;
  }
  open_ttfts_.clear();
  for (std::size_t k = 0; k < count; ++k) {
    if (ttft_open[k]) series.slices[k].ttft_p99_s = percentile(ttfts[k], 0.99);
  }

  for (std::size_t k = 0; k < count; ++k) {
    TimeSlice& out = series.slices[k];
    const std::int64_t start_ns = static_cast<std::int64_t>(k) * s;
    // (k+1)*S stays below the end for every slice but the last, so it fits.
    const std::int64_t stop_ns = k + 1 == count ? end_ns : start_ns + s;
    out.start = SimTime::ns(start_ns);
    out.end = SimTime::ns(stop_ns);
    const std::int64_t length_ns = stop_ns - start_ns;
    const auto busy = static_cast<std::int64_t>(busy_ns[k]);
    if (length_ns > 0) {
      const double length = static_cast<double>(length_ns);
      out.queue_len_mean = static_cast<double>(queued_ns[k]) / length;
      out.busy_cores_mean = static_cast<double>(busy) / length;
      out.utilization = static_cast<double>(busy) / (length * units);
      if (series.fleet) {
        out.replicas_provisioned_mean = provisioned_ns[k] / length;
        out.replicas_active_mean = active_ns[k] / length;
        out.cost_usd = usd_ns[k] / 3.6e12;
        out.utilization = provisioned_ns[k] > 0
                              ? std::optional<double>(static_cast<double>(busy) / provisioned_ns[k])
                              : std::nullopt;
      }
      if (steps_) {
        out.running_mean = static_cast<double>(running_ns[k]) / length;
        out.waiting_mean = static_cast<double>(waiting_ns[k]) / length;
        out.kv_blocks_used_mean = static_cast<double>(kv_ns[k]) / length;
      }
      if (handovers_) {
        out.kv_transfers_mean = static_cast<double>(transfer_ns[k]) / length;
        out.decode_waiting_mean = static_cast<double>(decode_wait_ns[k]) / length;
      }
    }
    if (admitted[k] > 0) {
      out.prefix_hit_rate = static_cast<double>(hits[k]) / static_cast<double>(admitted[k]);
    }
    if (series.fleet) {
      // Slices past the last busy one (kMaxSlices at most) hold no busy energy.
      double dynamic = 0;
      if (k + 1 == count) {
        for (std::size_t j = k; j < dynamic_ws_.size(); ++j)
          dynamic += dynamic_ws_[j];
      } else if (k < dynamic_ws_.size()) {
        dynamic = dynamic_ws_[k];
      }
      out.energy_wh = replica_energy_wh(idle_ws[k], dynamic, 1e9) +
                      radio.radio_wh(request_bits[k], result_bits[k]);
    } else {
      out.energy_wh = server.energy_wh(Duration::ns(length_ns), Duration::ns(busy)) +
                      radio.radio_wh(request_bits[k], result_bits[k]);
    }
  }
  return series;
}

std::string time_series_csv_header(const TimeSeries& series) {
  return "slice_start_s,slice_end_s,arrivals,completions,deadline_misses,queue_len_mean,"
         "queue_len_max,busy_" +
         series.unit + "s_mean,utilization,energy_wh,wait_p99_s" +
         (series.steps ? ",running_mean,waiting_mean,kv_blocks_used_mean,steps,scheduled_tokens,"
                         "preemptions,prefix_hit_rate"
                       : "") +
         ",ttft_p99_s" +
         (series.fleet ? ",replicas_provisioned_mean,replicas_active_mean,cost_usd" : "") +
         (series.handovers ? ",kv_transfers_mean,decode_waiting_mean" : "");
}

std::string time_series_csv(const TimeSeries& series) {
  std::string out = time_series_csv_header(series);
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
    if (series.steps) {
      real(s.running_mean);
      real(s.waiting_mean);
      real(s.kv_blocks_used_mean);
      count(s.steps);
      count(s.scheduled_tokens);
      count(s.preemptions);
      real(s.prefix_hit_rate);
    }
    real(s.ttft_p99_s);
    if (series.fleet) {
      real(s.replicas_provisioned_mean);
      real(s.replicas_active_mean);
      real(s.cost_usd);
    }
    if (series.handovers) {
      real(s.kv_transfers_mean);
      real(s.decode_waiting_mean);
    }
    out += '\n';
  }
  return out;
}

}  // namespace infersim
