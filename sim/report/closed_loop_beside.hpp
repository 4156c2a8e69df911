// What a closed-loop benchmark hides (MODEL.md section 4b): a compare run's
// recorded requests sent again by a closed loop of as many clients as the
// recorded hour held in flight on average, set beside the recorded hour and
// the Poisson run. The console's block, and the run folder's part:
// closed-loop/ (its summary.json and cdf.csv), its summary under
// `closed_loop` in the recorded mode's summary.json, and the page's section.
#pragma once

#include <cstdint>
#include <string>

#include "report/mode_result.hpp"
#include "report/run_writer.hpp"

namespace infersim {

// The recorded mode's mean number in flight by Little's law (request
// throughput x mean E2E latency), rounded, at least 1: the closed loop's N.
std::uint32_t clients_for(const ModeResult& recorded);

// The console's block: a few figures of the three runs side by side, and
// what the closed loop leaves out. `synthetic` may be null.
std::string closed_loop_beside_text(const ModeResult& recorded, const ModeResult& closed,
                                    const ModeResult* synthetic);

// The run folder's part (report/run_writer.hpp's RunSection). The results
// must outlive it.
RunSection closed_loop_beside_section(const ModeResult& recorded, const ModeResult& closed,
                                      const ModeResult* synthetic);

}  // namespace infersim
