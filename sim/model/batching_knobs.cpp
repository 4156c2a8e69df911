#include "model/batching_knobs.hpp"

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <limits>
#include <utility>

#include "core/input_error.hpp"

namespace infersim {
namespace {

constexpr std::int64_t kDefaultModelLen = 131072;

using nlohmann::json;

// The scorer router's weights by name, in the order a settings file lists them.
struct ScorerWeightName {
  const char* name;
  double ScorerWeights::*member;
};
constexpr ScorerWeightName kScorerWeightNames[] = {
    {"queue", &ScorerWeights::queue},
    {"running", &ScorerWeights::running},
    {"kv", &ScorerWeights::kv},
    {"prefix", &ScorerWeights::prefix},
    {"predicted_ttft", &ScorerWeights::predicted_ttft},
};

// The routers' names, for a router's own knob's row.
std::vector<std::string> names_of(std::initializer_list<RouterKind> kinds) {
  std::vector<std::string> names;
  for (const RouterKind kind : kinds)
    names.push_back(to_string(kind));
  return names;
}

// precise or approximate.
Knob<BatchingKnobs> prefix_index_knob() {
  Knob<BatchingKnobs> row;
  row.key = "prefix_index";
  row.text = KnobText::kText;
  row.set = [](BatchingKnobs& k, const json& v, const std::string& src, const std::string& l) {
    const std::string name = json_check::text(v, src, l);
    if (!parse_prefix_index_kind(name, k.prefix_index)) {
      const auto near = nearest(name, {"precise", "approximate"});
      json_check::bad(src, l,
                      "must be precise or approximate, got " + json_check::shown(v) +
                          (near ? " (did you mean " + *near + "?)" : std::string()));
    }
  };
  row.get = [](const BatchingKnobs& k) {
    return nlohmann::ordered_json(to_string(k.prefix_index));
  };
  return row;
}

// An object of weights by scorer, each finite and at least 0; a scorer left
// out weighs 0.
Knob<BatchingKnobs> scorer_weights_knob() {
  Knob<BatchingKnobs> row;
  row.key = "scorer_weights";
  row.text = KnobText::kWeights;
  row.set = [](BatchingKnobs& k, const json& v, const std::string& src, const std::string& l) {
    std::vector<std::string> names;
    for (const ScorerWeightName& n : kScorerWeightNames)
      names.emplace_back(n.name);
    if (!v.is_object()) {
      json_check::bad(src, l,
                      "expected an object of weights by scorer (queue, running, kv, prefix, "
                      "predicted_ttft), got " +
                          json_check::shown(v));
    }
    ScorerWeights weights{0, 0, 0, 0, 0};
    for (const auto& [name, weight] : v.items()) {
      const auto known = std::find(names.begin(), names.end(), name);
      if (known == names.end()) {
        const auto near = nearest(name, names);
        json_check::bad(src, l,
                        "'" + name +
                            "' is not a scorer: queue, running, kv, prefix or predicted_ttft" +
                            (near ? " (did you mean " + *near + "?)" : std::string()));
      }
      weights.*kScorerWeightNames[known - names.begin()].member =
          json_check::non_negative(weight, src, l + "." + name);
    }
    k.scorer_weights = weights;
  };
  row.get = [](const BatchingKnobs& k) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const ScorerWeightName& n : kScorerWeightNames)
      out[n.name] = k.scorer_weights.*n.member;
    return out;
  };
  return row;
}

// L, or null for min(131072, K*B).
Knob<BatchingKnobs> model_len_knob() {
  Knob<BatchingKnobs> row;
  row.key = "max_model_len";
  row.text = KnobText::kWhole;
  row.set = [](BatchingKnobs& k, const json& v, const std::string& src, const std::string& l) {
    if (v.is_null()) {
      k.max_model_len.reset();
    } else {
      k.max_model_len =
          static_cast<std::int64_t>(json_check::whole(v, 1, std::uint64_t{1} << 52, src, l));
    }
  };
  row.get = [](const BatchingKnobs& k) {
    return k.max_model_len ? nlohmann::ordered_json(*k.max_model_len)
                           : nlohmann::ordered_json(nullptr);
  };
  return row;
}

