// How a figure is named and written, the same on the console, on the report
// page and in the plots: a summary key's label in the words of the server
// that ran (a core's wait, a replica's; no cores where the server has none),
// seconds in the unit that reads, a mode's title and a ratio.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/mode_result.hpp"

namespace infersim {

enum class FigureUnit {
  kCount,         // a count (a mean of counts with one decimal)
  kShare,         // a fraction, shown in percent
  kSeconds,       // a duration, in the unit that reads (duration_text)
  kTotalSeconds,  // a sum of durations, in seconds with two decimals
  kReqPerS,
  kTokPerS,
  kTokens,
  kWh,
  kMb,
  kDecimal,  // a plain number with two decimals (a mean batch size)
};

struct FigureRow {
  std::string label;
  std::string key;
  FigureUnit unit;
};

// "Recorded trace", "Synthetic poisson", "Synthetic gamma, burstiness 4".
std::string mode_title(const ModeResult& result);
// The title of a mode's column: mode_title, and for a replicated mode
// ", mean ± 95 % CI of R seeds".
std::string column_title(const ModeResult& result);
// The name of a mode's curves in a plot: "recorded trace", "synthetic poisson".
std::string series_label(const ModeResult& result);

// What served a mode, counted: "8 cores", "1 replica".
std::string units_text(const ModeResult& result);
// What a mode's busy share is over, with its verb: "the 8 cores were", or for
// a fleet, whose share is over the replica-time provisioned, "the replicas
// provisioned (at most 8 at once) were", its own peak from `summary` (the
// mode's, or its first seed's).
std::string busy_units_text(const ModeResult& result, const Summary& summary);
// The label of a summary key in the words of the server that ran (its own
// for "utilization", "compute_s" and its wait); the key itself when it has none.
std::string figure_label(const std::string& key, const ServerDescription& server);
// The unit a summary key is shown in.
FigureUnit figure_unit(const std::string& key);

// Seconds as they read: below a second in ms ("5.680 ms", "473.0 ms"), then
// seconds ("13.582 s", "127.4 s"), from 1000 s minutes ("25.0 min"), from two
// hours hours ("3.92 h"). With a half-width, both in the unit of the value
// ("473.0 ± 1.2 ms").
std::string duration_text(double seconds, std::optional<double> half_width = std::nullopt);
// Milliseconds with two decimals, as vLLM's benchmark prints latencies; from a
// minute on, the duration as it reads follows ("594118.70 (9.9 min)").
std::string millis_text(double seconds, std::optional<double> half_width = std::nullopt);

// A value in its unit; `mean_of_runs` gives counts a decimal.
std::string figure_text(double value, FigureUnit unit,
                        std::optional<double> half_width = std::nullopt, bool mean_of_runs = false);
// A mode's cell for a row: its value (± the 95 % half-width when replicated),
// "n/a" when the figure does not exist; success_rate adds the count that met
// their deadline ("35.99 % (3174)").
std::string figure_cell(const ModeResult& result, const FigureRow& row);

// The value of a key, or none when it is missing or null.
std::optional<double> figure_value(const Summary& summary, const std::string& key);
// Whether the summary holds the key (null or not).
bool holds(const Summary& summary, const std::string& key);
// The percentile keys of a metric the summary holds ("ttft_p50_s",
// "ttft_p99.9_s", ...) with their percentiles, by increasing percentile.
std::vector<std::pair<double, std::string>> percentile_keys(const Summary& summary,
                                                            const std::string& metric);

// a / b, "n/a" when either is missing or b is 0; three decimals below 100,
// none from there.
std::string ratio_text(std::optional<double> a, std::optional<double> b);

// The rows of the seed's comparison table for the server that ran the first
// mode: its figures under their names, then the serving figures, then the
// batching server's own (prefix hits, preemptions, rejections, KV cache,
// batch size, inter-token latency). Rows whose figure the summary does not
// hold are left out.
std::vector<FigureRow> comparison_rows(const ModeResult& first);

// The line a derived preset used with nothing measured gets: its expected
// error in percent and the evidence it comes from ("the mean |error| of RUN,
// a run of ...": settings/presets/README.md), said as what it is; `used_by` names the fleet's
// classes that use it (empty for a run's own preset).
std::string preset_error_line(const std::string& preset, const std::string& used_by,
                              double ttft_pct, double tpot_pct, double latency_pct,
                              const std::string& from);

}  // namespace infersim
