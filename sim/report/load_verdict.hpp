// Whether a mode's server kept up with what it was offered, with the figures
// that show it: for the console's warning and the report page's banner.
//
// The rule. The edge server's requests each have an execution time of their
// own (MODEL.md section 5), so the work offered is known before the run: the
// offered load is rho = Σ exec / (cores × span), span the time from the first
// arrival to the last; above 1 the requests ask more of the cores than they
// can give. A batching server's request costs what the batch it runs in makes
// it cost, so nothing can be summed beforehand; the run shows it instead. On
// either server a queue that does not keep up is still draining after the
// last arrival, for about (rho − 1) × span: a run drains "long" when its last
// response comes more than 5 % of the span after the last arrival (rho above
// about 1.05 over the span, or a burst near the end the server could not
// absorb) and more than the mean deadline budget after it (a server that
// keeps up answers the last request within its budget). A run is overloaded
// when its offered load exceeds 1 (edge) or it drains long (either server).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "report/mode_result.hpp"

namespace infersim {

// The share of the span by which the queue may drain after the last arrival.
inline constexpr double kDrainShareOfSpan = 0.05;

struct LoadVerdict {
  bool overloaded = false;
  // Σ exec / (units × span): the edge server's (its requests' execution
  // times are their own), when the span is not 0.
  std::optional<double> offered_load;
  bool offered_exceeds_capacity = false;  // offered_load > 1
  bool drains_long = false;
  double span_s = 0;         // first arrival to last arrival
  double drain_s = 0;        // last arrival to last response (0 when before)
  double mean_budget_s = 0;  // the requests' mean deadline budget
  // Served requests not yet answered at the end of the slice holding the last
  // arrival (`arrivals_end_s`), from the time series.
  std::uint64_t unanswered = 0;
  std::uint64_t served = 0;
  double arrivals_end_s = 0;
  // The server's busy share over the slices up to that one.
  std::optional<double> busy_while_arriving;
};

// The verdict of a mode (of its first seed when replicated: the seed whose
// requests and time series the result holds). A mode without requests is not
// overloaded.
LoadVerdict assess_load(const ModeResult& result);

// One sentence with the figures that show the overload: "the requests ask
// 5.02 times what the 8 cores can do (...); the last response comes 3.92 h
// after the last arrival; ...; 72 of the 19366 requests met their
// deadline". Empty when the mode is not overloaded.
std::string overload_text(const ModeResult& result, const LoadVerdict& verdict);

// The console's warning line for an overloaded mode ("warning: recorded trace
// overloaded: ..."); empty when it is not.
std::string overload_warning(const ModeResult& result, const LoadVerdict& verdict);

// When most of a mode's requests (more than half) were refused on arrival:
// how many, and the limit that refused them (ModeResult::rejection_limit),
// as a sentence without a leading "warning: "; "" otherwise.
std::string rejection_text(const ModeResult& result);

}  // namespace infersim
