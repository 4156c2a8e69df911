// The console lines of a run: what the replay will do before it starts, and
// after it the result block vLLM's benchmark prints, the seed's table and a
// warning when a server did not keep up.
#pragma once

#include <string>
#include <vector>

#include "report/mode_result.hpp"
#include "request/synthetic_request_generator.hpp"
#include "request/trace_request_generator.hpp"

namespace infersim {

// "Trace trace/x.csv: azure-csv, timestamps as datetime, 8819 requests[, M rows
// filtered out]."
std::string trace_line(const Trace& trace);

// Lines of cells as the console's tables lay them out: each column as wide as
// its widest cell and two more (the first at least `first_width`), the last
// column unpadded; a line of one cell (a section's rule) is as it is.
std::string columns(const std::vector<std::vector<std::string>>& lines,
                    std::size_t first_width = 0);

// "Trace replay: N requests scheduled between A and B s, D dropped because they
// arrive after the end of the run at T s."
std::string replay_line(const GeneratedRequests& generated);

// "Synthetic poisson: N requests drawn at the trace's mean rate of λ/s until T s,
// mean sizes c context and g generated tokens, seed S." A replicated mode adds
// the seeds and the mean count they drew, as the tables show it.
std::string synthetic_line(const ModeResult& result, const TraceRates& rates,
                           const std::string& arrivals, const std::string& sizes);

// The result block of vLLM's `vllm bench serve` ("Serving Benchmark Result":
// requests, duration, tokens, throughputs, peak concurrency, then the TTFT,
// TPOT, ITL (when the server tells its token instants), E2E latency and wait
// sections with the mean, the median and every percentile asked, in ms),
// then the deadline figures; one column a mode, side by side, a replicated
// mode's cells as mean ± 95 % half-width.
std::string benchmark_block(const std::vector<const ModeResult*>& results);

// The seed's table: the modes' figures under their names (comparison_rows),
// and with two modes their ratio, recorded / synthetic; a replicated column
// shows mean ± 95 % half-width.
std::string figures_table(const std::vector<const ModeResult*>& results);
// A fleet's bill (BATCHING.md section 11), a block a mode: its replica-hours,
// GPU-hours, cost, $ a million tokens, scale-ups and scale-downs, then each
// class's replica-hours, GPUs a replica, GPU-hours, price a GPU-hour and
// cost, so that cost = Σ price x GPUs x replica-hours reads off the lines;
// empty without a fleet. figures_table ends with it.
std::string fleet_bill(const std::vector<const ModeResult*>& results);

// figures_table of recorded against synthetic.
std::string compare_table(const ModeResult& recorded, const ModeResult& synthetic);

// A warning line for each mode whose server did not keep up (load_verdict),
// each ending in a newline; empty when none.
std::string load_warnings(const std::vector<const ModeResult*>& results);

}  // namespace infersim
