#include "calibration/measured_run_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "core/mapped_file.hpp"
#include "trace/csv_rows.hpp"
#include "trace/json_lines.hpp"
#include "trace/record_fields.hpp"

namespace infersim {
namespace {

namespace od = jsonl::od;
using nlohmann::json;

constexpr const char* kInstants[] = {"queued_ts", "scheduled_ts", "first_token_ts",
                                     "last_token_ts"};

// A number or null (none); anything else is an error naming the field.
std::optional<double> number_or_null(const jsonl::JsonLines& lines, std::string_view field,
                                     od::value value) {
  bool null = false;
  if (!value.is_null().get(null) && null) return std::nullopt;
  double x = 0;
  if (value.get_double().get(x) || !std::isfinite(x)) {
    lines.fail(field, "expected a number of seconds or null");
  }
  return x;
}

std::uint64_t bench_index(const jsonl::JsonLines& lines, od::value value) {
  std::string_view text;
  if (value.get_string().get(text)) lines.fail("request_id", "expected a string \"bench-N\"");
  constexpr std::string_view kPrefix = "bench-";
  std::uint64_t index = 0;
  const char* begin = text.data() + kPrefix.size();
  const char* end = text.data() + text.size();
  if (text.substr(0, kPrefix.size()) != kPrefix || begin == end ||
      std::from_chars(begin, end, index).ptr != end || (*begin == '0' && end - begin > 1)) {
    lines.fail("request_id",
               "expected \"bench-N\" (N the request's line of the workload, from "
               "0), got \"" +
                   printable(text, 40) + "\"");
  }
  return index;
}

void read_requests(const std::filesystem::path& path, MeasuredRun& run) {
  const std::string name = path.string();
  const std::unique_ptr<MappedFile> file = map_input_file(name);
  jsonl::JsonLines lines(file->bytes(), name);
  od::document document;
  std::unordered_set<std::uint64_t> seen_ids;
  while (lines.next(document)) {
    od::object object = jsonl::root_object(lines, document);
    jsonl::SeenKeys seen;
    MeasuredRunRequest r;
    r.line = lines.line();
    bool has_id = false, has_input = false, has_output = false;
    std::optional<double> instants[4];
    bool instant_seen[4] = {false, false, false, false};
    for (auto member : object) {
      od::field field;
      if (const auto error = std::move(member).get(field)) lines.fail("", error);
      const std::string_view key = seen.take(lines, field, "");
      if (key == "request_id") {
        r.index = bench_index(lines, field.value());
        has_id = true;
      } else if (key == "input_toks") {
        r.input_tokens = jsonl::token_count(lines, key, field.value());
        has_input = true;
      } else if (key == "output_toks") {
        r.output_tokens = jsonl::token_count(lines, key, field.value());
        has_output = true;
      } else if (key == "arrival_time") {
        r.arrival_time_s = number_or_null(lines, key, field.value());
      } else {
        int which = 0;
        while (which < 4 && key != kInstants[which])
          ++which;
        if (which < 4) {
          instants[which] = number_or_null(lines, key, field.value());
          instant_seen[which] = true;
        } else {
          jsonl::check_value(lines, printable(key), field.value());
        }
      }
    }
    jsonl::expect_end(lines, document);
    if (!has_id) lines.fail("request_id", "missing from the object");
    if (!has_input) lines.fail("input_toks", "missing from the object");
    if (!has_output) lines.fail("output_toks", "missing from the object");
    if (!seen_ids.insert(r.index).second) {
      lines.fail("request_id", "bench-" + std::to_string(r.index) + " appears twice");
    }
    int present = 0;
    for (int i = 0; i < 4; ++i) {
      if (!instant_seen[i]) lines.fail(kInstants[i], "missing from the object");
      present += instants[i].has_value();
    }
    if (present != 0 && present != 4) {
      lines.fail(kInstants[instants[0] ? (instants[1] ? (instants[2] ? 3 : 2) : 1) : 0],
                 "null while other instants of the request are numbers");
    }
    if (present == 4) {
      r.served = true;
      r.queued_s = *instants[0];
      r.scheduled_s = *instants[1];
      r.first_token_s = *instants[2];
      r.last_token_s = *instants[3];
      for (int i = 1; i < 4; ++i) {
        if (*instants[i] < *instants[i - 1]) {
          lines.fail(kInstants[i], std::string("before ") + kInstants[i - 1] +
                                       ": the engine's instants must not go back");
        }
      }
    } else {
      ++run.unserved;
    }
    run.requests.push_back(r);
  }
  if (run.requests.size() == run.unserved) {
    throw InputError(name, lines.line() + 1, "",
                     run.requests.empty() ? "no requests in the file"
                                          : "no request has the engine's instants (all null)");
  }
}

// meta.json: a value is looked up in the resolved configuration first, then
// in the engine arguments, then in kv_cache; null counts as absent.
class MetaReader {
 public:
  MetaReader(const json& document, std::string path) : doc_(document), path_(std::move(path)) {}

