#include "scenario/batching_calibration.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include <Eigen/Dense>

#include "core/input_error.hpp"

namespace infersim {
namespace {

using Vector5 = Eigen::Matrix<double, kStepCoefficients, 1>;
using Matrix5 = Eigen::Matrix<double, kStepCoefficients, kStepCoefficients>;

StepCoefficients features(const StepRecord& s) {
  return {1.0, static_cast<double>(s.prefill_tokens), static_cast<double>(s.prefill_pairs),
          static_cast<double>(s.decode_requests), static_cast<double>(s.decode_context)};
}

double dot(const StepCoefficients& a, const StepCoefficients& b) {
  double sum = 0;
  for (std::size_t i = 0; i < kStepCoefficients; ++i)
    sum += a[i] * b[i];
  return sum;
}

// A replica's steps back to back (with lockstep, the rounds all replicas
// share): their ends, and for each the summed features of the steps from the
// start of its busy stretch (which begins at an arrival, a constant) to it.
// The end of step j is then that start plus prefix[j] . c.
struct Chain {
  std::vector<SimTime> ends;
  std::vector<StepCoefficients> prefix;

  void add(SimTime start, SimTime end, const StepCoefficients& f) {
    StepCoefficients sum{};
    if (!ends.empty() && ends.back() == start) sum = prefix.back();
    for (std::size_t i = 0; i < kStepCoefficients; ++i)
      sum[i] += f[i];
    ends.push_back(end);
    prefix.push_back(sum);
  }
  const StepCoefficients& at(SimTime end) const {
    const auto it = std::lower_bound(ends.begin(), ends.end(), end);
    if (it == ends.end() || *it != end) {
      throw std::logic_error("batching fit: a token instant is no step's end");
    }
    return prefix[static_cast<std::size_t>(it - ends.begin())];
  }
};

std::vector<Chain> chains_of(const Replay& replay, const BatchingKnobs& knobs) {
  const StepCoefficients c = coefficients_of(knobs);
  if (knobs.lockstep) {
    // One chain of rounds: the steps of a round share a start and an end, and
    // its length is the costliest replica's step.
    std::vector<Chain> out(1);
    std::size_t i = 0;
    while (i < replay.steps.size()) {
      std::size_t j = i;
      StepCoefficients f{};
      double most = -1;
      for (; j < replay.steps.size() && replay.steps[j].start == replay.steps[i].start; ++j) {
        const StepCoefficients g = features(replay.steps[j]);
        if (dot(g, c) > most) {
          most = dot(g, c);
          f = g;
        }
      }
      out[0].add(replay.steps[i].start, replay.steps[i].end, f);
      i = j;
    }
    return out;
  }
  std::vector<Chain> out(static_cast<std::size_t>(knobs.replicas));
  for (const StepRecord& s : replay.steps)
    out[s.replica].add(s.start, s.end, features(s));
  return out;
}

}  // namespace

StepCoefficients coefficients_of(const BatchingKnobs& k) {
  return {k.step_base_s, k.step_prefill_token_s, k.step_prefill_pair_s, k.step_decode_token_s,
          k.step_decode_context_s};
}

void set_coefficients(BatchingKnobs& k, const StepCoefficients& c) {
  k.step_base_s = c[0];
  k.step_prefill_token_s = c[1];
  k.step_prefill_pair_s = c[2];
  k.step_decode_token_s = c[3];
  k.step_decode_context_s = c[4];
}

ReplayResiduals replay_residuals(const MeasuredReplay& replay, const BatchingKnobs& knobs) {
  const Replay result = replay_measured(replay, knobs);
  const std::vector<Chain> chains = chains_of(result, knobs);
  ReplayResiduals out;
  out.loss = replay_loss(replay, result);
  const double ttft_weight =
      out.loss.ttft_requests > 0 ? 1 / std::sqrt(static_cast<double>(out.loss.ttft_requests)) : 0;
  const double tpot_weight =
      out.loss.tpot_requests > 0 ? 1 / std::sqrt(static_cast<double>(out.loss.tpot_requests)) : 0;
  for (std::size_t k = 0; k < replay.measured.size(); ++k) {
    const MeasuredFigures& m = replay.measured[k];
    const RequestOutcome r = result.requests[k];
    if (r.rejected) continue;
    const Chain& chain = chains[knobs.lockstep ? 0 : r.unit];
    const StepCoefficients& first = chain.at(r.first_token_server);
    const double arrival = SimTime::ns(replay.trace.records[k].offset_ns).seconds();
    const double scale = replay.ttft_scale_s;
    out.residuals.push_back(ttft_weight * (r.first_token_server.seconds() - arrival - m.ttft_s) /
                            scale);
    StepCoefficients row;
    for (std::size_t i = 0; i < kStepCoefficients; ++i)
      row[i] = ttft_weight * first[i] / scale;
    out.jacobian.push_back(row);
    if (m.tpot_s && m.output_tokens >= 2) {
      const StepCoefficients& last = chain.at(r.finish);
      const double tokens = m.output_tokens - 1;
      const double tpot = (r.finish - r.first_token_server).seconds() / tokens;
      out.residuals.push_back(tpot_weight * (tpot - *m.tpot_s) / *m.tpot_s);
      for (std::size_t i = 0; i < kStepCoefficients; ++i)
        row[i] = tpot_weight * (last[i] - first[i]) / tokens / *m.tpot_s;
      out.jacobian.push_back(row);
    }
  }
  return out;
}

namespace {

struct Evaluation {
  StepCoefficients c{};
  ReplayResiduals r;
  double loss() const { return r.loss.total; }
};

Evaluation evaluate(const MeasuredReplay& replay, BatchingKnobs knobs, const StepCoefficients& c,
                    int& replays) {
  set_coefficients(knobs, c);
  ++replays;
  return {c, replay_residuals(replay, knobs)};
}

// The damped Gauss-Newton step from `e`, with the coefficients kept >= 0:
// minimises |J d + r|^2 + lambda |D d|^2 (D^2 the diagonal of J'J,
// Marquardt's scaling), fixing at 0 each coefficient the step would push
// below it and solving again for the others.
StepCoefficients lm_step(const Evaluation& e, double lambda) {
  Matrix5 a = Matrix5::Zero();
  Vector5 g = Vector5::Zero();
  for (std::size_t row = 0; row < e.r.residuals.size(); ++row) {
    const Eigen::Map<const Vector5> j(e.r.jacobian[row].data());
    a.noalias() += j * j.transpose();
    g.noalias() += j * e.r.residuals[row];
  }
  Vector5 d = a.diagonal();
  const double largest = d.maxCoeff();
  for (Eigen::Index i = 0; i < d.size(); ++i)
    d(i) = std::max(d(i), 1e-12 * largest + 1e-300);
  Matrix5 m = a;
  m.diagonal() += lambda * d;
  std::array<bool, kStepCoefficients> fixed{};
  Vector5 step = Vector5::Zero();
  for (int round = 0; round <= static_cast<int>(kStepCoefficients); ++round) {
    // Solve for the free coefficients with the fixed ones' steps (-c) given.
    std::vector<Eigen::Index> free;
    for (Eigen::Index i = 0; i < 5; ++i) {
      if (!fixed[static_cast<std::size_t>(i)]) free.push_back(i);
    }
    Vector5 fixed_step = Vector5::Zero();
    for (Eigen::Index i = 0; i < 5; ++i) {
      if (fixed[static_cast<std::size_t>(i)]) fixed_step(i) = -e.c[static_cast<std::size_t>(i)];
    }
    step = fixed_step;
    if (!free.empty()) {
      const auto n = static_cast<Eigen::Index>(free.size());
      Eigen::MatrixXd mf(n, n);
      Eigen::VectorXd rhs(n);
      const Vector5 coupled = m * fixed_step;
      for (Eigen::Index x = 0; x < n; ++x) {
        rhs(x) = -g(free[static_cast<std::size_t>(x)]) - coupled(free[static_cast<std::size_t>(x)]);
        for (Eigen::Index y = 0; y < n; ++y)
          mf(x, y) = m(free[static_cast<std::size_t>(x)], free[static_cast<std::size_t>(y)]);
      }
      const Eigen::VectorXd solved = mf.ldlt().solve(rhs);
      for (Eigen::Index x = 0; x < n; ++x)
        step(free[static_cast<std::size_t>(x)]) = solved(x);
    }
    bool changed = false;
    for (Eigen::Index i = 0; i < 5; ++i) {
      const auto u = static_cast<std::size_t>(i);
      if (!fixed[u] && e.c[u] + step(i) < 0) {
        fixed[u] = true;
        changed = true;
      }
    }
    if (!changed) break;
  }
  StepCoefficients next;
  for (std::size_t i = 0; i < kStepCoefficients; ++i)
    next[i] = std::max(0.0, e.c[i] + step(static_cast<Eigen::Index>(i)));
  return next;
}

struct StartOutcome {
  FitStartResult result;
  Evaluation at;  // the evaluation it ended at
  int replays = 0;
};

StartOutcome levenberg_marquardt(const MeasuredReplay& replay, const BatchingKnobs& knobs,
                                 const StepCoefficients& from, int max_iterations) {
  StartOutcome run;
  FitStartResult& out = run.result;
  int& replays = run.replays;
  out.from = from;
  Evaluation e = evaluate(replay, knobs, from, replays);
  double lambda = 1e-3;
  int quiet = 0;  // accepted steps in a row that barely helped
  for (int it = 0; it < max_iterations && e.r.residuals.size() > 0; ++it) {
    ++out.iterations;
    const StepCoefficients next = lm_step(e, lambda);
    if (next == e.c) break;
    Evaluation trial = evaluate(replay, knobs, next, replays);
    if (trial.loss() < e.loss()) {
      const double gain = (e.loss() - trial.loss()) / std::max(e.loss(), 1e-300);
      e = std::move(trial);
      lambda = std::max(lambda / 3, 1e-9);
      quiet = gain < 1e-4 ? quiet + 1 : 0;
      if (quiet >= 3) break;
    } else {
      lambda *= 4;
      if (lambda > 1e6) break;
    }
  }
  out.to = e.c;
  out.loss = e.loss();
  run.at = std::move(e);
  return run;
}

// Starts from the measurement itself, beside the engine's own knobs: a decode
// step at the run's typical batch lasts about the median TPOT T, split in a
// few ways between the fixed part, the decode tokens and the context they
// read; a prefill token costs about what the quickly served requests' TTFT
// beyond one step says, per prompt token.
std::vector<StepCoefficients> measured_starts(const MeasuredReplay& replay,
                                              const BatchingKnobs& knobs) {
  std::vector<double> tpots, prefill;
  double decoding = 0, first = 1e300, last = -1e300, context = 0;
  for (std::size_t k = 0; k < replay.measured.size(); ++k) {
    const MeasuredFigures& m = replay.measured[k];
    const double arrival = SimTime::ns(replay.trace.records[k].offset_ns).seconds();
    if (m.tpot_s) tpots.push_back(*m.tpot_s);
    decoding += m.latency_s - m.ttft_s;
    first = std::min(first, arrival + m.ttft_s);
    last = std::max(last, arrival + m.latency_s);
    context += m.input_tokens + m.output_tokens / 2.0;
  }
  std::sort(tpots.begin(), tpots.end());
  const double step = tpots.empty() ? replay.ttft_scale_s : tpots[tpots.size() / 2];
  for (const MeasuredFigures& m : replay.measured) {
    if (m.ttft_s < 3 * step && m.input_tokens > 0) {
      prefill.push_back(std::max(0.0, m.ttft_s - step) / m.input_tokens);
    }
  }
  std::sort(prefill.begin(), prefill.end());
  const double cp = prefill.empty() ? step / static_cast<double>(knobs.max_num_batched_tokens)
                                    : std::max(prefill[prefill.size() / 2],
                                               step / (10.0 * knobs.max_num_batched_tokens));
  const double span = std::max(last - first, 1e-3);
  const double batch = std::clamp(decoding / (span * static_cast<double>(knobs.replicas)), 1.0,
                                  static_cast<double>(knobs.max_num_seqs));
  const double ctx = std::max(1.0, context / static_cast<double>(replay.measured.size()));
  std::vector<StepCoefficients> out;
  for (const auto& [fixed, tokens, reads] :
       {std::array<double, 3>{0.5, 0.25, 0.25}, std::array<double, 3>{0.8, 0.1, 0.1},
        std::array<double, 3>{0.25, 0.5, 0.25}, std::array<double, 3>{0.25, 0.25, 0.5}}) {
    out.push_back({fixed * step, cp, 0.0, tokens * step / batch, reads * step / (batch * ctx)});
  }
  return out;
}

StepCoefficients standard_errors(const Evaluation& e) {
  Matrix5 a = Matrix5::Zero();
  double ssr = 0;
  for (std::size_t row = 0; row < e.r.residuals.size(); ++row) {
    const Eigen::Map<const Vector5> j(e.r.jacobian[row].data());
    a.noalias() += j * j.transpose();
    ssr += e.r.residuals[row] * e.r.residuals[row];
  }
  StepCoefficients out{};
  const auto m = static_cast<double>(e.r.residuals.size());
  if (m <= static_cast<double>(kStepCoefficients)) return out;
  const Matrix5 inverse = a.completeOrthogonalDecomposition().pseudoInverse();
  const double sigma2 = ssr / (m - static_cast<double>(kStepCoefficients));
  for (std::size_t i = 0; i < kStepCoefficients; ++i) {
    out[i] = std::sqrt(std::max(
        0.0, sigma2 * inverse(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(i))));
  }
  return out;
}

std::int64_t peak_blocks(const Replay& result) {
  std::int64_t peak = 0;
  for (const StepRecord& s : result.steps)
    peak = std::max<std::int64_t>(peak, s.kv_blocks_used);
  return peak;
}

}  // namespace

BatchingFit fit_batching(const MeasuredReplay& replay, const EngineSetup& engine,
                         const BatchingFitOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  if (replay.measured.empty()) {
    throw InputError(replay.source, 0, "", "no served request to fit the step costs to");
  }
  BatchingFit fit;
  BatchingKnobs knobs = engine.knobs;
  // Unknown blocks: first with room for every request at once, so the costs
  // are fitted where KV never binds; the blocks are looked at next.
  std::int64_t every_request = 1;
  std::int64_t largest_request = 1;
  for (const MeasuredFigures& m : replay.measured) {
    const std::int64_t blocks =
        (std::int64_t{m.input_tokens} + m.output_tokens + knobs.block_tokens - 1) /
        knobs.block_tokens;
    every_request += blocks;
    largest_request = std::max(largest_request, blocks);
  }
  if (!engine.kv_blocks_known) {
    knobs.kv_blocks = std::min<std::int64_t>(every_request, kMaxKvBlocks);
    if (!knobs.max_model_len) knobs.max_model_len = knobs.model_len();
  }

  std::vector<StepCoefficients> starts = {coefficients_of(knobs)};
  for (const double scale : options.start_scales) {
    StepCoefficients c = coefficients_of(knobs);
    for (double& x : c)
      x *= scale;
    starts.push_back(c);
  }
  for (const StepCoefficients& c : measured_starts(replay, knobs))
    starts.push_back(c);
  // The starts are independent: on as many threads as given.
  std::vector<StartOutcome> outcomes(starts.size());
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i = next++; i < starts.size(); i = next++)
      outcomes[i] = levenberg_marquardt(replay, knobs, starts[i], options.max_iterations);
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < std::max(1u, options.threads); ++t)
    threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads)
    t.join();
  std::size_t chosen = 0;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    fit.starts.push_back(outcomes[i].result);
    fit.replays += outcomes[i].replays;
    if (outcomes[i].at.loss() < outcomes[chosen].at.loss()) chosen = i;
  }
  // Polish from the best.
  StartOutcome polished =
      levenberg_marquardt(replay, knobs, outcomes[chosen].at.c, options.max_iterations);
  fit.starts.push_back(polished.result);
  fit.replays += polished.replays;
  Evaluation best = polished.at.loss() <= outcomes[chosen].at.loss()
                        ? std::move(polished.at)
                        : std::move(outcomes[chosen].at);
  set_coefficients(knobs, best.c);

  if (!engine.kv_blocks_known) {
    ++fit.replays;
    const Replay unbounded = replay_measured(replay, knobs);
    fit.kv_peak_blocks = peak_blocks(unbounded);
    // Fewer blocks than the peak change the schedule; scan down from the
    // peak to the largest request for a better fit.
    std::int64_t chosen = fit.kv_peak_blocks;
    double chosen_loss = best.loss();
    const auto try_blocks = [&](std::int64_t k) {
      if (k >= fit.kv_peak_blocks || k < largest_request) return;
      BatchingKnobs trial = knobs;
      trial.kv_blocks = k;
      if (engine.knobs.max_model_len) {
        if ((*trial.max_model_len - 1) / trial.block_tokens >= k) return;  // vLLM would refuse
      } else {
        trial.max_model_len.reset();
      }
      ++fit.replays;
      const double loss = replay_loss(replay, replay_measured(replay, trial)).total;
      if (loss < chosen_loss * (1 - 1e-3)) {
        chosen = k;
        chosen_loss = loss;
      }
    };
    // Geometric steps from the peak down to the largest request, then finer
    // ones around the best.
    const double ratio = static_cast<double>(largest_request) /
                         static_cast<double>(std::max<std::int64_t>(fit.kv_peak_blocks, 1));
    constexpr int kScan = 12;
    for (int i = 1; i <= kScan; ++i) {
      try_blocks(std::llround(static_cast<double>(fit.kv_peak_blocks) *
                              std::pow(ratio, static_cast<double>(i) / kScan)));
    }
    if (chosen != fit.kv_peak_blocks) {
      const double around = std::pow(ratio, 1.0 / kScan);  // one coarse step, < 1
      const auto centre = static_cast<double>(chosen);
      for (int i = -4; i <= 4; ++i) {
        if (i != 0) try_blocks(std::llround(centre * std::pow(around, i / 4.0)));
      }
    }
    knobs.kv_blocks = chosen;
    if (!engine.knobs.max_model_len) knobs.max_model_len.reset();
    fit.kv_fitted = true;
    if (chosen == fit.kv_peak_blocks) {
      fit.kv_note = "the run never needed more than " + std::to_string(fit.kv_peak_blocks) +
                    " blocks at once (replayed with no limit), and no smaller count fits it "
                    "better: any count from there up replays it the same, so it cannot tell "
                    "the blocks; kept at that lower bound (give --kv-blocks, or a preset, to "
                    "set it from memory)";
    } else {
      fit.kv_note = std::to_string(chosen) + " blocks fit better than the " +
                    std::to_string(fit.kv_peak_blocks) +
                    " an unlimited replay used: KV capacity shaped this run";
      // At the new count: the earlier losses do not compare.
      StartOutcome refit = levenberg_marquardt(replay, knobs, best.c, options.max_iterations);
      fit.starts.push_back(refit.result);
      fit.replays += refit.replays;
      best = std::move(refit.at);
    }
  }
  // The final figures with the final knobs.
  set_coefficients(knobs, best.c);
  const Evaluation final_eval = evaluate(replay, knobs, best.c, fit.replays);

  fit.knobs = knobs;
  fit.coefficients = best.c;
  fit.standard_errors = standard_errors(final_eval);
  fit.loss = final_eval.r.loss;
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return fit;
}

