// `infersim merge`: the shards of a sweep joined back into the sweep.csv the
// whole sweep writes. Callable from a test without a process.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace infersim {

// Takes the words after the command's name and returns the exit status (0
// success); throws InputError for bad input and OutputError for a folder that
// cannot be written, as run_command_line expects.
int run_merge_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace infersim