// Section 5c's tables, or null for none.
Knob<BatchingKnobs> step_table_knob() {
  Knob<BatchingKnobs> row;
  row.key = "step_table";
  row.text = KnobText::kText;
  row.set = [](BatchingKnobs& k, const json& v, const std::string& src, const std::string& l) {
    if (v.is_null()) {
      k.step_table = StepTable{};
    } else {
      k.step_table = StepTable::from_json(v, src, l);
    }
  };
  row.get = [](const BatchingKnobs& k) {
    return k.step_table.empty() ? nlohmann::ordered_json(nullptr) : k.step_table.to_json();
  };
  return row;
}

std::string key(const char* name) {
  return std::string("batching.") + name;
}

}  // namespace

namespace {

using json_check::bad;
using json_check::shown;
using BatchingRow = Knob<BatchingKnobs>;

BatchingRow router_knob(std::string key, RouterKind BatchingKnobs::*member, bool decode) {
  BatchingRow row;
  row.key = std::move(key);
  row.text = KnobText::kText;
  row.set = [=](BatchingKnobs& k, const json& v, const std::string& src, const std::string& l) {
    const std::string name = json_check::text(v, src, l);
    const std::vector<std::string>& names = decode ? decode_router_names() : router_names();
    if (std::find(names.begin(), names.end(), name) == names.end() ||
        !parse_router_kind(name, k.*member)) {
      const auto near = nearest(name, names);
      bad(src, l,
          "must be " + router_names_text(decode) + ", got " + shown(v) +
              (near && *near != name ? " (did you mean " + *near + "?)" : std::string()));
    }
  };
  row.get = [=](const BatchingKnobs& k) { return nlohmann::ordered_json(to_string(k.*member)); };
  return row;
}

std::vector<BatchingRow>& added_rows() {
  static std::vector<BatchingRow> rows;
  return rows;
}

std::vector<BatchingRow> table_rows() {
  constexpr std::uint64_t kBlocks = static_cast<std::uint64_t>(kMaxKvBlocks);
  std::vector<BatchingRow> rows = {
      count_knob("replicas", &BatchingKnobs::replicas, 1, 1'000'000)
          .help("batching: engine replicas, each with its own KV cache")
          .label("Replicas")
          .on_page(10),
      router_knob("router", &BatchingKnobs::router, false)
          .help("batching: " + router_names_text(false))
          .label("Router")
          .on_page(20),
      real_knob("router_refresh_s", &BatchingKnobs::router_refresh_s, json_check::seconds)
          .help("batching: how often the vllm-dp, scorer and dynamo routers' view of the "
                "replicas' load refreshes, s (0: scorer and dynamo read it exact; vllm-dp every "
                "ns)")
          .label("Router's view refreshed every", " s")
          .for_routers(
              names_of({RouterKind::kDataParallel, RouterKind::kScorer, RouterKind::kDynamo}))
          .on_page(30),
      scorer_weights_knob()
          .help("batching: the scorer router's weights, NAME:W apart by commas, of queue, "
                "running, kv, prefix, predicted_ttft (one left out weighs 0)")
          .label("Scorer router's weights")
          .for_routers(names_of({RouterKind::kScorer}))
          .on_page(32),
      real_knob("dynamo_weight", &BatchingKnobs::dynamo_weight)
          .help("batching: w of the dynamo router's cost, w x prompt blocks to compute + blocks "
                "in use")
          .label("Dynamo router's weight / temperature")
          .for_routers(names_of({RouterKind::kDynamo}))
          .shown_with("dynamo_temperature")
          .on_page(34),
      real_knob("dynamo_temperature", &BatchingKnobs::dynamo_temperature)
          .help("batching: the dynamo router's softmax temperature (0: the least cost)"),
      count_knob("router_seed", &BatchingKnobs::router_seed, 0,
                 std::numeric_limits<std::uint64_t>::max())
          .help("batching: seed of the dynamo router's draws")
          .label("Router's seed")
          .for_routers(names_of({RouterKind::kDynamo}))
          .on_page(36),
      prefix_index_knob()
          .help("batching: how the scorer and dynamo routers know a replica's cache: precise "
                "(its KV events) or approximate (the router's own LRU of what it sent)")
          .label("Router's prefix index")
          .for_routers(names_of({RouterKind::kScorer, RouterKind::kDynamo}))
          .on_page(37),
      count_knob("prefix_index_blocks", &BatchingKnobs::prefix_index_blocks, 1, kBlocks)
          .help("batching: block identities an approximate prefix index keeps a replica")
          .label("Approximate prefix index, blocks a replica")
          .for_routers(names_of({RouterKind::kScorer, RouterKind::kDynamo}))
          .on_page(38),
      real_knob("kv_event_delay_s", &BatchingKnobs::kv_event_delay_s, json_check::seconds)
          .help("batching: how late a replica's KV events reach a precise prefix index, s (0: "
                "the cache itself)")
          .label("KV events reach the router after", " s")
          .for_routers(names_of({RouterKind::kScorer, RouterKind::kDynamo}))
          .on_page(39),
      count_knob("max_num_seqs", &BatchingKnobs::max_num_seqs, 1, kBlocks)
          .help("batching: most requests running a replica")
          .label("Most requests running a replica")
          .on_page(50)
          .per_class(),
      count_knob("max_num_batched_tokens", &BatchingKnobs::max_num_batched_tokens, 1,
                 std::uint64_t{1} << 40)
          .help("batching: tokens a step may schedule")
          .label("Most tokens a step")
          .on_page(60)
          .per_class(),
      count_knob("block_tokens", &BatchingKnobs::block_tokens, 1, kBlocks)
          .help("batching: tokens a KV block holds")
          .label("Tokens a KV block")
          .on_page(80)
          .from_presets(),
      count_knob("kv_blocks", &BatchingKnobs::kv_blocks, 1, kBlocks)
          .help("batching: usable KV blocks a replica")
          .label("KV blocks a replica")
          .on_page(70)
          .per_class(),
      model_len_knob()
          .help("batching: longest request, prompt + output, accepted")
          .by_default("min(131072, kv-blocks x block-tokens)")
          .label("Longest request (tokens)")
          .on_page(90),
      switch_knob("prefix_caching", &BatchingKnobs::prefix_caching)
          .help("batching: on or off: share cached prompt blocks between requests")
          .label("Prefix caching")
          .on_page(100)
          .from_presets(),
      switch_knob("reserve_full_prompt", &BatchingKnobs::reserve_full_prompt)
          .help("batching: on or off: admit a request only if its whole prompt fits")
          .label("Admit only whole prompts")
          .on_page(110)
          .from_presets(),
      real_knob("step_base_s", &BatchingKnobs::step_base_s)
          .help("batching: fixed cost of a step, s")
          .label("Step, fixed cost", " s")
          .on_page(120)
          .per_class(),
      real_knob("step_prefill_token_s", &BatchingKnobs::step_prefill_token_s)
          .help("batching: cost of a prefill token, s")
          .label("Step, a prefill token", " s")
          .on_page(130)
          .per_class(),
      real_knob("step_prefill_pair_s", &BatchingKnobs::step_prefill_pair_s)
          .help("batching: cost of a (query, key) pair of prefill attention, s")
          .label("Step, a prefill attention pair", " s")
          .on_page(140)
          .per_class(),
      real_knob("step_decode_token_s", &BatchingKnobs::step_decode_token_s)
          .help("batching: cost of a decode token, s")
          .label("Step, a decode token", " s")
          .on_page(150)
          .per_class(),
      real_knob("step_decode_context_s", &BatchingKnobs::step_decode_context_s)
          .help("batching: cost of a context token read by a decode, s")
          .label("Step, a context token read by a decode", " s")
          .on_page(160)
          .per_class(),
      real_knob("step_weights_s", &BatchingKnobs::step_weights_s)
          .help("batching: the weights read once a step, s, the roofline's memory side")
          .label("Step, the weights read", " s")
          .on_page(170)
          .per_class(),
      real_knob("step_expert_s", &BatchingKnobs::step_expert_s)
          .help("batching: one expert's weights read in a step, s")
          .by_default("0; needs moe-experts")
          .label("Step, an expert's weights read", " s")
          .on_page(180)
          .per_class(),
      count_knob("moe_experts", &BatchingKnobs::moe_experts, 0, 1'000'000)
          .help("batching: experts of a mixture-of-experts model")
          .by_default("0: dense")
          .label("Experts, and those a token is routed to")
          .on_page(190)
          .shown_with("moe_active_experts")
          .per_class(),
      count_knob("moe_active_experts", &BatchingKnobs::moe_active_experts, 0, 1'000'000)
          .help("batching: experts a token is routed to")
          .by_default("0: dense")
          .per_class(),
      switch_knob("step_roofline", &BatchingKnobs::step_roofline)
          .help("batching: on or off: a step costs its fixed part plus the larger of its memory "
                "and compute sides, not their sum")
          .label("Step is the larger of memory and compute")
          .on_page(200)
          .per_class(),
      step_table_knob()
          .file_only()
          .help("batching: the kernels' part of a step from tables composed for a GPU, model and "
                "deployment (section 5c), added to the sum; null: none")
          .label("Step, the kernels' part from tables")
          .on_page(205)
          .per_class(),
      real_knob("gpu_idle_w", &BatchingKnobs::gpu_idle_w, json_check::bounded_amount)
          .help("batching: power of an idle replica, W")
          .label("Power of a replica, idle / stepping", " W")
          .on_page(210)
          .shown_with("gpu_max_w")
          .per_class(),
      real_knob("gpu_max_w", &BatchingKnobs::gpu_max_w, json_check::bounded_amount)
          .help("batching: power of a stepping replica, W")
          .label("", " W")
          .per_class(),
      router_knob("decode_router", &BatchingKnobs::decode_router, true)
          .help("batching, disaggregated: " + router_names_text(true) +
                " among the decode replicas")
          .label("Router of the decode replicas")
          .on_page(240)
          .of_a_split(),
      real_knob("kv_bytes_per_token", &BatchingKnobs::kv_bytes_per_token)
          .help("batching, disaggregated: KV bytes a prompt token transfers")
          .label("KV bytes a prompt token transfers")
          .on_page(250)
          .from_presets()
          .of_a_split(),
      real_knob("kv_link_gbps", &BatchingKnobs::kv_link_gbps, json_check::positive)
          .help("batching, disaggregated: a prefill replica's link to the decode replicas, "
                "Gbit/s")
          .label("A prefill replica's link", " Gbit/s")
          .on_page(260)
          .of_a_split(),
      real_knob("kv_link_latency_s", &BatchingKnobs::kv_link_latency_s,
                json_check::longest_duration)
          .help("batching, disaggregated: fixed cost of a KV transfer, s")
          .label("A KV transfer's fixed cost", " s")
          .on_page(270)
          .of_a_split(),
      switch_knob("async_scheduling", &BatchingKnobs::async_scheduling)
          .help("batching: on or off: plan a step while the one before runs")
          .label("Asynchronous scheduling")
          .on_page(220)
          .from_presets(),
      switch_knob("replay_turns", &BatchingKnobs::replay_turns)
          .help("batching, --measured RUN: on or off: a recorded arrival is the engine's turn, "
                "taken at the nearer end of the step running then")
          .label("Replayed arrivals taken at turns")
          .on_page(40),
      switch_knob("lockstep", &BatchingKnobs::lockstep)
          .help("batching: on or off: replicas step together, as data-parallel MoE engines")
          .label("Replicas in lockstep")
          .on_page(230),
  };
  for (const BatchingRow& row : added_rows())
    rows.push_back(row);
  return rows;
}

}  // namespace

