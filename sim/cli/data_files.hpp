// Where the program finds its own files, the settings/ and trace/ folders, when
// it does not run from the repository's root: the current folder first, then
// the source tree it was built from, then the data folder of the prefix it is
// installed in (<prefix>/share/infersim, found from the program's own path, so
// the installed tree can move).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "scenario/settings.hpp"

namespace infersim {

struct DataFile {
  std::string path;                           // the file to open
  bool own = false;                           // under settings/ or trace/, looked up
  bool found = false;                         // it exists
  std::vector<std::filesystem::path> looked;  // every place tried, in order
};

// A relative path under settings/ or trace/ (the program's own folders) is
// looked for in the current folder, the source tree and the installed data
// folder, in that order; the first that exists is taken, as given when it is
// the current folder's, else as that full path. Any other path is the user's
// and taken as given.
DataFile find_data_file(const std::string& path);

// A settings file, found as find_data_file says. Throws InputError, naming
// every place looked in, when a file of settings/ is nowhere.
std::string find_settings_file(const std::string& path);

// The preset NAME, settings/presets/NAME.json, found as find_data_file says.
// Throws InputError naming the presets there are when there is none of that
// name, in `source` (a settings file; empty for the command line) at `label`
// (the flag or key that named it).
std::string find_preset_file(const std::string& name, const std::string& source = "",
                             const std::string& label = "--preset");

// The folder of the hardware catalog, settings/hardware/, found as
// find_data_file says. Throws InputError naming the places looked in.
std::string find_hardware_folder();
// The folder of the measured kernel tables, settings/kernels/ (a folder a
// GPU), likewise.
std::string find_kernels_folder();

// The settings' trace, found as find_data_file says. Throws InputError, naming
// every place looked in and trace/fetch, when a trace of trace/ is nowhere.
void find_trace(Settings& settings);

}  // namespace infersim
