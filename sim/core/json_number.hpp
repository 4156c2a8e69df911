// A real as a JSON value, the one way every JSON file the program writes puts
// it: null when there is none, or when it is not finite (JSON holds no NaN or
// infinity; nlohmann::json would write null for them too).
#pragma once

#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

namespace infersim {

inline nlohmann::ordered_json json_number(const std::optional<double>& value) {
  return value && std::isfinite(*value) ? nlohmann::ordered_json(*value)
                                        : nlohmann::ordered_json(nullptr);
}

}  // namespace infersim
