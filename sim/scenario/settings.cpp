#include "scenario/settings.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

#include <unistd.h>

#include "core/input_error.hpp"
#include "core/knob.hpp"
#include "model/kv_block_pool.hpp"

namespace infersim {
namespace {

using nlohmann::json;

using namespace json_check;

std::vector<Hop> hops_from(const json& v, const std::string& source, const std::string& label) {
  if (!v.is_array()) bad(source, label, "expected a list of {name, latency_s, bandwidth_mbps}");
  std::vector<Hop> hops;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const json& h = v[i];
    const std::string where = label + "[" + std::to_string(i) + "]";
    if (!h.is_object()) bad(source, where, "expected an object {name, latency_s, bandwidth_mbps}");
    Hop hop;
    for (const auto& [key, value] : h.items()) {
      if (key == "name") {
        hop.name = text(value, source, where + ".name");
      } else if (key == "latency_s") {
        hop.latency_s = seconds(value, source, where + ".latency_s");
      } else if (key == "bandwidth_mbps") {
        hop.bandwidth_mbps = positive(value, source, where + ".bandwidth_mbps");
      } else {
        const auto near = nearest(key, {"name", "latency_s", "bandwidth_mbps"});
        bad(source, where + "." + key,
            "unknown key" + (near ? " (did you mean '" + *near + "'?)" : std::string()));
      }
    }
    for (const char* required : {"latency_s", "bandwidth_mbps"}) {
      if (!h.contains(required)) bad(source, where + "." + required, "missing");
    }
    hops.push_back(hop);
  }
  return hops;
}

using Row = Knob<Settings>;
using Table = std::vector<Row>;

const Table& table();

// The keys of the batching section a fleet's class sets for itself
// (BATCHING.md section 11; the step-cost extensions of section 5b too): the
// rows that say so, in their order.
const std::vector<std::string>& class_knob_keys() {
  static const std::vector<std::string> kKeys = [] {
    std::vector<std::string> keys;
    for (const Row& row : table())
      if (row.class_knob) keys.push_back(row.key.substr(row.key.find('.') + 1));
    return keys;
  }();
  return kKeys;
}

bool is_class_knob(const std::string& key) {
  const auto& keys = class_knob_keys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

const std::vector<std::string> kAutoscaleKeys = {
    "min", "max", "interval_s", "target_requests", "startup_s", "scale_down_delay_s"};

// The fleet's classes, each checked key by key and read into its type.
std::vector<FleetClassSettings> fleet_from(const json& v, const std::string& src,
                                           const std::string& l) {
  if (!v.is_array() || v.empty()) {
    bad(src, l, "expected a list of replica classes (objects with a name), got " + shown(v));
  }
  std::vector<FleetClassSettings> fleet;
  std::vector<std::string> names;
  std::vector<std::size_t> both;  // the classes that say "both"
  for (std::size_t i = 0; i < v.size(); ++i) {
    const json& c = v[i];
    const std::string at = l + "[" + std::to_string(i) + "]";
    if (!c.is_object()) bad(src, at, "expected an object (a replica class), got " + shown(c));
    if (!c.contains("name")) bad(src, at + ".name", "missing: every class has a name");
    FleetClassSettings cls;
    cls.name = text(c["name"], src, at + ".name");
    if (cls.name.empty()) bad(src, at + ".name", "must not be empty");
    if (std::find(names.begin(), names.end(), cls.name) != names.end()) {
      bad(src, at + ".name", "'" + cls.name + "' names two classes; each name is unique");
    }
    names.push_back(cls.name);
    if (c.contains("replicas")) {
      cls.replicas =
          static_cast<std::int64_t>(whole(c["replicas"], 1, 1'000'000, src, at + ".replicas"));
    }
    if (c.contains("preset")) cls.preset = text(c["preset"], src, at + ".preset");
    if (c.contains("role")) {
      const std::string role = text(c["role"], src, at + ".role");
      if (role != "prefill" && role != "decode" && role != "both") {
        bad(src, at + ".role", "must be prefill or decode, got " + shown(c["role"]));
      }
      if (role == "both") both.push_back(i);
      cls.role = role == "prefill" ? Role::kPrefill : Role::kDecode;
    }
    Settings scratch;
    std::vector<std::string> allowed = class_knob_keys();
    for (const char* k : {"name", "replicas", "preset", "autoscale", "role"})
      allowed.emplace_back(k);
    for (const auto& [key, value] : c.items()) {
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        const auto near = nearest(key, allowed);
        bad(src, at + "." + key,
            "not a key of a replica class" +
                (near ? " (did you mean '" + *near + "'?)"
                      : std::string(" (fleet-wide knobs stay in the batching section)")));
      }
      if (is_class_knob(key)) {
        set_setting(scratch, "batching." + key, value, src, at + "." + key);
        cls.knobs.emplace_back(key, value);
      }
    }
    cls.given = nlohmann::ordered_json(c);
    if (c.contains("autoscale")) {
      const json& a = c["autoscale"];
      const std::string as = at + ".autoscale";
      if (!a.is_object()) bad(src, as, "expected an object (min, max, ...), got " + shown(a));
      for (const auto& [key, value] : a.items()) {
        if (std::find(kAutoscaleKeys.begin(), kAutoscaleKeys.end(), key) == kAutoscaleKeys.end()) {
          const auto near = nearest(key, kAutoscaleKeys);
          bad(src, as + "." + key,
              "unknown key" + (near ? " (did you mean '" + *near + "'?)" : std::string()));
        }
      }
      for (const char* k : {"min", "max"}) {
        if (!a.contains(k)) bad(src, as + "." + k, "missing: an autoscaled class sets min and max");
      }
      Autoscale scale;
      scale.min = static_cast<std::int64_t>(whole(a["min"], 1, 1'000'000, src, as + ".min"));
      scale.max = static_cast<std::int64_t>(whole(a["max"], 1, 1'000'000, src, as + ".max"));
      if (scale.max < cls.replicas || cls.replicas < scale.min) {
        bad(src, as + ".min, " + as + ".max, " + at + ".replicas",
            "need min <= replicas <= max, got " + std::to_string(scale.min) +
                " <= " + std::to_string(cls.replicas) + " <= " + std::to_string(scale.max));
      }
      if (a.contains("interval_s") && !(number(a["interval_s"], src, as + ".interval_s") > 0)) {
        bad(src, as + ".interval_s", "must be greater than 0, got " + shown(a["interval_s"]));
      }
      const auto duration = [&](const char* k, Duration fallback) {
        return a.contains(k) ? Duration::from_seconds(longest_duration(a[k], src, as + "." + k))
                             : fallback;
      };
      scale.interval = duration("interval_s", scale.interval);
      scale.startup = duration("startup_s", scale.startup);
      scale.scale_down_delay = duration("scale_down_delay_s", scale.scale_down_delay);
      if (a.contains("target_requests")) {
        scale.target_requests = number(a["target_requests"], src, as + ".target_requests");
        if (!(scale.target_requests > 0)) {
          bad(src, as + ".target_requests",
              "must be greater than 0, got " + shown(a["target_requests"]));
        }
      }
      if (scale.interval <= Duration::zero()) {
        bad(src, as + ".interval_s", "must be at least 1 ns");
      }
      cls.autoscale = scale;
    }
    fleet.push_back(std::move(cls));
  }
  // Section 12: no class names a role, or every class does, both present
  // (and none says both).
  if (!both.empty()) {
    bad(src, l + "[" + std::to_string(both.front()) + "].role",
        "'both' in a disaggregated fleet: a class is prefill or decode (leave every role out "
        "for a colocated fleet)");
  }
  std::size_t named = 0, prefill = 0, decode = 0;
  for (const FleetClassSettings& cls : fleet) {
    named += cls.role != Role::kBoth;
    prefill += cls.role == Role::kPrefill;
    decode += cls.role == Role::kDecode;
  }
  if (named != 0 && named != fleet.size()) {
    for (std::size_t i = 0; i < fleet.size(); ++i) {
      if (fleet[i].role == Role::kBoth) {
        bad(src, l + "[" + std::to_string(i) + "].role",
            "missing: in a disaggregated fleet every class names its role (prefill or decode)");
      }
    }
  }
  if (named != 0 && (prefill == 0 || decode == 0)) {
    bad(src, l,
        std::string("a disaggregated fleet needs a prefill class and a decode class; it has no ") +
            (prefill == 0 ? "prefill" : "decode") + " class");
  }
  return fleet;
}

std::vector<std::string> server_kind_names() {
  std::vector<std::string> names;
  for (const ServerKind& k : server_kinds())
    names.push_back(k.name);
  return names;
}

Row choice_key(std::string key, std::string Settings::*member, std::vector<std::string> allowed) {
  Row row;
  row.key = std::move(key);
  row.text = KnobText::kText;
  row.set = [=](Settings& s, const json& v, const std::string& src, const std::string& l) {
    const std::string choice = text(v, src, l);
    if (std::find(allowed.begin(), allowed.end(), choice) == allowed.end()) {
      std::string list;
      for (const std::string& a : allowed)
        list += (list.empty() ? "" : " or ") + a;
      const auto near = nearest(choice, allowed);
      bad(src, l,
          "must be " + list + ", got " + shown(v) +
              (near ? " (did you mean " + *near + "?)" : std::string()));
    }
    s.*member = choice;
  };
  row.get = [=](const Settings& s) { return nlohmann::ordered_json(s.*member); };
  return row;
}

// A key whose value needs more than one member's check: its own set and get.
Row custom_key(std::string key, KnobText how, Row::Set set, Row::Get get) {
  Row row;
  row.key = std::move(key);
  row.text = how;
  row.set = std::move(set);
  row.get = std::move(get);
  return row;
}

// Seconds, or null for none.
Row optional_seconds_key(std::string key, std::optional<double> Settings::*member) {
  return custom_key(
      std::move(key), KnobText::kDuration,
      [=](Settings& s, const json& v, const std::string& src, const std::string& l) {
        if (v.is_null()) {
          (s.*member).reset();
        } else {
          s.*member = seconds(v, src, l);
        }
      },
      [=](const Settings& s) {
        return (s.*member) ? nlohmann::ordered_json(*(s.*member)) : nlohmann::ordered_json(nullptr);
      });
}

// Free text; empty means "not set".
Row text_key(std::string key, std::string Settings::*member) {
  return custom_key(
      std::move(key), KnobText::kText,
      [=](Settings& s, const json& v, const std::string& src, const std::string& l) {
        s.*member = v.is_null() ? std::string() : text(v, src, l);
      },
      [=](const Settings& s) {
        return (s.*member).empty() ? nlohmann::ordered_json(nullptr)
                                   : nlohmann::ordered_json(s.*member);
      });
}

nlohmann::ordered_json hops_to_json(const std::vector<Hop>& hops) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Hop& h : hops) {
    nlohmann::ordered_json hop;
    hop["name"] = h.name;
    hop["latency_s"] = h.latency_s;
    hop["bandwidth_mbps"] = h.bandwidth_mbps;
    out.push_back(hop);
  }
  return out;
}

