#include "core/input_error.hpp"

namespace infersim {
namespace {

std::string compose(const std::string& file, std::uint64_t line, const std::string& field,
                    const std::string& what) {
  std::string message = file;
  if (line > 0) message.append(":").append(std::to_string(line));
  if (!message.empty()) message.append(": ");
  if (!field.empty()) message.append(field).append(": ");
  message.append(what);
  return message;
}

}  // namespace

InputError::InputError(const std::string& file, std::uint64_t line, const std::string& field,
                       const std::string& what)
    : std::runtime_error(compose(file, line, field, what)) {}

}  // namespace infersim
