#include "report/run_writer.hpp"

#include <algorithm>

#include "report/number_format.hpp"
#include "report/request_log.hpp"

namespace infersim {
namespace {

std::vector<Figure> all_figures(const ModeResult& r) {
  std::vector<Figure> figures = r.summary.figures();
  const auto& ci = r.ci95.figures();
  figures.insert(figures.end(), ci.begin(), ci.end());
  return figures;
}

void append_figure(std::string& out, const Figure& f) {
  if (!f.value) return;
  if (f.integer) {
    append_integer(out, static_cast<std::int64_t>(*f.value));
  } else {
    append_shortest(out, *f.value);
  }
}

std::string csv_of(const std::vector<std::string>& keys, const std::string& first_column,
                   const std::vector<std::pair<std::string, std::vector<Figure>>>& rows) {
  std::string out = first_column;
  for (const std::string& key : keys)
    out += "," + key;
  out += '\n';
  for (const auto& [label, figures] : rows) {
    out += label;
    for (const std::string& key : keys) {
      out += ',';
      const auto it = std::find_if(figures.begin(), figures.end(),
                                   [&](const Figure& f) { return f.key == key; });
      if (it != figures.end()) append_figure(out, *it);
    }
    out += '\n';
  }
  return out;
}

void write_mode_files(const RunFolder& folder, const std::string& sub, const ModeResult& r,
                      bool per_request) {
  const std::filesystem::path dir = sub.empty() ? folder.path() : folder.path() / sub;
  write_file_atomically(dir / "summary.json", summary_to_json(r).dump(2) + "\n");
  if (per_request) write_requests_csv(dir / "requests.csv", r.tasks, r.outcomes);
  if (!r.replications.empty()) {
    std::vector<std::string> keys;
    for (const Figure& f : r.replications.front().figures())
      keys.push_back(f.key);
    std::vector<std::pair<std::string, std::vector<Figure>>> rows;
    for (std::size_t i = 0; i < r.replications.size(); ++i) {
      rows.emplace_back(std::to_string(r.seed + i), r.replications[i].figures());
    }
    write_file_atomically(dir / "replications.csv", csv_of(keys, "seed", rows));
  }
}

}  // namespace

nlohmann::ordered_json summary_to_json(const ModeResult& result) {
  nlohmann::ordered_json out;
  for (const Figure& f : all_figures(result)) {
    if (!f.value) {
      out[f.key] = nullptr;
    } else if (f.integer) {
      out[f.key] = static_cast<std::int64_t>(*f.value);
    } else {
      out[f.key] = *f.value;
    }
  }
  if (!result.replications.empty()) out["replications"] = result.replications.size();
  return out;
}

std::string summary_csv(const std::vector<const ModeResult*>& results) {
  std::vector<std::string> keys;
  std::vector<std::pair<std::string, std::vector<Figure>>> rows;
  for (const ModeResult* r : results) {
    rows.emplace_back(r->mode, all_figures(*r));
    for (const Figure& f : rows.back().second) {
      if (std::find(keys.begin(), keys.end(), f.key) == keys.end()) keys.push_back(f.key);
    }
  }
  return csv_of(keys, "mode", rows);
}

void write_run(const RunFolder& folder, const nlohmann::ordered_json& settings,
               const std::vector<const ModeResult*>& results, bool per_request) {
  folder.create();
  const bool nested = results.size() > 1;
  for (const ModeResult* r : results) {
    if (nested) {
      std::error_code error;
      std::filesystem::create_directories(folder.path() / r->mode, error);
      if (error) {
        throw OutputError((folder.path() / r->mode).string() +
                          ": cannot create: " + error.message());
      }
    }
    write_mode_files(folder, nested ? r->mode : "", *r, per_request);
  }
  write_file_atomically(folder.file("settings.json"), settings.dump(2) + "\n");
  if (nested) {
    nlohmann::ordered_json summary;
    for (const ModeResult* r : results)
      summary[r->mode] = summary_to_json(*r);
    write_file_atomically(folder.file("summary.json"), summary.dump(2) + "\n");
  }
  write_file_atomically(folder.file("summary.csv"), summary_csv(results));
}

}  // namespace infersim