// Percentiles in (0, 100], each once.
std::vector<double> percentiles_from(const json& v, const std::string& source,
                                     const std::string& label) {
  if (!v.is_array()) bad(source, label, "expected a list of percentiles, got " + shown(v));
  std::vector<double> out;
  for (const json& p : v) {
    const double x = number(p, source, label);
    if (!(x > 0 && x <= 100)) {
      bad(source, label, "a percentile must be greater than 0 and at most 100, got " + shown(p));
    }
    if (std::find(out.begin(), out.end(), x) != out.end()) {
      bad(source, label, shown(p) + " is listed twice");
    }
    out.push_back(x);
  }
  return out;
}

// vLLM's goodput bounds, {ttft_ms, tpot_ms, e2el_ms} (any of them), or null.
std::optional<GoodputBounds> goodput_from(const json& v, const std::string& source,
                                          const std::string& label) {
  if (v.is_null()) return std::nullopt;
  if (!v.is_object() || v.empty()) {
    bad(source, label, "expected null or an object of ttft_ms, tpot_ms, e2el_ms, got " + shown(v));
  }
  GoodputBounds bounds;
  for (const auto& [key, value] : v.items()) {
    std::optional<double>* bound = key == "ttft_ms"   ? &bounds.ttft_ms
                                   : key == "tpot_ms" ? &bounds.tpot_ms
                                   : key == "e2el_ms" ? &bounds.e2el_ms
                                                      : nullptr;
    if (bound == nullptr) {
      const auto near = nearest(key, {"ttft_ms", "tpot_ms", "e2el_ms"});
      bad(source, label + "." + key,
          "unknown key" + (near ? " (did you mean '" + *near + "'?)" : std::string()));
    }
    const double ms = at_least(value, 0, source, label + "." + key);
    if (ms * 1e6 >= 9.2e18) bad(source, label + "." + key, "does not fit the nanosecond clock");
    *bound = ms;
  }
  return bounds;
}

nlohmann::ordered_json goodput_to_json(const std::optional<GoodputBounds>& goodput) {
  if (!goodput) return nullptr;
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  if (goodput->ttft_ms) out["ttft_ms"] = *goodput->ttft_ms;
  if (goodput->tpot_ms) out["tpot_ms"] = *goodput->tpot_ms;
  if (goodput->e2el_ms) out["e2el_ms"] = *goodput->e2el_ms;
  return out;
}

// A slice of the time series: at least a nanosecond.
double slice_seconds(const json& v, const std::string& source, const std::string& label) {
  const double x = seconds(v, source, label);
  if (x * 1e9 < 1) bad(source, label, "must be at least 1 ns (1e-9 s), got " + shown(v));
  return x;
}

// The batching section: the server's rows (model/batching_knobs), with the
// replicas a fleet counts class by class, then a fleet's own keys.
Table batching_rows() {
  Table rows = knobs_within(batching_knob_rows(), "batching", &Settings::batching);
  for (Row& row : rows) {
    if (row.key != "batching.replicas") continue;
    const Row::Set set = row.set;
    row.set = [=](Settings& s, const json& v, const std::string& src, const std::string& l) {
      // null: not set (a fleet's settings.json writes it so).
      if (v.is_null()) return;
      set(s, v, src, l);
      s.replicas_given = true;
    };
    const Row::Get get = row.get;
    row.get = [=](const Settings& s) { return s.fleet ? nlohmann::ordered_json(nullptr) : get(s); };
  }
  rows.push_back(count_knob("batching.gpus", &Settings::gpus_per_replica, 1, 1'000'000)
                     .file_only()
                     .per_class());
  rows.push_back(
      real_knob("batching.price_per_gpu_hour", &Settings::price_per_gpu_hour, bounded_amount)
          .file_only()
          .per_class());
  rows.push_back(custom_key(
                     "batching.fleet", KnobText::kText,
                     [](Settings& s, const json& v, const std::string& src, const std::string& l) {
                       if (v.is_null()) {
                         s.fleet.reset();
                         return;
                       }
                       s.fleet = fleet_from(v, src, l);
                       s.fleet_source = src;
                     },
                     [](const Settings& s) {
                       if (!s.fleet) return nlohmann::ordered_json(nullptr);
                       nlohmann::ordered_json fleet = nlohmann::ordered_json::array();
                       for (const FleetClassSettings& c : *s.fleet)
                         fleet.push_back(c.given);
                       return fleet;
                     })
                     .file_only());
  return rows;
}

