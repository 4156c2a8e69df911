#include "calibration/batching_calibration.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include <Eigen/Dense>

#include "core/input_error.hpp"
#include "core/number_format.hpp"
#include "core/random.hpp"

namespace infersim {
namespace {

using Vector = Eigen::Matrix<double, kStepTerms, 1>;
using Matrix = Eigen::Matrix<double, kStepTerms, kStepTerms>;

// A replica's steps back to back (with lockstep, the rounds all replicas
// share): their ends, and for each the summed gradients of the steps from the
// start of its busy stretch (which begins at an arrival, a constant) to it.
// For a fixed schedule the end of step j moves by prefix[j] . dc.
struct Chain {
  std::vector<SimTime> ends;
  std::vector<StepCoefficients> prefix;

  void add(SimTime start, SimTime end, const StepCoefficients& f) {
    StepCoefficients sum{};
    if (!ends.empty() && ends.back() == start) sum = prefix.back();
    for (std::size_t i = 0; i < kStepTerms; ++i)
      sum[i] += f[i];
    ends.push_back(end);
    prefix.push_back(sum);
  }
  // The gradient of t, a step's start or end: its prefix at a step's end,
  // else 0 (a stretch begins at an arrival, a constant).
  StepCoefficients at_turn(SimTime t) const {
    const auto it = std::lower_bound(ends.begin(), ends.end(), t);
    if (it == ends.end() || *it != t) return StepCoefficients{};
    return prefix[static_cast<std::size_t>(it - ends.begin())];
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
  const StepCost cost = StepCost::of(knobs);
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
        const StepWork w = work_of(replay.steps[j]);
        if (cost.seconds(w) > most) {
          most = cost.seconds(w);
          f = cost.gradient(w);
        }
      }
      out[0].add(replay.steps[i].start, replay.steps[i].end, f);
      i = j;
    }
    return out;
  }
  std::vector<Chain> out(static_cast<std::size_t>(knobs.replicas));
  for (const StepRecord& s : replay.steps)
    out[s.replica].add(s.start, s.end, cost.gradient(work_of(s)));
  return out;
}

}  // namespace

StepTermMask fitted_terms(const BatchingKnobs& knobs) {
  StepTermMask terms{};
  for (const StepTerm t :
       {kStepBase, kStepPrefillToken, kStepPrefillPair, kStepDecodeToken, kStepDecodeContext})
    terms[t] = true;
  terms[kStepWeights] = knobs.step_roofline;
  terms[kStepExpert] = knobs.moe_experts > 0;
  return terms;
}

