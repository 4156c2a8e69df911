#include "trace/json_lines.hpp"

#include <algorithm>
#include <utility>

#include "core/input_error.hpp"
#include "trace/record_fields.hpp"

namespace infersim::jsonl {
namespace {

bool is_blank(std::string_view text) {
  return text.find_first_not_of(" \t") == std::string_view::npos;
}

std::string_view trim_end(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' ||
                           text.back() == '\n')) {
    text.remove_suffix(1);
  }
  return text;
}

// JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, of any
// size (a value too large for a double is still JSON).
bool is_json_number(std::string_view text) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9')
      ++i;
    return i > start;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (i < text.size() && text[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == text.size();
}

std::string described(simdjson::error_code error) {
  if (error == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) {
    return "not valid JSON (a brace or bracket not closed, or text after the object)";
  }
  return std::string("not valid JSON (") + simdjson::error_message(error) + ")";
}

// What a scalar that simdjson refuses looks like, for the message.
std::string refused_token(od::value& value, simdjson::error_code error) {
  const std::string_view raw = trim_end(value.raw_json_token());
  if (!raw.empty() && raw.front() != '[' && raw.front() != '{') {
    return "'" + printable(raw, 32) + "' is not a JSON value";
  }
  return described(error);
}

}  // namespace

JsonLines::JsonLines(std::string_view bytes, const std::string& path)
    : rest_(bytes), end_(bytes.data() + bytes.size()), path_(path) {
  if (rest_.starts_with("\xEF\xBB\xBF")) rest_.remove_prefix(3);
}

void JsonLines::fail(std::string_view field, const std::string& what) const {
  throw InputError(path_, line_, std::string(field), what);
}

void JsonLines::fail(std::string_view field, simdjson::error_code error) const {
  fail(field, field.empty() ? "not a JSON object: " + described(error) : described(error));
}

bool JsonLines::next(od::document& document) {
  std::uint64_t blank_line = 0;
  while (!rest_.empty()) {
    ++line_;
    const std::size_t newline = rest_.find('\n');
    std::string_view text = rest_.substr(0, newline);
    rest_.remove_prefix(newline == std::string_view::npos ? rest_.size() : newline + 1);
    if (text.ends_with('\r')) text.remove_suffix(1);
    if (is_blank(text)) {
      if (blank_line == 0) blank_line = line_;
      continue;
    }
    if (blank_line != 0) throw InputError(path_, blank_line, "", "empty line inside the trace");
    // simdjson reads up to SIMDJSON_PADDING bytes past a document: the lines
    // after this one serve, except near the end of the file.
    simdjson::padded_string_view padded;
    if (static_cast<std::size_t>(end_ - text.data()) >= text.size() + simdjson::SIMDJSON_PADDING) {
      padded = simdjson::padded_string_view(text.data(), text.size(),
                                            static_cast<std::size_t>(end_ - text.data()));
    } else {
      padded_.assign(text);
      padded_.append(simdjson::SIMDJSON_PADDING, ' ');
      padded = simdjson::padded_string_view(padded_.data(), text.size(), padded_.size());
    }
    const simdjson::error_code error = parser_.iterate(padded).get(document);
    if (error) fail("", error);
    return true;
  }
  return false;
}

od::object root_object(const JsonLines& lines, od::document& document) {
  od::object object;
  const simdjson::error_code error = document.get_object().get(object);
  if (error == simdjson::INCORRECT_TYPE) lines.fail("", "not a JSON object: expected '{'");
  if (error) lines.fail("", error);
  return object;
}

void expect_end(const JsonLines& lines, od::document& document) {
  const char* at = nullptr;
  const simdjson::error_code error = document.current_location().get(at);
  if (error == simdjson::OUT_OF_BOUNDS) return;
  if (error) lines.fail("", error);
  lines.fail("", "not a JSON object: unexpected text after the object");
}

std::string_view SeenKeys::take(const JsonLines& lines, od::field& field, std::string_view prefix) {
  std::string_view key;
  const simdjson::error_code error = field.unescaped_key().get(key);
  if (error) lines.fail(prefix, error);
  if (std::find(keys_.begin(), keys_.end(), key) != keys_.end()) {
    lines.fail(std::string(prefix) + printable(key), "appears twice in the object");
  }
  keys_.push_back(key);
  return key;
}

