// `infersim validate`: runs the engine and the edge server on generated M/M/c
// and M/D/1 workloads and prints their mean waiting time beside queueing
// theory's. Callable from a test without a process.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace infersim {

// `args` are the words after "validate". Prints a table, one row a case.
// Returns 0 when every case agrees with its formula, 1 when one differs; throws
// InputError for a bad flag or value (the caller prints it and exits with 2).
int run_validate_command(const std::vector<std::string>& args, std::ostream& out,
                         std::ostream& err);

}  // namespace infersim