ReplayResiduals replay_residuals(const MeasuredReplay& replay, const BatchingKnobs& knobs) {
  const Replay result = replay_measured(replay, knobs);
  const std::vector<Chain> chains = chains_of(result, knobs);
  ReplayResiduals out;
  const bool figures = replay.figures_weight > 0;
  const std::vector<FigureError> errors =
      figures ? figure_errors(replay, result) : std::vector<FigureError>{};
  out.loss = replay_loss(replay, result, errors);
  const double ttft_weight =
      out.loss.ttft_requests > 0 ? 1 / std::sqrt(static_cast<double>(out.loss.ttft_requests)) : 0;
  const double tpot_weight =
      out.loss.tpot_requests > 0 ? 1 / std::sqrt(static_cast<double>(out.loss.tpot_requests)) : 0;
  // Each request's gradients, in seconds: its TTFT, TPOT and latency's (the
  // figures term's rows are made of them).
  std::array<std::vector<StepCoefficients>, 3> gradients;
  if (figures) {
    for (std::vector<StepCoefficients>& g : gradients)
      g.resize(replay.measured.size());
  }
  for (std::size_t k = 0; k < replay.measured.size(); ++k) {
    const MeasuredFigures& m = replay.measured[k];
    const RequestOutcome r = result.requests[k];
    if (r.rejected) continue;
    const Chain& chain = chains[knobs.lockstep ? 0 : r.unit];
    const StepCoefficients& first = chain.at(r.first_token_server);
    // The TTFT counts from the engine's turn that took the request (section
    // 10b): its arrival, a constant, or a step's start or end.
    const StepCoefficients origin =
        r.queued == r.server_arrival ? StepCoefficients{} : chain.at_turn(r.queued);
    const double scale = replay.ttft_scale_s;
    out.residuals.push_back(ttft_weight * ((r.first_token_server - r.queued).seconds() - m.ttft_s) /
                            scale);
    StepCoefficients row;
    for (std::size_t i = 0; i < kStepTerms; ++i)
      row[i] = ttft_weight * (first[i] - origin[i]) / scale;
    out.jacobian.push_back(row);
    if (m.tpot_s && m.output_tokens >= 2) {
      const StepCoefficients& last = chain.at(r.finish);
      const double tokens = m.output_tokens - 1;
      const double tpot = (r.finish - r.first_token_server).seconds() / tokens;
      out.residuals.push_back(tpot_weight * (tpot - *m.tpot_s) / *m.tpot_s);
      for (std::size_t i = 0; i < kStepTerms; ++i)
        row[i] = tpot_weight * (last[i] - first[i]) / tokens / *m.tpot_s;
      out.jacobian.push_back(row);
      if (figures) {
        for (std::size_t i = 0; i < kStepTerms; ++i)
          gradients[1][k][i] = (last[i] - first[i]) / tokens;
      }
    }
    if (figures) {
      const StepCoefficients& last = chain.at(r.finish);
      for (std::size_t i = 0; i < kStepTerms; ++i) {
        gradients[0][k][i] = first[i] - origin[i];
        gradients[2][k][i] = last[i] - origin[i];
      }
    }
  }
  if (figures) {
    const double weight =
        errors.empty() ? 0 : std::sqrt(replay.figures_weight / static_cast<double>(errors.size()));
    for (const FigureError& f : errors) {
      out.residuals.push_back(weight * f.relative());
      StepCoefficients row{};
      for (const auto& [id, w] : f.parts) {
        const StepCoefficients& g = gradients[static_cast<std::size_t>(f.metric)][id];
        for (std::size_t i = 0; i < kStepTerms; ++i)
          row[i] += weight * w * g[i] / f.measured_s;
      }
      out.jacobian.push_back(row);
    }
  }
  return out;
}

