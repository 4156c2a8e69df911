// What the commands share: the run's options on the command lines of sweep,
// merge and capacity, -j, the base settings under the grid or the search, a
// knob named by its flag, the modes, and the settings.json of their folders.
#pragma once

#include <boost/program_options.hpp>

#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/hardware_model.hpp"
#include "cli/run_options.hpp"
#include "report/summary.hpp"
#include "scenario/scenario.hpp"
#include "scenario/settings.hpp"

namespace infersim {

// --settings, the knob flags, --output and --force, as `run` has them.
void add_run_options(boost::program_options::options_description& options);
void add_jobs_option(boost::program_options::options_description& options);

// parse_options with the command's messages.
boost::program_options::variables_map parse_command(
    const std::vector<std::string>& args,
    const boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional,
    const std::string& command);

std::string text_of(const boost::program_options::variables_map& vm, const char* name);
// -j N, else the cores this process may use.
unsigned threads_from(const boost::program_options::variables_map& vm);
// --figures-weight W (a finite number, 0 or more), else 0: the fit's weight
// on the table's headline figures (calibration/measured_report.hpp).
double figures_weight_from(const boost::program_options::variables_map& vm);

// The base settings: defaults, the file of --preset, the settings file, the
// knob flags. A settings file a sweep or capacity search wrote carries its
// definition in a `sweep` or `capacity` section; that section comes back in
// `section` (null if absent) and the rest applies as any settings file. A
// capacity search's base is checked whole; a sweep's points are (check_sweep).
Settings base_settings(const boost::program_options::variables_map& vm,
                       const std::string& section_name, nlohmann::json& section);

// A sweep axis whose values are whole configurations: preset (NAME: as
// --preset) or settings (FILE: as --settings).
bool is_configuration_axis(const std::string& name);
// One value of such an axis, as run would take it with the sweep's command
// line: the preset's file under --settings, or --preset's under the value's
// file; then the knob flags. With `document` (a configuration a sweep wrote,
// read from `source`) that document replaces the files.
Settings configuration_settings(const boost::program_options::variables_map& vm,
                                const std::string& axis, const std::string& value,
                                const nlohmann::json* document, const std::string& source);

// Defaults, then the file of --preset (settings/presets/NAME.json), then the
// file of --settings; `given` gains every key the files set.
Settings settings_from_files(const boost::program_options::variables_map& vm,
                             std::set<std::string>& given);
// The batching sections of the presets a fleet's classes name, read into
// settings.fleet_presets (BATCHING.md section 11).
void load_fleet_presets(Settings& settings);

// A knob flag given on the command line, set (a goodput flag's words joined).
void set_knob_from(Settings& settings, const boost::program_options::variables_map& vm,
                   const KnobFlag& flag);

// --speedup (checked against --time-scale), --filter, and a --trace that
// replaces the one a settings file pinned (its SHA-256 forgotten).
void apply_trace_flags(Settings& settings, const boost::program_options::variables_map& vm);

// speedup as a knob of its own: X sets run.time_scale to 1/X (traffic growth).
const KnobFlag& speedup_knob();

// A knob a sweep may vary, by its flag's name (`label` names where it was
// given): one that takes a number (ranges allowed), an on/off switch or a word
// (router, server, sizes, arrivals; lists only), or speedup. Knobs that read
// the trace or choose the output files are refused: a sweep reads one trace and
// keeps summaries.
const KnobFlag& sweep_knob(const std::string& name, const std::string& label);
// A knob a capacity search may bisect: one that takes a number.
const KnobFlag& numeric_knob(const std::string& name, const std::string& label);
// Whether the knob takes a number (and so START:STOP:STEP ranges).
bool takes_number(const KnobFlag& flag);
// Refuses a knob both fixed by its flag (or --speedup or --time-scale for the
// time scale) and varied.
void refuse_fixed_and_varied(const boost::program_options::variables_map& vm, const KnobFlag& flag,
                             const std::string& by);

// `text` cut at every `separator` (empty items kept).
std::vector<std::string> split(const std::string& text, char separator);
// "recorded", "synthetic" or both, in that order.
std::vector<std::string> parse_modes(const std::string& text);

// The folder's settings.json: the effective settings with the trace read.
nlohmann::ordered_json settings_document(const Settings& settings, const LoadedTrace& loaded);
// The program, its version and the time, under `meta`.
// A line for each preset the settings' knobs came from: how far its figures
// may be, and the evidence (settings.preset_errors), naming the fleet's
// classes that use it.
std::vector<std::string> preset_error_lines(const Settings& settings);
void add_meta(nlohmann::ordered_json& document);
// load_trace, warning on `err` of lines out of timestamp order.
LoadedTrace load_and_warn(const Settings& settings, std::ostream& err);
// KEY=VALUE with six significant digits, or KEY=null.
std::string figure_text(const Summary& summary, const std::string& key);

// A knob of another server kind's section (a `batching.` key on the edge
// server) would be dropped without a word: refused instead, naming the flag
// (or the settings file's key, or the --vary that varies it) and the kind it
// belongs to. `file_keys` are the keys settings files set, `varied` the keys a
// sweep or a search varies; a sweep that varies server.kind may vary any
// kind's knobs (they apply to its points of that kind).
void refuse_other_kinds_knobs(const boost::program_options::variables_map& vm,
                              const Settings& settings, const std::set<std::string>& file_keys,
                              const std::vector<std::string>& varied);

// The GPU and model a preset derived from the catalog names in its meta
// (both null for a preset written by hand).
struct PresetPair {
  const GpuSpec* gpu = nullptr;
  const ModelSpec* model = nullptr;
};
PresetPair preset_pair(const std::string& preset, const HardwareCatalog& catalog);

}  // namespace infersim
