#include "cli/data_files.hpp"

#include <algorithm>

#include "cli/data_dirs.hpp"
#include "core/input_error.hpp"

namespace infersim {
namespace fs = std::filesystem;
namespace {

bool is_own(const fs::path& path) {
  if (path.empty() || path.is_absolute()) return false;
  const std::string first = path.begin()->string();
  return first == "settings" || first == "trace";
}

// <prefix>/share/infersim when the program runs as <prefix>/bin/infersim and
// that folder exists (a program in a build folder has none).
fs::path installed_data() {
  std::error_code error;
  const fs::path program = fs::read_symlink("/proc/self/exe", error);
  if (error) return {};
  const fs::path data = (program.parent_path() / kDataFromProgram).lexically_normal();
  return fs::is_directory(data, error) ? data : fs::path();
}

std::string listed(const std::vector<fs::path>& places) {
  std::string out;
  for (const fs::path& place : places)
    out += (out.empty() ? "" : ", ") + place.string();
  return out;
}

}  // namespace

DataFile find_data_file(const std::string& path) {
  DataFile out;
  out.path = path;
  const fs::path given(path);
  std::error_code error;
  out.own = is_own(given);
  if (!out.own) {
    out.looked.push_back(given);
    out.found = fs::exists(given, error);
    return out;
  }
  const fs::path here = fs::current_path(error);
  std::vector<fs::path> places = {here / given, fs::path(kSourceTree) / given};
  if (const fs::path data = installed_data(); !data.empty()) places.push_back(data / given);
  for (const fs::path& place : places) {
    const fs::path normal = place.lexically_normal();
    bool seen = false;  // run from the source tree: its folder once
    for (const fs::path& before : out.looked)
      seen = seen || before == normal;
    if (seen) continue;
    out.looked.push_back(normal);
    if (fs::exists(normal, error)) {
      out.found = true;
      // The current folder's copy keeps the name it was given (settings.json
      // records it as typed).
      out.path = out.looked.size() == 1 ? path : normal.string();
      return out;
    }
  }
  return out;
}

std::string find_settings_file(const std::string& path) {
  const DataFile file = find_data_file(path);
  if (file.own && !file.found) {
    throw InputError(path, 0, "",
                     "cannot open the settings file; looked in " + listed(file.looked));
  }
  return file.path;
}

std::string find_hardware_folder() {
  const DataFile f = find_data_file("settings/hardware/gpus.json");
  if (!f.found) {
    std::string looked;
    for (const fs::path& p : f.looked)
      looked += (looked.empty() ? "" : ", ") + p.string();
    throw InputError("settings/hardware/gpus.json", 0, "", "not found (looked in " + looked + ")");
  }
  return fs::path(f.path).parent_path().string();
}

std::string find_kernels_folder() {
  const DataFile f = find_data_file("settings/kernels/README.md");
  if (!f.found) {
    std::string looked;
    for (const fs::path& p : f.looked)
      looked += (looked.empty() ? "" : ", ") + p.string();
    throw InputError("settings/kernels/README.md", 0, "", "not found (looked in " + looked + ")");
  }
  return fs::path(f.path).parent_path().string();
}

std::string find_preset_file(const std::string& name, const std::string& source,
                             const std::string& label) {
  const std::string path = "settings/presets/" + name + ".json";
  const DataFile file = find_data_file(path);
  if (file.found) return file.path;
  // Name the presets there are, from the first place that has the folder.
  std::vector<std::string> names;
  std::error_code error;
  for (const fs::path& place : file.looked) {
    const fs::path dir = place.parent_path();
    if (!fs::is_directory(dir, error)) continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
      if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
    }
    break;
  }
  std::sort(names.begin(), names.end());
  std::string known;
  for (const std::string& n : names)
    known += (known.empty() ? "" : ", ") + n;
  const auto near = nearest(name, names);
  throw InputError(
      source, 0, label,
      "no preset '" + name + "'" + (near ? " (did you mean " + *near + "?)" : std::string()) +
          (known.empty() ? "; looked in " + listed(file.looked) : "; the presets are " + known));
}

void find_trace(Settings& settings) {
  const DataFile file = find_data_file(settings.trace_path);
  if (!file.own || file.found) {
    settings.trace_path = file.path;
    return;
  }
  std::string fetch = "trace/fetch";
  std::error_code error;
  for (const fs::path& place : file.looked) {
    const fs::path script = place.parent_path() / "fetch";
    if (fs::exists(script, error)) {
      fetch = script.string();
      break;
    }
  }
  throw InputError(settings.trace_path, 0, "",
                   "cannot open the trace file; looked in " + listed(file.looked) +
                       "; the published traces are fetched by trace/fetch (run " + fetch + ")");
}

}  // namespace infersim
