// The command line: parse, build the settings, run the scenario, hand the
// result to the reporters. Callable from a test without a process.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace infersim {

// Exit status: 0 success, 1 the output could not be written, 2 bad input
// (trace, settings, flags).
int run_command_line(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// "exact" -> 0; "1s", "10ms", "250us", "100ns" or a plain number of seconds.
// Throws InputError naming `label`.
double parse_time_resolution(const std::string& text, const std::string& label);

}  // namespace infersim
