// `infersim presets`: presets derived from a GPU's datasheet, a model's
// architecture and efficiency factors (settings/hardware/), the factors
// fitted across measured vLLM runs, and the leave-one-run-out check of how
// well they predict a run nothing was fitted on.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace infersim {

// `args` are the words after "presets": derive, fit or validate and their
// options. Throws InputError for a bad flag, file or value.
int run_presets_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace infersim
