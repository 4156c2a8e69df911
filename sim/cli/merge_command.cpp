#include "cli/merge_command.hpp"

#include <boost/program_options.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/command_options.hpp"
#include "cli/option_parsing.hpp"
#include "cli/sweep_command.hpp"
#include "core/input_error.hpp"
#include "report/run_folder.hpp"
#include "studies/sweep.hpp"

namespace infersim {
namespace po = boost::program_options;

namespace {

constexpr const char* kMergeUsage =
    "usage: infersim merge --output DIR [--force] SHARD_DIR...\n"
    "\n"
    "Joins the folders of `infersim sweep --shard K/N` into the sweep.csv the whole sweep\n"
    "writes, after checking they are of one sweep and cover every point once, and draws\n"
    "the sweep's plots (unless the shards ran with --plots none).\n";

}  // namespace

int run_merge_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options("merge options");
  options.add_options()("help,h", "show this help")(
      "output", po::value<std::string>(),
      "the merged folder (default output/<YYYYmmdd-HHMMSS>-sweep)")(
      "force", "write into --output even if it holds files")(
      "part", po::value<std::vector<std::string>>(), "a shard's folder (positional, repeatable)");
  add_name_option(options, "sweep");
  po::positional_options_description positional;
  positional.add("part", -1);
  const po::variables_map vm = parse_command(args, options, positional, "merge");
  if (vm.count("help")) {
    out << kMergeUsage << '\n' << options;
    return 0;
  }
  if (!vm.count("part")) {
    throw InputError("", 0, "merge", "give the shard folders to merge; see infersim merge --help");
  }
  const std::vector<std::string> folders = vm["part"].as<std::vector<std::string>>();
  std::vector<SweepPart> parts;
  for (const std::string& folder : folders) {
    const std::filesystem::path dir(folder);
    if (!std::filesystem::exists(dir / "shard.json")) {
      throw InputError(folder, 0, "",
                       "no shard.json: not the folder of an infersim sweep --shard K/N");
    }
    SweepPart part;
    part.name = folder;
    std::ifstream in(dir / "shard.json", std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    try {
      part.shard = nlohmann::ordered_json::parse(text.str());
    } catch (const nlohmann::ordered_json::exception& e) {
      throw InputError((dir / "shard.json").string(), 0, "", std::string("not JSON: ") + e.what());
    }
    std::ifstream csv(dir / "sweep.csv", std::ios::binary);
    if (!csv) throw InputError((dir / "sweep.csv").string(), 0, "", "cannot read it");
    std::ostringstream rows;
    rows << csv.rdbuf();
    part.csv = rows.str();
    parts.push_back(std::move(part));
  }
  const std::string merged = merge_sweep_parts(parts);
  const nlohmann::ordered_json& base = parts.front().shard["settings"];
  const Sweep sweep =
      sweep_from_section(parts.front().shard["sweep"], parts.front().name + "/shard.json");
  const bool plots = !(base.contains("report") && base["report"].is_object() &&
                       base["report"].value("plots", "svg") == "none");

  RunFolder folder = RunFolder::prepare(vm.count("output") ? text_of(vm, "output") : "", "sweep",
                                        vm.count("force"), folder_name(vm));
  // The sweep's settings.json: the base settings and the definition.
  nlohmann::ordered_json settings = parts.front().shard["settings"];
  settings["sweep"] = parts.front().shard["sweep"];
  add_meta(settings);
  folder.create();
  write_file_atomically(folder.file("sweep.csv"), merged);
  write_file_atomically(folder.file("settings.json"), settings.dump(2) + "\n");
  if (plots) write_sweep_plots(folder.path(), sweep, merged, err);
  out << "Merged " << parts.size() << " shards of "
      << parts.front().shard["points"].get<std::size_t>()
      << " points: " << folder.file("sweep.csv").string() << '\n';
  return 0;
}

}  // namespace infersim
