// report.html's structure: self-contained (nothing fetched from a network),
// the figures table, every plot inlined, text escaped.
#include "report/report_html.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "report/figure_text.hpp"
#include "scenario/scenario.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;
using ::testing::Not;

ModeResult small_run(const std::string& mode, double spacing_s) {
  Settings settings;
  settings.cores = 1;
  RequestList tasks(settings.request_knobs());
  for (int i = 0; i < 40; ++i)
    tasks.add(SimTime::from_seconds(i * spacing_s), 500, 1 + i % 7);
  return simulate(settings, mode, std::move(tasks), SimTime::from_seconds(60), 0, false);
}

// What gnuplot's SVG terminal writes, in small.
std::string fake_svg(const std::string& label) {
  return "<?xml version=\"1.0\" encoding=\"utf-8\"  standalone=\"no\"?>\n"
         "<svg \n viewBox=\"0 0 600 300\"\n xmlns=\"http://www.w3.org/2000/svg\"\n"
         " xmlns:xlink=\"http://www.w3.org/1999/xlink\"\n>\n<title>Gnuplot</title>\n"
         "<g id=\"gnuplot_canvas\"><defs><path id='gpPt0' d='M-1,0 h2'/></defs>"
         "<use xlink:href='#gpPt0' x='1' y='2'/><text>" +
         label + "</text></g></svg>\n";
}

nlohmann::ordered_json settings_json(const std::string& trace) {
  nlohmann::ordered_json s = settings_to_json(Settings{});
  s["trace"]["path"] = trace;
  s["meta"]["program"] = "infersim";
  s["meta"]["version"] = "0.1.0";
  s["meta"]["written_at"] = "2026-01-01T00:00:00Z";
  return s;
}

class ReportPage : public ::testing::Test {
 protected:
  void SetUp() override {
    recorded_ = small_run("recorded", 0.1);  // a burst on one core
    synthetic_ = small_run("synthetic", 1.5);
    for (const char* name : {"arrivals", "queue_length", "wait_cdf"}) {
      figures_.push_back({name, std::string("Title of ") + name, "How to read it.",
                          fake_svg(std::string("label-") + name)});
    }
    page_ = report_html(settings_json("trace/a<b>&c.csv"), {&recorded_, &synthetic_}, figures_, "");
  }
  ModeResult recorded_, synthetic_;
  std::vector<ReportFigure> figures_;
  std::string page_;
};

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST_F(ReportPage, IsOneHtmlDocument) {
  EXPECT_TRUE(page_.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
  EXPECT_THAT(page_, HasSubstr("<meta charset=\"utf-8\">"));
  EXPECT_TRUE(page_.ends_with("</html>\n"));
  EXPECT_EQ(count(page_, "<body>"), 1u);
  EXPECT_EQ(count(page_, "</body>"), 1u);
}

TEST_F(ReportPage, FetchesNothing) {
  // No address outside the page in a src or href, no script, no stylesheet
  // or font loaded from elsewhere.
  const std::regex external(R"((src|href)\s*=\s*["']?\s*(https?:|//|ftp:|data:text/html))",
                            std::regex::icase);
  EXPECT_FALSE(std::regex_search(page_, external));
  for (const char* banned :
       {"<script", "<link", "@import", "url(", "<iframe", "<object", "<embed"}) {
    EXPECT_THAT(page_, Not(HasSubstr(banned))) << banned;
  }
  // Every href that is there points within the page.
  const std::regex href(R"(href\s*=\s*["']([^"']*)["'])");
  for (auto it = std::sregex_iterator(page_.begin(), page_.end(), href);
       it != std::sregex_iterator(); ++it) {
    EXPECT_EQ((*it)[1].str().front(), '#') << (*it)[0];
  }
}

