#include "cli/option_parsing.hpp"

#include <algorithm>

#include "core/input_error.hpp"
#include "core/utf8.hpp"
#include "scenario/settings.hpp"

namespace infersim {
namespace po = boost::program_options;

po::variables_map parse_options(const std::vector<std::string>& args,
                                const po::options_description& options,
                                const po::positional_options_description& positional,
                                const ParseMessages& messages) {
  const std::string see = "; see infersim " + messages.command + " --help";
  // Every value ends up in settings.json, which is JSON text.
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (is_valid_utf8(args[i])) continue;
    std::string label;
    if (args[i].starts_with("--")) {
      label = args[i].substr(0, args[i].find('='));
    } else if (i > 0 && args[i - 1].starts_with("--")) {
      label = args[i - 1];
    }
    if (!is_valid_utf8(label)) label.clear();
    throw InputError("", 0, label,
                     "argument " + std::to_string(i + 1) +
                         " is not valid UTF-8 text (settings.json records every value as JSON "
                         "text; rename the file or retype the value)");
  }
  po::variables_map vm;
  try {
    // No guessing of abbreviations: an unknown option suggests the nearest instead.
    const int style = po::command_line_style::unix_style ^ po::command_line_style::allow_guessing;
    po::store(
        po::command_line_parser(args).options(options).positional(positional).style(style).run(),
        vm);
  } catch (const po::unknown_option& e) {
    std::vector<std::string> names;
    for (const auto& option : options.options())
      names.push_back("--" + option->long_name());
    const auto near = nearest(e.get_option_name(), names);
    throw InputError(
        "", 0, e.get_option_name(),
        "unknown option" + (near ? " (did you mean " + *near + "?)" : std::string()) + see);
  } catch (const po::too_many_positional_options_error& e) {
    throw InputError("", 0, "",
                     messages.too_many.empty() ? std::string(e.what()) + see : messages.too_many);
  } catch (const po::multiple_occurrences& e) {
    const std::string name = e.get_option_name().substr(e.get_option_name().find_first_not_of('-'));
    // The note on positional arguments only for an option one of them sets.
    bool positional_too = false;
    for (unsigned i = 0; i < positional.max_total_count() && i < 16; ++i)
      positional_too = positional_too || positional.name_for_position(i) == name;
    throw InputError("", 0, "--" + name,
                     "given more than once; give it once" +
                         (positional_too ? messages.repeated : std::string()));
  } catch (const po::error& e) {
    throw InputError("", 0, "", std::string(e.what()) + see);
  }
  return vm;
}

std::string folder_name(const po::variables_map& vm) {
  if (!vm.count("name")) return "";
  const std::string name = vm["name"].as<std::string>();
  if (vm.count("output")) {
    throw InputError("", 0, "--name",
                     "conflicts with --output (it names the default folder, "
                     "output/<YYYYmmdd-HHMMSS>-<mode>-NAME); give one");
  }
  const auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  };
  if (name.empty() || name.front() == '.' || name.size() > 100 ||
      !std::all_of(name.begin(), name.end(), allowed)) {
    throw InputError(
        "", 0, "--name",
        "expected up to 100 letters, digits, '.', '_' or '-' (not first a '.'), got '" + name +
            "'");
  }
  return name;
}

void add_name_option(po::options_description& options, const std::string& kind) {
  options.add_options()("name", po::value<std::string>(),
                        ("name the default folder output/<YYYYmmdd-HHMMSS>-" + kind +
                         "-NAME (-2, -3, ... appended when it exists)")
                            .c_str());
}

}  // namespace infersim