namespace {

// Runs fitted together: each run's coefficients are base + map θ, θ the
// parameters fitted (a single run's free coefficients, or the efficiency
// factors several runs share), each at least its lower bound.
struct Problem {
  Eigen::VectorXd lower;  // θ's bounds
  std::vector<const MeasuredReplay*> replays;
  std::vector<BatchingKnobs> knobs;  // the held coefficients, the schedule's knobs
  std::vector<StepCoefficients> bases;
  std::vector<Eigen::MatrixXd> maps;  // kStepTerms x parameters
  Eigen::Index parameters() const { return maps.empty() ? 0 : maps.front().cols(); }
  StepCoefficients coefficients(std::size_t run, const Eigen::VectorXd& theta) const {
    StepCoefficients c = bases[run];
    const Eigen::VectorXd scaled = maps[run] * theta;
    for (std::size_t i = 0; i < kStepTerms; ++i)
      c[i] += scaled(static_cast<Eigen::Index>(i));
    return c;
  }
};

struct Evaluation {
  Eigen::VectorXd theta;
  std::vector<double> residuals;
  Eigen::MatrixXd jacobian;          // a row a residual, a column a parameter
  std::vector<MeasuredLoss> losses;  // a run each
  double loss() const {
    double sum = 0;
    for (const MeasuredLoss& l : losses)
      sum += l.total;
    return sum;
  }
};

Evaluation evaluate(const Problem& problem, const Eigen::VectorXd& theta, int& replays) {
  Evaluation e;
  e.theta = theta;
  std::vector<ReplayResiduals> each(problem.replays.size());
  std::size_t rows = 0;
  for (std::size_t run = 0; run < problem.replays.size(); ++run) {
    BatchingKnobs knobs = problem.knobs[run];
    set_coefficients(knobs, problem.coefficients(run, theta));
    ++replays;
    each[run] = replay_residuals(*problem.replays[run], knobs);
    rows += each[run].residuals.size();
    e.losses.push_back(each[run].loss);
  }
  e.jacobian.resize(static_cast<Eigen::Index>(rows), problem.parameters());
  Eigen::Index row = 0;
  for (std::size_t run = 0; run < each.size(); ++run) {
    for (std::size_t k = 0; k < each[run].residuals.size(); ++k, ++row) {
      e.residuals.push_back(each[run].residuals[k]);
      const Eigen::Map<const Eigen::Matrix<double, 1, kStepTerms>> j(each[run].jacobian[k].data());
      e.jacobian.row(row) = j * problem.maps[run];
    }
  }
  return e;
}

// The damped Gauss-Newton step from `e`, the parameters kept at or above
// `lower`: minimises |J d + r|^2 + lambda |D d|^2 (D^2 the diagonal of J'J,
// Marquardt's scaling), fixing at its bound each parameter the step would
// push below it and solving again for the others.
Eigen::VectorXd lm_step(const Evaluation& e, double lambda, const Eigen::VectorXd& lower) {
  const Eigen::Index n = e.theta.size();
  const Eigen::Map<const Eigen::VectorXd> r(e.residuals.data(),
                                            static_cast<Eigen::Index>(e.residuals.size()));
  const Eigen::MatrixXd a = e.jacobian.transpose() * e.jacobian;
  const Eigen::VectorXd g = e.jacobian.transpose() * r;
  Eigen::VectorXd d = a.diagonal();
  const double largest = n > 0 ? d.maxCoeff() : 0;
  for (Eigen::Index i = 0; i < n; ++i)
    d(i) = std::max(d(i), 1e-12 * largest + 1e-300);
  Eigen::MatrixXd m = a;
  m.diagonal() += lambda * d;
  std::vector<bool> at_bound(static_cast<std::size_t>(n), false);
  Eigen::VectorXd step = Eigen::VectorXd::Zero(n);
  for (Eigen::Index round = 0; round <= n; ++round) {
    // Solve for the free parameters with the fixed ones' steps (to their
    // bounds) given.
    std::vector<Eigen::Index> free;
    Eigen::VectorXd given = Eigen::VectorXd::Zero(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      if (at_bound[static_cast<std::size_t>(i)]) {
        given(i) = lower(i) - e.theta(i);
      } else {
        free.push_back(i);
      }
    }
    step = given;
    if (!free.empty()) {
      const auto f = static_cast<Eigen::Index>(free.size());
      Eigen::MatrixXd mf(f, f);
      Eigen::VectorXd rhs(f);
      const Eigen::VectorXd coupled = m * given;
      for (Eigen::Index x = 0; x < f; ++x) {
        rhs(x) = -g(free[static_cast<std::size_t>(x)]) - coupled(free[static_cast<std::size_t>(x)]);
        for (Eigen::Index y = 0; y < f; ++y)
          mf(x, y) = m(free[static_cast<std::size_t>(x)], free[static_cast<std::size_t>(y)]);
      }
      const Eigen::VectorXd solved = mf.ldlt().solve(rhs);
      for (Eigen::Index x = 0; x < f; ++x)
        step(free[static_cast<std::size_t>(x)]) = solved(x);
    }
    bool changed = false;
    for (const Eigen::Index i : free) {
      if (e.theta(i) + step(i) < lower(i)) {
        at_bound[static_cast<std::size_t>(i)] = true;
        changed = true;
      }
    }
    if (!changed) break;
  }
  return (e.theta + step).cwiseMax(lower);
}

struct StartOutcome {
  Eigen::VectorXd from;
  int iterations = 0;
  Evaluation at;  // the evaluation it ended at
  int replays = 0;
};

StartOutcome levenberg_marquardt(const Problem& problem, const Eigen::VectorXd& from,
                                 int max_iterations) {
  StartOutcome run;
  run.from = from;
  Evaluation e = evaluate(problem, from, run.replays);
  double lambda = 1e-3;
  int quiet = 0;  // accepted steps in a row that barely helped
  for (int it = 0; it < max_iterations && !e.residuals.empty(); ++it) {
    ++run.iterations;
    const Eigen::VectorXd next = lm_step(e, lambda, problem.lower);
    if (next == e.theta) break;
    Evaluation trial = evaluate(problem, next, run.replays);
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
  run.at = std::move(e);
  return run;
}

// Every start from its own thread (as many as given); the best, polished.
struct BestOf {
  Evaluation best;
  std::vector<StartOutcome> runs;  // the starts', then the polish
  int replays = 0;
};

// job(i) for i in [0, count), on this thread and threads_wanted - 1 more,
// each i taken once; the results go where job puts them, by i.
template <class Job>
void for_each_index(std::size_t count, unsigned threads_wanted, const Job& job) {
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i = next++; i < count; i = next++)
      job(i);
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < std::max(1u, threads_wanted); ++t)
    threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads)
    t.join();
}