TEST_F(ReportPage, HoldsTheComparisonTable) {
  EXPECT_EQ(count(page_, "<table class=\"figures\">"), 1u);
  EXPECT_THAT(page_, HasSubstr("<th>Recorded trace</th><th>Synthetic poisson</th>"
                               "<th>Recorded / synthetic</th>"));
  for (const char* row : {"Requests generated", "Requests that met their deadline",
                          "Time to first token (TTFT), p99", "Time per output token (TPOT), mean",
                          "E2E latency, p50", "Peak concurrent requests", "Energy of the run"}) {
    EXPECT_THAT(page_, HasSubstr("<th scope=\"row\">" + std::string(row) + "</th>")) << row;
  }
  EXPECT_THAT(page_, HasSubstr("<td>40</td><td>40</td><td class=\"ratio\">1.000</td>"));
}

// The verdict opens the page. The recorded burst: 40 requests within 3.9 s
// on one core, each (6000 + 2000 g) MI at 60000 MIPS with g = 1..7 (155
// tokens in all): 9.167 s of execution, 2.35 times what the core gives over
// the span. The synthetic requests, 1.5 s apart, each done in under 0.35 s,
// all meet their deadline.
TEST_F(ReportPage, OpensWithTheVerdictAndTheKnobsThatProducedIt) {
  const auto verdict = page_.find("<section id=\"verdict\">");
  ASSERT_NE(verdict, std::string::npos);
  EXPECT_LT(verdict, page_.find("<section id=\"figures\">"));
  EXPECT_THAT(page_, HasSubstr("<div class=\"banner overload\" role=\"alert\" "
                               "data-mode=\"recorded\"><b>Overloaded: Recorded trace.</b> The "
                               "requests ask 2.35 times what the 1 core can do (9.167 s of "
                               "execution over the 3.900 s the arrivals span)"));
  EXPECT_THAT(page_, HasSubstr("<h3>Recorded trace: deadlines missed, TTFT p99 over its budget, "
                               "mean latency over its budget, overloaded</h3>"));
  EXPECT_THAT(page_, HasSubstr("<h3>Synthetic poisson: every target met</h3>"));
  EXPECT_EQ(count(page_, "class=\"banner"), 1u);
  // The budgets and the server's knobs, with their settings keys.
  EXPECT_THAT(page_, HasSubstr("<code>deadline.ttft_budget_s</code></th><td>2 s</td>"));
  EXPECT_THAT(page_, HasSubstr("<code>deadline.decode_budget_s</code></th><td>0.1 s</td>"));
  EXPECT_THAT(page_, HasSubstr("<code>server.mips_per_core</code></th><td>60000 MIPS</td>"));
}

TEST_F(ReportPage, InlinesEveryPlot) {
  EXPECT_EQ(count(page_, "<svg"), figures_.size());
  EXPECT_THAT(page_, Not(HasSubstr("<?xml")));
  for (const ReportFigure& f : figures_) {
    EXPECT_THAT(page_, HasSubstr("label-" + f.name));
    EXPECT_THAT(page_, HasSubstr("<title>" + f.title + "</title>"));
    EXPECT_THAT(page_, HasSubstr("<figcaption><b>" + f.title + ".</b>"));
  }
  // Each plot's definitions are its own.
  EXPECT_THAT(page_, HasSubstr("id='p0-gpPt0'"));
  EXPECT_THAT(page_, HasSubstr("xlink:href='#p2-gpPt0'"));
  EXPECT_EQ(count(page_, "id='p1-gpPt0'"), 1u);
  EXPECT_THAT(page_, Not(HasSubstr("Not rendered")));
}

TEST_F(ReportPage, EscapesWhatItQuotes) {
  EXPECT_THAT(page_, HasSubstr("trace/a&lt;b&gt;&amp;c.csv"));
  EXPECT_THAT(page_, Not(HasSubstr("a<b>&c")));
}

TEST_F(ReportPage, GuidesTheReader) {
  EXPECT_THAT(page_, HasSubstr("<h2>Reading guide</h2>"));
  EXPECT_THAT(page_, HasSubstr("What a burst does"));
  EXPECT_THAT(page_, HasSubstr("gnuplot plots/*.gp"));
}

