// report.html: one self-contained page per run (no script, font, stylesheet or
// image fetched from anywhere: the plots' SVG is inlined). It opens with a
// verdict (deadlines met or missed and by how much, a banner when a server was
// overloaded, the budgets and knobs that produced it), then the figures side
// by side, the plots and a short guide to reading them. It opens offline.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/mode_result.hpp"

namespace infersim {

// The share of a mode's requests that must meet their deadline for the page's
// verdict to call its deadlines met (the p99 convention).
inline constexpr double kMetShare = 0.99;

struct ReportFigure {
  std::string name;  // plots/<name>.svg
  std::string title;
  std::string caption;
  std::string svg;  // the rendered SVG document; empty when it was not rendered
};

// Escapes &, <, >, " and ' for HTML text and attribute values.
std::string html_escape(const std::string& text);

// The SVG document as an element to inline in HTML: without its XML prologue,
// its ids prefixed with `id_prefix` so that several can share a page, and its
// <title> set to `title`.
std::string inline_svg(const std::string& svg, const std::string& id_prefix,
                       const std::string& title);

// A section its caller adds to the page, after the figures: a link in the
// page's navigation, its heading, its HTML (already escaped) and its figures,
// numbered after the run's own. report/ knows none of them by name; the
// measured run's (calibration/measured_report) is one.
struct PageSection {
  std::string id;       // the section's anchor, linked from the navigation
  std::string heading;  // its <h2>, and the link's text
  std::string html;     // what stands under the heading, before the figures
  std::vector<ReportFigure> figures;
};

// The page. `settings` is the run's settings.json document; `results` one mode
// or recorded and synthetic; `figures` the plots in order (none when plots are
// off); `plots_note` says why plots are missing, when they are; `sections`
// the callers' own, in order. With `retimed` (compare mode), the gap between
// the two modes is split into timing and size mix.
std::string report_html(const nlohmann::ordered_json& settings,
                        const std::vector<const ModeResult*>& results,
                        const std::vector<ReportFigure>& figures, const std::string& plots_note,
                        const std::vector<PageSection>& sections = {},
                        const ModeResult* retimed = nullptr);

}  // namespace infersim
