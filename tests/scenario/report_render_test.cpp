// A compare run's report and plots as a reader gets them: the time series and
// CDF files, the gnuplot scripts, the SVGs when gnuplot is installed, the
// message when it is not, and report.html rendered by headless Chromium when
// /usr/bin/chromium exists.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>

#include <nlohmann/json.hpp>

#include "report/plots.hpp"
#include "report/run_writer.hpp"
#include "report_cells.hpp"
#include "scenario/scenario.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;
namespace fs = std::filesystem;

const std::vector<std::string> kPlots = {"arrivals", "queue_length", "utilization",
                                         "ttft_p99", "wait_p99",     "deadline_misses",
                                         "wait_cdf", "ttft_cdf",     "e2el_cdf"};

// Ten minutes: a quiet start, a burst of 300 requests in 30 s, then a trickle.
std::string bursty_trace() {
  std::string csv = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  auto add = [&](double t, int context, int generated) {
    char line[96];
    const int minutes = static_cast<int>(t / 60);
    std::snprintf(line, sizeof(line), "2024-01-01 00:%02d:%06.3f,%d,%d\n", minutes,
                  t - 60 * minutes, context, generated);
    csv += line;
  };
  for (int i = 0; i < 60; ++i)
    add(i * 2.0, 800 + 37 * (i % 11), 5 + i % 30);
  for (int i = 0; i < 300; ++i)
    add(120 + i * 0.1, 1200 + 53 * (i % 17), 10 + i % 40);
  for (int i = 0; i < 90; ++i)
    add(160 + i * 4.8, 900 + 41 * (i % 13), 3 + i % 25);
  return csv;
}

class ReportRender : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_dir();
    trace_ = test::write_file(dir_ / "trace.csv", bursty_trace()).string();
  }
  test::CliResult run(const std::string& folder, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "run", "--trace", trace_, "--output", (dir_ / folder).string(), "--slice-duration", "30"};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_cli(args);
  }
  fs::path dir_;
  std::string trace_;
};

TEST_F(ReportRender, CompareRunWritesTimeSeriesAndCdfForEachMode) {
  const auto r = run("cmp");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(test::read_file(dir_ / "cmp" / "summary.json"));
  for (const char* mode : {"recorded", "synthetic"}) {
    const std::string csv = test::read_file(dir_ / "cmp" / mode / "timeseries.csv");
    ASSERT_FALSE(csv.empty()) << mode;
    std::istringstream lines(csv);
    std::string line;
    std::getline(lines, line);
    EXPECT_EQ(line,
              "slice_start_s,slice_end_s,arrivals,completions,deadline_misses,"
              "queue_len_mean,queue_len_max,busy_cores_mean,utilization,energy_wh,"
              "wait_p99_s,ttft_p99_s");
    long arrivals = 0, completions = 0;
    double energy = 0;
    int rows = 0;
    while (std::getline(lines, line)) {
      std::vector<std::string> f;
      std::istringstream fields(line);
      for (std::string x; std::getline(fields, x, ',');)
        f.push_back(x);
      arrivals += std::stol(f[2]);
      completions += std::stol(f[3]);
      energy += std::stod(f[9]);
      ++rows;
    }
    const double requests = summary[mode]["requests"].get<double>();
    EXPECT_EQ(arrivals, requests) << mode;
    EXPECT_EQ(completions, requests) << mode;
    // energy_wh is printed in full precision in both files
    EXPECT_NEAR(energy, summary[mode]["energy_wh"].get<double>(), 1e-9) << mode;
    EXPECT_EQ(rows, std::ceil(summary[mode]["end_s"].get<double>() / 30)) << mode;
    const std::string cdf = test::read_file(dir_ / "cmp" / mode / "cdf.csv");
    EXPECT_TRUE(cdf.starts_with("fraction,wait_s,ttft_s,e2el_s\n0,")) << mode;
  }
  // The burst shows: a slice of the recorded trace far above Poisson's.
  EXPECT_THAT(test::read_file(dir_ / "cmp" / "recorded" / "timeseries.csv"),
              HasSubstr("\n120.000000000,150.000000000,300,"));
}

