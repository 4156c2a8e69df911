// Parsing a subcommand's options with Boost.Program_options, every failure
// turned into the same one-line InputError: an unknown option with the nearest
// known one, an option given twice, too many positional arguments.
#pragma once

#include <boost/program_options.hpp>

#include <string>
#include <vector>

namespace infersim {

struct ParseMessages {
  std::string command;   // "run": errors end "; see infersim run --help"
  std::string too_many;  // for too many positional arguments; empty: Boost's own words
  std::string repeated;  // appended to "given more than once"
};

boost::program_options::variables_map parse_options(
    const std::vector<std::string>& args,
    const boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional,
    const ParseMessages& messages);

// --name NAME, checked: letters, digits, '.', '_' and '-', not first a '.',
// and not with --output (it names the default folder). Empty when not given.
// Throws InputError.
std::string folder_name(const boost::program_options::variables_map& vm);

// The --name option, for a command whose folder is `kind` ("<mode>", "sweep",
// ...).
void add_name_option(boost::program_options::options_description& options, const std::string& kind);

}  // namespace infersim
