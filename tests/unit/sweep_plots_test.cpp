// The plots of sweeps and capacity searches: which figures and lines a table
// gives, their styles, and, with gnuplot installed, the rows each line holds
// once gnuplot has read sweep.csv, and the SVGs rendered.
#include "studies/sweep_plots.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

// Two knobs, cores (out of order: 4, 1, 2) and decode-budget; TTFT and
// utilization missing; the prefix hit rate only in the synthetic rows; the KV
// peak in none.
constexpr const char* kSweepCsv =
    "mode,cores,decode-budget,requests,success_rate,avg_wait_s,energy_wh,prefix_hit_rate,"
    "kv_peak_utilization\n"
    "recorded,4,0.1,8,1,0,3,,\n"
    "synthetic,4,0.1,8,1,0,3,0.5,\n"
    "recorded,4,0.5,8,1,0,3,,\n"
    "synthetic,4,0.5,8,1,0,3,0.5,\n"
    "recorded,1,0.1,8,0.5,2,1.5,,\n"
    "synthetic,1,0.1,8,0.625,1.5,1.4,0.25,\n"
    "recorded,1,0.5,8,0.75,2,1.5,,\n"
    "synthetic,1,0.5,8,0.875,1.5,1.4,0.25,\n"
    "recorded,2,0.1,8,0.75,1,2,,\n"
    "synthetic,2,0.1,8,0.875,1,2,0.375,\n"
    "recorded,2,0.5,8,1,1,2,,\n"
    "synthetic,2,0.5,8,1,1,2,0.375,\n";

std::vector<SweepPlotAxis> two_axes() {
  return {{"cores", {"4", "1", "2"}, true}, {"decode-budget", {"0.1", "0.5"}, true}};
}

std::vector<std::string> names_of(const std::vector<PlotScript>& scripts) {
  std::vector<std::string> names;
  for (const PlotScript& p : scripts)
    names.push_back(p.name);
  return names;
}

const PlotScript& named(const std::vector<PlotScript>& scripts, const std::string& name) {
  for (const PlotScript& p : scripts) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no plot " + name);
}

// The lines of `text` that match `pattern`.
std::vector<std::string> matching(const std::string& text, const std::string& pattern) {
  std::vector<std::string> out;
  const std::regex re(pattern);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, re)) out.push_back(line);
  }
  return out;
}

// The (x, y) rows of a datablock gnuplot prints, e.g. " 4 \t 1".
std::vector<std::pair<double, double>> printed_rows(const std::string& output) {
  std::vector<std::pair<double, double>> rows;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    double x = 0, y = 0;
    if (fields >> x >> y) rows.emplace_back(x, y);
  }
  return rows;
}

TEST(SweepPlots, AFigureAKeyTheTableHasALineAValueAndMode) {
  const std::vector<PlotScript> scripts =
      sweep_plot_scripts(two_axes(), {"recorded", "synthetic"}, kSweepCsv);
  // In sweep_plot_keys()'s order; no TTFT or utilization column, no KV value.
  EXPECT_THAT(names_of(scripts),
              ElementsAre("success_rate", "avg_wait_s", "energy_wh", "prefix_hit_rate"));
  const PlotScript& success = named(scripts, "success_rate");
  EXPECT_EQ(success.title, "success_rate against cores, a line a value of decode-budget");
  // Four lines: each budget, recorded then synthetic.
  EXPECT_THAT(
      matching(success.script, "^set table "),
      ElementsAre("set table $line1", "set table $line2", "set table $line3", "set table $line4"));
  EXPECT_THAT(success.script,
              HasSubstr("plot 'sweep.csv' using \"cores\":\"success_rate\" with table if "
                        "(strcol(\"mode\") eq \"recorded\" && strcol(\"decode-budget\") eq "
                        "\"0.1\")\n"));
  // A colour a budget; recorded solid, synthetic dashed; sorted by cores.
  EXPECT_THAT(success.script,
              HasSubstr("$line1 using 1:2 smooth unique with linespoints lw 2 pt 7 ps 0.8 lc rgb "
                        "\"#c0392b\" dt 1 title \"decode-budget=0.1, recorded\""));
  EXPECT_THAT(success.script,
              HasSubstr("$line2 using 1:2 smooth unique with linespoints lw 2 pt 6 ps 0.8 lc rgb "
                        "\"#c0392b\" dt 2 title \"decode-budget=0.1, synthetic\""));
  EXPECT_THAT(success.script,
              HasSubstr("lc rgb \"#2471a3\" dt 1 title \"decode-budget=0.5, recorded\""));
  // The hit rate exists in the synthetic rows only: two lines.
  EXPECT_THAT(matching(named(scripts, "prefix_hit_rate").script, "^set table "),
              ElementsAre("set table $line1", "set table $line2"));
  EXPECT_THAT(named(scripts, "prefix_hit_rate").script,
              HasSubstr("title \"decode-budget=0.5, synthetic\""));
  EXPECT_THAT(named(scripts, "prefix_hit_rate").script, Not(HasSubstr("recorded\"")));
  // 4/1 is under two decades: a linear axis.
  EXPECT_THAT(success.script, Not(HasSubstr("logscale")));
}