BestOf best_of(const Problem& problem, const std::vector<Eigen::VectorXd>& starts,
               int max_iterations, unsigned threads_wanted) {
  std::vector<StartOutcome> outcomes(starts.size());
  for_each_index(starts.size(), threads_wanted, [&](std::size_t i) {
    outcomes[i] = levenberg_marquardt(problem, starts[i], max_iterations);
  });
  BestOf out;
  std::size_t chosen = 0;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    out.replays += outcomes[i].replays;
    if (outcomes[i].at.loss() < outcomes[chosen].at.loss()) chosen = i;
  }
  StartOutcome polished = levenberg_marquardt(problem, outcomes[chosen].at.theta, max_iterations);
  out.replays += polished.replays;
  out.best = polished.at.loss() <= outcomes[chosen].at.loss() ? polished.at : outcomes[chosen].at;
  out.runs = std::move(outcomes);
  out.runs.push_back(std::move(polished));
  return out;
}

// With the figures term (MeasuredReplay::figures_weight) the loss jumps
// where the schedule changes: a percentile is one request's instant, and
// which request it is changes with the schedule. A fixed schedule's
// Jacobian does not see that, and Levenberg-Marquardt stops in one of
// several optima, so the optimum is searched around at random: rounds of
// points, each free coefficient scaled by 1 + spread u (u uniform in
// [-1, 1], pcg32 seeded alike in every fit), the best so far kept, the
// spread halved each round. The points of a round are drawn before any is
// replayed, so the threads do not change the result.
constexpr int kSearchRounds = 4;
constexpr int kSearchPoints = 48;  // a round
constexpr double kSearchSpread = 0.12;
constexpr std::uint64_t kSearchSeed = 0x5eed;

Evaluation random_search(const Problem& problem, Evaluation best, unsigned threads_wanted,
                         int& replays) {
  pcg32 rng(kSearchSeed);
  double spread = kSearchSpread;
  for (int round = 0; round < kSearchRounds; ++round, spread /= 2) {
    std::vector<Eigen::VectorXd> points;
    for (int i = 0; i < kSearchPoints; ++i) {
      Eigen::VectorXd theta = best.theta;
      for (Eigen::Index j = 0; j < theta.size(); ++j) {
        const double u = 2 * uniform01(rng) - 1;
        theta(j) = std::max(problem.lower(j), theta(j) * (1 + spread * u));
      }
      points.push_back(std::move(theta));
    }
    std::vector<Evaluation> evaluated(points.size());
    std::vector<int> counts(points.size(), 0);
    for_each_index(points.size(), threads_wanted,
                   [&](std::size_t i) { evaluated[i] = evaluate(problem, points[i], counts[i]); });
    for (std::size_t i = 0; i < evaluated.size(); ++i) {
      replays += counts[i];
      if (evaluated[i].loss() < best.loss()) best = std::move(evaluated[i]);
    }
  }
  return best;
}

