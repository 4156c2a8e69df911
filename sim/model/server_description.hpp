// How a server model speaks of itself to the rest (report/, scenario/), so
// that none of them asks which model served a run: what it is made of, the
// words for its wait and its busy time, which figures it has and how the
// tables group them, the knobs that set it, and what it reports as it runs.
// The members' defaults are the edge server's words (MODEL.md); a model
// overrides what differs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace infersim {

// A settings knob the report page shows, as settings.json holds it:
// `section.key`, then " / " and `section.paired_key` when there is one.
struct KnobRow {
  std::string label;
  std::string section;
  std::string key;
  std::string unit;  // after the value
  std::string paired_key = "";
  std::string paired_unit = "";
  // The value the server runs with, units and pair included; none: the page
  // reads settings.json's.
  std::optional<std::string> value = std::nullopt;
};

// A class of a fleet (BATCHING.md section 11) as its replicas run: its name,
// its side of a disaggregated fleet, and its knobs (`key` the class's own
// key in batching.fleet[i], `value` set).
struct ClassDescription {
  std::string name;
  std::string role;    // "prefill" or "decode"; "" colocated
  std::string preset;  // the preset its knobs came from; "" none
  std::vector<KnobRow> knobs;
};

// Figures shown together under a title (keys of the summary, in order; one
// the summary does not hold is left out).
struct FigureGroup {
  std::string title;
  std::vector<std::string> keys;
};

// A term the report page's reading guide defines.
struct Term {
  std::string name;
  std::string meaning;
};

struct ServerDescription {
  std::string kind = "edge";  // its settings' server.kind, as a run folder records it
  std::string unit = "core";  // what it is made of
  std::uint32_t units = 0;    // how many (a fleet's: its slots)
  // In a sentence: "8 cores of 60000 MIPS".
  std::string headline;
  // Its wait, from a request's arrival at the server until it is served.
  std::string wait_name = "Wait for a core";
  std::string wait_title = "Wait for a Core";  // the console's, in vLLM's capitals
  std::string wait_meaning = "server to the start of its execution on a core.";
  std::string queue_title = "Requests waiting for a core";
  std::string queue_until = "started on a core";  // the queue: not yet ...
  std::string busy_words = "cores are busy";      // "over the run the ... only 40 % of the time"
  // Its own words for figures every server has ("compute_s": "Total compute executed").
  std::vector<std::pair<std::string, std::string>> labels = {
      {"compute_s", "Total compute executed"},
      {"utilization", "Average edge CPU utilization"},
      {"waiting_total_s", "Total time spent waiting for a core"}};
  // The console's comparison table: figures of its own, in the seed's order
  // around the shared ones. `table_after_requests` follow "requests",
  // `table_after_compute` "compute_s", `table_after_tpot` "tpot_mean_s", and
  // `table_last` close the table.
  std::vector<std::string> table_after_requests;
  std::vector<std::string> table_after_compute = {"avg_exec_s"};
  std::vector<std::string> table_after_tpot;
  std::vector<std::string> table_last;
  // The report page's figure groups after Load, Deadlines and Latency.
  std::vector<FigureGroup> figure_groups = {
      {"Server",
       {"utilization", "compute_s", "avg_exec_s", "waiting_total_s", "traffic_mb", "energy_wh"}}};
  // The report page's knob table: its group's title and rows.
  std::string knob_title = "Edge server";
  std::vector<KnobRow> knobs = {
      {"Cores", "server", "cores", ""},
      {"Speed of a core", "server", "mips_per_core", " MIPS"},
      {"Cost of a context token (prefill)", "tokens", "mi_per_context_token", " MI"},
      {"Cost of a generated token (decode)", "tokens", "mi_per_generated_token", " MI"},
      {"Power, idle / all cores busy", "server", "idle_power_w", " W", "max_power_w", " W"}};
  // A fleet's classes, each with the knobs it runs with; `knobs` then holds
  // the fleet-wide ones alone.
  std::vector<ClassDescription> classes;
  // The reading guide's terms: after TPOT (the latencies), and after the
  // throughputs (its utilization, energy and own figures).
  std::vector<Term> latency_terms;
  std::vector<Term> server_terms = {
      {"Utilization and energy",
       "busy core-time over the cores' time, and the server's idle power plus its dynamic "
       "share, plus the devices' radios."}};
  // What timeseries.csv adds for it, after the shared columns ("" nothing).
  std::string series_words;
  // It steps (BATCHING.md): it tells each token's instant, the steps, their
  // KV blocks and batches, and its units apart (replicas.csv). The edge
  // server tells a request's start and finish; its tokens follow from them.
  bool steps = false;
  // Its requests may be handed from a prefill replica to a decode replica
  // (BATCHING.md section 12): requests.csv adds the decode side's columns.
  bool hands_over = false;
  // Its units' KV blocks in all when their number is fixed (the KV plot's 100 %).
  std::optional<double> kv_blocks;
  // Each unit's power over idle while busy, when its units differ (a fleet's
  // classes); empty: the server's energy_wh holds for a slice.
  std::vector<double> unit_dynamic_w;
};

}  // namespace infersim
