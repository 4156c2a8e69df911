#include "report/run_writer.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/number_format.hpp"
#include "report/attribution.hpp"
#include "report/plots.hpp"
#include "report/replication_bands.hpp"
#include "report/report_html.hpp"
#include "report/request_log.hpp"
#include "report/time_series.hpp"

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

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

void write_mode_files(const RunFolder& folder, const std::string& sub, const ModeResult& r,
                      bool per_request, const std::vector<RunSection>& sections) {
  const std::filesystem::path dir = sub.empty() ? folder.path() : folder.path() / sub;
  nlohmann::ordered_json summary = summary_to_json(r);
  for (const RunSection& section : sections) {
    if (section.mode == r.mode) summary[section.key] = section.summary;
  }
  write_file_atomically(dir / "summary.json", summary.dump(2) + "\n");
  if (per_request) write_requests_csv(dir / "requests.csv", r.tasks, r.log, r.unit_class);
  write_file_atomically(dir / "timeseries.csv", time_series_csv(r.time_series));
  if (!r.replica_series.empty()) {
    write_file_atomically(dir / "replicas.csv", replica_series_csv(r.replica_series));
  }
  write_file_atomically(dir / "cdf.csv", latency_cdf_csv(r.latency_cdf));
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
  if (r.replication_series.size() > 1) {
    write_file_atomically(dir / "timeseries_band.csv", time_series_band_csv(r.replication_series));
    write_file_atomically(dir / "cdf_band.csv", cdf_band_csv(r.replication_cdfs));
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
  if (!result.classes.empty()) {
    nlohmann::ordered_json classes = nlohmann::ordered_json::array();
    for (const ClassUsage& c : result.classes) {
      nlohmann::ordered_json o;
      o["name"] = c.name;
      if (!c.role.empty()) o["role"] = c.role;
      o["replica_hours"] = c.replica_hours;
      o["busy_s"] = c.busy_s;
      o["utilization"] = c.utilization ? nlohmann::ordered_json(*c.utilization) : nullptr;
      o["cost_usd"] = c.cost_usd;
      o["gpus"] = c.gpus;
      o["price_per_gpu_hour"] = c.price_per_gpu_hour;
      o["gpu_hours"] = c.gpu_hours;
      classes.push_back(o);
    }
    out["classes"] = classes;
  }
  if (!result.replicas.empty()) {
    nlohmann::ordered_json replicas = nlohmann::ordered_json::array();
    for (const ReplicaUsage& r : result.replicas) {
      nlohmann::ordered_json o;
      o["replica"] = r.replica;
      if (!r.cls.empty()) o["class"] = r.cls;
      o["routed"] = r.routed;
      o["prefix_hit_rate"] =
          r.prefix_hit_rate ? nlohmann::ordered_json(*r.prefix_hit_rate) : nullptr;
      o["busy_s"] = r.busy_s;
      replicas.push_back(o);
    }
    out["replicas"] = replicas;
  }
  return out;
}

std::string latency_cdf_csv(const LatencyCdf& cdf) {
  std::string out = "fraction,wait_s,ttft_s,e2el_s\n";
  for (std::size_t i = 0; i < cdf.fraction.size(); ++i) {
    append_shortest(out, cdf.fraction[i]);
    out += ',';
    append_shortest(out, cdf.wait_s[i]);
    out += ',';
    append_shortest(out, cdf.ttft_s[i]);
    out += ',';
    append_shortest(out, cdf.e2el_s[i]);
    out += '\n';
  }
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
               const std::vector<const ModeResult*>& results, bool per_request,
               const ReportOptions& report) {
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
    write_mode_files(folder, nested ? r->mode : "", *r, per_request, report.sections);
  }
  const ModeResult* retimed = nested ? report.retimed : nullptr;
  if (retimed != nullptr) {
    std::error_code error;
    std::filesystem::create_directories(folder.path() / retimed->mode, error);
    if (error) {
      throw OutputError((folder.path() / retimed->mode).string() +
                        ": cannot create: " + error.message());
    }
    write_mode_files(folder, retimed->mode, *retimed, per_request, {});
  }
  write_file_atomically(folder.file("settings.json"), settings.dump(2) + "\n");
  std::vector<const ModeResult*> summarized = results;
  if (retimed != nullptr) summarized.push_back(retimed);
  if (nested) {
    nlohmann::ordered_json summary;
    for (const ModeResult* r : summarized)
      summary[r->mode] = summary_to_json(*r);
    if (retimed != nullptr && results.size() == 2) {
      summary["attribution"] = attribution_json(attribute(*results[0], *retimed, *results[1]));
    }
    write_file_atomically(folder.file("summary.json"), summary.dump(2) + "\n");
  }
  write_file_atomically(folder.file("summary.csv"), summary_csv(summarized));

  // The plots read the CSV files written above; the page inlines the plots.
  std::vector<ReportFigure> figures;
  std::string plots_note = "Plots are off for this run (--plots none).";
  if (report.plots && !results.empty()) {
    const std::vector<PlotScript> scripts = plot_scripts(results, plot_context(settings));
    std::error_code error;
    std::filesystem::create_directories(folder.file("plots"), error);
    if (error)
      throw OutputError(folder.file("plots").string() + ": cannot create: " + error.message());
    for (const PlotScript& p : scripts) {
      write_file_atomically(folder.file("plots") / (p.name + ".gp"), p.script);
    }
    const PlotRendering rendering = render_plots(folder.path(), scripts, report.gnuplot);
    if (!rendering.message.empty() && report.notices) *report.notices << rendering.message << '\n';
    plots_note = "The plots were not rendered: run gnuplot plots/*.gp in the run folder.";
    for (const PlotScript& p : scripts) {
      ReportFigure f{p.name, p.title, p.caption, ""};
      if (std::find(rendering.rendered.begin(), rendering.rendered.end(), p.name) !=
          rendering.rendered.end()) {
        f.svg = read_text_file(folder.file("plots") / (p.name + ".svg"));
      }
      figures.push_back(std::move(f));
    }
  }
  std::vector<PageSection> sections;
  for (const RunSection& section : report.sections) {
    sections.push_back(section.page);
    PlotRendering rendering;
    for (const PlotScript& p : section.write_files(folder.path(), report.plots, rendering)) {
      ReportFigure f{p.name, p.title, p.caption, ""};
      if (std::find(rendering.rendered.begin(), rendering.rendered.end(), p.name) !=
          rendering.rendered.end()) {
        f.svg = read_text_file(folder.file("plots") / (p.name + ".svg"));
      }
      sections.back().figures.push_back(std::move(f));
    }
  }
  write_file_atomically(folder.file("report.html"),
                        report_html(settings, results, figures, plots_note, sections, retimed));
}

}  // namespace infersim
