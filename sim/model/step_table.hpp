// A step's cost read from tables (BATCHING.md section 5c): what the kernels a
// step runs take, composed beforehand for one GPU, model and deployment
// (calibration/kernel_step_cost) and carried in the settings as
// `batching.step_table`, so that a run reads a curve or two a step and no
// kernel table. Between the tables' points a step's cost is linear; below the
// first, the first's (a kernel takes no less for less work); past the last,
// in proportion.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace infersim {

// Seconds over one size: (at[i], s[i]), at increasing and positive.
struct StepCurve {
  std::vector<double> at;
  std::vector<double> s;

  bool empty() const { return at.empty(); }
  // 0 for a size of 0 or less; else section 5c's interpolation.
  double value(double size) const;
};

// Seconds over two sizes: s[i * context.size() + j] at (batch[i], context[j]).
struct StepGrid {
  std::vector<double> batch;
  std::vector<double> context;
  std::vector<double> s;

  bool empty() const { return batch.empty(); }
  // 0 for a batch of 0; else section 5c's interpolation in context along the
  // two rows bracketing `batch`, then in batch between them.
  double value(double batch_size, double context_tokens) const;
};

struct StepTable {
  StepCurve tokens;         // the step's P + D tokens through the dense layers and collectives
  StepCurve expert_tokens;  // the tokens the replica's experts see (section 5b's T); may be empty
  StepCurve prefill_pairs;  // Q, prefill attention
  StepGrid decode;          // D decodes at A / D tokens of context each, and their sampling

  // No table: no tokens curve (a table read always has one).
  bool empty() const { return tokens.empty(); }

  // The tables' part of a step: tokens(P + D) + expert_tokens(T) +
  // prefill_pairs(Q) + decode(D, A / D), added in that order.
  double seconds(double tokens_in_step, double expert_tokens_in_step, double pairs, double decodes,
                 double context) const;

  // Reads the settings' object, each curve and grid checked (sizes positive
  // and increasing, seconds finite and at least 0, the grid's rows the
  // context's length); throws InputError naming source and label.
  static StepTable from_json(const nlohmann::json& v, const std::string& source,
                             const std::string& label);
  nlohmann::ordered_json to_json() const;
};

}  // namespace infersim
