#include "cli/validate_command.hpp"

#include <boost/program_options.hpp>

#include "cli/option_parsing.hpp"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include "core/input_error.hpp"
#include "scenario/queueing_check.hpp"
#include "scenario/settings.hpp"

namespace infersim {
namespace po = boost::program_options;

namespace {

constexpr const char* kValidateUsage = "usage: infersim validate [options]\n";
constexpr std::uint64_t kDefaultRequests = 1000000;
constexpr std::uint64_t kDefaultSeed = 42;
// Enough for 32 cores at rho = 0.5, where waiting is rare, to tell an error of
// about 12 % in the probability of waiting and 25 % in the mean wait; the
// other default cases stop after 1 to 3.
constexpr std::uint32_t kDefaultReplications = 20;
constexpr std::uint32_t kMaxReplications = 10000;
constexpr unsigned kMaxCores = 10000;
// Arrivals are summed in int64 nanoseconds, which hold about 9.2e9 s; a case's
// expected span, requests / rho seconds at one core, must stay well inside.
constexpr double kMaxExpectedSpanS = 1e9;

std::uint64_t parse_whole(const std::string& text, const std::string& label) {
  std::uint64_t value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) {
    throw InputError("", 0, label, "expected a whole number, got '" + text + "'");
  }
  return value;
}

// Splits "a,b,c" into its items; an empty item is an error.
std::vector<std::string> split_list(const std::string& text, const std::string& label) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t comma = text.find(',', begin);
    const std::string item =
        text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (item.empty()) {
      throw InputError("", 0, label, "expected a comma-separated list, got '" + text + "'");
    }
    items.push_back(item);
    if (comma == std::string::npos) return items;
    begin = comma + 1;
  }
}

std::vector<double> parse_loads(const std::string& text) {
  const std::string label = "--loads";
  std::vector<double> loads;
  for (const std::string& item : split_list(text, label)) {
    double rho = 0;
    const auto r = std::from_chars(item.data(), item.data() + item.size(), rho);
    if (r.ec != std::errc() || r.ptr != item.data() + item.size() || !(rho > 0 && rho < 1)) {
      throw InputError("", 0, label,
                       "each load is a utilization rho with 0 < rho < 1, got '" + item + "'");
    }
    loads.push_back(rho);
  }
  return loads;
}

std::vector<unsigned> parse_cores(const std::string& text) {
  const std::string label = "--cores";
  std::vector<unsigned> cores;
  for (const std::string& item : split_list(text, label)) {
    std::uint64_t c = 0;
    const auto r = std::from_chars(item.data(), item.data() + item.size(), c);
    if (r.ec != std::errc() || r.ptr != item.data() + item.size() || c < 1 || c > kMaxCores) {
      throw InputError("", 0, label,
                       "each count of cores is a whole number from 1 to " +
                           std::to_string(kMaxCores) + ", got '" + item + "'");
    }
    cores.push_back(static_cast<unsigned>(c));
  }
  return cores;
}

// The table's columns and their widths in characters; the model's name is
// aligned left, every other cell right.
struct Column {
  const char* name;
  std::size_t width;
};
constexpr Column kColumns[] = {
    {"model", 6},       {"c", 5},       {"rho", 5},    {"requests", 9}, {"simulated_s", 12},
    {"analytic_s", 12}, {"error_%", 9}, {"±se_%", 9},  {"P(wait)", 9},  {"analytic", 9},
    {"error_%", 9},     {"±se_%", 9},   {"verdict", 0}};

// Characters, not bytes, of UTF-8 text: the bytes that do not continue one.
std::size_t display_width(const std::string& text) {
  std::size_t width = 0;
  for (unsigned char byte : text)
    width += (byte & 0xC0) != 0x80;
  return width;
}

std::string table_line(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t k = 0; k < cells.size(); ++k) {
    const std::size_t width = display_width(cells[k]);
    const std::string pad(kColumns[k].width > width ? kColumns[k].width - width : 0, ' ');
    if (k > 0) line += ' ';
    line += k == 0 ? cells[k] + pad : pad + cells[k];
  }
  return line;
}

template <typename Value>
std::string printed(const char* format, Value value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

std::string header_line() {
  std::vector<std::string> cells;
  for (const Column& column : kColumns)
    cells.push_back(column.name);
  return table_line(cells);
}

// Mean waits span 2e-5 s (32 cores at half load) to 19 s (one core at 0.95):
// six significant digits, not a fixed number of decimals. The errors and the
// standard errors are percents of the analytic figure. The requests are those
// of every replication run.
std::string row_line(const QueueCheck& check) {
  return table_line(
      {queue_model_name(check.c.kind), std::to_string(check.c.cores), printed("%.2f", check.c.rho),
       std::to_string(check.c.requests * check.replications),
       printed("%#.6g", check.simulated_wait_s), printed("%#.6g", check.analytic_wait_s),
       printed("%+.2f", 100 * check.relative_error),
       "±" + printed("%.2f", 100 * check.standard_error_s / check.analytic_wait_s),
       printed("%#.4g", check.simulated_wait_probability),
       printed("%#.4g", check.analytic_wait_probability),
       printed("%+.2f", 100 * check.probability_relative_error),
       "±" + printed("%.2f",
                     100 * check.probability_standard_error / check.analytic_wait_probability),
       agrees(check) ? "ok" : "DIFFERS"});
}

}  // namespace

