#include "cli/inspect_command.hpp"

#include <boost/program_options.hpp>

#include "cli/option_parsing.hpp"

#include <optional>
#include <string_view>
#include <tuple>

#include <nlohmann/json.hpp>

#include "cli/data_files.hpp"
#include "cli/run_options.hpp"
#include "core/input_error.hpp"
#include "core/number_format.hpp"
#include "report/console_report.hpp"
#include "scenario/settings.hpp"
#include "trace/trace_reader.hpp"
#include "trace/workload_profile.hpp"

namespace infersim {
namespace po = boost::program_options;

namespace {

constexpr const char* kInspectUsage =
    "usage: infersim inspect [TRACE] [--json] [trace options]\n"
    "\n"
    "Reads the trace as `infersim run` would (default trace/azure_llm_code_1h.csv) and\n"
    "prints its workload: span and rate, peaks, burstiness (the coefficient of variation\n"
    "of the gaps and the index of dispersion, both 1 for Poisson arrivals), token\n"
    "percentiles and, when the trace has prompt block ids, the share of blocks an\n"
    "unbounded prefix cache would already hold.\n";

// The run flags that say how to read the trace: those of the trace.* keys.
bool is_trace_flag(const KnobFlag& flag) {
  return std::string_view(flag.key).starts_with("trace.");
}

// The figure's name, padded to the table's first column.
std::string name_cell(const std::string& name) {
  constexpr std::size_t kNameWidth = 24;
  return name + std::string(kNameWidth > name.size() ? kNameWidth - name.size() : 1, ' ');
}

// One line of the table: the figure's name, its value right-aligned, a note.
std::string row(const std::string& name, const std::string& value, const std::string& note) {
  constexpr std::size_t kValueWidth = 10;
  std::string line = name_cell(name);
  line.append(kValueWidth > value.size() ? kValueWidth - value.size() : 0, ' ');
  line += value;
  if (!note.empty()) line += "  " + note;
  return line + '\n';
}

std::string value_or_dash(const std::optional<double>& value, int decimals) {
  return value ? fixed(*value, decimals) : "-";
}

// "mean  2047.8  p50  1930.0  p90  4432.0  p99  7446.6  max  7437", cells of
// fixed width so that the input and output lines align.
std::string token_cells(const TokenStats& s) {
  auto cell = [](const char* label, const std::string& value) {
    std::string text = label;
    text.append(value.size() < 9 ? 9 - value.size() : 1, ' ');
    return text + value;
  };
  const std::string max = std::to_string(s.max);
  return cell("mean", fixed(s.mean, 1)) + "  " + cell("p50", fixed(s.p50, 1)) + "  " +
         cell("p90", fixed(s.p90, 1)) + "  " + cell("p99", fixed(s.p99, 1)) + "  " +
         cell("max", max);
}

std::string table(const Trace& trace, const WorkloadProfile& p) {
  std::string text = trace_line(trace) + '\n';
  text += row("requests", std::to_string(p.requests), "");
  text += row("span_s", fixed(p.span_s, 3), "last arrival minus first");
  text += row("mean_rate_rps", value_or_dash(p.mean_rate_rps, 4), "requests / span");
  text += row("peak_per_second", std::to_string(p.peak_per_second),
              "most requests in one second of offset [k, k+1)");
  text += row("peak_per_minute", std::to_string(p.peak_per_minute),
              "most requests in one minute of offset");
  text += row("interarrival_cv", value_or_dash(p.interarrival_cv, 3),
              "standard deviation / mean of the gaps (Poisson: 1)");
  text += row("longest_gap_s", value_or_dash(p.longest_gap_s, 3), "");
  for (const auto& [name, value, window] :
       {std::tuple{"index_of_dispersion_1s", p.index_of_dispersion_1s, "1 s"},
        std::tuple{"index_of_dispersion_10s", p.index_of_dispersion_10s, "10 s"},
        std::tuple{"index_of_dispersion_60s", p.index_of_dispersion_60s, "60 s"}}) {
    text +=
        row(name, value_or_dash(value, 3),
            std::string("variance / mean of the requests per ") + window + " window (Poisson: 1)");
  }
  text += name_cell("input_tokens") + token_cells(p.input_tokens) + '\n';
  text += name_cell("output_tokens") + token_cells(p.output_tokens) + '\n';
  if (p.blocks) {
    text += row("blocks_seen", std::to_string(p.blocks->blocks_seen),
                "prompt block ids over all requests");
    text += row("distinct_blocks", std::to_string(p.blocks->distinct_blocks), "");
    text += row("block_reuse", fixed(p.blocks->block_reuse, 4),
                "share of blocks seen earlier in the trace: the hit rate of an unbounded "
                "prefix cache (" +
                    fixed(100 * p.blocks->block_reuse, 2) + " %)");
  } else {
    text += row("blocks_seen", "-", "the trace has no prompt block ids");
    text += row("distinct_blocks", "-", "");
    text += row("block_reuse", "-", "");
  }
  return text;
}

}  // namespace

int run_inspect_command(const std::vector<std::string>& args, std::ostream& out,
                        std::ostream& err) {
  po::options_description options("inspect options");
  options.add_options()("help,h", "show this help")("json", "print the figures as one JSON object")(
      "filter", po::value<std::vector<std::string>>()->composing(),
      "keep only the CSV rows where COLUMN=VALUE (repeatable; all must hold)");
  for (const KnobFlag& flag : knob_flags()) {
    if (is_trace_flag(flag)) options.add_options()(flag.flag, po::value<std::string>(), flag.help);
  }
  po::positional_options_description positional;
  positional.add("trace", 1);

  const po::variables_map vm = parse_options(
      args, options, positional,
      {"inspect", "one positional argument: the TRACE", " (the positional TRACE sets it too)"});
  if (vm.count("help")) {
    out << kInspectUsage << '\n' << options;
    return 0;
  }

  Settings settings;
  for (const KnobFlag& flag : knob_flags()) {
    if (is_trace_flag(flag) && vm.count(flag.flag)) {
      set_knob(settings, flag, vm[flag.flag].as<std::string>());
    }
  }
  if (vm.count("filter")) {
    set_setting(settings, "trace.filter", vm["filter"].as<std::vector<std::string>>(), "",
                "--filter");
  }
  find_trace(settings);
  const Trace trace = read_trace(settings.trace_source());
  if (trace.out_of_order > 0) {
    err << "warning: " << trace.path << ": " << trace.out_of_order
        << " lines were out of timestamp order; profiled in timestamp order (stable)\n";
  }
  const WorkloadProfile profile = profile_workload(trace);

  if (vm.count("json")) {
    nlohmann::ordered_json document;
    document["trace"] = trace.path;
    document["format"] = trace.format;
    document["timestamp_unit"] = trace.timestamp_unit;
    document["filtered_out"] = trace.filtered_out;
    document.update(workload_profile_to_json(profile));
    out << document.dump(2) << '\n';
  } else {
    out << table(trace, profile);
  }
  return 0;
}

}  // namespace infersim
