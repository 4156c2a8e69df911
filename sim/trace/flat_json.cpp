#include "trace/flat_json.hpp"

#include "trace/record_fields.hpp"

namespace infersim {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}
  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_]))
      ++pos_;
  }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  bool eat(char c) {
    skip_space();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  std::string where() const { return " at column " + std::to_string(pos_ + 1); }

  // A string's contents, without the quotes; escapes are left in place.
  bool string(std::string_view& out) {
    skip_space();
    if (peek() != '"') return false;
    const std::size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\') ++pos_;
      ++pos_;
    }
    if (pos_ >= text_.size()) return false;
    out = text_.substr(start, pos_ - start);
    ++pos_;
    return true;
  }

  // Skips a balanced [...] or {...}, strings included; out is the inside.
  bool balanced(char open, char close, std::string_view& out) {
    const std::size_t start = pos_ + 1;
    int depth = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"') {
        std::string_view ignored;
        if (!string(ignored)) return false;
        continue;
      }
      if (c == open) ++depth;
      if (c == close && --depth == 0) {
        out = text_.substr(start, pos_ - start);
        ++pos_;
        return true;
      }
      ++pos_;
    }
    return false;
  }

  bool value(FlatJsonValue& v) {
    skip_space();
    const char c = peek();
    if (c == '"') {
      v.kind = FlatJsonValue::kString;
      return string(v.text);
    }
    if (c == '[') {
      v.kind = FlatJsonValue::kArray;
      return balanced('[', ']', v.text);
    }
    if (c == '{') {
      v.kind = FlatJsonValue::kObject;
      return balanced('{', '}', v.text);
    }
    const std::size_t start = pos_;
    while (pos_ < text_.size() && !is_space(text_[pos_]) && text_[pos_] != ',' &&
           text_[pos_] != '}' && text_[pos_] != ']') {
      ++pos_;
    }
    v.text = text_.substr(start, pos_ - start);
    if (v.text == "true" || v.text == "false") {
      v.kind = FlatJsonValue::kBool;
    } else if (v.text == "null") {
      v.kind = FlatJsonValue::kNull;
    } else {
      v.kind = FlatJsonValue::kNumber;
      for (const char d : v.text) {
        if (!((d >= '0' && d <= '9') || d == '-' || d == '+' || d == '.' || d == 'e' || d == 'E')) {
          return false;
        }
      }
      return !v.text.empty();
    }
    return true;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string scan_flat_json(std::string_view line, std::vector<FlatJsonField>& fields,
                           std::string_view* bad_key) {
  fields.clear();
  Scanner s(line);
  if (!s.eat('{')) return "expected a JSON object starting with '{'" + s.where();
  if (s.eat('}')) {
    s.skip_space();
    return s.at_end() ? std::string() : "unexpected text after the object" + s.where();
  }
  for (;;) {
    FlatJsonField field;
    if (!s.string(field.key)) return "expected a quoted key" + s.where();
    if (!s.eat(':')) return "expected ':' after the key" + s.where();
    if (!s.value(field.value)) {
      if (bad_key != nullptr) *bad_key = field.key;
      if (field.value.kind == FlatJsonValue::kNumber && !field.value.text.empty()) {
        // A bare word: NaN, Infinity, a typo; JSON has none of them.
        return "'" + printable(field.value.text, 32) + "' is not a JSON value" + s.where();
      }
      return "unreadable value" + s.where();
    }
    fields.push_back(field);
    if (s.eat(',')) continue;
    if (s.eat('}')) break;
    return "expected ',' or '}'" + s.where();
  }
  s.skip_space();
  if (!s.at_end()) return "unexpected text after the object" + s.where();
  return {};
}

std::string parse_uint_array(std::string_view inside, std::vector<std::uint32_t>& out) {
  std::size_t pos = 0;
  auto skip = [&] {
    while (pos < inside.size() && is_space(inside[pos]))
      ++pos;
  };
  skip();
  if (pos == inside.size()) return {};
  for (;;) {
    skip();
    std::uint64_t value = 0;
    const std::size_t start = pos;
    while (pos < inside.size() && inside[pos] >= '0' && inside[pos] <= '9') {
      value = value * 10 + static_cast<std::uint64_t>(inside[pos] - '0');
      if (value > 0xffffffffULL) return "an id over 2^32 - 1";
      ++pos;
    }
    if (pos == start) return "expected a list of whole numbers";
    out.push_back(static_cast<std::uint32_t>(value));
    skip();
    if (pos == inside.size()) return {};
    if (inside[pos] != ',') return "expected ',' between ids";
    ++pos;
  }
}

}  // namespace infersim