int run_validate_command(const std::vector<std::string>& args, std::ostream& out,
                         std::ostream& /*err*/) {
  po::options_description options("validate options");
  options.add_options()("help,h", "show this help")("requests", po::value<std::string>(),
                                                    "requests a case, at least 20 (1000000)")(
      "seed", po::value<std::string>(), "seed of the arrival and service streams (42)")(
      "loads", po::value<std::string>(),
      "utilizations rho, comma-separated, each 0 < rho < 1 (0.5,0.8,0.95)")(
      "cores", po::value<std::string>(), "server cores of the M/M/c cases (1,8,32)")(
      "replications", po::value<std::string>(),
      "most independent replications a case, each of --requests, until 3 standard errors are "
      "within 10 % (20)");

  const po::variables_map vm = parse_options(args, options, {}, {"validate", "", ""});
  if (vm.count("help")) {
    out << kValidateUsage
        << "\nRuns the engine and the edge server on generated M/M/c and M/D/1 workloads\n"
           "(mean service 1 s) and compares the simulated mean wait and probability of\n"
           "waiting with Erlang C and Pollaczek-Khinchine. Exit status 0 when every case\n"
           "agrees, 1 when one differs.\n\n"
        << options;
    return 0;
  }

  std::uint64_t requests = kDefaultRequests;
  if (vm.count("requests")) {
    requests = parse_whole(vm["requests"].as<std::string>(), "--requests");
    if (requests < kQueueCheckBatches) {
      throw InputError("", 0, "--requests",
                       "must be at least " + std::to_string(kQueueCheckBatches) +
                           ": the standard error takes that many batch means");
    }
  }
  const std::uint64_t seed =
      vm.count("seed") ? parse_whole(vm["seed"].as<std::string>(), "--seed") : kDefaultSeed;
  std::uint32_t replications = kDefaultReplications;
  if (vm.count("replications")) {
    const std::uint64_t most = parse_whole(vm["replications"].as<std::string>(), "--replications");
    if (most < 1 || most > kMaxReplications) {
      throw InputError("", 0, "--replications",
                       "must be a whole number from 1 to " + std::to_string(kMaxReplications));
    }
    replications = static_cast<std::uint32_t>(most);
  }
  const std::vector<double> loads =
      vm.count("loads")
          ? parse_loads(vm["loads"].as<std::string>())
          : std::vector<double>(std::begin(kDefaultQueueLoads), std::end(kDefaultQueueLoads));
  const std::vector<unsigned> cores =
      vm.count("cores")
          ? parse_cores(vm["cores"].as<std::string>())
          : std::vector<unsigned>(std::begin(kDefaultQueueCores), std::end(kDefaultQueueCores));

  for (double rho : loads) {
    // A replication's arrivals start again from 0: one replication's span counts.
    if (static_cast<double>(requests) / rho > kMaxExpectedSpanS) {
      throw InputError("", 0, vm.count("loads") ? "--loads" : "--requests",
                       "rho = " + printed("%g", rho) + " is too low for " +
                           std::to_string(requests) +
                           " requests: their arrivals would outrun the nanosecond clock");
    }
  }

  out << header_line() << '\n' << std::flush;
  bool all_agree = true;
  for (const QueueCase& c : queue_cases(loads, cores, requests, seed, replications)) {
    const QueueCheck check = run_queue_case(c);
    all_agree = all_agree && agrees(check);
    out << row_line(check) << '\n' << std::flush;
  }
  out << "Analytic waits: Erlang C for M/M/c, Pollaczek-Khinchine for M/D/1; P(wait) is\n"
         "the fraction of requests that wait at all (Erlang C for M/M/c, rho for M/D/1).\n"
         "Each simulated figure is over every request of every replication (replication r\n"
         "drawn from seed + r, starting from an empty system); the standard errors are from\n"
      << kQueueCheckBatches
      << " batch means a replication; replications are added until 3 standard errors are\n"
         "within 10 % of both analytic figures, or --replications. ok = both figures within\n"
         "2 % or within 3 standard errors.\n";
  return all_agree ? 0 : 1;
}

}  // namespace infersim