void check_value(const JsonLines& lines, const std::string& field, od::value value) {
  od::json_type type;
  simdjson::error_code error = value.type().get(type);
  if (error) lines.fail(field, refused_token(value, error));
  switch (type) {
    case od::json_type::array: {
      od::array array;
      if ((error = value.get_array().get(array))) lines.fail(field, error);
      std::size_t index = 0;
      for (auto element : array) {
        od::value item;
        if ((error = std::move(element).get(item))) lines.fail(field, error);
        check_value(lines, field + "[" + std::to_string(index++) + "]", item);
      }
      return;
    }
    case od::json_type::object: {
      od::object object;
      if ((error = value.get_object().get(object))) lines.fail(field, error);
      SeenKeys seen;
      for (auto member : object) {
        od::field inner;
        if ((error = std::move(member).get(inner))) lines.fail(field, error);
        const std::string_view key = seen.take(lines, inner, field + ".");
        check_value(lines, field + "." + printable(key), inner.value());
      }
      return;
    }
    case od::json_type::number: {
      const std::string_view raw = trim_end(value.raw_json_token());
      if (!is_json_number(raw))
        lines.fail(field, "'" + printable(raw, 32) + "' is not a JSON value");
      return;
    }
    case od::json_type::string: {
      std::string_view text;
      if ((error = value.get_string().get(text))) lines.fail(field, error);
      return;
    }
    case od::json_type::boolean: {
      bool flag = false;
      if ((error = value.get_bool().get(flag))) lines.fail(field, refused_token(value, error));
      return;
    }
    case od::json_type::null: {
      bool null = false;
      if ((error = value.is_null().get(null)) || !null) {
        lines.fail(field, refused_token(value, error ? error : simdjson::N_ATOM_ERROR));
      }
      return;
    }
  }
}

std::string_view number_text(const JsonLines& lines, std::string_view field, od::value value,
                             bool allow_string, bool* was_string) {
  const std::string_view raw = trim_end(value.raw_json_token());
  od::json_type type;
  simdjson::error_code error = value.type().get(type);
  if (error) lines.fail(field, refused_token(value, error));
  if (was_string != nullptr) *was_string = type == od::json_type::string;
  if (type == od::json_type::string && allow_string) {
    std::string_view text;
    if ((error = value.get_string().get(text))) lines.fail(field, error);
    return text;
  }
  if (type != od::json_type::number) {
    lines.fail(field, "expected a number, got " + printable(raw, 32));
  }
  if (!is_json_number(raw)) lines.fail(field, "'" + printable(raw, 32) + "' is not a JSON value");
  return raw;
}

std::uint32_t token_count(const JsonLines& lines, std::string_view field, od::value value) {
  std::uint64_t n = 0;
  if (value.get_uint64().get(n) == simdjson::SUCCESS && n <= 0xffffffffULL) {
    return static_cast<std::uint32_t>(n);
  }
  // A refused scalar getter leaves the value unread: read it again as text.
  std::uint32_t out = 0;
  const std::string error = parse_token_field(number_text(lines, field, value, false), out);
  if (!error.empty()) lines.fail(field, error);
  return out;
}

std::uint64_t whole_number(const JsonLines& lines, std::string_view field, od::value value,
                           std::uint64_t max, const char* what) {
  std::uint64_t n = 0;
  const std::string_view raw = trim_end(value.raw_json_token());
  const simdjson::error_code error = value.get_uint64().get(n);
  if (error || n > max) lines.fail(field, std::string(what) + ", got " + printable(raw, 32));
  return n;
}

void append_ids(const JsonLines& lines, std::string_view field, od::value value, const char* what,
                std::vector<std::uint32_t>& ids) {
  const std::string expected = std::string("expected a list of ") + what;
  od::array array;
  if (value.get_array().get(array)) lines.fail(field, expected);
  const std::string each = expected + ", each from 0 to 2^32 - 1";
  for (auto element : array) {
    od::value id;
    if (const auto error = std::move(element).get(id)) lines.fail(field, error);
    ids.push_back(
        static_cast<std::uint32_t>(whole_number(lines, field, id, 0xffffffffULL, each.c_str())));
  }
}

TraceRecord read_request(const JsonLines& lines, od::document& document, const RequestKeys& keys,
                         TimestampUnit& unit, std::vector<std::uint32_t>& ids) {
  const std::string_view names[4] = {keys.timestamp, keys.input_tokens, keys.output_tokens,
                                     keys.ids};
  od::object object = root_object(lines, document);
  SeenKeys seen;
  TraceRecord record;
  bool found[4] = {false, false, false, false};
  ids.clear();
  for (auto member : object) {
    od::field field;
    if (const auto error = std::move(member).get(field)) lines.fail("", error);
    const std::string_view key = seen.take(lines, field, "");
    int which = 0;
    while (which < 4 && !(key == names[which] && !names[which].empty()))
      ++which;
    if (which < 4) found[which] = true;
    switch (which) {
      case 0: {
        bool was_string = false;
        const std::string_view text =
            number_text(lines, key, field.value(), keys.dated, &was_string);
        if (unit == TimestampUnit::kAuto) {
          unit = was_string ? TimestampUnit::kDatetime : TimestampUnit::kSeconds;
        }
        const std::string error = parse_timestamp_field(text, unit, record.offset_ns);
        if (!error.empty()) lines.fail(key, error);
        break;
      }
      case 1:
        record.context_tokens = token_count(lines, key, field.value());
        break;
      case 2:
        record.generated_tokens = token_count(lines, key, field.value());
        break;
      case 3:
        append_ids(lines, key, field.value(), keys.ids_what, ids);
        break;
      default:
        check_value(lines, printable(key), field.value());
    }
  }
  expect_end(lines, document);
  for (int i = 0; i < (keys.ids_required ? 4 : 3); ++i) {
    if (!found[i]) lines.fail(names[i], "missing from the object");
  }
  return record;
}

}  // namespace infersim::jsonl