Table make_table() {
  Table rows = {
      choice_key("run.mode", &Settings::mode, {"compare", "recorded", "synthetic"}).file_only(),
      count_knob("run.devices", &Settings::devices, 1, 1'000'000'000)
          .help("devices issuing the requests in turn"),
      custom_key(
          "run.duration_s", KnobText::kReal,
          [](Settings& s, const json& v, const std::string& src, const std::string& l) {
            if (v.is_null()) {
              s.duration_s.reset();
            } else {
              s.duration_s = seconds(v, src, l);
            }
          },
          [](const Settings& s) {
            return s.duration_s ? nlohmann::ordered_json(*s.duration_s)
                                : nlohmann::ordered_json(nullptr);
          })
          .flag("duration")
          .help("run length T in seconds")
          .by_default("default: the last arrival rounded up to a minute"),
      count_knob("run.seed", &Settings::seed, 0, std::numeric_limits<std::uint64_t>::max())
          .help("seed of the run's random streams"),
      real_knob("run.time_resolution_s", &Settings::time_resolution_s, seconds)
          .as(KnobText::kResolution)
          .flag("time-resolution")
          .help("arrival clock: exact, 1s, 10ms, ... or seconds")
          .by_default("exact"),
      real_knob("run.time_scale", &Settings::time_scale, positive)
          .help("multiplies every arrival offset"),
      optional_seconds_key("run.start_offset_s", &Settings::start_offset_s)
          .flag("start-offset")
          .help("replay only from this offset of trace time (inclusive); a bare number is "
                "seconds, or give a unit: 600s, 600000ms (aiperf's --fixed-schedule-start-offset "
                "is in ms)"),
      optional_seconds_key("run.end_offset_s", &Settings::end_offset_s)
          .flag("end-offset")
          .help("replay only up to this offset of trace time (inclusive); seconds, or 600s, "
                "600000ms"),
      optional_seconds_key("run.max_idle_gap_s", &Settings::max_idle_gap_s)
          .flag("max-idle-gap")
          .help("cap every idle gap between consecutive arrivals at this long; seconds, or 5s, "
                "5000ms"),
      real_knob("tokens.bytes_per_token", &Settings::bytes_per_token)
          .help("bytes of text per token"),
      real_knob("tokens.mi_per_context_token", &Settings::mi_per_context_token)
          .help("million instructions per context token, prefill"),
      real_knob("tokens.mi_per_generated_token", &Settings::mi_per_generated_token)
          .help("million instructions per generated token, decode"),
      real_knob("deadline.ttft_budget_s", &Settings::ttft_budget_s, seconds)
          .flag("ttft-budget")
          .help("seconds promised before the first token"),
      real_knob("deadline.decode_budget_s", &Settings::decode_budget_s, seconds)
          .flag("decode-budget")
          .help("seconds promised per generated token"),
      choice_key("server.kind", &Settings::server_kind, server_kind_names())
          .flag("server")
          .help("server model: edge (multi-core, MODEL.md) or batching (continuous-batching "
                "replicas, BATCHING.md)"),
      count_knob("server.cores", &Settings::cores, 1, 1'000'000).help("edge server cores"),
      real_knob("server.mips_per_core", &Settings::mips_per_core, positive)
          .help("MIPS of one core"),
      real_knob("server.idle_power_w", &Settings::idle_power_w, bounded_amount)
          .flag("idle-power")
          .help("server power when idle, W"),
      real_knob("server.max_power_w", &Settings::max_power_w, bounded_amount)
          .flag("max-power")
          .help("server power with every core busy, W"),
  };
  for (Row& row : batching_rows())
    rows.push_back(std::move(row));
  // The sections of the kinds added from outside, each its kind's rows.
  for (const ServerKind& kind : server_kinds()) {
    for (const Knob<std::any>& own : kind.rows) {
      const std::string section = kind.section;
      const std::any defaults = kind.defaults;
      const auto set = own.set;
      const auto get = own.get;
      rows.push_back(knob_like<Settings>(
          own, section + "." + own.key,
          [=](Settings& s, const json& v, const std::string& src, const std::string& l) {
            set(s.own_knobs.try_emplace(section, defaults).first->second, v, src, l);
          },
          [=](const Settings& s) {
            const auto held = s.own_knobs.find(section);
            return get(held == s.own_knobs.end() ? defaults : held->second);
          }));
    }
  }
  const Table rest = {
      custom_key(
          "network.hops", KnobText::kText,
          [](Settings& s, const json& v, const std::string& src, const std::string& l) {
            s.hops = hops_from(v, src, l);
          },
          [](const Settings& s) { return hops_to_json(s.hops); })
          .file_only(),
      real_knob("network.device_tx_nj_per_bit", &Settings::device_tx_nj_per_bit, bounded_amount)
          .file_only(),
      real_knob("network.device_rx_nj_per_bit", &Settings::device_rx_nj_per_bit, bounded_amount)
          .file_only(),
      custom_key(
          "trace.path", KnobText::kText,
          [](Settings& s, const json& v, const std::string& src, const std::string& l) {
            s.trace_path = text(v, src, l);
            if (s.trace_path.empty()) bad(src, l, "must name a file");
          },
          [](const Settings& s) { return nlohmann::ordered_json(s.trace_path); })
          .flag("trace")
          .help("trace file"),
      choice_key("trace.format", &Settings::trace_format,
                 {"auto", "azure-csv", "mooncake-jsonl", "burstgpt-csv", "aiperf-jsonl",
                  "token-ids-jsonl", "csv", "jsonl"})
          .flag("format")
          .help("auto, azure-csv, mooncake-jsonl, burstgpt-csv, aiperf-jsonl, token-ids-jsonl, "
                "csv or jsonl"),
      text_key("trace.timestamp_column", &Settings::timestamp_column)
          .help("column or key of the arrival time"),
      text_key("trace.input_column", &Settings::input_column)
          .help("column or key of the input (context) tokens"),
      text_key("trace.output_column", &Settings::output_column)
          .help("column or key of the output (generated) tokens"),
      text_key("trace.hash_ids_column", &Settings::hash_ids_column)
          .help("column or key of the prompt block ids"),
      choice_key("trace.timestamp_unit", &Settings::timestamp_unit,
                 {"auto", "s", "ms", "us", "ns", "datetime"})
          .help("s, ms, us, ns, datetime or auto"),
      custom_key(
          "trace.filter", KnobText::kText,
          [](Settings& s, const json& v, const std::string& src, const std::string& l) {
            if (!v.is_array()) bad(src, l, "expected a list of \"COLUMN=VALUE\" strings");
            s.filters.clear();
            for (const json& f : v) {
              const std::string filter = text(f, src, l);
              if (filter.find('=') == std::string::npos || filter.front() == '=') {
                bad(src, l, "expected COLUMN=VALUE, got '" + filter + "'");
              }
              s.filters.push_back(filter);
            }
          },
          [](const Settings& s) { return nlohmann::ordered_json(s.filters); })
          .file_only(),
      custom_key(
          "trace.sha256", KnobText::kText,
          [](Settings& s, const json& v, const std::string& src, const std::string& l) {
            if (v.is_null()) {
              s.trace_sha256.reset();
              return;
            }
            const std::string digest = text(v, src, l);
            if (digest.size() != 64 ||
                digest.find_first_not_of("0123456789abcdef") != std::string::npos) {
              bad(src, l, "expected 64 lower-case hex digits");
            }
            s.trace_sha256 = digest;
          },
          [](const Settings& s) {
            return s.trace_sha256 ? nlohmann::ordered_json(*s.trace_sha256)
                                  : nlohmann::ordered_json(nullptr);
          })
          .file_only(),
      choice_key("synthetic.sizes", &Settings::synthetic_sizes, {"mean", "empirical", "recorded"})
          .flag("sizes")
          .help("synthetic request sizes: mean (the trace's means), empirical (a recorded pair "
                "drawn) or recorded (the recorded requests themselves, only their instants "
                "drawn)"),
      choice_key("synthetic.arrivals", &Settings::synthetic_arrivals, {"poisson", "gamma"})
          .flag("arrivals")
          .help("synthetic arrivals: poisson or gamma"),
      real_knob("synthetic.burstiness", &Settings::burstiness, positive)
          .help("shape K of gamma inter-arrivals at the same mean rate; 1 is Poisson"),
      count_knob("synthetic.replications", &Settings::replications, 1, 100'000)
          .help("synthetic runs with seeds seed .. seed+R-1, reported as mean and 95 % CI"),
      custom_key(
          "client.max_concurrency", KnobText::kWhole,
          [](Settings& s, const json& v, const std::string& src, const std::string& l) {
            if (v.is_null()) {
              s.max_concurrency.reset();
              return;
            }
            if (v.is_number_integer() && v.get<std::int64_t>() == 0) {
              bad(src, l, "must be at least 1 (leave it out for an open loop)");
            }
            s.max_concurrency =
                static_cast<std::uint32_t>(json_check::whole(v, 1, 1'000'000, src, l));
          },
          [](const Settings& s) {
            return s.max_concurrency ? nlohmann::ordered_json(*s.max_concurrency)
                                     : nlohmann::ordered_json(nullptr);
          })
          .help("closed loop: at most N requests in flight, each next one sent when one "
                "finishes (vLLM bench's --max-concurrency; the trace's instants are ignored)")
          .by_default("none: open loop"),
      custom_key(
          "client.request_rate", KnobText::kText,
          [](Settings& s, const json& v, const std::string& src, const std::string& l) {
            if (v.is_null() || (v.is_string() && v.get<std::string>() == "inf")) {
              s.request_rate.reset();
              return;
            }
            json number = v;
            if (v.is_string()) {
              const std::string t = v.get<std::string>();
              double value = 0;
              const auto r = std::from_chars(t.data(), t.data() + t.size(), value);
              if (r.ec != std::errc() || r.ptr != t.data() + t.size()) {
                bad(src, l, "expected requests a second or inf, got '" + t + "'");
              }
              number = value;
            }
            s.request_rate = positive(number, src, l);
          },
          [](const Settings& s) {
            return s.request_rate ? nlohmann::ordered_json(*s.request_rate)
                                  : nlohmann::ordered_json("inf");
          })
          .help("a benchmark's client: requests paced at R a second, gamma intervals of shape "
                "--burstiness as vLLM bench paces them; each sent at its instant or, with "
                "--max-concurrency, when a client frees if that is later; without it, no cap")
          .by_default("inf"),
      count_knob("client.num_warmups", &Settings::num_warmups, 0, 1'000'000)
          .help("a benchmark's client: copies of the first request run before the others under "
                "the same cap, counted in no figure"),
      choice_key("client.dataset", &Settings::dataset, {"trace", "random"})
          .flag("dataset-name")
          .help("a benchmark's client: the trace's requests in order (their sizes and block "
                "ids) or vLLM's random dataset (sent all at once without --max-concurrency or "
                "--request-rate)"),
      count_knob("client.random_input_len", &Settings::random_input_len, 1, 100'000'000)
          .help("random dataset: prompt length I, uniform in [I(1-R), I(1+R)]"),
      count_knob("client.random_output_len", &Settings::random_output_len, 1, 100'000'000)
          .help("random dataset: output length O, uniform in [O(1-R), O(1+R)], pinned as "
                "ignore_eos pins it"),
      custom_key(
          "client.random_range_ratio", KnobText::kReal,
          [](Settings& s, const json& v, const std::string& src, const std::string& l) {
            const double r = non_negative(v, src, l);
            if (r >= 1) bad(src, l, "must be in [0, 1), got " + shown(v));
            s.random_range_ratio = r;
          },
          [](const Settings& s) { return nlohmann::ordered_json(s.random_range_ratio); })
          .help("random dataset: R, the lengths' spread either side"),
      count_knob("client.num_prompts", &Settings::num_prompts, 1, 1'000'000'000)
          .help("random dataset: requests drawn"),
      switch_knob("client.compare_closed_loop", &Settings::compare_closed_loop)
          .help("compare: the recorded requests sent again by a closed loop of as many clients "
                "as the recorded hour held in flight on average, set beside it (what a "
                "closed-loop benchmark hides)"),
      choice_key("output.per_request", &Settings::per_request, {"csv", "none"})
          .help("csv: write requests.csv; none: summary only"),
      custom_key(
          "report.metric_percentiles", KnobText::kPercentiles,
          [](Settings& s, const json& v, const std::string& src, const std::string& l) {
            s.metric_percentiles = percentiles_from(v, src, l);
          },
          [](const Settings& s) { return nlohmann::ordered_json(s.metric_percentiles); })
          .help("percentiles of TTFT, TPOT, E2E latency and wait in the summary, "
                "comma-separated")
          .by_default("50,90,99"),
      custom_key(
          "report.goodput", KnobText::kGoodput,
          [](Settings& s, const json& v, const std::string& src, const std::string& l) {
            s.goodput = goodput_from(v, src, l);
          },
          [](const Settings& s) { return goodput_to_json(s.goodput); })
          .help("vLLM's goodput bounds in ms, e.g. \"ttft:500 tpot:50 e2el:2000\" (or aiperf's "
                "names: time_to_first_token, inter_token_latency, request_latency); a request is "
                "good when it meets every bound given")
          .by_default("none"),
      real_knob("report.slice_duration_s", &Settings::slice_duration_s, slice_seconds)
          .flag("slice-duration")
          .help("seconds a row of timeseries.csv"),
      choice_key("report.plots", &Settings::plots, {"svg", "none"})
          .help("svg: render the plots with gnuplot; none: no plots"),
  };
  rows.insert(rows.end(), rest.begin(), rest.end());
  return rows;
}

const Table& table() {
  static const Table kTable = make_table();
  return kTable;
}

const Row* find_key(const std::string& key) {
  for (const Row& row : table()) {
    if (row.key == key) return &row;
  }
  return nullptr;
}

}  // namespace

RequestKnobs Settings::request_knobs() const {
  return RequestKnobs{bytes_per_token, ttft_budget_s, decode_budget_s};
}

EdgeServerKnobs Settings::edge_knobs() const {
  return EdgeServerKnobs{cores,         mi_per_context_token, mi_per_generated_token,
                         mips_per_core, idle_power_w,         max_power_w};
}

ArrivalKnobs Settings::arrival_knobs() const {
  ArrivalKnobs knobs;
  knobs.time_scale = time_scale;
  knobs.resolution = Duration::from_seconds(time_resolution_s);
  if (duration_s) knobs.duration = Duration::from_seconds(*duration_s);
  if (start_offset_s) knobs.start_offset = Duration::from_seconds(*start_offset_s);
  if (end_offset_s) knobs.end_offset = Duration::from_seconds(*end_offset_s);
  if (max_idle_gap_s) knobs.max_idle_gap = Duration::from_seconds(*max_idle_gap_s);
  return knobs;
}

EnergyKnobs Settings::energy_knobs() const {
  return EnergyKnobs{device_tx_nj_per_bit, device_rx_nj_per_bit};
}

ServingMetricsKnobs Settings::serving_knobs() const {
  return ServingMetricsKnobs{metric_percentiles, goodput};
}

SyntheticKnobs Settings::synthetic_knobs(std::uint64_t replication_seed) const {
  SyntheticKnobs knobs;
  knobs.sizes = synthetic_sizes == "empirical"  ? SyntheticSizes::kEmpirical
                : synthetic_sizes == "recorded" ? SyntheticSizes::kRecorded
                                                : SyntheticSizes::kMean;
  knobs.arrivals =
      synthetic_arrivals == "gamma" ? ArrivalProcess::kGamma : ArrivalProcess::kPoisson;
  knobs.burstiness = burstiness;
  knobs.seed = replication_seed;
  return knobs;
}

RandomDataset Settings::random_dataset() const {
  return {random_input_len, random_output_len, random_range_ratio, num_prompts};
}

ClosedLoop Settings::closed_loop() const {
  const bool client = client_loop();
  return {max_concurrency.value_or(0), client ? num_warmups : 0, client && !max_concurrency};
}

bool Settings::client_loop() const {
  return max_concurrency.has_value() || request_rate.has_value() || dataset == "random";
}

std::string Settings::client_key() const {
  if (max_concurrency) return "client.max_concurrency";
  return request_rate ? "client.request_rate" : "client.dataset";
}

TraceSource Settings::trace_source() const {
  TraceSource source;
  source.path = trace_path;
  source.format = trace_format;
  source.columns = {timestamp_column, input_column, output_column, hash_ids_column};
  parse_timestamp_unit(timestamp_unit, source.unit);
  for (const std::string& f : filters) {
    const auto eq = f.find('=');
    source.filters.emplace_back(f.substr(0, eq), f.substr(eq + 1));
  }
  return source;
}

const std::vector<Knob<Settings>>& settings_knobs() {
  return table();
}

const std::vector<std::string>& settings_keys() {
  static const std::vector<std::string> kKeys = [] {
    std::vector<std::string> keys;
    for (const Row& row : table())
      keys.push_back(row.key);
    return keys;
  }();
  return kKeys;
}

void set_setting(Settings& settings, const std::string& key, const json& value,
                 const std::string& source, const std::string& label) {
  const Row* spec = find_key(key);
  if (spec == nullptr) {
    const auto near = nearest(key, settings_keys());
    bad(source, label, "unknown key" + (near ? " (did you mean '" + *near + "'?)" : std::string()));
  }
  spec->set(settings, value, source, label);
  if (!value.is_null()) settings.set_by[key] = source.empty() ? label : source;
}

void apply_settings_json(Settings& settings, const json& document, const std::string& source) {
  if (!document.is_object()) bad(source, "", "expected a JSON object of sections");
  std::vector<std::string> sections;
  for (const std::string& key : settings_keys()) {
    const std::string section = key.substr(0, key.find('.'));
    if (std::find(sections.begin(), sections.end(), section) == sections.end()) {
      sections.push_back(section);
    }
  }
  for (const auto& [section, body] : document.items()) {
    if (section == "meta") continue;
    if (std::find(sections.begin(), sections.end(), section) == sections.end()) {
      std::vector<std::string> candidates = sections;
      candidates.insert(candidates.end(), settings_keys().begin(), settings_keys().end());
      if (const auto near = nearest(section, candidates)) {
        bad(source, section, "unknown section (did you mean '" + *near + "'?)");
      }
      // A key written without its section: {"cores": 4} for {"server": {"cores": 4}}.
      std::vector<std::string> leaves;
      for (const std::string& key : settings_keys())
        leaves.push_back(key.substr(key.find('.') + 1));
      if (const auto leaf = nearest(section, leaves)) {
        const std::string& key = settings_keys()[static_cast<std::size_t>(
            std::find(leaves.begin(), leaves.end(), *leaf) - leaves.begin())];
        const std::string in = key.substr(0, key.find('.'));
        bad(source, section,
            "unknown section (keys sit in sections: did you mean '" + key + "', as {\"" + in +
                "\": {\"" + *leaf + "\": ...}}?)");
      }
      bad(source, section, "unknown section");
    }
    if (!body.is_object()) bad(source, section, "expected an object of keys, got " + shown(body));
    for (const auto& [key, value] : body.items()) {
      const std::string full = section + "." + key;
      set_setting(settings, full, value, source, full);
    }
  }
  validate_settings(settings, source);
}

namespace {

// Where a JSON text's first unreadable value lies: its line and its key path
// ("batching.fleet[0].replicas"), read with nlohmann's SAX interface, whose
// error carries the position the exception does not.
struct NumberPlace {
  std::uint64_t line = 0;
  std::string key;
};

class PlaceFinder : public nlohmann::json_sax<json> {
 public:
  explicit PlaceFinder(const std::string& text) : text_(text) {}
  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override {
    path_.push_back({"", -1});
    return true;
  }
  bool key(string_t& k) override {
    path_.back().name = k;
    return true;
  }
  bool end_object() override { return end(); }
  bool start_array(std::size_t) override {
    path_.push_back({"", 0});
    return true;
  }
  bool end_array() override { return end(); }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception&) override {
    const auto offset = static_cast<std::ptrdiff_t>(std::min(position, text_.size()));
    place.line =
        1 + static_cast<std::uint64_t>(std::count(text_.begin(), text_.begin() + offset, '\n'));
    for (const Level& level : path_) {
      if (level.index < 0) {
        place.key += (place.key.empty() ? "" : ".") + level.name;
      } else {
        place.key += "[" + std::to_string(level.index) + "]";
      }
    }
    return false;
  }
  NumberPlace place;

 private:
  struct Level {
    std::string name;
    std::int64_t index;  // -1 in an object, else the array's next element
  };
  bool value() {
    if (!path_.empty() && path_.back().index >= 0) ++path_.back().index;
    return true;
  }
  bool end() {
    path_.pop_back();
    return value();
  }
  const std::string& text_;
  std::vector<Level> path_;
};

NumberPlace locate_bad_number(const std::string& text) {
  PlaceFinder finder(text);
  json::sax_parse(text, &finder);
  return finder.place;
}

}  // namespace

void apply_settings_file(Settings& settings, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path, "", "cannot open the settings file");
  std::ostringstream content;
  content << in.rdbuf();
  const std::string text = content.str();
  json document;
  try {
    document = json::parse(text);
  } catch (const json::parse_error& e) {
    const std::size_t offset = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    const auto line =
        1 + static_cast<std::uint64_t>(
                std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
    std::string what = e.what();
    const auto colon = what.find("syntax error");
    throw InputError(path, line, "", colon == std::string::npos ? what : what.substr(colon));
  } catch (const json::exception& e) {
    // A number too large for a double (out_of_range 406): the exception names
    // no place; a second reading finds its line and key.
    std::string what = e.what();
    const auto bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    const NumberPlace place = locate_bad_number(text);
    throw InputError(path, place.line, place.key, what + " (too large for a double)");
  }
  apply_settings_json(settings, document, path);
  note_preset_errors(settings, document);
}

void note_preset_errors(Settings& settings, const json& document) {
  if (!document.is_object() || !document.contains("meta") || !document["meta"].is_object()) return;
  const json& meta = document["meta"];
  if (meta.contains("preset") && meta["preset"].is_string() &&
      meta.contains("expected_error_pct") && meta["expected_error_pct"].is_object()) {
    settings.preset_errors[meta["preset"].get<std::string>()] = {
        {"pct", meta["expected_error_pct"]},
        {"from", meta.value("expected_error_from", std::string())}};
  }
  if (meta.contains("presets_expected_error") && meta["presets_expected_error"].is_object()) {
    for (const auto& [name, e] : meta["presets_expected_error"].items())
      if (e.is_object() && e.contains("pct") && e["pct"].is_object())
        settings.preset_errors[name] = e;
  }
}

std::vector<std::string> settings_file_keys(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  const json document = json::parse(content.str(), nullptr, false);
  std::vector<std::string> keys;
  if (!document.is_object()) return keys;
  for (const auto& [section, body] : document.items()) {
    if (section == "meta" || !body.is_object()) continue;
    for (const auto& [key, value] : body.items())
      keys.push_back(section + "." + key);
  }
  return keys;
}

std::string key_and_flag(const std::string& key) {
  for (const Row& row : table()) {
    if (row.key == key && !row.no_flag) return key + " (--" + row.flag_or_key() + ")";
  }
  return key;
}

namespace {

// MODEL.md section 4b: what a closed loop takes and what it ignores.
void check_closed_loop(const Settings& s, const std::string& source) {
  const Settings d;
  const bool random = s.dataset == "random";
  std::vector<std::string> random_only;
  if (s.random_input_len != d.random_input_len) random_only.push_back("client.random_input_len");
  if (s.random_output_len != d.random_output_len) random_only.push_back("client.random_output_len");
  if (s.random_range_ratio != d.random_range_ratio)
    random_only.push_back("client.random_range_ratio");
  if (s.num_prompts != d.num_prompts) random_only.push_back("client.num_prompts");
  if (s.compare_closed_loop && (s.client_loop() || s.mode != "compare")) {
    bad(source, key_and_flag("client.compare_closed_loop"),
        s.client_loop()
            ? "sets a closed loop beside an open one: leave out " + key_and_flag(s.client_key())
            : "sets a closed loop beside a compare run's recorded hour: run the "
              "compare mode (--compare)");
  }
  if (!random && !random_only.empty()) {
    bad(source, key_and_flag(random_only.front()),
        "applies to the random dataset only: give client.dataset random (--dataset-name random)");
  }
  if (!s.client_loop()) {
    if (s.num_warmups != 0) {
      bad(source, key_and_flag("client.num_warmups"),
          "applies to a benchmark's client only: give client.max_concurrency "
          "(--max-concurrency N) or client.request_rate (--request-rate R); an open loop "
          "replays the trace's instants or draws them at its rate");
    }
    return;
  }
  // The instants are the client's own: what reshapes the trace's would do nothing.
  const std::vector<std::pair<std::string, bool>> reshaping = {
      {"run.time_scale", s.time_scale != 1},
      {"run.time_resolution_s", s.time_resolution_s != 0},
      {"run.max_idle_gap_s", s.max_idle_gap_s.has_value()},
      {"run.duration_s", s.duration_s.has_value()},
  };
  for (const auto& [key, set] : reshaping) {
    if (set) {
      bad(source, key_and_flag(key),
          "contradicts " + key_and_flag(s.client_key()) +
              ": a benchmark's client sends each request at its own instant (the trace's are "
              "ignored) and runs until the last response; leave it out");
    }
  }
  if (random) {
    const std::vector<std::pair<std::string, bool>> trace_only = {
        {"run.start_offset_s", s.start_offset_s.has_value()},
        {"run.end_offset_s", s.end_offset_s.has_value()},
        {"trace.filter", !s.filters.empty()},
    };
    for (const auto& [key, set] : trace_only) {
      if (set) {
        bad(source, key_and_flag(key),
            "contradicts client.dataset random: the random dataset replays no trace's window; "
            "leave it out or use client.dataset trace");
      }
    }
  }
  if (s.burstiness != 1 && !s.request_rate) {
    bad(source, key_and_flag("synthetic.burstiness"),
        "a benchmark's client paces its requests only at a client.request_rate (--request-rate "
        "R)");
  }
}

}  // namespace

void validate_settings(const Settings& s, const std::string& source) {
  if (s.start_offset_s && s.end_offset_s && *s.end_offset_s < *s.start_offset_s) {
    bad(source, "run.end_offset_s",
        "must not be before run.start_offset_s (" + json(*s.start_offset_s).dump() + ")");
  }
  check_closed_loop(s, source);
  if (s.synthetic_arrivals == "poisson" && s.burstiness != 1 && !s.client_loop()) {
    bad(source, "synthetic.burstiness",
        "applies to gamma arrivals only; set synthetic.arrivals to gamma (--arrivals gamma)");
  }
  if (s.mode == "recorded" && s.replications != 1) {
    bad(source, "synthetic.replications",
        "applies to the synthetic mode only (the recorded mode replays the trace once); leave "
        "it at 1 for a recorded run");
  }
  if (s.max_power_w < s.idle_power_w) {
    bad(source, "server.max_power_w",
        "must be at least server.idle_power_w (" + json(s.idle_power_w).dump() + "), got " +
            json(s.max_power_w).dump());
  }
  // The block size against the trace's is checked once the trace is read.
  const bool batching = server_section(s.server_kind) == "batching";
  if (batching && !s.fleet) {
    check_batching_knobs(s.batching, 0, source);
    check_batching_memory(s.batching, source);
  }
  if (s.fleet && s.replicas_given) {
    bad(source, "batching.replicas (--replicas), batching.fleet",
        "a fleet counts its replicas class by class: set each class's replicas, not "
        "batching.replicas");
  }
  if (!s.fleet && (s.gpus_per_replica != 1 || s.price_per_gpu_hour != 0)) {
    bad(source, "batching.gpus, batching.price_per_gpu_hour",
        "price a fleet's classes: they apply with batching.fleet only");
  }
  if (s.fleet && !batching) {
    // Name who set each side: the fleet's file, and the file or flag that
    // made the server another kind.
    const auto kind_by = s.set_by.find("server.kind");
    const std::string kind_from = kind_by == s.set_by.end() ? "the default" : kind_by->second;
    bad(s.fleet_source, "batching.fleet",
        "is a fleet of the batching server, and server.kind is " + s.server_kind + " (set by " +
            kind_from + "): run it with server.kind batching (--server batching)");
  }
  // The knobs of a split fleet's transfers said of a run with no split would
  // change nothing (BATCHING.md section 12): refused where set to other than
  // their defaults (a run's settings.json holds them all).
  if (batching) {
    const bool split = s.fleet && std::any_of(s.fleet->begin(), s.fleet->end(),
                                              [](const auto& c) { return c.role != Role::kBoth; });
    const Settings defaults;
    for (const Row& row : table()) {
      if (!row.split_only || row.preset_wide) continue;
      const std::string& key = row.key;
      const auto by = s.set_by.find(key);
      if (split || by == s.set_by.end()) continue;
      if (row.get(s) == row.get(defaults)) continue;
      const bool flag = by->second.starts_with("--");
      bad(flag ? std::string() : by->second, flag ? by->second : std::string(key),
          "applies to a fleet split into prefill and decode (classes with a role, BATCHING.md "
          "section 12), and this run has no split: leave it out");
    }
  }
  // Once its classes' presets are loaded, the fleet is checked as a whole.
  bool presets_loaded = true;
  for (const std::string& name : fleet_preset_names(s))
    presets_loaded = presets_loaded && s.fleet_presets.count(name) > 0;
  if (s.fleet && presets_loaded) fleet_classes(s);
}

namespace {

// Every replica's block table exists from its start (the identity maps grow
// with use): `replicas` replicas of `kv_blocks` blocks need this many bytes
// before they hold anything.
double block_table_bytes(std::int64_t replicas, std::int64_t kv_blocks) {
  constexpr double kBytesPerReplica = 4096;  // its scheduler, queues and map's first table
  return static_cast<double>(replicas) *
         (static_cast<double>(kv_blocks + 1) * KvBlockPool::kBytesPerBlock + kBytesPerReplica);
}

double machine_bytes() {
  return static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
         static_cast<double>(::sysconf(_SC_PAGESIZE));
}

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return text;
}

}  // namespace

