#include "report/replication_bands.hpp"

#include <algorithm>
#include <functional>
#include <optional>

#include "core/number_format.hpp"

namespace infersim {
namespace {

struct Range {
  std::optional<double> low;
  std::optional<double> high;
  void add(const std::optional<double>& v) {
    if (!v) return;
    low = low ? std::min(*low, *v) : *v;
    high = high ? std::max(*high, *v) : *v;
  }
};

void append_range(std::string& out, const Range& r) {
  out += ',';
  if (r.low) append_shortest(out, *r.low);
  out += ',';
  if (r.high) append_shortest(out, *r.high);
}

// The value of a CDF column at fraction q, interpolated between its points.
double value_at(const std::vector<double>& fraction, const std::vector<double>& values, double q) {
  const auto above = std::lower_bound(fraction.begin(), fraction.end(), q);
  if (above == fraction.begin()) return values.front();
  if (above == fraction.end()) return values.back();
  const auto i = static_cast<std::size_t>(above - fraction.begin());
  const double f0 = fraction[i - 1];
  const double f1 = fraction[i];
  if (f1 == f0) return values[i];
  return values[i - 1] + (values[i] - values[i - 1]) * (q - f0) / (f1 - f0);
}

}  // namespace

std::string time_series_band_csv(const std::vector<TimeSeries>& series) {
  using Column = std::function<std::optional<double>(const TimeSlice&)>;
  std::vector<std::pair<std::string, Column>> columns = {
      {"arrivals", [](const TimeSlice& s) { return std::optional<double>(s.arrivals); }},
      {"queue_len_mean", [](const TimeSlice& s) { return s.queue_len_mean; }},
      {"busy_" + (series.empty() ? std::string("core") : series.front().unit) + "s_mean",
       [](const TimeSlice& s) { return s.busy_cores_mean; }},
      {"utilization", [](const TimeSlice& s) { return s.utilization; }},
      {"miss_rate",
       [](const TimeSlice& s) {
         return s.completions > 0 ? std::optional<double>(static_cast<double>(s.deadline_misses) /
                                                          static_cast<double>(s.completions))
                                  : std::nullopt;
       }},
      {"wait_p99_s", [](const TimeSlice& s) { return s.wait_p99_s; }},
      {"ttft_p99_s", [](const TimeSlice& s) { return s.ttft_p99_s; }},
  };
  const bool steps =
      std::any_of(series.begin(), series.end(), [](const TimeSeries& t) { return t.steps; });
  if (steps) {
    columns.push_back({"running_mean", [](const TimeSlice& s) { return s.running_mean; }});
    columns.push_back(
        {"kv_blocks_used_mean", [](const TimeSlice& s) { return s.kv_blocks_used_mean; }});
  }
  std::string out = "slice_start_s,slice_end_s";
  for (const auto& [name, column] : columns)
    out += "," + name + "_min," + name + "_max";
  out += '\n';
  const TimeSeries* longest = nullptr;
  for (const TimeSeries& t : series) {
    if (longest == nullptr || t.slices.size() > longest->slices.size()) longest = &t;
  }
  if (longest == nullptr) return out;
  for (std::size_t k = 0; k < longest->slices.size(); ++k) {
    append_seconds9(out, longest->slices[k].start.count_ns());
    out += ',';
    append_seconds9(out, longest->slices[k].end.count_ns());
    for (const auto& [name, column] : columns) {
      Range range;
      for (const TimeSeries& t : series) {
        if (k < t.slices.size()) range.add(column(t.slices[k]));
      }
      append_range(out, range);
    }
    out += '\n';
  }
  return out;
}

std::string cdf_band_csv(const std::vector<LatencyCdf>& cdfs) {
  std::string out = "fraction,wait_s_min,wait_s_max,ttft_s_min,ttft_s_max,e2el_s_min,e2el_s_max\n";
  if (cdfs.empty() || cdfs.front().fraction.empty()) return out;
  for (const double q : cdfs.front().fraction) {
    append_shortest(out, q);
    for (const auto member : {&LatencyCdf::wait_s, &LatencyCdf::ttft_s, &LatencyCdf::e2el_s}) {
      Range range;
      for (const LatencyCdf& cdf : cdfs) {
        if (!cdf.fraction.empty()) range.add(value_at(cdf.fraction, cdf.*member, q));
      }
      append_range(out, range);
    }
    out += '\n';
  }
  return out;
}

}  // namespace infersim
