// Progress of a long command (a sweep's points, a capacity search's runs) on
// stderr: how many are done, the rate and the time left. On a terminal one
// line rewritten in place; elsewhere (a log, a pipe) a line every few seconds.
// Nothing at all for a command that ends within a second.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>

namespace infersim {

class ProgressLine {
 public:
  // Seconds from any fixed origin; tests pass their own.
  using Clock = std::function<double()>;
  static double steady_seconds();

  // Quiet until this long after the start.
  static constexpr double kQuietSeconds = 1;
  // Off a terminal, a line this often.
  static constexpr double kLogEverySeconds = 5;
  // On a terminal, the line redrawn at most this often.
  static constexpr double kRedrawEverySeconds = 0.1;

  // `what` starts the line ("sweep"), `unit` names the items ("points"); `total`
  // is their number, or the most there can be when `total_is_bound` (a
  // bisection that may stop early).
  ProgressLine(std::ostream& out, bool terminal, std::string what, std::string unit,
               std::size_t total, bool total_is_bound = false, Clock clock = steady_seconds);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // `done` items are done. Safe to call from several threads.
  void update(std::size_t done);
  // The end: a last line (ending the terminal's line) if anything was shown or
  // the command took over a second.
  void finish();

  // The line as it reads with `done` items done `elapsed_s` after the start.
  std::string line(std::size_t done, double elapsed_s) const;

 private:
  void show(std::size_t done, double now, bool last);

  std::ostream& out_;
  bool terminal_;
  std::string what_;
  std::string unit_;
  std::size_t total_;
  bool total_is_bound_;
  Clock clock_;
  double start_;
  double last_shown_ = -1;  // clock time of the last line shown; < 0: none yet
  std::size_t done_ = 0;
  std::size_t width_ = 0;  // the terminal line's length, to blank what a shorter one leaves
  bool finished_ = false;
  std::mutex mutex_;
};

// Whether `stream` writes to a terminal: std::cerr or std::clog on a terminal's
// stderr, std::cout on a terminal's stdout. Any other stream (a string stream
// in a test, a file) is not.
bool writes_to_terminal(const std::ostream& stream);

// "12 s", "4 min 05 s", "2 h 07 min".
std::string elapsed_text(double seconds);

}  // namespace infersim