void check_batching_memory(const BatchingKnobs& k, const std::string& source) {
  // Refused before anything is built when the block tables alone would not
  // fit the machine's memory, rather than failing seconds later.
  const double bytes = block_table_bytes(k.replicas, k.kv_blocks);
  const double machine = machine_bytes();
  if (machine > 0 && bytes > machine) {
    bad(source, "batching.replicas (--replicas), batching.kv_blocks (--kv-blocks)",
        std::to_string(k.replicas) + " replicas of " + std::to_string(k.kv_blocks) +
            " KV blocks need " + gib(bytes) + " for their block tables alone, more than this " +
            "machine's " + gib(machine) + ": fewer replicas or blocks");
  }
}

void check_fleet_memory(const std::vector<ReplicaClass>& classes, const std::string& source) {
  // As check_batching_memory, over every slot of every class (an autoscaled
  // class may start all of its maximum).
  double bytes = 0;
  std::string each;
  for (const ReplicaClass& c : classes) {
    bytes += block_table_bytes(c.slots(), c.knobs.kv_blocks);
    each += (each.empty() ? "" : ", ") + c.name + ": " + std::to_string(c.slots()) + " of " +
            std::to_string(c.knobs.kv_blocks) + " KV blocks";
  }
  const double machine = machine_bytes();
  if (machine > 0 && bytes > machine) {
    bad(source, "batching.fleet",
        "its replica slots (" + each + ") need " + gib(bytes) +
            " for their block tables alone, more than this machine's " + gib(machine) +
            ": fewer replicas (autoscale.max) or blocks");
  }
}