// One run with its free coefficients as the parameters.
Problem single_run(const MeasuredReplay& replay, const BatchingKnobs& knobs,
                   const StepTermMask& terms) {
  Problem p;
  p.replays = {&replay};
  p.knobs = {knobs};
  StepCoefficients base = coefficients_of(knobs);
  std::vector<std::size_t> free;
  for (std::size_t i = 0; i < kStepTerms; ++i) {
    if (terms[i]) {
      free.push_back(i);
      base[i] = 0;
    }
  }
  Eigen::MatrixXd map = Eigen::MatrixXd::Zero(kStepTerms, static_cast<Eigen::Index>(free.size()));
  for (std::size_t x = 0; x < free.size(); ++x)
    map(static_cast<Eigen::Index>(free[x]), static_cast<Eigen::Index>(x)) = 1;
  p.bases = {base};
  p.maps = {map};
  p.lower = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(free.size()));
  return p;
}

Eigen::VectorXd free_part(const StepCoefficients& c, const StepTermMask& terms) {
  std::vector<double> v;
  for (std::size_t i = 0; i < kStepTerms; ++i) {
    if (terms[i]) v.push_back(c[i]);
  }
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

StepCoefficients whole(const Problem& p, const Eigen::VectorXd& theta) {
  return p.coefficients(0, theta);
}

// Starts from the measurement itself, beside the engine's own knobs: a decode
// step at the run's typical batch lasts about the median TPOT T, split in a
// few ways between the fixed part, the decode tokens and the context they
// read; a prefill token costs about what the quickly served requests' TTFT
// beyond one step says, per prompt token.
std::vector<StepCoefficients> measured_starts(const MeasuredReplay& replay,
                                              const BatchingKnobs& knobs,
                                              const StepTermMask& terms) {
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
  // Taken at a turn during a step (section 10b), a request's prefill runs in
  // the step after next with async scheduling: two steps before it, else one.
  const double turns = knobs.async_scheduling && knobs.replay_turns && replay.engine_turns ? 2 : 1;
  for (const MeasuredFigures& m : replay.measured) {
    if (m.ttft_s < 3 * step && m.input_tokens > 0) {
      prefill.push_back(std::max(0.0, m.ttft_s - turns * step) / m.input_tokens);
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
    // With the roofline the fixed part is the weights' read, on the memory
    // side; held coefficients keep the engine's values.
    StepCoefficients c = coefficients_of(knobs);
    const StepCoefficients start = {terms[kStepWeights] ? 0.0 : fixed * step,
                                    cp,
                                    0.0,
                                    tokens * step / batch,
                                    reads * step / (batch * ctx),
                                    fixed * step,
                                    0.0};
    for (std::size_t i = 0; i < kStepTerms; ++i) {
      if (terms[i]) c[i] = start[i];
    }
    out.push_back(c);
  }
  return out;
}

// From the Jacobian at the fit, the residuals taken as independent.
Eigen::VectorXd standard_errors(const Evaluation& e) {
  const Eigen::Index n = e.theta.size();
  Eigen::VectorXd out = Eigen::VectorXd::Zero(n);
  const auto m = static_cast<double>(e.residuals.size());
  if (m <= static_cast<double>(n)) return out;
  double ssr = 0;
  for (const double r : e.residuals)
    ssr += r * r;
  const Eigen::MatrixXd inverse =
      (e.jacobian.transpose() * e.jacobian).completeOrthogonalDecomposition().pseudoInverse();
  const double sigma2 = ssr / (m - static_cast<double>(n));
  for (Eigen::Index i = 0; i < n; ++i)
    out(i) = std::sqrt(std::max(0.0, sigma2 * inverse(i, i)));
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
  const StepTermMask terms = options.terms ? *options.terms : fitted_terms(knobs);
  fit.terms = terms;
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
    for (std::size_t i = 0; i < kStepTerms; ++i) {
      if (terms[i]) c[i] *= scale;
    }
    starts.push_back(c);
  }
  for (const StepCoefficients& c : measured_starts(replay, knobs, terms))
    starts.push_back(c);
  Problem problem = single_run(replay, knobs, terms);
  std::vector<Eigen::VectorXd> thetas;
  for (const StepCoefficients& c : starts)
    thetas.push_back(free_part(c, terms));
  BestOf found = best_of(problem, thetas, options.max_iterations, options.threads);
  const auto keep_runs = [&](const BestOf& b) {
    for (const StartOutcome& o : b.runs) {
      fit.starts.push_back(
          {whole(problem, o.from), whole(problem, o.at.theta), o.at.loss(), o.iterations});
    }
    fit.replays += b.replays;
  };
  keep_runs(found);
  Evaluation best = found.best;
  if (replay.figures_weight > 0) {
    best = random_search(problem, std::move(best), options.threads, fit.replays);
    fit.searched = kSearchRounds * kSearchPoints;
  }
  set_coefficients(knobs, whole(problem, best.theta));

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
      problem = single_run(replay, knobs, terms);
      StartOutcome refit = levenberg_marquardt(problem, best.theta, options.max_iterations);
      fit.starts.push_back({whole(problem, refit.from), whole(problem, refit.at.theta),
                            refit.at.loss(), refit.iterations});
      fit.replays += refit.replays;
      best = std::move(refit.at);
    }
  }
  // The final figures with the final knobs.
  problem = single_run(replay, knobs, terms);
  const Evaluation final_eval = evaluate(problem, best.theta, fit.replays);
  set_coefficients(knobs, whole(problem, best.theta));
  fit.knobs = knobs;
  fit.coefficients = whole(problem, best.theta);
  const Eigen::VectorXd errors = standard_errors(final_eval);
  for (std::size_t i = 0, x = 0; i < kStepTerms; ++i) {
    if (terms[i]) fit.standard_errors[i] = errors(static_cast<Eigen::Index>(x++));
  }
  fit.loss = final_eval.losses.front();
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return fit;
}

