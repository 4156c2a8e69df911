#include "calibration/kernel_tables.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <stdexcept>

#include "core/input_error.hpp"
#include "core/number_format.hpp"
#include "core/percentiles.hpp"

namespace infersim {
namespace {

std::vector<std::string> kernel_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t comma = line.find(',', begin);
    cells.push_back(
        line.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (comma == std::string::npos) return cells;
    begin = comma + 1;
  }
}

std::optional<double> kernel_number(const std::string& text) {
  double value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::string kernel_key(double value) {
  return shortest(value);
}

// The two grid values around `x` (equal when x is one, or outside the grid:
// then its nearest end). `grid` sorted, not empty.
std::pair<double, double> grid_bracket(const std::vector<double>& grid, double x) {
  const auto above = std::lower_bound(grid.begin(), grid.end(), x);
  if (above == grid.end()) return {grid.back(), grid.back()};
  if (*above == x || above == grid.begin()) return {*above, *above};
  return {*(above - 1), *above};
}

// Linear lerp_at (x0, y0) and (x1, y1) at x; y0 when x0 == x1.
double lerp_at(double x0, double y0, double x1, double y1, double x) {
  if (x1 == x0) return y0;
  return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

// Beyond a grid's largest value, in proportion; else 1.
double past_grid(const std::vector<double>& grid, double x) {
  return x > grid.back() ? x / grid.back() : 1;
}

[[noreturn]] void kernel_not_measured(const KernelTable& table, const std::string& what) {
  throw InputError(table.path, 0, "", "no measured shape near " + what);
}

// "gemm_dtype fp8, n 4096": the key columns a prefix gives.
std::string shape_text(const KernelTable& table, const std::vector<std::string>& prefix) {
  std::string text;
  for (std::size_t i = 0; i < prefix.size() && i < table.key_columns.size(); ++i)
    text += (text.empty() ? "" : ", ") + table.key_columns[i] + " " + prefix[i];
  return text;
}

}  // namespace

double KernelCurve::at(double size) const {
  if (x.empty()) throw std::logic_error("KernelCurve: no measured point");
  if (size <= x.front()) return us.front();
  if (size >= x.back()) return us.back() * size / x.back();
  const auto above = std::lower_bound(x.begin(), x.end(), size);
  const std::size_t i = static_cast<std::size_t>(above - x.begin());
  return lerp_at(x[i - 1], us[i - 1], x[i], us[i], size);
}

KernelTable KernelTable::read(const std::string& path, std::size_t key_count,
                              const std::string& swept) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot open the kernel table");
  KernelTable table;
  table.path = path;
  table.swept = swept;
  std::string line;
  std::uint64_t number = 0;
  std::vector<double> sizes;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::vector<std::string> cells = kernel_cells(line);
    if (number == 1) {
      if (cells.size() <= key_count) {
        throw InputError(
            path, 1, "",
            "expected " + std::to_string(key_count) + " key columns and at least one size");
      }
      header = cells;
      table.key_columns.assign(cells.begin(), cells.begin() + key_count);
      for (std::size_t c = key_count; c < cells.size(); ++c) {
        const std::optional<double> size = kernel_number(cells[c]);
        if (!size || (!sizes.empty() && *size <= sizes.back())) {
          throw InputError(path, 1, cells[c], "a size column's header is an increasing number");
        }
        sizes.push_back(*size);
      }
      continue;
    }
    if (line.empty()) continue;
    if (cells.size() != header.size()) {
      throw InputError(
          path, number, "",
          std::to_string(cells.size()) + " cells, the header has " + std::to_string(header.size()));
    }
    std::vector<std::string> key(cells.begin(), cells.begin() + key_count);
    KernelCurve curve;
    for (std::size_t c = key_count; c < cells.size(); ++c) {
      if (cells[c].empty()) continue;
      const std::optional<double> us = kernel_number(cells[c]);
      if (!us || *us <= 0) {
        throw InputError(path, number, header[c],
                         "expected a latency in microseconds above 0, got '" + cells[c] + "'");
      }
      curve.x.push_back(sizes[c - key_count]);
      curve.us.push_back(*us);
    }
    if (curve.x.empty()) throw InputError(path, number, "", "no measured latency");
    if (!table.rows.emplace(std::move(key), std::move(curve)).second) {
      throw InputError(path, number, "", "the same shape twice");
    }
  }
  if (table.rows.empty()) throw InputError(path, 0, "", "no rows");
  return table;
}

