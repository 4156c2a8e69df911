#include "cli/capacity_command.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <tuple>

#include "cli/command_options.hpp"
#include "cli/data_files.hpp"
#include "cli/option_parsing.hpp"
#include "core/input_error.hpp"
#include "report/run_folder.hpp"
#include "studies/capacity.hpp"
#include "studies/fleet_search.hpp"
#include "studies/progress_line.hpp"
#include "studies/sweep.hpp"
#include "studies/sweep_plots.hpp"

namespace infersim {
namespace po = boost::program_options;
using nlohmann::json;

namespace {

constexpr const char* kCapacityUsage =
    "usage: infersim capacity --target EXPR --vary KNOB [--min A --max B] [--tolerance T]\n"
    "                         [--modes recorded,retimed,synthetic] [run options]\n"
    "       infersim capacity --target EXPR --vary fleet --settings FLEET.json\n"
    "                         [--min A --max B] [--exhaustive] [--modes ...] [run options]\n"
    "\n"
    "Finds, by bisection, the smallest KNOB value whose run meets the target, for each\n"
    "mode apart. EXPR is KEY OP NUMBER (OP one of >= <= > < ==) over summary.json's\n"
    "keys, several joined by ',' all holding: success_rate>=0.99,ttft_p99_s<=2.\n"
    "--min/--max default to 1 and 1024 for cores and replicas and are required for\n"
    "other knobs. Writes capacity.json (the answers and every run), capacity.csv (a\n"
    "row a run) and plots/ (--plots none for none); exits with status 4 when a mode\n"
    "finds no value that meets the target.\n"
    "\n"
    "--vary fleet finds the cheapest fleet, in $ an hour, of the settings' batching.fleet\n"
    "classes (each at A to B replicas, 0 and 16 by default; 0 leaves a class out) whose\n"
    "run meets the target: it runs the fleets in order of cost and stops at the first\n"
    "that meets it; --exhaustive runs the whole grid.\n";

constexpr const char* kDefaultModes = "recorded,synthetic";

// The exit status when some mode finds no value that meets the target.
constexpr int kNoAnswerStatus = 4;

// The knobs with a default range, 1 to 1024: the units of a server.
bool has_default_range(const std::string& knob) {
  return knob == "cores" || knob == "replicas";
}

// The modes' searches are independent: `search(m)` for each mode, on a
// thread each when there are threads to spare, else one after the other; the
// first failure is thrown once all have ended.
void for_each_mode(std::size_t modes, unsigned threads,
                   const std::function<void(std::size_t)>& search) {
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto guarded = [&](std::size_t m) {
    try {
      search(m);
    } catch (...) {
      const std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  for (std::size_t m = 1; m < modes && threads > 1; ++m)
    workers.emplace_back(guarded, m);
  guarded(0);
  for (std::thread& t : workers)
    t.join();
  for (std::size_t m = 1; m < modes && threads == 1; ++m)
    guarded(m);
  if (failure) std::rethrow_exception(failure);
}

// Each mode's search, `search(m, ran)` calling `ran` after each run, as
// for_each_mode runs them, with one progress line counting the runs of all.
template <typename Result>
std::vector<Result> search_modes(
    std::size_t modes, unsigned threads, std::size_t max_runs_a_mode, std::ostream& err,
    const std::function<Result(std::size_t, const std::function<void()>&)>& search) {
  std::vector<Result> results(modes);
  ProgressLine progress(err, writes_to_terminal(err), "capacity", "runs", max_runs_a_mode * modes,
                        true);
  std::atomic<std::size_t> runs{0};
  const std::function<void()> ran = [&] { progress.update(++runs); };
  for_each_mode(modes, threads, [&](std::size_t m) { results[m] = search(m, ran); });
  progress.finish();
  return results;
}

// A mode's name as the console's first column: 10 characters.
std::string mode_column(std::string mode) {
  mode.resize(10, ' ');
  return mode;
}

// Dollars with two decimals: "12.50".
std::string money_text(double usd) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", usd);
  return text;
}

using Given = std::function<std::optional<std::string>(const char*)>;

// A search's folder: its answers, its runs a row each and its settings.
void write_capacity_folder(RunFolder& folder, const nlohmann::ordered_json& document,
                           const std::string& csv, const nlohmann::ordered_json& settings) {
  folder.create();
  write_file_atomically(folder.file("capacity.json"), document.dump(2) + "\n");
  write_file_atomically(folder.file("capacity.csv"), csv);
  write_file_atomically(folder.file("settings.json"), settings.dump(2) + "\n");
}

// The keys a settings file's capacity section may hold: the search's flags.
const std::vector<std::string> kCapacityKeys = {"vary",      "target", "min",       "max",
                                                "tolerance", "modes",  "exhaustive"};

// An error a value of the capacity section caused, said of it as
// "FILE: capacity.KEY" where it says "--KEY"; any other error as it is.
InputError blamed_on_section(const InputError& e, const po::variables_map& vm,
                             const json& section) {
  const std::string what = e.what();
  if (!section.is_object()) return e;
  for (const std::string& key : kCapacityKeys) {
    const std::string flag = "--" + key;
    if (vm.count(key) || !section.contains(key) || !what.starts_with(flag)) continue;
    const std::string rest = what.substr(flag.size());
    if (rest.empty() || (rest[0] != ':' && rest[0] != ' ')) continue;
    return InputError(find_settings_file(text_of(vm, "settings")) + ": capacity." + key + rest);
  }
  return e;
}

void refuse_unknown_capacity_keys(const po::variables_map& vm, const json& section) {
  if (section.is_null()) return;
  const std::string file = find_settings_file(text_of(vm, "settings"));
  if (!section.is_object()) {
    throw InputError(file, 0, "capacity", "expected an object of the search's keys");
  }
  for (const auto& [key, value] : section.items()) {
    if (std::find(kCapacityKeys.begin(), kCapacityKeys.end(), key) != kCapacityKeys.end()) continue;
    const auto near = nearest(key, kCapacityKeys);
    throw InputError(file, 0, "capacity." + key,
                     "unknown key" + (near ? " (did you mean '" + *near + "'?)" : std::string()) +
                         "; the capacity section holds vary, target, min, max, tolerance, modes "
                         "and exhaustive");
  }
}

// capacity --vary fleet: the cheapest fleet of the settings' classes.
int run_fleet_capacity(const po::variables_map& vm, Settings base, const Given& given,
                       std::ostream& out, std::ostream& err) {
  if (vm.count("tolerance")) {
    throw InputError("", 0, "--tolerance", "bisects a real knob; --vary fleet counts replicas");
  }
  refuse_other_kinds_knobs(vm, base, {}, {});
  const std::optional<std::string> target_text = given("target");
  if (!target_text) {
    throw InputError("", 0, "--target", "give the target, e.g. --target ttft_p99_s<=2");
  }
  const Target target = parse_target(*target_text, summary_keys(base));
  const KnobFlag count{"replicas", "", "", KnobFlag::kWhole};
  std::int64_t bounds[2] = {0, 16};
  for (int b = 0; b < 2; ++b) {
    const char* name = b == 0 ? "min" : "max";
    if (const std::optional<std::string> text = given(name)) {
      try {
        bounds[b] = flag_value(count, *text).get<std::int64_t>();
      } catch (const InputError& e) {
        throw InputError(std::string("--") + name + ": " + e.what());
      }
      if (bounds[b] < 0 || bounds[b] > 4096) {
        throw InputError("", 0, std::string("--") + name,
                         "a class's count lies from 0 to 4096, got " + *text);
      }
    }
  }
  FleetSearch search = fleet_search_of(base, bounds[0], bounds[1], target);
  search.exhaustive = vm.count("exhaustive") || given("exhaustive") == "true";
  const std::vector<std::string> modes = parse_modes(given("modes").value_or(kDefaultModes));
  base.mode = sweep_run_mode(modes);
  validate_settings(base, "");
  const unsigned threads = threads_from(vm);

  RunFolder folder = RunFolder::prepare(vm.count("output") ? text_of(vm, "output") : "", "capacity",
                                        vm.count("force"), folder_name(vm));
  const LoadedTrace loaded = load_and_warn(base, err);
  std::string classes;
  for (const FleetSearchClass& c : search.classes) {
    classes += (classes.empty() ? "" : ", ") + c.name + " ($" + money_text(c.usd_per_replica_hour) +
               " a replica-hour" +
               (c.autoscale_min ? ", autoscaled from " + std::to_string(*c.autoscale_min) +
                                      ": its maximum sized"
                                : "") +
               ")";
  }
  out << "Capacity: the cheapest fleet of " << classes << ", " << bounds[0] << " to " << bounds[1]
      << " replicas a class, whose run meets " << search.target.text << ", "
      << (modes.size() > 1 ? "each mode searched apart" : modes.front()) << ".\n";
  for (const std::string& line : preset_error_lines(base))
    out << line << '\n';
  out << std::flush;

  const std::vector<FleetSearchResult> results = search_modes<FleetSearchResult>(
      modes.size(), threads, fleet_search_max_runs(search), err,
      [&](std::size_t m, const std::function<void()>& ran) {
        return find_cheapest_fleet(search, base, modes[m], loaded.trace,
                                   [&](const FleetProbe&) { ran(); });
      });

  nlohmann::ordered_json document;
  bool every_mode_answered = true;
  for (std::size_t m = 0; m < modes.size(); ++m) {
    const FleetSearchResult& r = results[m];
    out << mode_column(modes[m]);
    if (r.cheapest) {
      const FleetProbe& p = r.probes[*r.cheapest];
      out << fleet_text(search, p.counts) << "  $" << money_text(p.usd_per_hour) << " an hour, "
          << figure_text(p.summary, "usd_per_million_tokens");
      for (const std::string& key : search.target.keys())
        out << "  " << figure_text(p.summary, key);
    } else {
      out << "not found: " << r.reason;
      every_mode_answered = false;
    }
    out << "  (" << r.probes.size() << " of " << r.grid << " fleets run, " << r.method << ")\n";
    document[modes[m]] = fleet_search_to_json(search, r);
  }
  bool some_mode_answered = false;
  for (const FleetSearchResult& r : results)
    some_mode_answered = some_mode_answered || r.cheapest;
  if (some_mode_answered) {
    const bool autoscaled = std::any_of(search.classes.begin(), search.classes.end(),
                                        [](const FleetSearchClass& c) { return c.autoscale_min; });
    out << "The cheapest: the least cost an hour among the fleets run that meet the target; "
        << (search.exhaustive ? "every fleet of the grid was run."
            : autoscaled
                ? "the fleets were run in order of the least they can cost (an autoscaled class "
                  "at its minimum), until that least was no less than the cheapest found, so "
                  "every fleet that could cost less was run (--exhaustive runs them all)."
                : "the fleets were run in order of cost, and every cheaper one failed "
                  "(--exhaustive runs the fleets that cost more too).")
        << '\n';
  }

  nlohmann::ordered_json settings = settings_document(base, loaded);
  settings["capacity"] = {
      {"target", search.target.text},    {"vary", "fleet"}, {"min", bounds[0]}, {"max", bounds[1]},
      {"exhaustive", search.exhaustive}, {"modes", modes}};
  add_meta(settings);
  const std::string csv = fleet_search_csv(search, modes, results, summary_keys(base));
  write_capacity_folder(folder, document, csv, settings);
  if (base.plots == "svg") {
    std::vector<CapacityPlotMode> plot_modes;
    for (std::size_t m = 0; m < modes.size(); ++m) {
      const FleetSearchResult& r = results[m];
      plot_modes.push_back({modes[m], r.cheapest ? std::optional(r.probes[*r.cheapest].usd_per_hour)
                                                 : std::nullopt});
    }
    const TargetClause& first = search.target.clauses.front();
    write_plots(folder.path(),
                {fleet_cost_plot_script(
                    plot_modes, {first.key, comparison_text(first.comparison), first.value}, csv)},
                err);
  }
  out << "Capacity folder: " << folder.path().string() << '\n';
  if (!every_mode_answered) {
    err << "capacity: no fleet of the grid meets " << search.target.text
        << " in every mode (exit status " << kNoAnswerStatus << ")\n";
    return kNoAnswerStatus;
  }
  return 0;
}

}  // namespace

int run_capacity_command(const std::vector<std::string>& args, std::ostream& out,
                         std::ostream& err) {
  po::options_description options("capacity options");
  options.add_options()("help,h", "show this help")(
      "target", po::value<std::string>(),
      "KEY OP NUMBER[,...] over summary keys, e.g. success_rate>=0.99")(
      "vary", po::value<std::string>(), "the knob to size, e.g. cores")(
      "min", po::value<std::string>(), "smallest value searched (cores, replicas: 1)")(
      "max", po::value<std::string>(), "largest value searched (cores, replicas: 1024)")(
      "tolerance", po::value<std::string>(),
      "real knobs: stop when the bracket is within this fraction of the value (0.001)")(
      "modes", po::value<std::string>(),
      "some of recorded, retimed (the recorded requests at synthetic instants) and synthetic "
      "(recorded,synthetic)")("exhaustive", "--vary fleet: run every fleet of the grid");
  add_jobs_option(options);
  add_run_options(options);
  add_name_option(options, "capacity");
  const po::variables_map vm = parse_command(args, options, {}, "capacity");
  if (vm.count("help")) {
    out << kCapacityUsage << '\n' << options;
    return 0;
  }

  json section;
  Settings base = base_settings(vm, "capacity", section);
  refuse_unknown_capacity_keys(vm, section);
  // A flag, else the capacity section of the settings file, else nothing.
  const Given given = [&](const char* name) -> std::optional<std::string> {
    if (vm.count(name)) return text_of(vm, name);
    if (section.is_object() && section.contains(name) && !section[name].is_null()) {
      const json& v = section[name];
      if (v.is_string()) return v.get<std::string>();
      if (v.is_array()) {
        std::string list;
        for (const json& item : v)
          list += (list.empty() ? "" : ",") +
                  (item.is_string() ? item.get<std::string>() : item.dump());
        return list;
      }
      return v.dump();
    }
    return std::nullopt;
  };

  // The search; an error about a value the settings file's capacity section
  // gave is told of that key in that file, not of a flag never given.
  const auto run_search = [&]() -> int {
    const std::optional<std::string> knob_name = given("vary");
    if (!knob_name) throw InputError("", 0, "--vary", "name the knob to size, e.g. --vary cores");
    if (knob_name->find('=') != std::string::npos) {
      throw InputError("", 0, "--vary",
                       "capacity searches one knob by bisection: give --vary KNOB and its range "
                       "with --min and --max");
    }
    if (*knob_name == "fleet") {
      return run_fleet_capacity(vm, base, given, out, err);
    }
    if (vm.count("exhaustive")) {
      throw InputError("", 0, "--exhaustive", "sizes a fleet: give it with --vary fleet");
    }
    const KnobFlag& flag = numeric_knob(*knob_name, "--vary");
    refuse_fixed_and_varied(vm, flag, "--vary");
    refuse_other_kinds_knobs(vm, base, {}, {flag.key});
    const std::optional<std::string> target_text = given("target");
    if (!target_text) {
      throw InputError("", 0, "--target", "give the target, e.g. --target success_rate>=0.99");
    }

    CapacitySearch search;
    search.knob = flag.flag;
    search.key = flag.key;
    search.whole = flag.kind == KnobFlag::kWhole;
    search.target = parse_target(*target_text, summary_keys(base));
    const bool ranged = has_default_range(search.knob);
    for (auto [name, bound, fallback] :
         {std::tuple{"min", &search.min, 1.0}, std::tuple{"max", &search.max, 1024.0}}) {
      const std::optional<std::string> text = given(name);
      if (!text && !ranged) {
        throw InputError("", 0, std::string("--") + name,
                         "required for --vary " + search.knob +
                             " (only cores and replicas have a default range, 1 to 1024)");
      }
      try {
        *bound = text ? flag_value(flag, *text).get<double>() : fallback;
        with_knob(base, search, *bound);
      } catch (const InputError& e) {
        throw InputError(std::string("--") + name + ": " + e.what());
      }
    }
    if (const auto tolerance = given("tolerance")) {
      const KnobFlag real{"tolerance", "", "", KnobFlag::kReal};
      search.tolerance = flag_value(real, *tolerance).get<double>();
    }
    check_capacity_search(search);
    const std::vector<std::string> modes = parse_modes(given("modes").value_or(kDefaultModes));
    base.mode = sweep_run_mode(modes);
    validate_settings(base, "");  // what the modes rule out (replications in the recorded mode)
    const unsigned threads = threads_from(vm);

    RunFolder folder = RunFolder::prepare(vm.count("output") ? text_of(vm, "output") : "",
                                          "capacity", vm.count("force"), folder_name(vm));
    const LoadedTrace loaded = load_and_warn(base, err);
    const auto value = [&](double v) { return capacity_value_text(search, v); };
    out << "Capacity: the smallest " << search.knob << " from " << value(search.min) << " to "
        << value(search.max) << " whose run meets " << search.target.text << ", "
        << (modes.size() > 1 ? "each mode searched apart" : modes.front()) << ".\n";
    for (const std::string& line : preset_error_lines(base))
      out << line << '\n';
    out << std::flush;

    const std::vector<CapacityResult> results =
        search_modes<CapacityResult>(modes.size(), threads, capacity_max_runs(search), err,
                                     [&](std::size_t m, const std::function<void()>& ran) {
                                       return find_capacity(search, base, modes[m], loaded.trace,
                                                            [&](const CapacityProbe&) { ran(); });
                                     });

    nlohmann::ordered_json document;
    bool every_mode_answered = true;
    for (std::size_t m = 0; m < modes.size(); ++m) {
      const CapacityResult& r = results[m];
      const auto figures = [&](const CapacityProbe& p) {
        std::string text;
        for (const std::string& key : search.target.keys())
          text += (text.empty() ? "" : " ") + figure_text(p.summary, key);
        return text;
      };
      out << mode_column(modes[m]);
      switch (r.outcome) {
        case CapacityResult::kFound:
          out << search.knob << "=" << value(r.answer->value) << "  " << figures(*r.answer)
              << "  | at " << search.knob << "=" << value(r.below->value) << ": "
              << figures(*r.below);
          break;
        case CapacityResult::kMinimumMeets:
          out << search.knob << "=" << value(r.answer->value) << "  " << figures(*r.answer)
              << "  | " << r.reason;
          break;
        case CapacityResult::kMaximumFails:
          out << "not found: " << r.reason << " (" << figures(*r.below) << ")";
          every_mode_answered = false;
          break;
      }
      out << "  (" << r.probes.size() << (r.probes.size() == 1 ? " run" : " runs") << ")\n";
      document[modes[m]] = capacity_to_json(search, r);
    }

    nlohmann::ordered_json settings = settings_document(base, loaded);
    settings["capacity"] = {{"target", search.target.text},
                            {"vary", search.knob},
                            {"min", capacity_value_json(search, search.min)},
                            {"max", capacity_value_json(search, search.max)},
                            {"tolerance", search.tolerance},
                            {"modes", modes}};
    add_meta(settings);
    const std::string csv = capacity_csv(search, modes, results, summary_keys(base));
    write_capacity_folder(folder, document, csv, settings);
    if (base.plots == "svg") {
      std::vector<CapacityPlotMode> plot_modes;
      for (std::size_t m = 0; m < modes.size(); ++m) {
        plot_modes.push_back(
            {modes[m], results[m].answer ? std::optional(results[m].answer->value) : std::nullopt});
      }
      std::vector<CapacityPlotBound> bounds;
      for (const TargetClause& clause : search.target.clauses)
        bounds.push_back({clause.key, comparison_text(clause.comparison), clause.value});
      write_plots(folder.path(),
                  capacity_plot_scripts(search.knob, plot_modes, search.target.keys(), bounds, csv),
                  err);
    }
    out << "Capacity folder: " << folder.path().string() << '\n';
    if (!every_mode_answered) {
      err << "capacity: no value from " << value(search.min) << " to " << value(search.max)
          << " meets " << search.target.text << " in every mode (exit status " << kNoAnswerStatus
          << ")\n";
      return kNoAnswerStatus;
    }
    return 0;
  };
  try {
    return run_search();
  } catch (const InputError& e) {
    throw blamed_on_section(e, vm, section);
  }
}

}  // namespace infersim
