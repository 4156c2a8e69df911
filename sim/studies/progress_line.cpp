#include "studies/progress_line.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <iostream>

#include "core/number_format.hpp"

namespace infersim {

double ProgressLine::steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

ProgressLine::ProgressLine(std::ostream& out, bool terminal, std::string what, std::string unit,
                           std::size_t total, bool total_is_bound, Clock clock)
    : out_(out),
      terminal_(terminal),
      what_(std::move(what)),
      unit_(std::move(unit)),
      total_(total),
      total_is_bound_(total_is_bound),
      clock_(std::move(clock)),
      start_(clock_()) {}

std::string elapsed_text(double seconds) {
  const auto whole = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  const auto two = [](long long n) { return (n < 10 ? "0" : "") + std::to_string(n); };
  if (whole < 60) return std::to_string(whole) + " s";
  if (whole < 3600) return std::to_string(whole / 60) + " min " + two(whole % 60) + " s";
  const long long minutes = (whole + 30) / 60;
  return std::to_string(minutes / 60) + " h " + two(minutes % 60) + " min";
}

namespace {

// Three significant digits, no exponent, no trailing zeros: 123, 12.3, 1.23, 0.123.
std::string rate_text(double per_s) {
  const int decimals = per_s >= 100 ? 0 : per_s >= 10 ? 1 : per_s >= 1 ? 2 : 3;
  std::string text = fixed(per_s, decimals);
  if (decimals > 0) {
    while (text.back() == '0')
      text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

}  // namespace

std::string ProgressLine::line(std::size_t done, double elapsed_s) const {
  const bool over = done >= total_;
  std::string text = what_ + ": ";
  if (total_is_bound_) {
    // "1 run", "2 runs": the count alone takes the unit's number.
    const bool one = done == 1 && unit_.ends_with('s');
    text += std::to_string(done) + " " + (one ? unit_.substr(0, unit_.size() - 1) : unit_);
    if (!over) text += " of at most " + std::to_string(total_);
  } else {
    text += std::to_string(done) + "/" + std::to_string(total_) + " " + unit_;
  }
  if (done == 0 || elapsed_s <= 0) return text;
  const double rate = static_cast<double>(done) / elapsed_s;
  if (over)
    return text + " in " + elapsed_text(elapsed_s) + ", " + rate_text(rate) + " " + unit_ + "/s";
  const double left_s = static_cast<double>(total_ - done) / rate;
  // Runs take longer as a search reaches larger values: the time left is the
  // rate so far, never a bound, even where the count left is one.
  if (total_is_bound_) {
    return text + ", " + rate_text(rate) + " " + unit_ + "/s, at most " +
           std::to_string(total_ - done) + " " + unit_ + " left (" + elapsed_text(left_s) +
           " at this rate)";
  }
  return text + ", " + rate_text(rate) + " " + unit_ + "/s, " + elapsed_text(left_s) + " left";
}

ProgressLine::~ProgressLine() {
  // Stopped by an error: end the terminal's line so the message starts its own.
  if (terminal_ && last_shown_ >= 0 && !finished_) out_ << '\n' << std::flush;
}

void ProgressLine::show(std::size_t done, double now, bool last) {
  std::string text = line(done, now - start_);
  if (terminal_) {
    const std::size_t length = text.size();
    // Blank what a longer line before left on the terminal.
    if (length < width_) text.append(width_ - length, ' ');
    width_ = length;
    out_ << '\r' << text << (last ? "\n" : "") << std::flush;
  } else {
    out_ << text << '\n' << std::flush;
  }
  last_shown_ = now;
}

void ProgressLine::update(std::size_t done) {
  const std::lock_guard lock(mutex_);
  if (finished_) return;
  done_ = std::max(done_, done);
  const double now = clock_();
  if (now - start_ < kQuietSeconds) return;
  const double every = terminal_ ? kRedrawEverySeconds : kLogEverySeconds;
  if (last_shown_ >= 0 && now - last_shown_ < every) return;
  show(done_, now, false);
}

void ProgressLine::finish() {
  const std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  const double now = clock_();
  if (last_shown_ < 0 && now - start_ < kQuietSeconds) return;
  // A bisection that stopped early is done all the same.
  if (total_is_bound_) total_ = std::min(total_, done_);
  show(done_, now, true);
}

bool writes_to_terminal(const std::ostream& stream) {
  const std::streambuf* buffer = stream.rdbuf();
  if (buffer == std::cerr.rdbuf() || buffer == std::clog.rdbuf()) return ::isatty(STDERR_FILENO);
  if (buffer == std::cout.rdbuf()) return ::isatty(STDOUT_FILENO);
  return false;
}

}  // namespace infersim
