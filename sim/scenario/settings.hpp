// Every knob of a run, with the seed scenario's defaults, read from a settings
// file (any subset of keys) and overridden by flags. Each key is checked where
// it is set, so the file and the command line give the same errors.
#pragma once

#include <any>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_checks.hpp"
#include "core/knob.hpp"
#include "model/batching_knobs.hpp"
#include "model/edge_server.hpp"
#include "model/network_path.hpp"
#include "model/radio_energy.hpp"
#include "model/replica_class.hpp"
#include "model/server_kinds.hpp"
#include "model/simulation.hpp"
#include "report/serving_metrics.hpp"
#include "request/closed_loop_requests.hpp"
#include "request/request.hpp"
#include "request/synthetic_request_generator.hpp"
#include "request/trace_request_generator.hpp"
#include "trace/trace_source.hpp"

namespace infersim {

// A class of a fleet as the settings give it (BATCHING.md section 11), read
// and checked once where the settings are read; nothing reads the fleet's
// JSON after.
struct FleetClassSettings {
  std::string name;
  std::int64_t replicas = 1;  // at 0
  std::string preset;         // empty: none
  Role role = Role::kBoth;    // kBoth: no role given (a colocated fleet)
  std::optional<Autoscale> autoscale;
  // The class's own knobs of the batching section, checked, in the order given.
  std::vector<std::pair<std::string, nlohmann::json>> knobs;
  // The class as given, which settings.json writes again with the file's
  // order of keys; `resize` writes its new count into it.
  nlohmann::ordered_json given;

  // The class's own value of a knob, or nullptr.
  const nlohmann::json* knob(const std::string& key) const;
  // `count` replicas, or, autoscaled, at most `count`, its replicas at 0 as
  // given within its new bounds (the cheapest-fleet search's grid).
  void resize(std::int64_t count);
};

struct Settings {
  // run
  std::string mode = "compare";  // compare | recorded | synthetic
  std::uint32_t devices = 50;
  std::optional<double> duration_s;  // none: the last arrival rounded up to a minute
  std::uint64_t seed = 42;
  double time_resolution_s = 0;  // 0 = exact
  double time_scale = 1;
  // replay window and idle-gap cap, in seconds of trace time (none: no limit)
  std::optional<double> start_offset_s;
  std::optional<double> end_offset_s;
  std::optional<double> max_idle_gap_s;
  // tokens
  double bytes_per_token = 4;
  double mi_per_context_token = 12;
  double mi_per_generated_token = 2000;
  // deadline
  double ttft_budget_s = 2;
  double decode_budget_s = 0.1;
  // server
  std::string server_kind = "edge";  // edge | batching
  std::uint32_t cores = 8;
  double mips_per_core = 60000;
  double idle_power_w = 420;
  double max_power_w = 720;
  // batching (server.kind batching; BATCHING.md section 1)
  BatchingKnobs batching;
  bool replicas_given = false;  // batching.replicas set (an error beside a fleet)
  // Section 11: the defaults of a fleet's classes, and the fleet as given
  // (checked key by key; none: no fleet), with the file it came from and its
  // classes' presets' batching sections, by name (load_fleet_presets).
  std::int64_t gpus_per_replica = 1;
  double price_per_gpu_hour = 0;
  std::optional<std::vector<FleetClassSettings>> fleet;
  std::string fleet_source;
  std::map<std::string, nlohmann::json> fleet_presets;
  // Who set each key ("batching.kv_blocks" -> a settings file's path, a flag
  // such as "--kv-blocks", or "--preset NAME"); a key left at its default is
  // absent. A fleet-wide key that the batching section does not set comes from
  // the classes' presets (BATCHING.md section 13.1).
  std::map<std::string, std::string> set_by;
  // The expected error of each preset the knobs came from (a run's --preset,
  // a settings file that is a preset, a fleet class's preset), by name:
  // {"pct": {"ttft", "tpot", "latency"}, "from": the evidence}
  // (settings/presets/README.md).
  std::map<std::string, nlohmann::json> preset_errors;
  // The knobs of each server kind added from outside (add_server_kind), by
  // its section; a section not set holds the kind's defaults.
  std::map<std::string, std::any> own_knobs;
  // network
  std::vector<Hop> hops = default_hops();
  double device_tx_nj_per_bit = 283.17;
  double device_rx_nj_per_bit = 137.01;
  // trace
  std::string trace_path = "trace/azure_llm_code_1h.csv";
  std::string trace_format = "auto";
  std::string timestamp_column;  // empty: the format's own
  std::string input_column;
  std::string output_column;
  std::string hash_ids_column;
  std::string timestamp_unit = "auto";
  std::vector<std::string> filters;         // "COLUMN=VALUE"
  std::optional<std::string> trace_sha256;  // when set, the trace read must match it
  // synthetic
  std::string synthetic_sizes = "mean";        // mean | empirical | recorded
  std::string synthetic_arrivals = "poisson";  // poisson | gamma
  double burstiness = 1;
  std::uint32_t replications = 1;
  // client: load as `vllm bench serve` offers it (MODEL.md section 4b): a
  // closed loop of max_concurrency clients, or with none (none: no cap) a
  // client a request, when a request_rate or the random dataset is given;
  // with none of the three, the open loop of the trace's instants
  std::optional<std::uint32_t> max_concurrency;
  std::optional<double> request_rate;  // requests a second paced; none: inf
  std::uint64_t num_warmups = 0;
  std::string dataset = "trace";  // trace | random
  std::int64_t random_input_len = 1024;
  std::int64_t random_output_len = 128;
  double random_range_ratio = 0;
  std::uint64_t num_prompts = 1000;
  // compare: the recorded requests sent again by a closed loop of the
  // recorded hour's mean in flight, beside the other modes
  bool compare_closed_loop = false;
  // output
  std::string per_request = "csv";  // csv | none
  // report
  std::vector<double> metric_percentiles = {50, 90, 99};  // each in (0, 100]
  std::optional<GoodputBounds> goodput;                   // none: no goodput figures
  double slice_duration_s = 60;                           // timeseries.csv
  std::string plots = "svg";                              // svg | none