  const json* find(std::initializer_list<const char*> keys) const {
    const json* at = &doc_;
    for (const char* key : keys) {
      if (!at->is_object()) return nullptr;
      const auto it = at->find(key);
      if (it == at->end()) return nullptr;
      at = &*it;
    }
    return at->is_null() ? nullptr : at;
  }
  std::string name(std::initializer_list<const char*> keys) const {
    std::string out;
    for (const char* key : keys)
      out += (out.empty() ? "" : ".") + std::string(key);
    return out;
  }
  // The first of the places that holds a value of the wanted kind; a value of
  // another kind is an error, but for a string such as "<PassConfig>", with
  // which the writer tags a value it could not record: absent.
  template <typename T>
  std::optional<T> get(std::initializer_list<std::initializer_list<const char*>> places,
                       std::vector<std::string>& sources) const {
    for (const auto& keys : places) {
      const json* v = find(keys);
      if (v == nullptr) continue;
      const std::string key = name(keys);
      if constexpr (std::is_same_v<T, bool>) {
        if (!v->is_boolean()) fail(key, "expected true or false, got " + v->dump());
        sources.push_back(key + ": " + v->dump());
        return v->get<bool>();
      } else if constexpr (std::is_same_v<T, std::int64_t>) {
        if (unrecorded(*v)) continue;
        if (!v->is_number_integer()) fail(key, "expected a whole number, got " + v->dump());
        sources.push_back(key + ": " + v->dump());
        return v->get<std::int64_t>();
      } else if constexpr (std::is_same_v<T, double>) {
        if (unrecorded(*v)) continue;
        if (!v->is_number()) fail(key, "expected a number, got " + v->dump());
        sources.push_back(key + ": " + v->dump());
        return v->get<double>();
      } else {
        if (!v->is_string()) fail(key, "expected a string, got " + v->dump());
        return v->get<std::string>();
      }
    }
    return std::nullopt;
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(path_, 0, key, what);
  }

