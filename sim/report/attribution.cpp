#include "report/attribution.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/json_number.hpp"
#include "core/number_format.hpp"
#include "report/figure_text.hpp"

namespace infersim {

namespace {

constexpr const char* kKeys[] = {"avg_wait_s", "wait_p99_s", "ttft_p99_s", "makespan_p99_s",
                                 "deadline_missed"};

// a / b, with 0 / 0 = 1 and a / 0 = +infinity.
std::optional<double> factor(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *a < 0 || *b < 0) return std::nullopt;
  if (*b == 0) return *a == 0 ? 1.0 : std::numeric_limits<double>::infinity();
  return *a / *b;
}

std::string factor_text(std::optional<double> f) {
  if (!f) return "n/a";
  if (std::isinf(*f)) return "from 0";
  if (*f == 0) return "to 0";
  char text[32];
  std::snprintf(text, sizeof(text), *f >= 100 ? "x%.0f" : *f >= 10 ? "x%.1f" : "x%.2f", *f);
  return text;
}

// Which way a factor moves the figure: up (1), down (-1), or not beyond
// half a percent (0); 0 and +infinity are down and up.
int direction(std::optional<double> f) {
  if (!f) return 0;
  if (std::isinf(*f)) return 1;
  if (*f == 0) return -1;
  const double l = std::log(*f);
  if (std::fabs(l) < std::log(1.005)) return 0;
  return l > 0 ? 1 : -1;
}

}  // namespace

bool pull_apart(const AttributedFigure& f) {
  return direction(f.timing) * direction(f.size_mix) < 0;
}

std::string larger_words(const AttributedFigure& f) {
  if (f.larger != "timing" && f.larger != "size mix") return f.larger;
  const bool timing = f.larger == "timing";
  if (pull_apart(f)) {
    return f.larger + " (" + (timing ? "size mix" : "timing") + " the other way, " +
           factor_text(timing ? f.size_mix : f.timing) + ")";
  }
  if (!f.timing_share) return f.larger;
  // Both the same way (or one not at all): the share lies in [0, 1] but for
  // rounding; + 0.0 keeps a -0 from being printed.
  const double share = std::clamp(*f.timing_share, 0.0, 1.0);
  return f.larger + " (" + fixed(share * 100 + 0.0, 0) + " % timing)";
}

const AttributedFigure* headline_figure(const std::vector<AttributedFigure>& figures) {
  for (const char* key : {"ttft_p99_s", "wait_p99_s"}) {
    for (const AttributedFigure& x : figures) {
      if (x.key == key && x.ratio) return &x;
    }
  }
  return nullptr;
}

std::vector<AttributedFigure> attribute(const ModeResult& recorded, const ModeResult& retimed,
                                        const ModeResult& synthetic) {
  std::vector<AttributedFigure> out;
  for (const char* key : kKeys) {
    AttributedFigure f;
    f.key = key;
    f.recorded = figure_value(recorded.summary, key);
    f.retimed = figure_value(retimed.summary, key);
    f.synthetic = figure_value(synthetic.summary, key);
    if (!f.recorded && !f.retimed && !f.synthetic) continue;
    f.ratio = factor(f.recorded, f.synthetic);
    f.timing = factor(f.recorded, f.retimed);
    f.size_mix = factor(f.retimed, f.synthetic);
    const auto distance = [](std::optional<double> x) {
      if (!x) return 0.0;
      if (*x == 0 || std::isinf(*x)) return std::numeric_limits<double>::infinity();
      return std::fabs(std::log(*x));
    };
    const double timing = distance(f.timing), sizes = distance(f.size_mix);
    if (timing < std::log(1.1) && sizes < std::log(1.1)) {
      f.larger = "neither";
    } else {
      f.larger = timing >= sizes ? "timing" : "size mix";
    }
    if (f.ratio && f.timing && std::isfinite(*f.ratio) && std::isfinite(*f.timing) &&
        *f.ratio > 0 && *f.timing > 0 && std::fabs(std::log(*f.ratio)) > std::log(1.05)) {
      f.timing_share = std::log(*f.timing) / std::log(*f.ratio);
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::string attribution_table(const std::vector<AttributedFigure>& figures,
                              const ModeResult& recorded, const ModeResult& retimed,
                              const ModeResult& synthetic) {
  if (figures.empty()) return "";
  const std::vector<std::string> head = {"Figure",  "Recorded", "Retimed",  "Synthetic",
                                         "Rec/syn", "Timing",   "Size mix", "Larger"};
  std::vector<std::vector<std::string>> rows = {head};
  for (const AttributedFigure& f : figures) {
    const FigureRow row{figure_label(f.key, recorded.server), f.key, figure_unit(f.key)};
    const std::string larger = larger_words(f);
    rows.push_back({row.label, figure_cell(recorded, row), figure_cell(retimed, row),
                    figure_cell(synthetic, row), factor_text(f.ratio), factor_text(f.timing),
                    factor_text(f.size_mix), larger});
  }
  std::vector<std::size_t> width(head.size(), 0);
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size(); ++i)
      width[i] = std::max(width[i], r[i].size());
  }
  std::string out = "What the gap is made of: retimed is the recorded requests themselves at " +
                    std::string(synthetic.arrivals.empty() ? "poisson" : synthetic.arrivals) +
                    " instants, so rec/syn = timing (rec/retimed) x size mix (retimed/syn).\n";
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      line += r[i] + std::string(width[i] - r[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out += line + "\n";
  }
  return out;
}

nlohmann::ordered_json attribution_json(const std::vector<AttributedFigure>& figures) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  const auto number = json_number;
  for (const AttributedFigure& f : figures) {
    nlohmann::ordered_json o;
    o["recorded"] = number(f.recorded);
    o["retimed"] = number(f.retimed);
    o["synthetic"] = number(f.synthetic);
    o["ratio"] = number(f.ratio);
    o["timing"] = number(f.timing);
    o["size_mix"] = number(f.size_mix);
    o["timing_share"] = number(f.timing_share);
    o["larger"] = f.larger;
    out[f.key] = std::move(o);
  }
  return out;
}

std::string attribution_sentence(const std::vector<AttributedFigure>& figures) {
  const AttributedFigure* f = headline_figure(figures);
  if (f == nullptr) return "";
  const std::string what = f->key == "ttft_p99_s" ? "TTFT p99" : "p99 wait";
  std::string out = "The recorded " + what + " is " + factor_text(f->ratio) +
                    " the synthetic one's: " + factor_text(f->timing) +
                    " from the timing (the recorded requests at their own instants against "
                    "drawn ones) and " +
                    factor_text(f->size_mix) +
                    " from the size mix (the recorded requests against the synthetic sizes, at "
                    "drawn instants); ";
  if (f->larger == "neither") return out + "neither moves it by more than 10 %.";
  if (pull_apart(*f)) {
    return out + (f->larger == "timing"
                      ? "the timing, the bursts, makes the gap; the size mix pulls "
                        "the other way."
                      : "the size mix makes the gap, not the bursts: the timing pulls "
                        "the other way.");
  }
  return out +
         (f->larger == "timing" ? "the timing, the bursts," : "the size mix, not the bursts,") +
         " makes the larger part.";
}

}  // namespace infersim