TEST(SweepPlots, OneKnobGivesALineAMode) {
  const std::string csv =
      "mode,replicas,success_rate\nrecorded,1,0.5\nsynthetic,1,0.75\nrecorded,100,1\n"
      "synthetic,100,1\n";
  const std::vector<PlotScript> scripts =
      sweep_plot_scripts({{"replicas", {"1", "100"}, true}}, {"recorded", "synthetic"}, csv);
  ASSERT_THAT(names_of(scripts), ElementsAre("success_rate"));
  EXPECT_EQ(scripts[0].title, "success_rate against replicas");
  EXPECT_THAT(scripts[0].script, HasSubstr("title \"recorded\""));
  EXPECT_THAT(scripts[0].script, HasSubstr("title \"synthetic\""));
  EXPECT_THAT(scripts[0].script, HasSubstr("set logscale x\n"));  // 1 to 100: two decades
}

TEST(SweepPlots, AFigureSpanningDecadesGetsALogarithmicAxis) {
  // TTFT from 8000 s on one core to 0.5 s on 64; the success rate starts at 0.
  const std::string csv =
      "mode,cores,success_rate,ttft_p99_s\nrecorded,1,0,8000\nrecorded,8,0.5,40\n"
      "recorded,64,1,0.5\n";
  const std::vector<PlotScript> scripts =
      sweep_plot_scripts({{"cores", {"1", "8", "64"}, true}}, {"recorded"}, csv);
  ASSERT_THAT(names_of(scripts), ElementsAre("success_rate", "ttft_p99_s"));
  EXPECT_THAT(named(scripts, "ttft_p99_s").script, HasSubstr("set logscale y\n"));
  EXPECT_THAT(named(scripts, "ttft_p99_s").script,
              HasSubstr("set ylabel \"time to first token, 99th percentile (s, logarithmic) "
                        "[ttft_p99_s]\""));
  EXPECT_THAT(named(scripts, "success_rate").script, Not(HasSubstr("set logscale y")));
  EXPECT_THAT(named(scripts, "success_rate").script, Not(HasSubstr("set logscale x")));  // 64x
}

TEST(SweepPlots, WordsAreCategoriesInSweepOrder) {
  const std::string csv =
      "mode,router,replicas,success_rate\nrecorded,round-robin,1,0.5\nrecorded,round-robin,2,1\n"
      "recorded,prefix,1,0.75\nrecorded,prefix,2,1\n";
  const std::vector<PlotScript> scripts = sweep_plot_scripts(
      {{"router", {"round-robin", "prefix"}, false}, {"replicas", {"1", "2"}, true}}, {"recorded"},
      csv);
  ASSERT_EQ(scripts.size(), 1u);
  const std::string& s = scripts[0].script;
  EXPECT_THAT(s, HasSubstr("x_of(s) = s eq \"round-robin\" ? 0 : s eq \"prefix\" ? 1 : NaN\n"));
  EXPECT_THAT(s, HasSubstr("set xtics (\"round-robin\" 0, \"prefix\" 1)\n"));
  EXPECT_THAT(s, HasSubstr("using (x_of(strcol(\"router\"))):\"success_rate\" with table if "
                           "(strcol(\"mode\") eq \"recorded\" && strcol(\"replicas\") eq \"1\")"));
  EXPECT_THAT(s, Not(HasSubstr("smooth unique")));  // the rows come in sweep order
}

