// The command line: parse, build the settings, run the scenario, hand the
// result to the reporters. Callable from a test without a process.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/run_options.hpp"

namespace infersim {

// Exit status: 0 success, 1 the output could not be written, 2 bad input
// (trace, settings, flags).
int run_command_line(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The time now in UTC as 2026-12-02T15:30:12Z: settings.json's meta.written_at.
std::string utc_now_iso();

}  // namespace infersim
