// A parameter sweep: a grid of full runs, each the base settings with some
// knobs set to one of their values (the cartesian product, first axis
// outermost), run on threads and written as sweep.csv, a row a point and mode.
// A sweep can be cut into interleaved shards that run apart and merge back into
// the very file the whole sweep writes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/summary.hpp"
#include "scenario/settings.hpp"
#include "trace/trace.hpp"

namespace infersim {

// More points than this is a typo, not a study.
constexpr std::size_t kMaxSweepPoints = 1'000'000;

struct SweepAxis {
  std::string name;  // the knob's flag without dashes, e.g. "cores"; the column
  std::string key;   // the settings key it sets, e.g. "server.cores"
  // In sweep order, as the knob's flag takes them: numbers, words (router,
  // server, ...) as JSON strings, on/off switches as JSON booleans.
  std::vector<nlohmann::json> values;
  // The key takes 1/value: speedup X sets run.time_scale to 1/X.
  bool reciprocal = false;
  // A configuration axis (preset=A,B or settings=a.json,b.json) sets no one
  // key: each value is a whole configuration, its files under the command
  // line's flags, and `key` is empty. A point starts from its configuration
  // and takes the other axes' values over it. `documents` are the
  // configurations as settings.json writes them (the sweep's settings.json
  // carries them, so that it reruns without the files).
  std::vector<Settings> configurations = {};
  std::vector<nlohmann::ordered_json> documents = {};

  bool configures() const { return !configurations.empty(); }

  // The value the settings key takes at value index `i`.
  nlohmann::json setting_value(std::size_t i) const;
  // Every value a number (a knob that can be drawn on a numeric axis).
  bool numeric() const;
};

struct Sweep {
  std::vector<SweepAxis> axes;                                 // the first outermost
  std::vector<std::string> modes = {"recorded", "synthetic"};  // recorded first when both

  std::size_t point_count() const;
  // The value index on each axis of point `index` (the last axis varies fastest).
  std::vector<std::size_t> coordinates(std::size_t index) const;
  // The base settings (or the point's configuration) with point `index`'s
  // values and run.mode for the sweep's modes. Throws InputError naming the
  // knob's flag for a value the key refuses.
  Settings point_settings(const Settings& base, std::size_t index) const;
  // {"vary": [{"knob": "cores", "values": [1, 2]}, ...], "modes": [...]}; a
  // configuration axis's entry also holds "settings": its documents.
  nlohmann::ordered_json to_json() const;
};

// Checks the sweep can run before anything does: at least one axis, none
// empty, no knob twice, modes recorded and/or synthetic, at most
// kMaxSweepPoints points, and every point's settings accepted (each value
// through its key, then validate_settings). Throws InputError.
void check_sweep(const Sweep& sweep, const Settings& base);

// The run.mode that runs exactly the sweep's modes.
std::string sweep_run_mode(const std::vector<std::string>& modes);

// START, START+STEP, ... up to STOP inclusive. Each value is START + i*STEP
// (no running sum), rounded to 15 significant digits so that 0:1:0.1 gives 0.3
// rather than 0.30000000000000004; a value within a relative 1e-9 of STOP is
// STOP. Throws InputError naming `label` for STEP <= 0, STOP < START or more
// than kMaxSweepPoints values.
std::vector<double> range_values(double start, double stop, double step, const std::string& label);

// A value as sweep.csv shows it: a whole number as such, a real in its
// shortest round-trip form, a word as itself, a switch as on or off.
std::string sweep_value_text(const nlohmann::json& value);

// The K-th of N interleaved slices (1 <= K <= N): the points whose index
// modulo N is K-1.
struct SweepShard {
  std::uint64_t index = 1;
  std::uint64_t count = 1;
};
// "K/N"; throws InputError naming --shard.
SweepShard parse_shard(const std::string& text);
std::vector<std::size_t> shard_points(std::size_t point_count, SweepShard shard);

struct SweepModeSummary {
  std::string mode;
  Summary summary;
  Summary ci95;  // empty unless the synthetic mode was replicated
};
struct SweepPointResult {
  std::size_t index = 0;
  std::vector<SweepModeSummary> modes;  // the sweep's modes, recorded first
};

// Told how many points are done after each one, from the thread that ran it,
// one call at a time.
using SweepPointDone = std::function<void(std::size_t done)>;

// Runs the points (indices into the grid) on up to `threads` threads, each
// point one run_scenario on one thread; the trace is only read. The results
// come in the order of `points`, whatever `threads` is. Rethrows the first
// failure after every thread has stopped.
std::vector<SweepPointResult> run_sweep(const Sweep& sweep, const Settings& base,
                                        const Trace& trace, const std::vector<std::size_t>& points,
                                        unsigned threads, const SweepPointDone& point_done = {});

// The keys of a run's summary under these settings, in order, as summary.csv
// names them: an empty run's (which figures exist does not depend on the
// requests, only on settings such as the percentiles asked for).
std::vector<std::string> summary_keys(const Settings& settings);

// The figure columns of sweep.csv: the summary keys (of the first point, then
// of it with each axis value in turn), then their `_ci95` half-widths when some point
// replicates the synthetic mode. Fixed by the definition alone, so every shard
// writes the same header.
std::vector<std::string> sweep_figure_keys(const Sweep& sweep, const Settings& base);
// `mode,<axis names>,<figure keys>` and a newline.
std::string sweep_csv_header(const Sweep& sweep, const Settings& base);
// For each key, a comma and the figure as summary.csv writes it (nothing for a
// null or missing one), from `summary`, else from `ci95`.
void append_figure_fields(std::string& out, const std::vector<std::string>& keys,
                          const Summary& summary, const Summary* ci95 = nullptr);
// A point's rows, one a mode, in summary.csv's number format.
std::string sweep_csv_rows(const Sweep& sweep, const std::vector<std::string>& figure_keys,
                           const SweepPointResult& point);
// The header, then every result's rows in the order given.
std::string sweep_csv(const Sweep& sweep, const Settings& base,
                      const std::vector<SweepPointResult>& results);

// shard.json, the sidecar of a shard's sweep.csv: K, N, the total point count,
// the indices of its rows' points, the sweep definition and the base settings
// (`settings`: settings.json's sections but `sweep` and `meta`).
nlohmann::ordered_json shard_json(const Sweep& sweep, const nlohmann::ordered_json& settings,
                                  SweepShard shard, const std::vector<std::size_t>& points);

// One shard's output as merge reads it: where it came from, its shard.json and
// its sweep.csv.
struct SweepPart {
  std::string name;
  nlohmann::ordered_json shard;
  std::string csv;
};
// The sweep.csv the whole sweep writes, joined from its shards. Throws
// InputError when a part is malformed, when the parts are not of one sweep
// (definition, base settings but for the trace's path, N, header), when a
// point is in two parts, or when points are missing (naming the shards that
// hold them).
std::string merge_sweep_parts(const std::vector<SweepPart>& parts);

}  // namespace infersim