TEST(SweepPlots, ReplicatedSyntheticLinesCarryTheirInterval) {
  const std::string csv =
      "mode,cores,success_rate,success_rate_ci95\nrecorded,1,0.5,\nsynthetic,1,0.6,0.05\n"
      "recorded,2,1,\nsynthetic,2,0.9,0.02\n";
  const std::vector<PlotScript> scripts =
      sweep_plot_scripts({{"cores", {"1", "2"}, true}}, {"recorded", "synthetic"}, csv);
  ASSERT_EQ(scripts.size(), 1u);
  EXPECT_THAT(scripts[0].script, HasSubstr("$line2 using 1:2:3 with yerrorbars"));
  EXPECT_THAT(scripts[0].script, Not(HasSubstr("$line1 using 1:2:3")));
}

TEST(SweepPlots, GnuplotReadsEachLinesRowsAndRendersEveryFigure) {
  if (!test::gnuplot_installed())
    INFERSIM_SKIP_OR_FAIL("gnuplot is not installed (Debian: gnuplot-nox)");
  const fs::path dir = test::fresh_dir();
  test::write_file(dir / "sweep.csv", kSweepCsv);
  const std::vector<PlotScript> scripts =
      sweep_plot_scripts(two_axes(), {"recorded", "synthetic"}, kSweepCsv);
  std::ostringstream notices;
  write_plots(dir, scripts, notices);
  EXPECT_EQ(notices.str(), "");
  for (const PlotScript& p : scripts) {
    const std::string svg = test::read_file(dir / "plots" / (p.name + ".svg"));
    EXPECT_THAT(svg, HasSubstr("<svg")) << p.name;
  }
  const std::string svg = test::read_file(dir / "plots" / "success_rate.svg");
  for (const char* title : {"decode-budget=0.1, recorded", "decode-budget=0.1, synthetic",
                            "decode-budget=0.5, recorded", "decode-budget=0.5, synthetic"}) {
    EXPECT_THAT(svg, HasSubstr(std::string("<text>") + title + "</text>")) << title;
  }
  // The rows gnuplot picked for two of the lines, in the file's order (the
  // plot sorts them by cores).
  const ProgramRun r = run_program({"gnuplot", "plots/success_rate.gp", "-e", "print $line1", "-e",
                                    "print \"--\"", "-e", "print $line4"},
                                   dir);
  ASSERT_EQ(r.status, 0) << r.output;
  const std::size_t split = r.output.find("--");
  ASSERT_NE(split, std::string::npos) << r.output;
  using Rows = std::vector<std::pair<double, double>>;
  EXPECT_EQ(printed_rows(r.output.substr(0, split)), (Rows{{4, 1}, {1, 0.5}, {2, 0.75}}));
  EXPECT_EQ(printed_rows(r.output.substr(split)), (Rows{{4, 1}, {1, 0.875}, {2, 1}}));
}

// A search for cores: recorded met at 38, synthetic at 5, over 1 to 1024.
constexpr const char* kCapacityCsv =
    "mode,run,cores,met,success_rate,avg_wait_s\n"
    "recorded,1,1024,true,1,0\n"
    "recorded,2,1,false,0.1,90\n"
    "recorded,3,512,true,1,0\n"
    "recorded,4,38,true,0.99,0.2\n"
    "recorded,5,37,false,0.98,0.3\n"
    "synthetic,1,1024,true,1,0\n"
    "synthetic,2,1,false,0.4,20\n"
    "synthetic,3,5,true,1,0.01\n"
    "synthetic,4,4,false,0.95,0.5\n";

