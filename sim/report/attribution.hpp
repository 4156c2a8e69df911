// What the recorded/synthetic gap is made of. Between the recorded trace and
// the synthetic one sits the retimed mode: the recorded requests themselves
// at synthetic instants. A figure's ratio recorded / synthetic is then the
// product of timing, recorded / retimed (the same requests, recorded against
// drawn instants), and size mix, retimed / synthetic (the same instants'
// process, the recorded requests against synthetic sizes); on a log scale the
// two shares add up to the whole.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/mode_result.hpp"

namespace infersim {

struct AttributedFigure {
  std::string key;  // a summary key: ttft_p99_s, ...
  std::optional<double> recorded, retimed, synthetic;
  // recorded / synthetic, recorded / retimed, retimed / synthetic: none when
  // a figure is missing; +infinity when only the denominator is 0 (1 when
  // both are).
  std::optional<double> ratio, timing, size_mix;
  // ln(timing) / ln(ratio): timing's share of the gap on a log scale (size
  // mix's is 1 minus it); none when the ratio is within 5 % of 1 or a factor
  // is not finite. Below 0 or above 1 when the two pull apart, where it
  // means nothing: the words (larger_words) then say so instead.
  std::optional<double> timing_share;
  // "timing", "size mix", or "neither" (both factors within 10 % of 1): the
  // factor further from 1.
  std::string larger;
};

// The "Larger" column's words, each true of the two factors: "neither" when
// both are within 10 % of 1; else the factor further from 1, followed, when
// the other moves the figure the same way, by timing's share of the gap
// ("timing (83 % timing)", always 0 to 100 %), or, when the other pulls the
// opposite way, by that ("size mix (timing the other way, x0.96)").
std::string larger_words(const AttributedFigure& figure);

// Whether the factors pull the figure opposite ways (each more than half a
// percent from 1).
bool pull_apart(const AttributedFigure& figure);

// The figure the sentences speak of: the TTFT p99's, else the p99 wait's;
// none when neither has a ratio.
const AttributedFigure* headline_figure(const std::vector<AttributedFigure>& figures);

// The figures the split is given for: waits, TTFT, E2E latency, misses.
std::vector<AttributedFigure> attribute(const ModeResult& recorded, const ModeResult& retimed,
                                        const ModeResult& synthetic);

// The console's block: a row a figure, the three modes and the factors.
std::string attribution_table(const std::vector<AttributedFigure>& figures,
                              const ModeResult& recorded, const ModeResult& retimed,
                              const ModeResult& synthetic);

// summary.json's `attribution`: an object a figure's key.
nlohmann::ordered_json attribution_json(const std::vector<AttributedFigure>& figures);

// One sentence: which effect makes the TTFT p99 gap (or the wait p99's when
// there is no TTFT), as the report page says it.
std::string attribution_sentence(const std::vector<AttributedFigure>& figures);

}  // namespace infersim