const std::vector<Knob<BatchingKnobs>>& batching_knob_rows() {
  static const std::vector<BatchingRow> kRows = table_rows();
  return kRows;
}

void add_batching_knob_row(Knob<BatchingKnobs> row) {
  added_rows().push_back(std::move(row));
}

const Knob<BatchingKnobs>* find_batching_knob(const std::string& key) {
  for (const BatchingRow& row : batching_knob_rows())
    if (row.key == key) return &row;
  return nullptr;
}

KnobRow batching_page_row(const std::string& key) {
  const BatchingRow* row = find_batching_knob(key);
  if (row == nullptr) return {key, "batching", key, ""};
  KnobRow page{row->label_text, "batching", key, row->unit_text};
  if (!row->pair_key.empty()) {
    page.paired_key = row->pair_key;
    page.paired_unit = find_batching_knob(row->pair_key)->unit_text;
  }
  return page;
}

std::string knob_value_text(const nlohmann::ordered_json& value) {
  if (value.is_boolean()) return value.get<bool>() ? "on" : "off";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "none";
  // Weights by name (the scorer router's): "queue 2, kv 2, prefix 3".
  if (value.is_object() &&
      std::all_of(value.begin(), value.end(), [](const auto& part) { return part.is_number(); })) {
    std::string text;
    for (const auto& [name, part] : value.items())
      text += (text.empty() ? "" : ", ") + name + " " + knob_value_text(part);
    return text;
  }
  // A step table (section 5c): its curves' and grid's points, not its values.
  if (value.is_object()) {
    std::size_t points = 0;
    for (const auto& [key, part] : value.items()) {
      if (part.contains("at")) points += part["at"].size();
      if (part.contains("batch")) points += part["batch"].size() * part["context"].size();
    }
    return "a table of " + std::to_string(points) + " points";
  }
  char text[32];
  const auto end = std::to_chars(text, text + sizeof(text), value.get<double>()).ptr;
  return std::string(text, end);
}

