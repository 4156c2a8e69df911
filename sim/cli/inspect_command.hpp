// `infersim inspect`: reads a trace as `run` would and prints its workload
// profile (rate, burstiness, sizes, prompt-block reuse) as a table or as JSON,
// before any simulation. Callable from a test without a process.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace infersim {

// `args` are the words after "inspect". Returns 0; throws InputError for a bad
// flag, value or trace (the caller prints it and exits with 2).
int run_inspect_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace infersim