const KernelCurve* KernelTable::find(const std::vector<std::string>& key) const {
  const auto it = rows.find(key);
  return it == rows.end() ? nullptr : &it->second;
}

std::vector<double> KernelTable::values_after(const std::vector<std::string>& prefix) const {
  // The rows that start with `prefix` are contiguous in the map's order.
  std::vector<double> values;
  for (auto it = rows.lower_bound(prefix); it != rows.end(); ++it) {
    if (!std::equal(prefix.begin(), prefix.end(), it->first.begin())) break;
    if (const std::optional<double> v = kernel_number(it->first[prefix.size()]))
      values.push_back(*v);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

KernelTables KernelTables::load(const std::string& folder) {
  const std::filesystem::path dir(folder);
  KernelTables t;
  t.gemm_ = KernelTable::read((dir / "gemm.csv").string(), 3, "m");
  t.context_ = KernelTable::read((dir / "context_attention.csv").string(), 6, "isl");
  t.generation_ = KernelTable::read((dir / "generation_attention.csv").string(), 6, "kv_len");
  t.moe_ = KernelTable::read((dir / "moe.csv").string(), 8, "num_tokens");
  t.allreduce_ = KernelTable::read((dir / "allreduce.csv").string(), 3, "message_size");
  return t;
}

double KernelTable::latency_us(const std::vector<std::string>& prefix,
                               std::span<const double> sizes) const {
  if (sizes.size() == 1) {
    const KernelCurve* c = find(prefix);
    if (c == nullptr) kernel_not_measured(*this, shape_text(*this, prefix));
    return c->at(sizes.front());
  }
  // The next key column: linear between the measured values around it (the
  // work is), in proportion beyond the largest.
  const std::vector<double> values = values_after(prefix);
  if (values.empty()) kernel_not_measured(*this, shape_text(*this, prefix));
  const double x = sizes.front();
  const auto [v0, v1] = grid_bracket(values, x);
  const auto at_value = [&](double v) {
    std::vector<std::string> key = prefix;
    key.push_back(kernel_key(v));
    return latency_us(key, sizes.subspan(1));
  };
  return lerp_at(v0, at_value(v0), v1, at_value(v1), std::min(x, v1)) * past_grid(values, x);
}

double KernelTables::gemm_us(const std::string& dtype, double m, double n, double k) const {
  const double sizes[] = {n, k, m};
  return gemm_.latency_us({dtype}, sizes);
}

double KernelTables::attention_us(const KernelTable& table, const std::string& kv_dtype,
                                  int head_dim, int window, double heads, double kv_heads,
                                  double batch, double size) const {
  const double sizes[] = {heads, kv_heads, batch, size};
  std::vector<std::string> prefix = {kv_dtype, std::to_string(head_dim), std::to_string(window)};
  // No window is 0 in some GPUs' tables and empty in others'.
  if (window == 0 && table.values_after(prefix).empty()) prefix[2] = "";
  return table.latency_us(prefix, sizes);
}

double KernelTables::context_attention_us(const std::string& kv_dtype, int head_dim, int window,
                                          double heads, double kv_heads, double batch,
                                          double tokens) const {
  return attention_us(context_, kv_dtype, head_dim, window, heads, kv_heads, batch, tokens);
}

double KernelTables::generation_attention_us(const std::string& kv_dtype, int head_dim, int window,
                                             double heads, double kv_heads, double batch,
                                             double kv_len) const {
  return attention_us(generation_, kv_dtype, head_dim, window, heads, kv_heads, batch, kv_len);
}

std::optional<double> KernelTables::allreduce_us(int gpus, double elements, bool graph) const {
  const KernelCurve* c =
      allreduce_.find({graph ? "vllm_graph" : "vllm_eager", "bfloat16", std::to_string(gpus)});
  if (c == nullptr) return std::nullopt;
  return c->at(elements);
}

std::optional<double> KernelTables::moe_us(const std::string& dtype, int hidden, int inter,
                                           int topk, int experts, int tp, int ep,
                                           double tokens) const {
  // Evenly loaded experts, else the flattest power law measured.
  for (const char* load : {"balanced", "power_law_1.01"}) {
    const KernelCurve* c =
        moe_.find({dtype, load, std::to_string(hidden), std::to_string(inter), std::to_string(topk),
                   std::to_string(experts), std::to_string(tp), std::to_string(ep)});
    if (c != nullptr) return c->at(tokens);
  }
  return std::nullopt;
}

namespace {

// |error| in percent of each point of a curve predicted from its two
// neighbours.
void swept_hold_out(const KernelTable& table, double floor_us, std::vector<double>& out) {
  for (const auto& [key, c] : table.rows) {
    for (std::size_t i = 1; i + 1 < c.x.size(); ++i) {
      if (c.us[i] < floor_us) continue;
      const double predicted = lerp_at(c.x[i - 1], c.us[i - 1], c.x[i + 1], c.us[i + 1], c.x[i]);
      out.push_back(100 * std::abs(predicted - c.us[i]) / c.us[i]);
    }
  }
}

// The same across key column `column`: a row predicted from the rows of the
// neighbouring values there (the other key columns the same), at each swept
// size all three measured.
void key_hold_out(const KernelTable& table, std::size_t column, double floor_us,
                  std::vector<double>& out) {
  // The rows by their key with `column` left out, each with its value there.
  std::map<std::vector<std::string>, std::map<double, const KernelCurve*>> lines;
  for (const auto& [key, c] : table.rows) {
    std::vector<std::string> rest = key;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(column));
    if (const std::optional<double> v = kernel_number(key[column])) lines[rest][*v] = &c;
  }
  for (const auto& [rest, line] : lines) {
    if (line.size() < 3) continue;
    for (auto mid = std::next(line.begin()); std::next(mid) != line.end(); ++mid) {
      const auto lo = std::prev(mid), hi = std::next(mid);
      const KernelCurve& c = *mid->second;
      for (std::size_t i = 0; i < c.x.size(); ++i) {
        if (c.us[i] < floor_us) continue;
        const KernelCurve& a = *lo->second;
        const KernelCurve& b = *hi->second;
        const auto a_at = std::find(a.x.begin(), a.x.end(), c.x[i]);
        const auto b_at = std::find(b.x.begin(), b.x.end(), c.x[i]);
        if (a_at == a.x.end() || b_at == b.x.end()) continue;
        const double predicted =
            lerp_at(lo->first, a.us[static_cast<std::size_t>(a_at - a.x.begin())], hi->first,
                    b.us[static_cast<std::size_t>(b_at - b.x.begin())], mid->first);
        out.push_back(100 * std::abs(predicted - c.us[i]) / c.us[i]);
      }
    }
  }
}

HoldOutError hold_out_summary(const std::string& table, const std::string& axis,
                              std::vector<double> errors) {
  HoldOutError e{table, axis, errors.size(), 0, 0};
  if (errors.empty()) return e;
  e.median_pct = *percentile(errors, 0.5);
  e.p90_pct = *percentile(errors, 0.9);
  return e;
}

}  // namespace

std::vector<HoldOutError> hold_out_errors(const KernelTables& tables, double floor_us) {
  std::vector<HoldOutError> out;
  const auto table_errors = [&](const std::string& name, const KernelTable& table,
                                const std::vector<std::pair<std::size_t, std::string>>& keys) {
    std::vector<double> errors;
    swept_hold_out(table, floor_us, errors);
    out.push_back(hold_out_summary(name, table.swept, std::move(errors)));
    for (const auto& [column, axis] : keys) {
      std::vector<double> across;
      key_hold_out(table, column, floor_us, across);
      out.push_back(hold_out_summary(name, axis, std::move(across)));
    }
  };
  table_errors("gemm", tables.gemm(), {{1, "n"}, {2, "k"}});
  table_errors("context_attention", tables.context_attention(),
               {{3, "num_heads"}, {4, "num_key_value_heads"}, {5, "batch_size"}});
  table_errors("generation_attention", tables.generation_attention(),
               {{3, "num_heads"}, {5, "batch_size"}});
  table_errors("moe", tables.moe(), {});
  table_errors("allreduce", tables.allreduce(), {});
  return out;
}

}  // namespace infersim
