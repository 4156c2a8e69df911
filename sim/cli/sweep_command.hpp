// `infersim sweep`: a grid of runs over knob values, whole or one shard of it,
// written as sweep.csv. Callable from a test without a process.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/sweep.hpp"

namespace infersim {

// The sweep a settings file or shard.json holds (its `sweep` section), each
// knob and value checked as --vary checks them; `source` names the file.
Sweep sweep_from_section(const nlohmann::json& section, const std::string& source);

// The sweep's plots (studies/sweep_plots) from its sweep.csv text, written to
// `folder`/plots and rendered; a rendering problem is told on `err`. Returns
// the figures' names.
std::vector<std::string> write_sweep_plots(const std::filesystem::path& folder, const Sweep& sweep,
                                           const std::string& csv, std::ostream& err);

// Takes the words after the command's name and returns the exit status (0
// success); throws InputError for bad input and OutputError for a folder that
// cannot be written, as run_command_line expects.
int run_sweep_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace infersim