std::int64_t BatchingKnobs::model_len() const {
  if (max_model_len) return *max_model_len;
  // min(131072, K*B) without forming a product that could overflow.
  return kv_blocks > kDefaultModelLen / block_tokens ? kDefaultModelLen : kv_blocks * block_tokens;
}

void check_batching_knobs(const BatchingKnobs& k, std::uint32_t block_id_tokens,
                          const std::string& source) {
  const auto fail = [&](const std::string& keys, const std::string& what) {
    throw InputError(source, 0, keys, what);
  };
  // Each knob within its row's bounds: the rows are the one place they are
  // written, for a settings file, a flag and a struct built in code alike.
  for (const BatchingRow& row : batching_knob_rows()) {
    BatchingKnobs scratch = k;
    row.set(scratch, nlohmann::json(row.get(k)), source, key(row.key.c_str()));
  }
  if (k.moe_experts < 0 || k.moe_active_experts < 0 || k.moe_active_experts > k.moe_experts ||
      (k.moe_experts > 0 && k.moe_active_experts < 1)) {
    fail(key("moe_experts") + ", " + key("moe_active_experts"),
         "a token goes to between 1 and moe_experts experts (0 and 0 for a dense model), not " +
             std::to_string(k.moe_active_experts) + " of " + std::to_string(k.moe_experts));
  }
  if (k.step_expert_s > 0 && k.moe_experts == 0) {
    fail(key("step_expert_s") + ", " + key("moe_experts"),
         "step_expert_s needs moe_experts: a dense model reads no expert");
  }
  if (!k.step_table.empty() && k.step_roofline) {
    fail(key("step_table") + ", " + key("step_roofline"),
         "a step table adds to section 5's sum; the roofline has no place for it");
  }
  if (k.gpu_max_w < k.gpu_idle_w) {
    fail(key("gpu_max_w") + ", " + key("gpu_idle_w"), "gpu_max_w must not be below gpu_idle_w");
  }
  // L > K*B, as (L - 1) div B >= K: no product that could overflow.
  const std::int64_t len = k.model_len();
  if ((len - 1) / k.block_tokens >= k.kv_blocks) {
    fail(key("max_model_len") + ", " + key("kv_blocks") + ", " + key("block_tokens"),
         "max_model_len " + std::to_string(len) + " exceeds kv_blocks * block_tokens");
  }
  if (k.max_num_seqs > k.max_num_batched_tokens) {
    fail(key("max_num_seqs") + ", " + key("max_num_batched_tokens"),
         "max_num_seqs must not exceed max_num_batched_tokens");
  }
  if (block_id_tokens != 0 && block_id_tokens % k.block_tokens != 0) {
    fail(key("block_tokens"), "must divide the trace's block size of " +
                                  std::to_string(block_id_tokens) + " tokens (its block ids)");
  }
}

}  // namespace infersim
