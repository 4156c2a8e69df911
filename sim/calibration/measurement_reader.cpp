#include "calibration/measurement_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "core/mapped_file.hpp"
#include "trace/aiperf_reader.hpp"
#include "trace/csv_rows.hpp"
#include "trace/record_fields.hpp"

namespace infersim {
namespace {

using nlohmann::json;

void check_request(const std::string& path, const MeasuredRequest& r, const std::string& ttft_field,
                   const std::string& e2e_field) {
  if (!std::isfinite(r.ttft_s) || r.ttft_s < 0) {
    throw InputError(path, r.line, ttft_field, "expected a time of at least 0");
  }
  if (!std::isfinite(r.e2e_s) || r.e2e_s < r.ttft_s) {
    throw InputError(path, r.line, e2e_field, "expected a latency no shorter than the TTFT");
  }
}

Measurement read_aiperf(const std::string& path) {
  const AiperfExport exported = read_aiperf_export(path);
  Measurement m;
  m.skipped_errors = exported.errors;
  for (const AiperfRecord& a : exported.records) {
    if (!a.ttft_s) {
      throw InputError(path, a.line, "metrics.time_to_first_token",
                       "missing (a streaming run records it; rerun aiperf with --streaming)");
    }
    if (!a.latency_s) throw InputError(path, a.line, "metrics.request_latency", "missing");
    MeasuredRequest r;
    r.line = a.line;
    r.input_tokens = a.input_tokens;
    r.output_tokens = a.output_tokens;
    r.ttft_s = *a.ttft_s;
    r.e2e_s = *a.latency_s;
    r.start_ns = a.start_ns;
    check_request(path, r, "metrics.time_to_first_token", "metrics.request_latency");
    m.requests.push_back(r);
  }
  std::stable_sort(
      m.requests.begin(), m.requests.end(),
      [](const MeasuredRequest& a, const MeasuredRequest& b) { return *a.start_ns < *b.start_ns; });
  return m;
}

const json& array_of(const json& doc, const char* key, std::size_t n, const std::string& path,
                     bool required) {
  static const json kNull;
  if (!doc.contains(key) || doc[key].is_null()) {
    if (required) throw InputError(path, 0, key, "missing (save the result with --save-detailed)");
    return kNull;
  }
  const json& a = doc[key];
  if (!a.is_array()) throw InputError(path, 0, key, "expected a list, one entry a request");
  if (n != a.size()) {
    throw InputError(
        path, 0, key,
        "holds " + std::to_string(a.size()) + " entries, input_lens " + std::to_string(n));
  }
  return a;
}

double number_at(const json& a, std::size_t i, const char* key, const std::string& path) {
  if (!a[i].is_number()) {
    throw InputError(path, i + 1, std::string(key) + "[" + std::to_string(i) + "]",
                     "expected a number");
  }
  return a[i].get<double>();
}

Measurement read_vllm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot open the file");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {  // a syntax error or a number out of range
    throw InputError(path, 0, "", std::string("not a JSON document: ") + e.what());
  }
  if (!doc.is_object())
    throw InputError(path, 0, "", "expected a JSON object (vllm bench serve's result)");
  if (!doc.contains("input_lens") || !doc["input_lens"].is_array()) {
    throw InputError(path, 0, "input_lens",
                     "missing: save the result with --save-result --save-detailed");
  }
  const std::size_t n = doc["input_lens"].size();
  const json& inputs = doc["input_lens"];
  const json& outputs = array_of(doc, "output_lens", n, path, true);
  const json& ttfts = array_of(doc, "ttfts", n, path, true);
  const json& itls = array_of(doc, "itls", n, path, false);
  const json& e2els = array_of(doc, "e2els", n, path, false);
  const json& latencies = e2els.is_null() ? array_of(doc, "latencies", n, path, false) : e2els;
  const char* e2e_key = e2els.is_null() ? "latencies" : "e2els";
  const json& errors = array_of(doc, "errors", n, path, false);
  if (latencies.is_null() && itls.is_null()) {
    throw InputError(path, 0, "e2els", "missing, and no itls to derive it from");
  }
  Measurement m;
  for (std::size_t i = 0; i < n; ++i) {
    if (!errors.is_null() && errors[i].is_string() && !errors[i].get<std::string>().empty()) {
      ++m.skipped_errors;
      continue;
    }
    MeasuredRequest r;
    r.line = i + 1;
    r.input_tokens = number_at(inputs, i, "input_lens", path);
    r.output_tokens = number_at(outputs, i, "output_lens", path);
    r.ttft_s = number_at(ttfts, i, "ttfts", path);
    const std::string index = "[" + std::to_string(i) + "]";
    if (!latencies.is_null()) {
      r.e2e_s = number_at(latencies, i, e2e_key, path);
    } else {
      // No end-to-end latency saved: the first token, then every gap after it.
      if (!itls[i].is_array()) throw InputError(path, i + 1, "itls" + index, "expected a list");
      r.e2e_s = r.ttft_s;
      for (std::size_t k = 0; k < itls[i].size(); ++k) {
        if (!itls[i][k].is_number()) {
          throw InputError(path, i + 1, "itls" + index + "[" + std::to_string(k) + "]",
                           "expected a number");
        }
        r.e2e_s += itls[i][k].get<double>();
      }
    }
    for (const auto& [value, key] :
         {std::pair{r.input_tokens, "input_lens"}, std::pair{r.output_tokens, "output_lens"}}) {
      if (!(value >= 0) || value != std::floor(value)) {
        throw InputError(path, i + 1, key + index, "expected a whole number of tokens");
      }
    }
    check_request(path, r, "ttfts" + index, std::string(e2e_key) + index);
    m.requests.push_back(r);
  }
  return m;
}