TEST_F(ReportRender, ScriptsReadTheRunsFilesByRelativePath) {
  ASSERT_EQ(run("cmp", {"--recorded"}).status, 0);
  ASSERT_EQ(run("both").status, 0);
  for (const std::string& name : kPlots) {
    const std::string one = test::read_file(dir_ / "cmp" / "plots" / (name + ".gp"));
    const std::string two = test::read_file(dir_ / "both" / "plots" / (name + ".gp"));
    EXPECT_THAT(one, HasSubstr("outfile = \"plots/" + name + ".svg\"")) << name;
    EXPECT_THAT(one, ::testing::Not(HasSubstr("recorded/"))) << name;
    EXPECT_THAT(two, HasSubstr("'recorded/")) << name;
    EXPECT_THAT(two, HasSubstr("'synthetic/")) << name;
    EXPECT_THAT(two, ::testing::Not(HasSubstr(dir_.string()))) << name;
  }
}

TEST_F(ReportRender, GnuplotRendersEverySvg) {
  if (!test::gnuplot_installed())
    INFERSIM_SKIP_OR_FAIL("gnuplot is not installed (Debian: gnuplot-nox)");
  const auto r = run("cmp");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string page = test::read_file(dir_ / "cmp" / "report.html");
  for (const std::string& name : kPlots) {
    const std::string svg = test::read_file(dir_ / "cmp" / "plots" / (name + ".svg"));
    EXPECT_GT(svg.size(), 2000u) << name;
    EXPECT_THAT(svg, HasSubstr("<svg")) << name;
    EXPECT_THAT(page, HasSubstr("<figure id=\"plot-" + name + "\">")) << name;
  }
  std::size_t inlined = 0;
  for (auto at = page.find("<svg"); at != std::string::npos; at = page.find("<svg", at + 1))
    ++inlined;
  EXPECT_EQ(inlined, kPlots.size());
  EXPECT_THAT(page, ::testing::Not(HasSubstr("Not rendered")));
  // No temporary file is left behind.
  for (const auto& entry : fs::directory_iterator(dir_ / "cmp" / "plots")) {
    const std::string file = entry.path().filename().string();
    EXPECT_TRUE(file.ends_with(".gp") || file.ends_with(".svg")) << file;
  }
}

// What output/README.md says: from the run folder, `gnuplot plots/*.gp` renders every
// plot and `gnuplot plots/NAME.gp` one, each to its own SVG.
TEST_F(ReportRender, EachScriptRendersItsOwnPlotFromTheRunFolder) {
  if (!test::gnuplot_installed())
    INFERSIM_SKIP_OR_FAIL("gnuplot is not installed (Debian: gnuplot-nox)");
  ASSERT_EQ(run("cmp").status, 0);
  const fs::path folder = dir_ / "cmp";
  // Each plot's title and one of its series' names, as its script sets them.
  const std::vector<std::pair<std::string, std::vector<std::string>>> kOwn = {
      {"arrivals", {"Arrivals per 30 s slice", "Poisson mean"}},
      {"queue_length", {"Requests waiting for a core", "recorded trace, largest"}},
      {"deadline_misses", {"Deadline-miss rate", "missed / answered in the slice"}},
      {"utilization", {"Busy cores", "busy cores (mean)"}},
      {"ttft_p99", {"Time to first token (TTFT), p99 a slice", "p99 TTFT (s)"}},
      {"wait_p99", {"Wait for a core, p99 a slice", "p99 wait (s)"}},
      {"wait_cdf", {"Wait for a core, cumulative distribution", "share of requests"}},
      {"ttft_cdf", {"Time to first token (TTFT), cumulative distribution", "share of requests"}},
      {"e2el_cdf", {"E2E latency, cumulative distribution", "share of requests"}},
  };
  const auto check = [&](const std::string& when) {
    for (const auto& [name, texts] : kOwn) {
      const fs::path svg = folder / "plots" / (name + ".svg");
      ASSERT_TRUE(fs::exists(svg)) << when << ": " << name;
      const std::string content = test::read_file(svg);
      for (const std::string& text : texts)
        EXPECT_THAT(content, HasSubstr(text)) << when << ": " << name;
      for (const auto& [other, other_texts] : kOwn) {
        if (other != name) {
          EXPECT_THAT(content, ::testing::Not(HasSubstr(other_texts.front())))
              << when << ": " << name << " holds " << other;
        }
      }
    }
  };
  const auto remove_svgs = [&] {
    for (const auto& [name, texts] : kOwn)
      fs::remove(folder / "plots" / (name + ".svg"));
  };
  remove_svgs();
  const ProgramRun all = run_program({"sh", "-c", "gnuplot plots/*.gp"}, folder);
  ASSERT_EQ(all.status, 0) << all.output;
  check("gnuplot plots/*.gp");
  remove_svgs();
  for (const auto& [name, texts] : kOwn) {
    const ProgramRun one = run_program({"gnuplot", "plots/" + name + ".gp"}, folder);
    ASSERT_EQ(one.status, 0) << name << ": " << one.output;
    EXPECT_TRUE(fs::exists(folder / "plots" / (name + ".svg"))) << name;
  }
  check("gnuplot plots/NAME.gp, one at a time");
}

