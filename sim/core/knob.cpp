#include "core/knob.hpp"

#include <charconv>

namespace infersim {

std::string knob_default_text(const nlohmann::ordered_json& value) {
  if (value.is_boolean()) return value.get<bool>() ? "on" : "off";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) {
    char text[32];
    const auto end =
        std::to_chars(text, text + sizeof(text), value.get<double>(), std::chars_format::general)
            .ptr;
    std::string out(text, end);
    // 4e-08 as 4e-8
    const auto e = out.find("e-0");
    if (e != std::string::npos) out.erase(e + 2, 1);
    return out;
  }
  if (value.is_number()) return value.dump();
  return "";
}

}  // namespace infersim