nlohmann::ordered_json settings_to_json(const Settings& given) {
  // A fleet's file holds the fleet-wide knobs its run took from its classes'
  // presets, so that it reproduces the run whatever the presets become.
  bool presets_loaded = true;
  for (const std::string& name : fleet_preset_names(given))
    presets_loaded = presets_loaded && given.fleet_presets.count(name) > 0;
  const Settings settings = presets_loaded ? with_fleet_wide_from_presets(given) : given;
  nlohmann::ordered_json out;
  for (const Row& row : table()) {
    const auto dot = row.key.find('.');
    const std::string section = row.key.substr(0, dot);
    // A kind's own knobs are a run's only when that kind serves it.
    if (section_of_another_kind(section, settings.server_kind)) continue;
    out[section][row.key.substr(dot + 1)] = row.get(settings);
  }
  // How far the presets it used may be, so that the file says so again.
  for (const auto& [name, e] : settings.preset_errors)
    out["meta"]["presets_expected_error"][name] = e;
  return out;
}

}  // namespace infersim

namespace infersim {

std::vector<std::string> fleet_preset_names(const Settings& settings) {
  std::vector<std::string> names;
  if (!settings.fleet) return names;
  for (const FleetClassSettings& c : *settings.fleet) {
    if (c.preset.empty()) continue;
    if (std::find(names.begin(), names.end(), c.preset) == names.end()) names.push_back(c.preset);
  }
  return names;
}

std::int64_t fleet_model_len(const Settings& settings, const std::vector<ReplicaClass>& classes) {
  if (settings.batching.max_model_len) return *settings.batching.max_model_len;
  std::int64_t len = 0;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const ReplicaClass& c = classes[i];
    // A class's preset's max_model_len stands in for 131072 (section 13.1).
    std::int64_t cap = 131072;
    if (settings.fleet && i < settings.fleet->size() && !(*settings.fleet)[i].preset.empty()) {
      const auto preset = settings.fleet_presets.find((*settings.fleet)[i].preset);
      if (preset != settings.fleet_presets.end() && preset->second.contains("max_model_len") &&
          preset->second["max_model_len"].is_number_integer()) {
        cap = preset->second["max_model_len"].get<std::int64_t>();
      }
    }
    const std::int64_t own = std::min<std::int64_t>(cap, c.knobs.kv_blocks * c.knobs.block_tokens);
    len = len == 0 ? own : std::min(len, own);
  }
  return len;
}