TEST_F(ReportRender, PlotsNoneWritesNoPlots) {
  ASSERT_EQ(run("cmp", {"--plots", "none"}).status, 0);
  EXPECT_FALSE(fs::exists(dir_ / "cmp" / "plots"));
  EXPECT_TRUE(fs::exists(dir_ / "cmp" / "recorded" / "timeseries.csv"));
  EXPECT_THAT(test::read_file(dir_ / "cmp" / "report.html"), HasSubstr("--plots none"));
}

// `count` requests of 1000 and 20 tokens, half a second apart, simulated in
// `mode` over a minute with the default settings.
ModeResult simulated(const std::string& mode, int count) {
  const Settings settings;
  RequestList tasks(settings.request_knobs());
  for (int i = 0; i < count; ++i)
    tasks.add(SimTime::from_seconds(i * 0.5), 1000, 20);
  return simulate(settings, mode, tasks, SimTime::from_seconds(60), 0, false);
}

TEST(ReportWithoutGnuplot, WritesScriptsAndSaysOnceHowToRender) {
  const fs::path dir = test::fresh_dir();
  const Settings settings;
  const ModeResult recorded = simulated("recorded", 30);
  const ModeResult synthetic = simulated("synthetic", 30);
  const RunFolder folder = RunFolder::prepare((dir / "run").string(), "compare", false);
  std::ostringstream notices;
  write_run(folder, settings_to_json(settings), {&recorded, &synthetic}, false,
            {true, &notices, "infersim-test-no-such-gnuplot"});
  const std::string said = notices.str();
  EXPECT_THAT(said, HasSubstr("gnuplot plots/*.gp"));
  EXPECT_THAT(said, HasSubstr((dir / "run").string()));
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1);
  for (const std::string& name : kPlots) {
    EXPECT_TRUE(fs::exists(dir / "run" / "plots" / (name + ".gp"))) << name;
    EXPECT_FALSE(fs::exists(dir / "run" / "plots" / (name + ".svg"))) << name;
  }
  EXPECT_TRUE(fs::exists(dir / "run" / "recorded" / "timeseries.csv"));
  EXPECT_THAT(test::read_file(dir / "run" / "report.html"), HasSubstr("Not rendered"));
}

TEST(ReportWithFailingGnuplot, LeavesNoStaleSvg) {
  const fs::path dir = test::fresh_dir();
  const Settings settings;
  const ModeResult recorded = simulated("recorded", 1);
  const RunFolder folder = RunFolder::prepare((dir / "run").string(), "recorded", false);
  folder.create();
  fs::create_directories(dir / "run" / "plots");
  test::write_file(dir / "run" / "plots" / "arrivals.svg", "<svg>an older run's</svg>");
  std::ostringstream notices;
  // `false` runs and exits with status 1, as a failing gnuplot would.
  write_run(RunFolder::prepare((dir / "run").string(), "recorded", true),
            settings_to_json(settings), {&recorded}, false, {true, &notices, "false"});
  EXPECT_THAT(notices.str(), HasSubstr("exited with status 1"));
  EXPECT_FALSE(fs::exists(dir / "run" / "plots" / "arrivals.svg"));
  EXPECT_TRUE(fs::exists(dir / "run" / "plots" / "arrivals.gp"));
}

TEST(RunProgram, PassesArgumentsWithoutAShell) {
  const ProgramRun r = run_program({"printf", "%s|", "a b", "$(echo no)", "'q'"}, "");
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.output, "a b|$(echo no)|'q'|");
  const ProgramRun missing = run_program({"infersim-test-no-such-program"}, "");
  EXPECT_FALSE(missing.started);
  EXPECT_FALSE(missing.error.empty());
  const ProgramRun in_dir = run_program({"pwd"}, "/tmp");
  EXPECT_EQ(in_dir.output, "/tmp\n");
}

