#include "cli/calibrate_command.hpp"

#include <boost/program_options.hpp>

#include "cli/option_parsing.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>

#include "core/input_error.hpp"
#include "core/version.hpp"
#include "report/run_folder.hpp"
#include "scenario/calibration.hpp"
#include "scenario/settings.hpp"
#include "trace/measurement_reader.hpp"

namespace infersim {
namespace po = boost::program_options;

namespace {

constexpr const char* kUsage =
    "usage: infersim calibrate --from FILE --output SETTINGS.json [--mips-per-core M]\n"
    "                          [--format aiperf|vllm|csv|auto] [--force]\n";

double parse_mips(const std::string& text) {
  double value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(value) ||
      !(value > 0)) {
    throw InputError("", 0, "--mips-per-core", "expected a number above 0, got '" + text + "'");
  }
  return value;
}

}  // namespace

int run_calibrate_command(const std::vector<std::string>& args, std::ostream& out,
                          std::ostream& err) {
  po::options_description options("calibrate options");
  options.add_options()("help,h", "show this help")(
      "from", po::value<std::string>(),
      "the measurement: aiperf profile_export.jsonl, a vllm bench serve result JSON saved "
      "with --save-detailed, or CSV input_tokens,output_tokens,ttft_s,e2e_s")(
      "format", po::value<std::string>(), "aiperf, vllm, csv or auto (auto)")(
      "mips-per-core", po::value<std::string>(),
      "the speed the knobs are expressed at, MIPS (60000, the settings default)")(
      "output", po::value<std::string>(), "the settings file to write")(
      "force", "overwrite the settings file if it exists");

  const po::variables_map vm = parse_options(args, options, {}, {"calibrate", "", ""});
  if (vm.count("help")) {
    out << kUsage
        << "\nFits TTFT = a + b x input tokens by least squares and the mean decode time\n"
           "per token after the first, (e2e - ttft) / (output - 1); at M MIPS per core\n"
           "b x M is mi_per_context_token and the decode time x M mi_per_generated_token.\n"
           "The intercept beyond one decode step becomes a fixed-latency network hop. The\n"
           "settings file holds every key, at its default unless fitted.\n\n"
        << options;
    return 0;
  }
  if (!vm.count("from")) throw InputError("", 0, "--from", "missing: name the measurement file");
  if (!vm.count("output")) {
    throw InputError("", 0, "--output", "missing: name the settings file to write");
  }
  const std::string from = vm["from"].as<std::string>();
  const std::string output = vm["output"].as<std::string>();
  const std::string format = vm.count("format") ? vm["format"].as<std::string>() : "auto";
  if (format != "auto" && format != "aiperf" && format != "vllm" && format != "csv") {
    throw InputError("", 0, "--format", "expected aiperf, vllm, csv or auto, got '" + format + "'");
  }
  const double mips = vm.count("mips-per-core") ? parse_mips(vm["mips-per-core"].as<std::string>())
                                                : Settings{}.mips_per_core;
  std::error_code error;
  if (std::filesystem::exists(output, error) && !vm.count("force")) {
    throw InputError("", 0, "--output", output + " exists; give --force to overwrite it");
  }

  const Measurement measurement = read_measurement(from, format);
  const Calibration calibration = calibrate(measurement, mips);
  out << calibration_report(measurement, calibration);
  for (const std::string& w : calibration.warnings)
    err << "warning: " << w << '\n';

  nlohmann::ordered_json document = settings_to_json(calibrated_settings(calibration));
  document["meta"]["program"] = kProgramName;
  document["meta"]["version"] = kVersion;
  document["meta"]["calibrated_from"] = from;
  write_file_atomically(output, document.dump(2) + "\n");
  out << "Settings: " << output << '\n';
  return 0;
}

}  // namespace infersim