  RequestKnobs request_knobs() const;
  EdgeServerKnobs edge_knobs() const;
  ArrivalKnobs arrival_knobs() const;
  EnergyKnobs energy_knobs() const;
  SyntheticKnobs synthetic_knobs(std::uint64_t replication_seed) const;
  ServingMetricsKnobs serving_knobs() const;
  TraceSource trace_source() const;
  RandomDataset random_dataset() const;
  ClosedLoop closed_loop() const;  // off: open loop
  // The benchmark's client sends the requests (MODEL.md section 4b): a cap,
  // a rate or the random dataset given.
  bool client_loop() const;
  // The key that makes it one (the cap first).
  std::string client_key() const;
};

// A key and the flag that sets it, for a message: "client.max_concurrency
// (--max-concurrency)"; the key alone when no flag sets it.
std::string key_and_flag(const std::string& key);

// Every knob a row (core/knob.hpp), its key "section.key", in file order: the
// settings' own and each server section's (model/batching_knobs).
const std::vector<Knob<Settings>>& settings_knobs();
// Every key a settings file may hold, as "section.key", in file order.
const std::vector<std::string>& settings_keys();

// Sets one key from a JSON value. `source` names where the value came from (a
// file, or a flag such as "--cores") for the error. Throws InputError for an
// unknown key (suggesting the nearest), a wrong type or an impossible value.
void set_setting(Settings& settings, const std::string& key, const nlohmann::json& value,
                 const std::string& source, const std::string& label);

// Applies every key of a settings object (sections of keys). `meta` is
// accepted and ignored: it records who wrote the file.
void apply_settings_json(Settings& settings, const nlohmann::json& document,
                         const std::string& source);
// Notes the expected error a preset's file carries (its meta's
// expected_error_pct and expected_error_from), or that a run's settings.json
// carries (meta.presets_expected_error), in settings.preset_errors.
void note_preset_errors(Settings& settings, const nlohmann::json& document);
// Reads a settings file and applies it.
void apply_settings_file(Settings& settings, const std::string& path);
// The keys ("section.key") a settings file sets, once apply_settings_file has
// accepted it: what it says, as against what it leaves at the defaults.
std::vector<std::string> settings_file_keys(const std::string& path);
// Checks what no single key can: max power at least idle power, the end of
// the replay window not before its start, and the batching knobs' combinations
// (BATCHING.md section 1) when the server batches.
// The batching server's block tables against the machine's memory: an
// InputError naming batching.replicas and batching.kv_blocks when they alone
// would not fit (validate_settings calls it).
void check_batching_memory(const BatchingKnobs& knobs, const std::string& source);
// The same for a fleet, summed over every class's slots: an InputError naming
// batching.fleet and each class's slots and blocks (fleet_classes calls it).
void check_fleet_memory(const std::vector<ReplicaClass>& classes, const std::string& source);

void validate_settings(const Settings& settings, const std::string& source);

nlohmann::ordered_json settings_to_json(const Settings& settings);

// The presets a fleet's classes name (each once, in order).
std::vector<std::string> fleet_preset_names(const Settings& settings);
// The fleet's classes (BATCHING.md section 11), each's knobs the section's
// under its preset's under its own, checked as a whole; empty without a fleet.
// Throws InputError naming batching.fleet[i] and the key.
std::vector<ReplicaClass> fleet_classes(const Settings& settings);
// The fleet-wide max_model_len: the section's when given, else the least
// min(cap, K * B) over the classes, cap a class's preset's max_model_len, else
// 131072.
std::int64_t fleet_model_len(const Settings& settings, const std::vector<ReplicaClass>& classes);
// The keys a fleet holds once for all its classes that a preset carries
// (BATCHING.md section 13.1): block_tokens, prefix_caching,
// reserve_full_prompt, async_scheduling, kv_bytes_per_token.
const std::vector<std::string>& fleet_wide_preset_keys();
// The settings with each fleet-wide key that neither the section nor a flag
// sets taken from the classes' presets that carry it, when they agree
// (set_by then names them); unchanged without a fleet or before its
// presets are loaded. Throws InputError naming the classes and the key when
// their presets disagree.
Settings with_fleet_wide_from_presets(const Settings& settings);
// Where each knob of each class, and each fleet-wide knob, comes from, for the
// console: lines of "  SOURCE  key = value, ..." under a line a class.
std::vector<std::string> fleet_knob_lines(const Settings& settings);
// The server the settings name, in the models' terms (model/server_kinds.hpp).
ServerChoice server_choice(const Settings& settings);

}  // namespace infersim