Settings batching_fit_settings(const Settings& base, const BatchingFit& fit) {
  Settings s = base;
  s.server_kind = "batching";
  s.batching = fit.knobs;
  s.hops.clear();
  s.mode = "recorded";
  s.slice_duration_s = 1;
  return s;
}

namespace {

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), pattern, value);
  return text;
}

}  // namespace

std::string batching_fit_report(const MeasuredSource& source, const BatchingFit& fit) {
  std::string out;
  const auto line = [&](const std::string& text) { out += text + '\n'; };
  const MeasuredReplay& r = source.replay;
  line("Measured: " + r.source + " (" + (source.run_folder ? "a measured run" : "a measurement") +
       "), " + std::to_string(r.measured.size()) + " requests replayed at the engine's arrivals" +
       (r.left_out > 0 ? ", " + std::to_string(r.left_out) + " never served and left out" : "") +
       "; " + source.engine.description + ".");
  for (const std::string& f : source.engine.facts)
    line("  engine     " + f);
  for (const std::string& a : source.engine.assumptions)
    line("  assumed    " + a);
  line(
      "Fit: step = c0 + cp P + cq Q + cd D + ckv A (BATCHING.md section 5), the replay in the "
      "loop, " +
      std::to_string(fit.starts.size()) + " Levenberg-Marquardt runs from " +
      std::to_string(fit.starts.size() - 1) + " starts, " + std::to_string(fit.replays) +
      " replays in " + format("%.2f", fit.seconds) + " s.");
  line("Loss: mean ((TTFT_sim - TTFT)/mean TTFT)^2 + mean ((TPOT_sim - TPOT)/TPOT)^2 = " +
       format("%.6g", fit.loss.total) + "; TTFT " + format("%.6g", fit.loss.ttft_term) + " (" +
       format("%.1f", fit.loss.total > 0 ? 100 * fit.loss.ttft_term / fit.loss.total : 0) +
       " %), TPOT " + format("%.6g", fit.loss.tpot_term) + " (" +
       format("%.1f", fit.loss.total > 0 ? 100 * fit.loss.tpot_term / fit.loss.total : 0) + " %).");
  const char* meaning[kStepCoefficients] = {"s a step (fixed)", "s a prefill token",
                                            "s a (query, key) pair of prefill attention",
                                            "s a decode token", "s a context token a decode reads"};
  const char* symbol[kStepCoefficients] = {"c0 ", "cp ", "cq ", "cd ", "ckv"};
  for (std::size_t i = 0; i < kStepCoefficients; ++i) {
    line(std::string("  ") + symbol[i] + " " + kStepCoefficientKeys[i] +
         std::string(22 - std::string(kStepCoefficientKeys[i]).size(), ' ') +
         format("%.6g", fit.coefficients[i]) + " ± " + format("%.2g", fit.standard_errors[i]) +
         " " + meaning[i]);
  }
  line(
      "  (± from the Jacobian with the residuals taken as independent; queued requests' are "
      "not, so read them as lower bounds)");
  std::string starts;
  for (std::size_t i = 0; i < fit.starts.size(); ++i)
    starts += (i ? ", " : "") + format("%.4g", fit.starts[i].loss);
  line("  loss at the end of each run: " + starts);
  if (fit.kv_fitted) {
    line("KV blocks: " + std::to_string(fit.knobs.kv_blocks) + ": " + fit.kv_note + ".");
  } else {
    line("KV blocks: " + std::to_string(fit.knobs.kv_blocks) + " (known, not fitted).");
  }
  return out;
}

}  // namespace infersim
