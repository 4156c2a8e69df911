#include "report/summary.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/large_array.hpp"
#include "core/order_statistics.hpp"

namespace infersim {
namespace {

__extension__ typedef __int128 Int128;

double ns_to_s(Int128 ns) {
  return static_cast<double>(ns) / 1e9;
}

}  // namespace

void Summary::add(std::string key, std::optional<double> value, bool integer) {
  figures_.push_back(Figure{std::move(key), value, integer});
}

std::optional<double> Summary::get(const std::string& key) const {
  for (const Figure& f : figures_) {
    if (f.key == key) return f.value;
  }
  throw std::out_of_range("no summary figure named '" + key + "'");
}

void LatencySamples::reserve(std::size_t requests) {
  for (std::vector<std::int64_t>& v : ns_)
    reserve_large(v, requests);
}

void LatencySamples::forget() {
  for (auto& k : known_)
    k.clear();
  selected_.store(false, std::memory_order_relaxed);
}

std::vector<double> LatencySamples::cdf_fractions(std::size_t n, std::size_t max_points) {
  std::vector<double> out;
  if (n == 0) return out;
  const std::size_t points = std::min<std::size_t>(n, std::max<std::size_t>(max_points, 2));
  for (std::size_t i = 0; i < points; ++i)
    out.push_back(points == 1 ? 1.0 : static_cast<double>(i) / static_cast<double>(points - 1));
  return out;
}

void LatencySamples::select(Metric m, std::vector<std::size_t> ranks) {
  const std::size_t n = size();
  if (n == 0) return;
  auto want_q = [&](double q) {
    const auto [index, below, above] = percentile_ranks(n, q);
    ranks.push_back(below);
    ranks.push_back(above);
  };
  for (const double q : wanted_q_[m])
    want_q(q);
  if (wanted_cdf_[m] > 0) {
    for (const double q : cdf_fractions(n, wanted_cdf_[m]))
      want_q(q);
  }
  std::vector<std::pair<std::size_t, std::int64_t>>& known = known_[m];
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::erase_if(ranks, [&](std::size_t r) {
    return std::binary_search(known.begin(), known.end(),
                              std::pair<std::size_t, std::int64_t>(r, 0),
                              [](const auto& a, const auto& b) { return a.first < b.first; });
  });
  const std::int64_t* values = ns_[m].data();
  const std::vector<std::uint64_t> keys = select_ranks(
      n, [values](std::size_t i) { return order_key(values[i]); }, std::span(ranks));
  for (std::size_t i = 0; i < ranks.size(); ++i)
    known.emplace_back(ranks[i], int64_of_order_key(keys[i]));
  std::sort(known.begin(), known.end());
  selected_.store(true, std::memory_order_relaxed);
}

std::optional<double> LatencySamples::percentile(Metric m, double q) {
  const std::size_t n = size();
  if (n == 0) return std::nullopt;
  const auto [index, below, above] = percentile_ranks(n, q);
  auto find = [&](std::size_t rank) -> const std::int64_t* {
    const auto& known = known_[m];
    const auto it = std::lower_bound(
        known.begin(), known.end(), rank,
        [](const std::pair<std::size_t, std::int64_t>& k, std::size_t r) { return k.first < r; });
    return it != known.end() && it->first == rank ? &it->second : nullptr;
  };
  if (find(below) == nullptr || find(above) == nullptr) select(m, {below, above});
  const double a = Duration::ns(*find(below)).seconds();
  if (above == below) return a;
  return interpolate(a, Duration::ns(*find(above)).seconds(), index);
}

SummaryCollector::SummaryCollector(std::size_t expected_requests, LatencySamples* shared)
    : samples_(shared != nullptr ? shared : &own_), fills_samples_(shared == nullptr) {
  if (fills_samples_) own_.reserve(expected_requests);
  for (const double q : {0.50, 0.90, 0.99}) {
    samples_->want(LatencySamples::kE2el, q);
    samples_->want(LatencySamples::kTtft, q);
  }
  for (const double q : {0.50, 0.99})
    samples_->want(LatencySamples::kWait, q);
}

void SummaryCollector::on_request(std::uint64_t, const Request& task, const RequestOutcome& o) {
  ++n_;
  request_bits_ += task.request_bits;
  if (o.rejected) return;  // a miss, with no latency and no result sent
  const Duration makespan = o.response - task.arrival;
  const Duration wait = o.wait();
  ++served_;
  budget_ns_ += task.budget.count_ns();
  if (makespan <= task.budget) {
    ++met_;
    makespan_ok_ns_ += makespan.count_ns();
  }
  result_bits_ += task.result_bits;
  last_response_ = std::max(last_response_, o.response);
  if (fills_samples_) own_.add(makespan, o.first_token - task.arrival, wait);
}

Summary SummaryCollector::summarize(const RunFacts& facts) {
  const SimTime end = std::max(facts.run_length, last_response_);
  const ServerUsage& usage = *facts.usage;
  const double n = static_cast<double>(n_);
  const double served = static_cast<double>(served_);
  auto average = [&](double total, double count) -> std::optional<double> {
    if (count == 0) return std::nullopt;
    return total / count;
  };
  const Int128 busy_ns = usage.busy.count_ns();
  const double compute_s = ns_to_s(busy_ns);
  const double waiting_s = samples_->total_s(LatencySamples::kWait);
  // A fleet's replicas come and go: its provisioned replica-time (BATCHING.md
  // section 11); otherwise every unit for the whole run.
  const double unit_time =
      usage.provisioned ? static_cast<double>(usage.provisioned->count_ns())
                        : static_cast<double>(usage.units) * static_cast<double>(end.count_ns());
  Summary s;
  s.add("requests", n, true);
  s.add("dropped", static_cast<double>(facts.dropped), true);
  s.add("deadline_met", static_cast<double>(met_), true);
  s.add("deadline_missed", static_cast<double>(n_ - met_), true);
  s.add("success_rate", average(static_cast<double>(met_), n));
  s.add("compute_s", compute_s);
  s.add("avg_exec_s", usage.busy_is_requests_exec ? average(compute_s, n) : std::nullopt);
  s.add("waiting_total_s", waiting_s);
  s.add("avg_wait_s", average(waiting_s, served));
  s.add("avg_makespan_ok_s", average(ns_to_s(makespan_ok_ns_), static_cast<double>(met_)));
  s.add("avg_budget_s", average(ns_to_s(budget_ns_), served));
  s.add("makespan_p50_s", samples_->percentile(LatencySamples::kE2el, 0.50));
  s.add("makespan_p90_s", samples_->percentile(LatencySamples::kE2el, 0.90));
  s.add("makespan_p99_s", samples_->percentile(LatencySamples::kE2el, 0.99));
  s.add("ttft_p50_s", samples_->percentile(LatencySamples::kTtft, 0.50));
  s.add("ttft_p90_s", samples_->percentile(LatencySamples::kTtft, 0.90));
  s.add("ttft_p99_s", samples_->percentile(LatencySamples::kTtft, 0.99));
  s.add("wait_p50_s", samples_->percentile(LatencySamples::kWait, 0.50));
  s.add("wait_p99_s", samples_->percentile(LatencySamples::kWait, 0.99));
  s.add("utilization", unit_time > 0
                           ? std::optional<double>(static_cast<double>(busy_ns) / unit_time)
                           : std::nullopt);
  s.add("traffic_mb", (request_bits_ + result_bits_) / 8 / 1e6);
  s.add("energy_wh", usage.energy_wh + facts.radio->radio_wh(request_bits_, result_bits_));
  s.add("run_length_s", facts.run_length.seconds());
  s.add("end_s", end.seconds());
  for (const ServerFigure& f : usage.figures)
    s.add(f.key, f.value, f.integer);
  return s;
}

}  // namespace infersim
