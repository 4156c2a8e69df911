// The spread of a replicated synthetic mode: for each slice of the time
// series and each point of the latency CDF, the smallest and the largest
// value over the seeds (timeseries_band.csv, cdf_band.csv), the bands the
// plots draw around the first seed's curves.
#pragma once

#include <string>
#include <vector>

#include "report/serving_metrics.hpp"
#include "report/time_series.hpp"

namespace infersim {

// `slice_start_s,slice_end_s`, then `<column>_min,<column>_max` for arrivals,
// queue_len_mean, busy_<unit>s_mean, utilization, miss_rate (deadline misses
// over completions), wait_p99_s and ttft_p99_s, and running_mean and
// kv_blocks_used_mean when the server told its steps. A row a slice of the
// longest series (the seeds' runs may end at different instants); a field is
// empty where no seed has the figure.
std::string time_series_band_csv(const std::vector<TimeSeries>& series);

// `fraction,wait_s_min,wait_s_max,ttft_s_min,ttft_s_max,e2el_s_min,e2el_s_max`
// at the first CDF's fractions; each seed's value at a fraction is read off
// its own points by linear interpolation (the same fractions when every seed
// has at least as many requests as points). Empty (the header alone) without
// a CDF.
std::string cdf_band_csv(const std::vector<LatencyCdf>& cdfs);

}  // namespace infersim