TEST_F(ReportPage, AllFiguresAreListedByKey) {
  for (const Figure& f : recorded_.summary.figures()) {
    EXPECT_THAT(page_, HasSubstr("<code>" + f.key + "</code>")) << f.key;
  }
}

TEST(ReportPageOfOneMode, HasOneColumnAndNoRatio) {
  const ModeResult only = small_run("synthetic", 1);
  const std::string page = report_html(settings_json("t.csv"), {&only}, {}, "Plots are off.");
  EXPECT_THAT(page, HasSubstr("<th>Synthetic poisson</th></tr>"));
  EXPECT_THAT(page, Not(HasSubstr("Recorded / synthetic")));
  EXPECT_THAT(page, Not(HasSubstr("<svg")));
  EXPECT_THAT(page, HasSubstr("<p>Plots are off.</p>"));
  EXPECT_THAT(page, Not(HasSubstr("What a burst does")));
}

TEST(ReportPageWithoutRenderedPlots, SaysHowToRenderThem) {
  const ModeResult only = small_run("recorded", 1);
  const std::string page =
      report_html(settings_json("t.csv"), {&only}, {{"arrivals", "Arrivals", "Read me.", ""}}, "");
  EXPECT_THAT(page, HasSubstr("Not rendered. Run <code>gnuplot plots/*.gp</code>"));
  EXPECT_THAT(page, HasSubstr("<img src=\"plots/arrivals.svg\""));
}

TEST(ReportPageSections, StandAfterTheFiguresLinkedAndNumberTheirFiguresAfterTheRunsOwn) {
  const ModeResult only = small_run("recorded", 1);
  PageSection section{"extra", "A <caller>'s section", "<p>Its own words.</p>\n", {}};
  section.figures.push_back({"extra_plot", "Extra", "Drawn by its caller.", fake_svg("e")});
  const std::string page =
      report_html(settings_json("t.csv"), {&only},
                  {{"arrivals", "Arrivals", "Read me.", fake_svg("a")}}, "", {section});
  EXPECT_THAT(page, HasSubstr("<a href=\"#figures\">Figures</a><a href=\"#extra\">A "
                              "&lt;caller&gt;&#39;s section</a><a href=\"#time\">"));
  const auto at = page.find(
      "<section id=\"extra\">\n<h2>A &lt;caller&gt;&#39;s section</h2>\n"
      "<p>Its own words.</p>\n<figure id=\"plot-extra_plot\">");
  ASSERT_NE(at, std::string::npos);
  EXPECT_LT(page.find("<section id=\"figures\">"), at);
  EXPECT_LT(at, page.find("<section id=\"time\">"));
  // The run's one figure is p0-; the section's first is p1-.
  EXPECT_THAT(page, HasSubstr("id=\"p1-gnuplot_canvas\""));
}

TEST(InlineSvg, DropsThePrologueAndRenamesIds) {
  const std::string svg = inline_svg(fake_svg("x"), "p7-", "A & B");
  EXPECT_TRUE(svg.starts_with("<svg"));
  EXPECT_THAT(svg, HasSubstr("<title>A &amp; B</title>"));
  EXPECT_THAT(svg, HasSubstr("id=\"p7-gnuplot_canvas\""));
  EXPECT_THAT(svg, HasSubstr("xlink:href='#p7-gpPt0'"));
  EXPECT_THAT(svg, Not(HasSubstr("'gpPt0'")));
}

