// The batching server's knobs (BATCHING.md section 1): the struct with its
// defaults, its rows (one a knob), and the check of the combinations the spec
// forbids; the routers' names are model/router_kinds.hpp's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/knob.hpp"
#include "model/router_kinds.hpp"
#include "model/server_description.hpp"
#include "model/step_table.hpp"

namespace infersim {

// Counts are signed so that a negative value read from settings reaches the
// check as what it is. The defaults describe Llama-3.1-8B in BF16 on one H100
// SXM (BATCHING.md section 1).
struct BatchingKnobs {
  std::int64_t replicas = 1;                    // R
  RouterKind router = RouterKind::kRoundRobin;  //
  std::int64_t max_num_seqs = 1024;             // S
  std::int64_t max_num_batched_tokens = 8192;   // Tb
  std::int64_t block_tokens = 16;               // B
  std::int64_t kv_blocks = 31250;               // K
  std::optional<std::int64_t> max_model_len;    // L; none: min(131072, K*B)
  bool prefix_caching = true;                   //
  bool reserve_full_prompt = true;              //
  double step_base_s = 0.0065;                  // c0
  double step_prefill_token_s = 1.98e-5;        // cp
  double step_prefill_pair_s = 1.2e-9;          // cq
  double step_decode_token_s = 2.0e-5;          // cd
  double step_decode_context_s = 4.0e-8;        // ckv
  // Extensions of section 5 (model/step_cost.hpp), off at these defaults.
  double step_weights_s = 0;            // cw: the weights read once a step
  double step_expert_s = 0;             // ce: one expert's weights read
  std::int64_t moe_experts = 0;         // E; 0: a dense model
  std::int64_t moe_active_experts = 0;  // k of E a token is routed to
  bool step_roofline = false;           // c0 + max(memory, compute), not the sum
  // Section 5c: the kernels' part of a step from tables, added to the sum;
  // none (empty) by default.
  StepTable step_table = {};
  double gpu_idle_w = 100;        //
  double gpu_max_w = 700;         //
  bool async_scheduling = false;  //
  bool lockstep = false;          //
  // How often the vllm-dp, scorer and dynamo routers' view of the replicas'
  // load refreshes (section 8); 0: the scorer and dynamo read it exact.
  double router_refresh_s = 0.1;
  ScorerWeights scorer_weights = {};  // the scorer router's
  double dynamo_weight = 1;           // w of the dynamo router's cost
  double dynamo_temperature = 0;      // T: 0 the least cost, else a softmax draw
  std::uint64_t router_seed = 0;      // the dynamo router's draws
  // How the scorer and dynamo routers know a replica's cache (section 8).
  PrefixIndexKind prefix_index = PrefixIndexKind::kPrecise;
  std::int64_t prefix_index_blocks = 31250;  // an approximate index's, a replica
  double kv_event_delay_s = 0;               // a precise index's events, this late
  // Replaying a measured run (section 10b): its arrivals are the engine's
  // turns, each taken at the nearer end of the step running then.
  bool replay_turns = false;
  // Set by that replay, not a setting: the server takes its arrivals so.
  bool engine_turn_arrivals = false;
  // Disaggregated prefill and decode (section 12), fleet-wide; used only when
  // the fleet's classes carry roles.
  RouterKind decode_router = RouterKind::kRoundRobin;  // one that routes_decode
  double kv_bytes_per_token = 131072;  // Llama-3.1-8B: 32 layers x 8 KV heads x 128 x 2 x 2 bytes
  double kv_link_gbps = 400;           // a prefill replica's link
  double kv_link_latency_s = 0.0005;   // a transfer's fixed cost

  // L as given, else min(131072, K*B) (K and B checked first).
  std::int64_t model_len() const;
};

// The batching section's knobs, a row each (BATCHING.md section 1), in the
// order a settings file lists them: key, member and bounds, flag and help,
// the page's label and unit, whether a fleet's class sets it. The
// combinations the spec forbids are check_batching_knobs's.
const std::vector<Knob<BatchingKnobs>>& batching_knob_rows();
// Adds a row to the section from outside the table (a kind's or a test's
// knob); only before the first settings are read, which copy the rows.
void add_batching_knob_row(Knob<BatchingKnobs> row);
// The row of that key, or nullptr.
const Knob<BatchingKnobs>* find_batching_knob(const std::string& key);
// The report page's row of a knob of the section: its label and unit, and
// those of the knob shown beside it.
KnobRow batching_page_row(const std::string& key);
// A value as the page shows it: a number in its shortest form, on or off, a
// word as it is.
std::string knob_value_text(const nlohmann::ordered_json& value);

// The largest K (and B, R) accepted: 2^26 blocks of KV is far beyond any
// real memory, and a replica numbers its blocks' places in its identity map
// (32 a group, section 4) in 32 bits.
inline constexpr std::int64_t kMaxKvBlocks = std::int64_t{1} << 26;

// Throws InputError(source, 0, "batching.<key>[, batching.<key>]", what) for
// the first thing BATCHING.md section 1 forbids: a knob outside its row's
// bounds (batching_knob_rows), gpu_max_w below gpu_idle_w, max_model_len
// above kv_blocks * block_tokens, max_num_seqs above max_num_batched_tokens,
// experts a token out of 1 to moe_experts, an expert's cost on a dense model,
// a block_tokens that does not divide the requests' block size
// `block_id_tokens` (Bh; 0 when the requests carry no block ids).
void check_batching_knobs(const BatchingKnobs& knobs, std::uint32_t block_id_tokens,
                          const std::string& source);

}  // namespace infersim