TEST(CapacityPlots, MarkEachModesAnswerAndTheTargetsBound) {
  const std::vector<PlotScript> scripts = capacity_plot_scripts(
      "cores", {{"recorded", 38}, {"synthetic", 5}}, {"avg_wait_s"},
      {{"success_rate", ">=", 0.99}, {"avg_wait_s", "<=", 0.25}}, kCapacityCsv);
  // The target's key first, then the sweep's main figures the table has.
  EXPECT_THAT(names_of(scripts), ElementsAre("avg_wait_s", "success_rate"));
  const std::string& s = named(scripts, "success_rate").script;
  EXPECT_THAT(s, HasSubstr("set logscale x\n"));  // 1 to 1024
  EXPECT_THAT(s, HasSubstr("set table $recorded\nplot 'capacity.csv' using \"cores\":"
                           "\"success_rate\":(strcol(\"met\") eq \"true\" ? 1 : 0) with table if "
                           "(strcol(\"mode\") eq \"recorded\")\n"));
  EXPECT_THAT(s, HasSubstr("set arrow 1 from first 38, graph 0 to first 38, graph 1 nohead"));
  // The answers in the key (a label by the line would be clipped at the edge).
  EXPECT_THAT(s, Not(HasSubstr("set label")));
  EXPECT_THAT(s, HasSubstr("NaN with lines lw 1.5 lc rgb \"#c0392b\" dt 1 title \"recorded "
                           "answer: cores=38\""));
  // success_rate is a share: a linear axis, zoomed from a little below the
  // 0.99 target to 1 (a logarithmic one crowds 0.98 to 0.995 into a sliver),
  // the runs below it on the floor.
  EXPECT_THAT(s, Not(HasSubstr("set logscale y")));
  EXPECT_THAT(s, HasSubstr("set yrange [0.95:1.002]\n"));
  EXPECT_THAT(s, HasSubstr("$recorded using 1:($2 < 0.95 ? 0.95 : $2) smooth unique"));
  EXPECT_THAT(s, HasSubstr("set arrow 2 from first 5, graph 0 to first 5, graph 1 nohead lw 1.5 "
                           "lc rgb \"#2471a3\" dt 2"));
  EXPECT_THAT(s, HasSubstr("0.99 with lines lw 1 dt 3 lc rgb \"#666666\" title \"target: "
                           "success_rate>=0.99\""));
  EXPECT_THAT(s, Not(HasSubstr("avg_wait_s<=")));  // each bound on its own figure
  // No answer: no mark.
  const std::vector<PlotScript> none = capacity_plot_scripts("cores", {{"recorded", std::nullopt}},
                                                             {"success_rate"}, {}, kCapacityCsv);
  EXPECT_THAT(named(none, "success_rate").script, Not(HasSubstr("set arrow")));
}

TEST(CapacityPlots, RenderWithGnuplot) {
  if (!test::gnuplot_installed())
    INFERSIM_SKIP_OR_FAIL("gnuplot is not installed (Debian: gnuplot-nox)");
  const fs::path dir = test::fresh_dir();
  test::write_file(dir / "capacity.csv", kCapacityCsv);
  const std::vector<PlotScript> scripts =
      capacity_plot_scripts("cores", {{"recorded", 38}, {"synthetic", 5}}, {"success_rate"},
                            {{"success_rate", ">=", 0.99}}, kCapacityCsv);
  std::ostringstream notices;
  write_plots(dir, scripts, notices);
  EXPECT_EQ(notices.str(), "");
  const std::string svg = test::read_file(dir / "plots" / "success_rate.svg");
  EXPECT_THAT(svg, HasSubstr("recorded answer: cores=38"));
  EXPECT_THAT(svg, HasSubstr("<text>target: success_rate>=0.99</text>"));
}

}  // namespace
}  // namespace infersim
