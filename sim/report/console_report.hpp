// The console lines of a run: what the replay will do before it starts, and
// the seed's one-line result after.
#pragma once

#include <string>

#include "report/mode_result.hpp"
#include "request/synthetic_request_generator.hpp"
#include "request/trace_request_generator.hpp"

namespace infersim {

// "Trace trace/x.csv: azure-csv, timestamps as datetime, 8819 requests[, M rows
// filtered out]."
std::string trace_line(const Trace& trace);

// "Trace replay: N requests scheduled between A and B s, D dropped because they
// arrive after the end of the run at T s."
std::string replay_line(const GeneratedRequests& generated);

// "Synthetic poisson: N requests drawn at the trace's mean rate of λ/s until T s,
// mean sizes c context and g generated tokens, seed S."
std::string synthetic_line(const ModeResult& result, const TraceRates& rates,
                           const std::string& arrivals, const std::string& sizes);

// The seed's side-by-side table: recorded against synthetic with their ratio;
// a replicated synthetic column shows mean ± 95 % half-width.
std::string compare_table(const ModeResult& recorded, const ModeResult& synthetic);

// "recorded   tasks=  8819 ok=  3180 requests_ok= 3180/8819  compute=... s ..."
std::string result_line(const ModeResult& result);

// "recorded   ttft p50=… ms p99=… ms  tpot …  e2el …  max_concurrent=…": the
// serving figures under vLLM's names, the percentiles the summary holds.
std::string serving_line(const ModeResult& result);

}  // namespace infersim
