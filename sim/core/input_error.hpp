// The one error type for bad input: a trace line, a settings key or a flag.
// Its message has the form `FILE:LINE: FIELD: what is wrong`, with LINE and
// FIELD left out where they do not apply; the command line prints it as is and
// exits with status 2.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace infersim {

class InputError : public std::runtime_error {
 public:
  // line 0 = no line; empty field = no field.
  InputError(const std::string& file, std::uint64_t line, const std::string& field,
             const std::string& what);
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace infersim