TEST_F(ReportRender, ChromiumRendersTheReportOffline) {
  const fs::path chromium = "/usr/bin/chromium";
  if (!fs::exists(chromium)) {
    INFERSIM_SKIP_OR_FAIL(chromium << " is not installed (Debian: chromium); the page's "
                                   << "structure is tested in report_html_test");
  }
  ASSERT_EQ(run("cmp").status, 0);
  const fs::path profile = dir_ / "chromium-profile";
  fs::create_directories(profile);
  const fs::path png = dir_ / "report.png";
  const ProgramRun r = run_program(
      {chromium.string(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
       "--no-first-run", "--disable-background-networking", "--disable-component-update",
       "--disable-sync", "--user-data-dir=" + profile.string(), "--screenshot=" + png.string(),
       "--window-size=1200,2000", "file://" + (dir_ / "cmp" / "report.html").string()},
      dir_);
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_EQ(r.status, 0) << r.output;
  const std::string image = test::read_file(png);
  ASSERT_GE(image.size(), 8u) << "no screenshot; chromium said:\n" << r.output;
  EXPECT_EQ(image.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  // A blank 1200x2000 page is about 11 kB; text, a table and plots are more.
  EXPECT_GT(image.size(), 40'000u);
}

// The text of an element's cells in a table row of the page's DOM: the
// `<tr data-key="KEY">` row's <th> and <td> contents, tags stripped.
std::vector<std::string> dom_row(const std::string& dom, const std::string& key) {
  std::vector<std::string> cells;
  const auto at = dom.find("<tr data-key=\"" + key + "\">");
  if (at == std::string::npos) {
    ADD_FAILURE() << "no row " << key;
    return cells;
  }
  const std::string row = dom.substr(at, dom.find("</tr>", at) - at);
  static const std::regex cell(R"(<t[hd][^>]*>(.*?)</t[hd]>)");
  for (std::sregex_iterator it(row.begin(), row.end(), cell), end; it != end; ++it)
    cells.push_back((*it)[1]);
  return cells;
}

// The points of a gnuplot SVG's plot number `k` (its first group, which
// holds the data; the key's sample comes later): the M and L of its path.
std::size_t svg_points(const std::string& svg, int k) {
  const std::string id = "<g id=\"gnuplot_plot_" + std::to_string(k) + "\"";
  const auto at = svg.find(id);
  if (at == std::string::npos) return 0;
  const auto next = svg.find("<g id=\"gnuplot_plot_", at + id.size());
  const std::string group = svg.substr(at, next - at);
  const auto d = group.find(" d='");
  if (d == std::string::npos) return 0;
  const std::string path = group.substr(d, group.find('\'', d + 4) - d);
  return static_cast<std::size_t>(std::count(path.begin(), path.end(), 'M') +
                                  std::count(path.begin(), path.end(), 'L'));
}

// The page as Chromium's DOM holds it, on one core, where both modes queue
// and their mean waits differ: the wait row has each mode's figure in its
// column (from each mode's requests.csv) and their ratio, recorded over
// synthetic; the verdict opens the page.
TEST_F(ReportRender, ChromiumDomHoldsEachModesFiguresInTheirColumns) {
  const fs::path chromium = "/usr/bin/chromium";
  if (!fs::exists(chromium)) {
    INFERSIM_SKIP_OR_FAIL(chromium << " is not installed (Debian: chromium)");
  }
  ASSERT_EQ(run("one", {"--cores", "1", "--plots", "none"}).status, 0);
  const fs::path profile = dir_ / "chromium-profile";
  fs::create_directories(profile);
  const fs::path dom_file = dir_ / "dom.html";
  const std::string quote = "'";
  const ProgramRun r = run_program(
      {"sh", "-c",
       quote + chromium.string() + "' --headless --no-sandbox --disable-gpu --disable-quic " +
           "--no-first-run --disable-background-networking --disable-component-update " +
           "--disable-sync '--user-data-dir=" + profile.string() + "' --dump-dom 'file://" +
           (dir_ / "one" / "report.html").string() + "' > '" + dom_file.string() + "' 2>/dev/null"},
      dir_);
  ASSERT_TRUE(r.started) << r.error;
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string dom = test::read_file(dom_file);
  ASSERT_THAT(dom, HasSubstr("<table class=\"figures\">"));

  const double recorded = test::column_mean_s(dir_ / "one" / "recorded" / "requests.csv", "wait_s");
  const double synthetic =
      test::column_mean_s(dir_ / "one" / "synthetic" / "requests.csv", "wait_s");
  ASSERT_GT(synthetic, 0);
  ASSERT_GT(recorded / synthetic, 1.5) << "the burst must make the row asymmetric";
  const auto wait = dom_row(dom, "wait_mean_s");
  ASSERT_EQ(wait.size(), 4u);
  EXPECT_EQ(wait[0], "Wait for a core, mean");
  for (const auto& [cell, expected] : {std::pair{wait[1], recorded}, {wait[2], synthetic}}) {
    const auto v = test::printed_seconds(cell);
    ASSERT_TRUE(v.has_value()) << cell;
    EXPECT_NEAR(v->value, expected, v->tolerance + 1e-12) << cell;
  }
  const auto ratio = test::printed_number(wait[3]);
  ASSERT_TRUE(ratio.has_value()) << wait[3];
  EXPECT_NEAR(ratio->value, recorded / synthetic, ratio->tolerance + 1e-9) << wait[3];

  // The requests row: each mode's count, from its requests.csv.
  const auto requests = dom_row(dom, "requests");
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[1],
            std::to_string(test::read_csv(dir_ / "one" / "recorded" / "requests.csv").size()));
  EXPECT_EQ(requests[2],
            std::to_string(test::read_csv(dir_ / "one" / "synthetic" / "requests.csv").size()));
  // The verdict comes before the figures: the burst makes most recorded
  // requests miss their deadline (over the ten minutes the core keeps up).
  EXPECT_LT(dom.find("id=\"verdict\""), dom.find("id=\"figures\""));
  EXPECT_THAT(dom, HasSubstr("<div class=\"verdict missed\" data-mode=\"recorded\">"));
  EXPECT_THAT(dom, HasSubstr("1 core of 60000 MIPS"));
}

// Each CDF's SVG draws each mode's curve through every point of its cdf.csv
// (a point with a value of 0 is left out of a logarithmic axis), and names
// both in its key.
TEST_F(ReportRender, SvgCdfCurvesHoldEveryPointOfTheirFile) {
  if (!test::gnuplot_installed()) {
    INFERSIM_SKIP_OR_FAIL("gnuplot is not installed (Debian: gnuplot-nox)");
  }
  ASSERT_EQ(run("cmp", {"--cores", "1"}).status, 0);
  for (const auto& [name, column] : {std::pair<std::string, std::string>{"wait_cdf", "wait_s"},
                                     {"ttft_cdf", "ttft_s"},
                                     {"e2el_cdf", "e2el_s"}}) {
    const std::string svg = test::read_file(dir_ / "cmp" / "plots" / (name + ".svg"));
    const bool log =
        test::read_file(dir_ / "cmp" / "plots" / (name + ".gp")).find("set logscale x") !=
        std::string::npos;
    int k = 1;
    for (const char* mode : {"recorded", "synthetic"}) {
      const auto rows = test::read_csv(dir_ / "cmp" / mode / "cdf.csv");
      const auto drawn = static_cast<std::size_t>(std::count_if(
          rows.begin(), rows.end(),
          [&, key = column](const auto& row) { return !log || std::stod(row.at(key)) > 0; }));
      ASSERT_GT(drawn, 1u) << name << " " << mode;
      EXPECT_EQ(svg_points(svg, k), drawn) << name << " " << mode << (log ? " (log)" : "");
      ++k;
    }
    EXPECT_THAT(svg, HasSubstr("<text>recorded trace</text>")) << name;
    EXPECT_THAT(svg, HasSubstr("<text>synthetic poisson</text>")) << name;
  }
  // The TTFT budget's line is drawn on the TTFT CDF.
  EXPECT_THAT(test::read_file(dir_ / "cmp" / "plots" / "ttft_cdf.svg"),
              HasSubstr("<text>TTFT budget (2.000 s)</text>"));
}

}  // namespace
}  // namespace infersim
