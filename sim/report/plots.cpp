#include "report/plots.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "report/number_format.hpp"

extern char** environ;

namespace infersim {
namespace fs = std::filesystem;
namespace {

struct Series {
  std::string label;
  std::string dir;  // "" or "recorded/"
  std::string color;
  const ModeResult* result;
};

std::vector<Series> series_of(const std::vector<const ModeResult*>& results,
                              const std::string& synthetic_arrivals) {
  std::vector<Series> out;
  for (const ModeResult* r : results) {
    const bool recorded = r->mode == "recorded";
    out.push_back({recorded ? "recorded trace" : "synthetic " + synthetic_arrivals,
                   results.size() > 1 ? r->mode + "/" : "", recorded ? "#c0392b" : "#2471a3", r});
  }
  return out;
}

// Each script names its own output, so `gnuplot plots/*.gp` writes each plot to
// its own SVG; render_plots sends one to a temporary name by setting
// outfile_<name> before the script (a name no other script reads).
std::string header(const std::string& name, const std::string& title, const std::string& data,
                   const std::string& size = "960,420") {
  return "# " + title + "\n# Reads " + data + ".\n# Render from the run folder: gnuplot plots/" +
         name + ".gp (writes plots/" + name +
         ".svg)\n"
         "reset\n"
         "outfile = \"plots/" +
         name + ".svg\"\nif (exists(\"outfile_" + name + "\")) outfile = outfile_" + name +
         "\n"
         "set encoding utf8\n"
         "set terminal svg size " +
         size +
         " dynamic noenhanced font \"sans,12\" background \"#ffffff\"\n"
         "set output outfile\n"
         "set datafile separator comma\n"
         "set grid lc rgb \"#dddddd\"\n"
         "set border lc rgb \"#444444\"\n"
         "set key top right opaque box lc rgb \"#cccccc\"\n";
}

std::string files_read(const std::vector<Series>& series, const std::string& file) {
  std::string out;
  for (const Series& s : series)
    out += (out.empty() ? "" : " and ") + s.dir + file;
  return out;
}

// Slice midpoints: histeps draws each slice's value across its width.
constexpr const char* kMid = "((column(\"slice_start_s\") + column(\"slice_end_s\")) / 2)";

std::string time_axis(const std::vector<Series>& series) {
  SimTime end;
  for (const Series& s : series) {
    if (!s.result->time_series.slices.empty()) {
      end = std::max(end, s.result->time_series.slices.back().end);
    }
  }
  return "set xlabel \"trace time (s)\"\nset xrange [0:" + shortest(std::max(end.seconds(), 1e-9)) +
         "]\n";
}

PlotScript arrivals_plot(const std::vector<Series>& series, double slice_s) {
  PlotScript p;
  p.name = "arrivals";
  p.title = "Arrivals per " + shortest(slice_s) + " s slice";
  const ModeResult& first = *series.front().result;
  const double run_s = first.run_length.seconds();
  const double mean = run_s > 0 ? static_cast<double>(first.tasks.size()) / run_s * slice_s : 0;
  p.caption =
      "Requests arriving in each slice. The grey band is where Poisson arrivals at the " +
      series.front().label + "'s mean rate (" + fixed(mean, 1) +
      " a slice) fall about 95 % of the time: the mean plus or minus two standard deviations.";
  p.script =
      header(p.name, p.title, files_read(series, "timeseries.csv")) + time_axis(series) +
      "set title \"" + p.title + "\"\nset ylabel \"requests arriving\"\nset yrange [0:*]\n" +
      "poisson_mean = " + shortest(mean) + "  # requests / run length x slice length, of the " +
      series.front().label + "\n" +
      "poisson_low = poisson_mean - 2 * sqrt(poisson_mean)\n"
      "poisson_high = poisson_mean + 2 * sqrt(poisson_mean)\n"
      "plot '+' using 1:(poisson_low):(poisson_high) with filledcurves "
      "fc rgb \"#bbbbbb\" fs transparent solid 0.35 noborder title \"Poisson mean ± 2σ\", \\\n"
      "     poisson_mean with lines dt 2 lc rgb \"#666666\" title \"Poisson mean\"";
  for (const Series& s : series) {
    p.script += ", \\\n     '" + s.dir + "timeseries.csv' using " + kMid +
                ":\"arrivals\" with histeps lw 2 lc rgb \"" + s.color + "\" title \"" + s.label +
                "\"";
  }
  p.script += "\nunset output\n";
  return p;
}

PlotScript queue_plot(const std::vector<Series>& series, double slice_s) {
  PlotScript p;
  p.name = "queue_length";
  p.title = "Requests waiting for a core";
  p.caption =
      "Requests that have reached the server and not yet started: the time-weighted "
      "mean over each " +
      shortest(slice_s) + " s slice (solid) and the largest count in it (dotted).";
  p.script = header(p.name, p.title, files_read(series, "timeseries.csv")) + time_axis(series) +
             "set title \"" + p.title +
             "\"\nset ylabel \"requests queued\"\nset yrange [0:*]\nplot ";
  bool first = true;
  for (const Series& s : series) {
    if (!first) p.script += ", \\\n     ";
    first = false;
    p.script += "'" + s.dir + "timeseries.csv' using " + kMid +
                ":\"queue_len_mean\" with histeps lw 2 lc rgb \"" + s.color + "\" title \"" +
                s.label + ", mean\", \\\n     '" + s.dir + "timeseries.csv' using " + kMid +
                ":\"queue_len_max\" with histeps lw 1 dt 3 lc rgb \"" + s.color + "\" title \"" +
                s.label + ", largest\"";
  }
  p.script += "\nunset output\n";
  return p;
}

PlotScript miss_plot(const std::vector<Series>& series, double slice_s) {
  PlotScript p;
  p.name = "deadline_misses";
  p.title = "Deadline-miss rate";
  p.caption = "The share of the requests answered in each " + shortest(slice_s) +
              " s slice that missed their deadline; a gap is a slice with no answer.";
  p.script = header(p.name, p.title, files_read(series, "timeseries.csv")) + time_axis(series) +
             "set title \"" + p.title +
             "\"\nset ylabel \"missed / answered in the slice (%)\"\nset yrange [0:100]\nplot ";
  bool first = true;
  for (const Series& s : series) {
    if (!first) p.script += ", \\\n     ";
    first = false;
    // Boxes, as wide as their slice, leave a slice without answers empty.
    p.script += "'" + s.dir + "timeseries.csv' using " + kMid +
                ":(column(\"completions\") > 0 ? 100.0 * column(\"deadline_misses\") / "
                "column(\"completions\") : NaN):(column(\"slice_end_s\") - "
                "column(\"slice_start_s\")) with boxes lc rgb \"" +
                s.color + "\" fs transparent solid 0.3 border lc rgb \"" + s.color + "\" title \"" +
                s.label + "\"";
  }
  p.script += "\nunset output\n";
  return p;
}

// A logarithmic axis when every curve has positive values and together they
// span over two decades; zeros are left out of a logarithmic axis, so a curve
// starts at the share of requests whose value is 0.
bool log_axis(const std::vector<Series>& series, const std::vector<double> LatencyCdf::*column) {
  double low = 0;
  double high = 0;
  for (const Series& s : series) {
    bool positive = false;
    for (const double x : s.result->latency_cdf.*column) {
      if (x <= 0) continue;
      positive = true;
      low = low == 0 ? x : std::min(low, x);
      high = std::max(high, x);
    }
    if (!positive) return false;
  }
  return high > low * 100;
}

PlotScript cdf_plot(const std::vector<Series>& series, const std::string& name,
                    const std::string& title, const std::string& column, const std::string& what,
                    const std::vector<double> LatencyCdf::*values) {
  PlotScript p;
  p.name = name;
  p.title = title;
  const bool log = log_axis(series, values);
  p.caption = "The share of requests (vertical) whose " + what +
              " was at most the value on the horizontal axis; a curve to the left is faster." +
              (log ? " The axis is logarithmic: requests with a value of 0 are where a curve "
                     "starts."
                   : "");
  p.script = header(p.name, p.title, files_read(series, "cdf.csv")) + "set title \"" + title +
             "\"\nset xlabel \"" + what + " (s" + (log ? ", logarithmic" : "") +
             ")\"\nset ylabel \"share of requests\"\nset yrange [0:1]\nset key bottom right\n" +
             (log ? "set logscale x\n" : "") + "plot ";
  bool first = true;
  for (const Series& s : series) {
    if (!first) p.script += ", \\\n     ";
    first = false;
    const std::string x =
        log ? "(column(\"" + column + "\") > 0 ? column(\"" + column + "\") : NaN)"
            : "\"" + column + "\"";
    p.script += "'" + s.dir + "cdf.csv' using " + x + ":\"fraction\" with lines lw 2 lc rgb \"" +
                s.color + "\" title \"" + s.label + "\"";
  }
  p.script += "\nunset output\n";
  return p;
}

}  // namespace

std::vector<PlotScript> plot_scripts(const std::vector<const ModeResult*>& results,
                                     const std::string& synthetic_arrivals) {
  if (results.empty()) return {};
  const std::vector<Series> series = series_of(results, synthetic_arrivals);
  const double slice_s = results.front()->time_series.slice.seconds();
  std::vector<PlotScript> out = {arrivals_plot(series, slice_s), queue_plot(series, slice_s),
                                 miss_plot(series, slice_s)};
  // A mode without requests has no distribution to draw (gnuplot refuses an
  // empty file).
  std::vector<Series> with_requests;
  for (const Series& s : series) {
    if (!s.result->latency_cdf.fraction.empty()) with_requests.push_back(s);
  }
  if (!with_requests.empty()) {
    out.push_back(cdf_plot(with_requests, "wait_cdf",
                           "Waiting time for a core, cumulative distribution", "wait_s",
                           "waiting time", &LatencyCdf::wait_s));
    out.push_back(cdf_plot(with_requests, "ttft_cdf",
                           "Time to first token, cumulative distribution", "ttft_s",
                           "time to first token", &LatencyCdf::ttft_s));
  }
  return out;
}

ProgramRun run_program(const std::vector<std::string>& argv, const fs::path& cwd) {
  ProgramRun out;
  if (argv.empty()) {
    out.error = "no program named";
    return out;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    out.error = std::strerror(errno);
    return out;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (spawned != 0) {
    ::close(fds[0]);
    out.error = std::strerror(spawned);
    return out;
  }
  out.started = true;
  char buffer[4096];
  for (;;) {
    const ssize_t got = ::read(fds[0], buffer, sizeof(buffer));
    if (got > 0) {
      out.output.append(buffer, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      out.error = std::strerror(errno);
      return out;
    }
  }
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

PlotRendering render_plots(const fs::path& run_folder, const std::vector<PlotScript>& plots,
                           const std::string& gnuplot) {
  PlotRendering out;
  if (plots.empty()) return out;
  const std::string suffix = ".tmp-" + std::to_string(::getpid());
  std::error_code ignored;
  // One gnuplot for the batch; the SVGs are renamed into place only when it
  // succeeded, and otherwise removed, stale ones of an earlier run included.
  auto render = [&](const std::vector<const PlotScript*>& batch) {
    std::vector<std::string> argv = {gnuplot};
    for (const PlotScript* p : batch) {
      // Only names of our own making go into gnuplot's text; no path of the user's.
      argv.push_back("-e");
      argv.push_back("outfile_" + p->name + " = 'plots/" + p->name + ".svg" + suffix + "'");
      argv.push_back("plots/" + p->name + ".gp");
    }
    const ProgramRun run = run_program(argv, run_folder);
    for (const PlotScript* p : batch) {
      const fs::path final_path = run_folder / "plots" / (p->name + ".svg");
      const fs::path temp = run_folder / "plots" / (p->name + ".svg" + suffix);
      if (run.started && run.status == 0 && fs::exists(temp, ignored)) {
        std::error_code error;
        fs::rename(temp, final_path, error);
        if (!error) {
          out.rendered.push_back(p->name);
          continue;
        }
      }
      fs::remove(temp, ignored);
      fs::remove(final_path, ignored);
    }
    return run;
  };
  std::vector<const PlotScript*> all;
  for (const PlotScript& p : plots)
    all.push_back(&p);
  ProgramRun run = render(all);
  if (run.started && run.status != 0) {
    // A script that fails stops gnuplot; render the others one by one.
    for (const PlotScript* p : all) {
      const ProgramRun one = render({p});
      if (one.status != 0) run = one;
    }
  }
  const std::string by_hand = "to render them, run `gnuplot plots/*.gp` in " + run_folder.string();
  if (!run.started) {
    out.message =
        "plots: " + gnuplot + " could not be run (" + run.error +
        "; Debian's package is gnuplot-nox); the scripts and their data are written: " + by_hand;
  } else if (out.rendered.size() != plots.size()) {
    // gnuplot's first complaint, on one line.
    std::string said = run.output.substr(0, std::min<std::size_t>(run.output.size(), 300));
    std::replace(said.begin(), said.end(), '\n', ' ');
    while (!said.empty() && said.back() == ' ')
      said.pop_back();
    out.message = "plots: " + gnuplot + " exited with status " + std::to_string(run.status) +
                  (said.empty() ? "" : " (" + said + ")") + "; " +
                  std::to_string(plots.size() - out.rendered.size()) + " of " +
                  std::to_string(plots.size()) + " plots not rendered; " + by_hand;
  }
  return out;
}

}  // namespace infersim
