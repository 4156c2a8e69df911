// `infersim sweep`: a grid of runs over knob values, whole or one shard of it,
// written as sweep.csv. Callable from a test without a process.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/sweep.hpp"

namespace infersim {

// The settings of one value of a configuration axis (preset or settings): the
// axis, the value, and the document the sweep that wrote the section kept of
// it, if any.
using Configure =
    std::function<Settings(const std::string&, const std::string&, const nlohmann::json*)>;

// The sweep a settings file or shard.json holds (its `sweep` section), each
// knob and value checked as --vary checks them; `source` names the file. A
// configuration axis's settings come from `configure` (none: its values only,
// as merge needs them).
Sweep sweep_from_section(const nlohmann::json& section, const std::string& source,
                         const Configure& configure = {});

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
