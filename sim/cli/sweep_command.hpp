// The `sweep`, `merge` and `capacity` commands: a grid of runs over knob
// values (whole or one shard of it), the shards joined back into one
// sweep.csv, and the smallest knob value that meets a target. Callable from a
// test without a process.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace infersim {

// Each takes the words after its command's name and returns the exit status
// (0 success); they throw InputError for bad input and OutputError for a
// folder that cannot be written, as run_command_line expects.
int run_sweep_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_merge_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_capacity_command(const std::vector<std::string>& args, std::ostream& out,
                         std::ostream& err);

}  // namespace infersim