const std::vector<std::string>& fleet_wide_preset_keys() {
  // The rows that say so, a split fleet's last.
  static const std::vector<std::string> kKeys = [] {
    std::vector<const Row*> rows;
    for (const Row& row : table())
      if (row.preset_wide) rows.push_back(&row);
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row* a, const Row* b) { return a->split_only < b->split_only; });
    std::vector<std::string> keys;
    for (const Row* row : rows)
      keys.push_back(row->key.substr(row->key.find('.') + 1));
    return keys;
  }();
  return kKeys;
}

namespace {

// The class's preset's batching section, or null when it names none (or it
// is not loaded yet).
const nlohmann::json* class_preset(const Settings& settings, const FleetClassSettings& c) {
  if (c.preset.empty()) return nullptr;
  const auto found = settings.fleet_presets.find(c.preset);
  return found == settings.fleet_presets.end() ? nullptr : &found->second;
}

}  // namespace

Settings with_fleet_wide_from_presets(const Settings& settings) {
  Settings out = settings;
  if (!settings.fleet) return out;
  const std::string& src = settings.fleet_source;
  for (const std::string& key : fleet_wide_preset_keys()) {
    if (settings.set_by.count("batching." + key)) continue;
    std::optional<nlohmann::json> value;
    std::size_t first = 0;
    std::string carriers;
    for (std::size_t i = 0; i < settings.fleet->size(); ++i) {
      const auto& c = (*settings.fleet)[i];
      const nlohmann::json* preset = class_preset(settings, c);
      if (preset == nullptr || !preset->contains(key)) continue;
      const nlohmann::json& v = (*preset)[key];
      const auto at = [&](std::size_t j) {
        const FleetClassSettings& cj = (*settings.fleet)[j];
        return "batching.fleet[" + std::to_string(j) + "] (" + cj.name + ", preset " + cj.preset +
               ")";
      };
      if (!value) {
        value = v;
        first = i;
      } else if (v != *value) {
        bad(src, at(first) + ", " + at(i) + ": batching." + key,
            "the classes' presets disagree (" + value->dump() + " against " + v.dump() +
                ") and a fleet has one " + key + ": set batching." + key + " for the whole fleet");
      }
      carriers += (carriers.empty() ? "" : ", ") + c.name;
    }
    if (!value) continue;
    set_setting(out, "batching." + key, *value, src, "batching." + key);
    out.set_by["batching." + key] = "presets of " + carriers;
  }
  return out;
}

