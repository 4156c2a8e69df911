// `infersim calibrate`: fits the cost knobs to a benchmark's per-request
// measurements (aiperf, vLLM or CSV) and writes a complete settings file that
// `infersim run --settings` takes. Callable from a test without a process.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace infersim {

// `args` are the words after "calibrate". Prints the fit; returns 0 once the
// settings file is written. Throws InputError for a bad flag, file or value and
// OutputError when the settings file cannot be written.
int run_calibrate_command(const std::vector<std::string>& args, std::ostream& out,
                          std::ostream& err);

}  // namespace infersim