 private:
  static bool unrecorded(const json& v) {
    if (!v.is_string()) return false;
    const std::string& text = v.get_ref<const std::string&>();
    return text.size() >= 2 && text.front() == '<' && text.back() == '>';
  }
  const json& doc_;
  std::string path_;
};

MeasuredEngine read_meta(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(name, 0, "", "cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  json doc;
  try {
    doc = json::parse(text.str());
  } catch (const json::exception& e) {
    std::string what = e.what();
    const auto at = what.find("] ");
    throw InputError(name, 0, "", at == std::string::npos ? what : what.substr(at + 2));
  }
  if (!doc.is_object()) throw InputError(name, 0, "", "expected a JSON object");
  const MetaReader m(doc, name);
  MeasuredEngine e;
  std::vector<std::string>& s = e.sources;
  std::vector<std::string> ignored;
  e.model = m.get<std::string>({{"model"}, {"engine_kwargs", "model"}}, ignored).value_or("");
  e.vllm_version = m.get<std::string>({{"vllm_version"}}, ignored).value_or("");
  e.tensor_parallel_size =
      m.get<std::int64_t>({{"resolved_config", "parallel_config", "tensor_parallel_size"},
                           {"engine_kwargs", "tensor_parallel_size"}},
                          s);
  e.data_parallel_size =
      m.get<std::int64_t>({{"resolved_config", "parallel_config", "data_parallel_size"},
                           {"engine_kwargs", "data_parallel_size"}},
                          s);
  e.enable_expert_parallel =
      m.get<bool>({{"resolved_config", "parallel_config", "enable_expert_parallel"},
                   {"engine_kwargs", "enable_expert_parallel"}},
                  s);
  e.max_num_seqs = m.get<std::int64_t>(
      {{"resolved_config", "scheduler_config", "max_num_seqs"}, {"engine_kwargs", "max_num_seqs"}},
      s);
  e.max_num_batched_tokens =
      m.get<std::int64_t>({{"resolved_config", "scheduler_config", "max_num_batched_tokens"},
                           {"engine_kwargs", "max_num_batched_tokens"}},
                          s);
  e.max_model_len = m.get<std::int64_t>(
      {{"resolved_config", "model_config", "max_model_len"}, {"engine_kwargs", "max_model_len"}},
      s);
  e.num_gpu_blocks = m.get<std::int64_t>(
      {{"kv_cache", "num_gpu_blocks"}, {"resolved_config", "cache_config", "num_gpu_blocks"}}, s);
  e.block_size = m.get<std::int64_t>(
      {{"kv_cache", "block_size"}, {"resolved_config", "cache_config", "block_size"}}, s);
  e.enable_prefix_caching =
      m.get<bool>({{"kv_cache", "enable_prefix_caching"},
                   {"resolved_config", "cache_config", "enable_prefix_caching"},
                   {"engine_kwargs", "enable_prefix_caching"}},
                  s);
  e.async_scheduling = m.get<bool>({{"resolved_config", "scheduler_config", "async_scheduling"},
                                    {"engine_kwargs", "async_scheduling"}},
                                   s);
  e.gpu_memory_utilization =
      m.get<double>({{"kv_cache", "gpu_memory_utilization"},
                     {"resolved_config", "cache_config", "gpu_memory_utilization"}},
                    s);
  e.device_name = m.get<std::string>({{"hardware", "device_name"}}, ignored);
  e.device_memory_bytes = m.get<double>({{"hardware", "device_total_memory_bytes"}}, s);
  e.device_count = m.get<std::int64_t>({{"hardware", "device_count"}}, s);
  e.dataset_path = m.get<std::string>({{"dataset_path"}}, ignored);
  e.dataset_hash = m.get<std::string>({{"dataset_hash"}}, ignored);
  e.tick_seconds = m.get<double>({{"tick_seconds"}}, ignored);
  const auto positive = [&](const std::optional<std::int64_t>& v, const char* key) {
    if (v && *v < 1) m.fail(key, "must be at least 1, got " + std::to_string(*v));
  };
  positive(e.tensor_parallel_size, "tensor_parallel_size");
  positive(e.data_parallel_size, "data_parallel_size");
  positive(e.max_num_seqs, "max_num_seqs");
  positive(e.max_num_batched_tokens, "max_num_batched_tokens");
  positive(e.max_model_len, "max_model_len");
  positive(e.num_gpu_blocks, "num_gpu_blocks");
  positive(e.block_size, "block_size");
  return e;
}

std::optional<double> csv_number(const CsvRows& rows, const std::string& path,
                                 const std::string& column, std::string_view text, bool required) {
  if (text.empty() && !required) return std::nullopt;
  double x = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), x);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(x)) {
    throw InputError(path, rows.line(), column,
                     "expected a number, got '" + printable(text, 32) + "'");
  }
  return x;
}