ServerChoice server_choice(const Settings& settings) {
  ServerChoice choice;
  choice.kind = settings.server_kind;
  choice.edge = settings.edge_knobs();
  choice.batching = with_fleet_wide_from_presets(settings).batching;
  for (const ServerKind& kind : server_kinds()) {
    if (!kind.defaults.has_value()) continue;
    const auto held = settings.own_knobs.find(kind.section);
    choice.own[kind.section] = held == settings.own_knobs.end() ? kind.defaults : held->second;
  }
  if (settings.fleet) {
    choice.fleet = fleet_classes(settings);
    choice.batching.max_model_len = fleet_model_len(settings, choice.fleet);
  }
  return choice;
}

std::vector<std::string> fleet_knob_lines(const Settings& given) {
  std::vector<std::string> lines;
  if (!given.fleet) return lines;
  const Settings settings = with_fleet_wide_from_presets(given);
  const Settings defaults;
  std::size_t width = std::string("fleet-wide").size();
  for (const FleetClassSettings& c : *settings.fleet)
    width = std::max(width, c.name.size());
  // A value as the console shows it: a step table by its size, not whole.
  const auto shown_value = [](const nlohmann::json& v) {
    return v.is_object() ? knob_value_text(nlohmann::ordered_json(v)) : v.dump();
  };
  const auto section_value = [&](const Settings& from, const std::string& key) {
    return shown_value(find_key("batching." + key)->get(from));
  };
  // "  WHO  SOURCE: key = value, ..." a source, in the order sources first appear.
  const auto add_groups = [&](const std::string& who,
                              const std::vector<std::pair<std::string, std::string>>& rows) {
    std::vector<std::pair<std::string, std::string>> groups;
    for (const auto& row : rows) {
      auto it = std::find_if(groups.begin(), groups.end(),
                             [&](const auto& g) { return g.first == row.first; });
      if (it == groups.end()) {
        groups.push_back(row);
      } else {
        it->second += ", " + row.second;
      }
    }
    for (const auto& [source, text] : groups)
      lines.push_back("  " + who + std::string(width - who.size(), ' ') + "  " + source + ": " +
                      text);
  };
  std::vector<std::pair<std::string, std::string>> wide;
  const bool split = std::any_of(settings.fleet->begin(), settings.fleet->end(),
                                 [](const auto& c) { return c.role != Role::kBoth; });
  // The router, a split's own knobs, those the presets may give, lockstep.
  std::vector<std::string> wide_keys = {"router"};
  for (const Row& row : table())
    if (split && row.split_only && !row.preset_wide)
      wide_keys.push_back(row.key.substr(row.key.find('.') + 1));
  wide_keys.insert(wide_keys.end(), fleet_wide_preset_keys().begin(),
                   fleet_wide_preset_keys().end());
  wide_keys.push_back("lockstep");
  for (const std::string& key : wide_keys) {
    const auto set = settings.set_by.find("batching." + key);
    wide.emplace_back(set == settings.set_by.end() ? "default" : set->second,
                      key + " = " + section_value(settings, key));
  }
  const std::vector<ReplicaClass> classes = fleet_classes(given);
  const auto len = settings.set_by.find("batching.max_model_len");
  wide.emplace_back(len == settings.set_by.end() ? "the least over the classes" : len->second,
                    "max_model_len = " + std::to_string(fleet_model_len(settings, classes)));
  add_groups("fleet-wide", wide);
  for (std::size_t i = 0; i < settings.fleet->size(); ++i) {
    const FleetClassSettings& c = (*settings.fleet)[i];
    const nlohmann::json* preset = class_preset(settings, c);
    std::vector<std::pair<std::string, std::string>> rows;
    rows.emplace_back("class", "replicas = " + std::to_string(classes[i].replicas));
    for (const std::string& key : class_knob_keys()) {
      if (const nlohmann::json* own = c.knob(key)) {
        rows.emplace_back("class", key + " = " + shown_value(*own));
      } else if (preset != nullptr && preset->contains(key)) {
        rows.emplace_back("preset " + c.preset, key + " = " + shown_value((*preset)[key]));
      } else if (const auto set = settings.set_by.find("batching." + key);
                 set != settings.set_by.end()) {
        rows.emplace_back(set->second, key + " = " + section_value(settings, key));
      } else {
        rows.emplace_back("default", key + " = " + section_value(defaults, key));
      }
    }
    add_groups(c.name, rows);
  }
  return lines;
}