Measurement read_csv(const std::string& path) {
  const std::unique_ptr<MappedFile> file = map_input_file(path);
  const char* names[4] = {"input_tokens", "output_tokens", "ttft_s", "e2e_s"};
  CsvRows rows(file->bytes(), path);
  std::vector<std::string_view> fields;
  std::vector<std::size_t> index(4);
  std::size_t columns = 0;
  std::uint64_t blank_line = 0;
  Measurement m;
  while (rows.next(fields)) {
    const std::uint64_t line = rows.line();
    // Blank lines may end the file; one before a row is an error.
    if (fields.empty()) {
      if (blank_line == 0) blank_line = line;
      continue;
    }
    if (blank_line != 0) throw InputError(path, blank_line, "", "empty line inside the file");
    if (columns == 0) {
      for (int k = 0; k < 4; ++k) {
        const auto it = std::find(fields.begin(), fields.end(), names[k]);
        if (it == fields.end()) {
          throw InputError(path, line, names[k],
                           "column missing from the header (expected "
                           "input_tokens,output_tokens,ttft_s,e2e_s)");
        }
        index[k] = static_cast<std::size_t>(it - fields.begin());
      }
      columns = fields.size();
      rows.name_columns(std::vector<std::string>(fields.begin(), fields.end()));
      continue;
    }
    if (fields.size() != columns) {
      throw InputError(
          path, line, "",
          "expected " + std::to_string(columns) + " fields, got " + std::to_string(fields.size()));
    }
    double values[4];
    for (int k = 0; k < 4; ++k) {
      const std::string_view f = fields[index[k]];
      const auto r = std::from_chars(f.data(), f.data() + f.size(), values[k]);
      if (f.empty() || r.ec != std::errc() || r.ptr != f.data() + f.size()) {
        throw InputError(path, line, names[k], "expected a number, got '" + printable(f, 32) + "'");
      }
    }
    MeasuredRequest r;
    r.line = line;
    r.input_tokens = values[0];
    r.output_tokens = values[1];
    r.ttft_s = values[2];
    r.e2e_s = values[3];
    for (int k = 0; k < 2; ++k) {
      if (!(values[k] >= 0) || values[k] != std::floor(values[k])) {
        throw InputError(path, line, names[k], "expected a whole number of tokens");
      }
    }
    check_request(path, r, "ttft_s", "e2e_s");
    m.requests.push_back(r);
  }
  if (columns == 0) throw InputError(path, 1, "", "empty file: expected a header line");
  return m;
}

}  // namespace

std::string detect_measurement_format(const std::string& path) {
  if (path.ends_with(".jsonl")) return "aiperf";
  if (path.ends_with(".json")) return "vllm";
  if (path.ends_with(".csv")) return "csv";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot open the file");
  std::string line;
  while (std::getline(in, line) && line.find_first_not_of(" \t\r") == std::string::npos) {
  }
  const std::size_t first = line.find_first_not_of(" \t\xEF\xBB\xBF");
  if (first == std::string::npos || line[first] != '{') return "csv";
  return looks_like_aiperf_record(line) ? "aiperf" : "vllm";
}

Measurement read_measurement(const std::string& path, const std::string& format) {
  const std::string resolved = format == "auto" ? detect_measurement_format(path) : format;
  Measurement m;
  if (resolved == "aiperf") {
    m = read_aiperf(path);
  } else if (resolved == "vllm") {
    m = read_vllm(path);
  } else if (resolved == "csv") {
    m = read_csv(path);
  } else {
    throw InputError(path, 0, "--format",
                     "unknown format '" + format + "': expected aiperf, vllm, csv or auto");
  }
  m.path = path;
  m.format = resolved;
  if (m.requests.empty()) {
    throw InputError(
        path, 0, "",
        m.skipped_errors > 0 ? "every request failed; nothing to read" : "no requests in the file");
  }
  return m;
}

}  // namespace infersim