std::vector<MeasuredTick> read_ticks(const std::filesystem::path& path) {
  const std::string name = path.string();
  const std::unique_ptr<MappedFile> file = map_input_file(name);
  CsvRows rows(file->bytes(), name);
  std::vector<std::string_view> fields;
  if (!rows.next(fields)) throw InputError(name, 1, "", "no header");
  std::vector<std::string> header(fields.begin(), fields.end());
  rows.name_columns(header);
  const auto column = [&](const char* wanted) -> std::ptrdiff_t {
    const auto it = std::find(header.begin(), header.end(), wanted);
    return it == header.end() ? -1 : it - header.begin();
  };
  const std::ptrdiff_t t = column("t"), running = column("running"), waiting = column("waiting");
  for (const auto& [index, key] : {std::pair{t, "t"}, {running, "running"}, {waiting, "waiting"}}) {
    if (index < 0) throw InputError(name, 1, key, "missing from the header");
  }
  const std::ptrdiff_t prompt = column("prompt_throughput"), gen = column("gen_throughput"),
                       kv = column("kv_cache_pct"), preempted = column("preempted");
  std::vector<MeasuredTick> ticks;
  while (rows.next(fields)) {
    if (fields.empty()) continue;
    if (fields.size() != header.size()) {
      throw InputError(name, rows.line(), "",
                       "holds " + std::to_string(fields.size()) + " fields, the header " +
                           std::to_string(header.size()));
    }
    const auto at = [&](std::ptrdiff_t i, bool required) -> std::optional<double> {
      if (i < 0) return std::nullopt;
      return csv_number(rows, name, header[static_cast<std::size_t>(i)],
                        fields[static_cast<std::size_t>(i)], required);
    };
    MeasuredTick tick;
    tick.t_s = *at(t, true);
    tick.running = *at(running, true);
    tick.waiting = *at(waiting, true);
    tick.prompt_throughput = at(prompt, false);
    tick.gen_throughput = at(gen, false);
    tick.kv_cache_pct = at(kv, false);
    tick.preempted = at(preempted, false);
    if (!ticks.empty() && !(tick.t_s > ticks.back().t_s)) {
      throw InputError(name, rows.line(), "t", "must grow from row to row");
    }
    ticks.push_back(tick);
  }
  return ticks;
}

// llmservingsim_vs_vllm.txt: a header line, a rule, then `METRIC STAT
// MEASURED SIMULATED DIFF%` lines (blank lines between groups).
std::vector<PublishedFigure> read_published(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(name, 0, "", "cannot open the file");
  std::vector<PublishedFigure> out;
  std::string line;
  std::uint64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string word; words >> word;)
      w.push_back(word);
    if (w.size() < 4 || w[0] == "Metric" || w[0].find("---") == 0) continue;
    PublishedFigure f;
    f.metric = w[0];
    f.statistic = w[1];
    const auto value = [&](const std::string& text) {
      double x = 0;
      const auto r = std::from_chars(text.data(), text.data() + text.size(), x);
      if (r.ec != std::errc() || r.ptr != text.data() + text.size()) {
        throw InputError(name, number, f.metric + " " + f.statistic,
                         "expected a number of ms, got '" + printable(text, 32) + "'");
      }
      return x;
    };
    f.measured_ms = value(w[2]);
    f.simulated_ms = value(w[3]);
    out.push_back(f);
  }
  return out;
}

}  // namespace

const MeasuredRunRequest* MeasuredRun::by_index(std::uint64_t i) const {
  for (const MeasuredRunRequest& r : requests) {
    if (r.index == i) return &r;
  }
  return nullptr;
}

bool is_measured_run_folder(const std::filesystem::path& path) {
  std::error_code error;
  return std::filesystem::is_directory(path, error) &&
         std::filesystem::is_regular_file(path / "requests.jsonl", error);
}

MeasuredRun read_measured_run(const std::filesystem::path& dir) {
  if (!is_measured_run_folder(dir)) {
    throw InputError(dir.string(), 0, "",
                     "not a measured run: expected a folder holding requests.jsonl (and "
                     "meta.json)");
  }
  MeasuredRun run;
  run.dir = dir;
  read_requests(dir / "requests.jsonl", run);
  std::error_code error;
  if (std::filesystem::exists(dir / "meta.json", error)) run.engine = read_meta(dir / "meta.json");
  if (std::filesystem::exists(dir / "timeseries.csv", error)) {
    run.ticks = read_ticks(dir / "timeseries.csv");
  }
  if (std::filesystem::exists(dir / "llmservingsim_vs_vllm.txt", error)) {
    run.published = read_published(dir / "llmservingsim_vs_vllm.txt");
  }
  return run;
}

}  // namespace infersim