const nlohmann::json* FleetClassSettings::knob(const std::string& key) const {
  for (const auto& [k, value] : knobs)
    if (k == key) return &value;
  return nullptr;
}

void FleetClassSettings::resize(std::int64_t count) {
  if (autoscale) {
    // Its maximum; its replicas at 0 as given, within its new bounds.
    autoscale->max = count;
    given["autoscale"]["max"] = count;
    replicas = std::clamp(replicas, autoscale->min, count);
  } else {
    replicas = count;
  }
  given["replicas"] = replicas;
}

std::vector<ReplicaClass> fleet_classes(const Settings& settings) {
  std::vector<ReplicaClass> classes;
  if (!settings.fleet) return classes;
  const std::string& src = settings.fleet_source;
  const Settings base = with_fleet_wide_from_presets(settings);
  for (std::size_t i = 0; i < settings.fleet->size(); ++i) {
    const FleetClassSettings& c = (*settings.fleet)[i];
    const std::string at = "batching.fleet[" + std::to_string(i) + "]";
    // The section's knobs, then the preset's a class may set, then its own.
    Settings scratch = base;
    if (!c.preset.empty()) {
      const auto found = settings.fleet_presets.find(c.preset);
      if (found == settings.fleet_presets.end()) {
        bad(src, at + ".preset", "no preset named '" + c.preset + "' was loaded");
      }
      for (const auto& [key, value] : found->second.items()) {
        if (is_class_knob(key)) {
          set_setting(scratch, "batching." + key, value, src,
                      at + ".preset (" + c.preset + "): batching." + key);
        }
      }
    }
    for (const auto& [key, value] : c.knobs)
      set_setting(scratch, "batching." + key, value, src, at + "." + key);
    ReplicaClass cls;
    cls.name = c.name;
    cls.preset = c.preset;
    cls.replicas = c.replicas;
    cls.knobs = scratch.batching;
    cls.knobs.replicas = cls.replicas;
    cls.gpus = scratch.gpus_per_replica;
    cls.role = c.role;
    cls.price_per_gpu_hour = scratch.price_per_gpu_hour;
    cls.autoscale = c.autoscale;
    classes.push_back(std::move(cls));
  }
  // Fleet-wide: max_model_len, within every class's K * B; each class's own
  // combinations (S <= Tb, ...) as the section's are checked.
  const std::int64_t len = fleet_model_len(settings, classes);
  for (std::size_t i = 0; i < classes.size(); ++i) {
    ReplicaClass& cls = classes[i];
    cls.knobs.max_model_len = len;
    try {
      check_batching_knobs(cls.knobs, 0, src);
    } catch (const InputError& e) {
      std::string what = e.what();
      const std::string prefix = src.empty() ? std::string() : src + ": ";
      if (what.starts_with(prefix)) what = what.substr(prefix.size());
      throw InputError(src, 0, "batching.fleet[" + std::to_string(i) + "] (" + cls.name + ")",
                       what);
    }
  }
  std::int64_t slots = 0;
  for (const ReplicaClass& cls : classes)
    slots += cls.slots();
  if (slots > 1'000'000) {
    bad(src, "batching.fleet",
        "holds " + std::to_string(slots) + " replica slots; at most 1000000");
  }
  check_fleet_memory(classes, src);
  // Section 13.1: the transfer of the longest prompt a request may have
  // (max_model_len tokens) takes at most as long as a duration setting.
  if (classes.front().role != Role::kBoth) {
    const BatchingKnobs& k = base.batching;  // the fleet's, its presets' kv_bytes_per_token too
    const double xfer_s = k.kv_link_latency_s + static_cast<double>(len) * k.kv_bytes_per_token *
                                                    8 / (k.kv_link_gbps * 1e9);
    if (!(xfer_s <= kLongestDurationS)) {
      char text[320];
      std::snprintf(text, sizeof(text),
                    "a transfer of max_model_len (%lld) tokens would take %.3g s, more than the "
                    "1e9 s (about 31.7 years) a duration may last on the nanosecond clock: fewer "
                    "bytes a token or a faster link",
                    static_cast<long long>(len), xfer_s);
      bad(src, "batching.kv_bytes_per_token, batching.kv_link_gbps", text);
    }
  }
  if (settings.batching.lockstep && classes.front().role != Role::kBoth) {
    bad(src, "batching.lockstep, batching.fleet",
        "lockstep does not apply to disaggregated prefill and decode");
  }
  if (settings.batching.lockstep && (classes.size() != 1 || classes.front().autoscale)) {
    bad(src, "batching.lockstep, batching.fleet",
        "lockstep needs a fleet of one class that does not autoscale");
  }
  return classes;
}

}  // namespace infersim