TEST(HtmlEscape, EscapesTheFiveCharacters) {
  EXPECT_EQ(html_escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

// Deadlines met but a TTFT p99 past its budget is not a green verdict: the
// verdict reads every figure it shows against its target, and names the
// one missed.
TEST(ReportVerdict, EveryFigureShownAgainstItsTargetDecidesIt) {
  // Requests 1.5 s apart, each 0.5 s of work on its own core: every deadline
  // met, the TTFT p99 a fraction of a second; a 50 ms TTFT budget then is
  // missed while the deadlines (the decode budget is generous) are met.
  Settings settings;
  settings.ttft_budget_s = 0.05;
  settings.decode_budget_s = 10;
  RequestList tasks(settings.request_knobs());
  for (int i = 0; i < 20; ++i)
    tasks.add(SimTime::from_seconds(i * 1.5), 500, 3);
  const ModeResult r =
      simulate(settings, "recorded", std::move(tasks), SimTime::from_seconds(60), 0, false);
  ASSERT_EQ(figure_value(r.summary, "success_rate"), 1.0);
  nlohmann::ordered_json json = settings_to_json(settings);
  json["trace"]["path"] = "t.csv";
  const std::string page = report_html(json, {&r}, {}, "");
  EXPECT_THAT(page, HasSubstr("<div class=\"verdict missed\" data-mode=\"recorded\">"));
  EXPECT_THAT(page, HasSubstr("<h3>Recorded trace: TTFT p99 over its budget</h3>"));
  EXPECT_THAT(page, HasSubstr("<li class=\"ok\">✓ 100.00 % of the 20 requests met their deadline"));
  EXPECT_THAT(page, HasSubstr("<li class=\"miss\">✗ TTFT, p99:"));
  // With a budget it meets, every target is met.
  json["deadline"]["ttft_budget_s"] = 5;
  EXPECT_THAT(report_html(json, {&r}, {}, ""),
              HasSubstr("<h3>Recorded trace: every target met</h3>"));
}

// The page speaks of the server only in the words it describes itself with:
// a model of another kind, described otherwise, reads as itself with no
// change to the page's code.
TEST(ReportPageServer, SpeaksInTheServersOwnWords) {
  ModeResult run = small_run("recorded", 0.1);
  ServerDescription& d = run.server;
  d.kind = "slots";
  d.unit = "slot";
  d.headline = "3 slots of a loom";
  d.wait_name = "Wait for a slot";
  d.wait_meaning = "loom to its slot.";
  d.busy_words = "slots weave";
  d.labels = {{"utilization", "Slots weaving"}};
  d.figure_groups = {{"Loom", {"utilization", "energy_wh"}}};
  d.knob_title = "Loom";
  d.knobs = {{"Slots", "server", "cores", ""}};
  d.server_terms = {{"Weaving", "what a slot does."}};
  const std::string page = report_html(settings_json("t.csv"), {&run}, {}, "");
  for (const char* said : {"3 slots of a loom", "Wait for a slot, mean", "loom to its slot.",
                           "slots weave only", "Slots weaving", "<th colspan=\"2\">Loom</th>",
                           "Slots <code>server.cores</code>", "<dt>Weaving</dt>"}) {
    EXPECT_THAT(page, HasSubstr(said));
  }
  for (const char* edge : {"Wait for a core", "Average edge CPU utilization", "Edge server",
                           "Speed of a core", "cores of"}) {
    EXPECT_THAT(page, Not(HasSubstr(edge)));
  }
}

// A knob whose value is an object of parts (a step table, BATCHING.md
// section 5c) is shown by its parts' sizes, never written out whole; a
// bound a name (goodput's) or a weight a name (the scorer router's) as its
// value.
TEST(ReportPageServer, ATableKnobIsShownByItsSize) {
  ModeResult run = small_run("recorded", 0.1);
  run.server.knob_title = "Loom";
  run.server.knobs = {{"Weave table", "server", "weave", ""}};
  nlohmann::ordered_json settings = settings_json("t.csv");
  settings["server"]["weave"] = {
      {"tokens", {{"at", {1, 2, 4}}, {"s", {0.5, 0.6, 0.7}}}}, {"ttft", 500}, {"prefix", 3.0}};
  const std::string page = report_html(settings, {&run}, {}, "");
  // A number in its shortest form (a scorer's weight of 3.0 as 3).
  EXPECT_THAT(page, HasSubstr("tokens (6 numbers), ttft 500, prefix 3<"));
  EXPECT_THAT(page, Not(HasSubstr("[0.5,0.6,0.7]")));
}

}  // namespace
}  // namespace infersim
