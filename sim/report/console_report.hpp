// The console lines of a run: what the replay will do before it starts, and
// the seed's one-line result after.
#pragma once

#include <string>

#include "scenario/scenario.hpp"
#include "task/trace_task_generator.hpp"

namespace infersim {

// "Trace replay: N requests scheduled between A and B s, D dropped because they
// arrive after the end of the run at T s."
std::string replay_line(const GeneratedTasks& generated);

// "recorded   tasks=  8819 ok=  3180 requests_ok= 3180/8819  compute=... s ..."
std::string result_line(const ModeResult& result);

}  // namespace infersim