EfficiencyFit fit_efficiency(const std::vector<HardwareRun>& runs,
                             const BatchingFitOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  if (runs.empty()) throw std::invalid_argument("fit_efficiency: no run");
  Problem problem;
  for (const HardwareRun& run : runs) {
    problem.replays.push_back(run.replay);
    problem.knobs.push_back(run.knobs);
    problem.bases.push_back(run.map.base);
    Eigen::MatrixXd map(static_cast<Eigen::Index>(kStepTerms),
                        static_cast<Eigen::Index>(kEfficiencyParameters));
    for (std::size_t i = 0; i < kStepTerms; ++i) {
      for (std::size_t j = 0; j < kEfficiencyParameters; ++j)
        map(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = run.map.map[i][j];
    }
    problem.maps.push_back(map);
  }
  // No share of a roof above 1 (the datasheet's figure is the roof), no
  // overhead below 0.
  problem.lower = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(kEfficiencyParameters));
  problem.lower(0) = 0;
  // From the assumed factors, and each roof's share a third lower or higher,
  // with and without a few milliseconds of overhead.
  const EfficiencyVector assumed = to_vector(Efficiency{});
  const Eigen::VectorXd prior = Eigen::Map<const Eigen::VectorXd>(
      assumed.data(), static_cast<Eigen::Index>(kEfficiencyParameters));
  std::vector<Eigen::VectorXd> starts = {prior};
  for (const double scale : {0.75, 1.5}) {
    Eigen::VectorXd v = prior;
    v.tail(v.size() - 1) *= scale;
    starts.push_back(v.cwiseMax(problem.lower));
  }
  Eigen::VectorXd busy = prior;
  busy(0) = 0.004;
  starts.push_back(busy);
  BestOf found = best_of(problem, starts, options.max_iterations, options.threads);
  EfficiencyFit fit;
  if (std::any_of(runs.begin(), runs.end(),
                  [](const HardwareRun& r) { return r.replay->figures_weight > 0; })) {
    found.best = random_search(problem, std::move(found.best), options.threads, found.replays);
  }
  EfficiencyVector theta{}, errors{};
  const Eigen::VectorXd e = standard_errors(found.best);
  for (std::size_t j = 0; j < kEfficiencyParameters; ++j) {
    theta[j] = found.best.theta(static_cast<Eigen::Index>(j));
    errors[j] = e(static_cast<Eigen::Index>(j));
  }
  fit.factors = from_vector(theta);
  fit.standard_errors = errors;
  fit.losses = found.best.losses;
  fit.replays = found.replays;
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
  const bool roofline = fit.knobs.step_roofline;
  const bool experts = fit.knobs.moe_experts > 0;
  const std::string form =
      roofline ? std::string("c0 + max(cw + ckv A") + (experts ? " + ce X" : "") +
                     ", cp P + cq Q + cd D) (the roofline a step)"
               : std::string("c0 + cp P + cq Q + cd D + ckv A") + (experts ? " + ce X" : "") +
                     " (BATCHING.md section 5" + (experts ? ", with the experts read" : "") + ")";
  line("Fit: step = " + form + ", the replay in the loop, " + std::to_string(fit.starts.size()) +
       " Levenberg-Marquardt runs from " + std::to_string(fit.starts.size() - 1) + " starts, " +
       std::to_string(fit.replays) + " replays in " + printf_text("%.2f", fit.seconds) + " s.");
  const auto share = [&](double term) {
    return printf_text("%.1f", fit.loss.total > 0 ? 100 * term / fit.loss.total : 0);
  };
  const bool figures = fit.loss.figures_weight > 0;
  line("Loss: mean ((TTFT_sim - TTFT)/mean TTFT)^2 + mean ((TPOT_sim - TPOT)/TPOT)^2" +
       (figures ? " + " + printf_text("%g", fit.loss.figures_weight) +
                      " x mean ((figure_sim - figure)/figure)^2 over the table's TTFT, TPOT and "
                      "latency mean, median, p90 and p99"
                : std::string()) +
       " = " + printf_text("%.6g", fit.loss.total) + "; TTFT " +
       printf_text("%.6g", fit.loss.ttft_term) + " (" + share(fit.loss.ttft_term) + " %), TPOT " +
       printf_text("%.6g", fit.loss.tpot_term) + " (" + share(fit.loss.tpot_term) + " %)" +
       (figures ? ", figures " + printf_text("%.6g", fit.loss.figures_term) + " (" +
                      share(fit.loss.figures_term) + " %)"
                : std::string()) +
       ".");
  if (fit.searched > 0) {
    line("  then " + std::to_string(fit.searched) +
         " points at random around the best (the figures move where the schedule changes, "
         "which the Jacobian does not see)");
  }
  const char* meaning[kStepTerms] = {"s a step (fixed)",
                                     "s a prefill token",
                                     "s a (query, key) pair of prefill attention",
                                     "s a decode token",
                                     "s a context token a decode reads",
                                     "s the weights read once a step",
                                     "s an expert's weights read (X experts a step)"};
  const char* symbol[kStepTerms] = {"c0 ", "cp ", "cq ", "cd ", "ckv", "cw ", "ce "};
  for (std::size_t i = 0; i < kStepTerms; ++i) {
    if (!fit.terms[i]) continue;
    line(std::string("  ") + symbol[i] + " " + kStepTermKeys[i] +
         std::string(22 - std::string(kStepTermKeys[i]).size(), ' ') +
         printf_text("%.6g", fit.coefficients[i]) + " ± " +
         printf_text("%.2g", fit.standard_errors[i]) + " " + meaning[i]);
  }
  line(
      "  (± from the Jacobian with the residuals taken as independent; queued requests' are "
      "not, so read them as lower bounds)");
  std::string starts;
  for (std::size_t i = 0; i < fit.starts.size(); ++i)
    starts += (i ? ", " : "") + printf_text("%.4g", fit.starts[i].loss);
  line("  loss at the end of each run: " + starts);
  if (fit.kv_fitted) {
    line("KV blocks: " + std::to_string(fit.knobs.kv_blocks) + ": " + fit.kv_note + ".");
  } else {
    line("KV blocks: " + std::to_string(fit.knobs.kv_blocks) + " (known, not fitted).");
  }
  return out;
}

}  // namespace infersim
