#include "report/serving_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <future>
#include <limits>
#include <stdexcept>

#include "core/large_array.hpp"
#include "core/percentiles.hpp"

#include "core/number_format.hpp"

namespace infersim {
namespace {

__extension__ typedef __int128 Int128;

// A bound in milliseconds on the nanosecond clock, rounded once.
std::optional<std::int64_t> bound_ns(const std::optional<double>& ms) {
  if (!ms) return std::nullopt;
  return std::llround(*ms * 1e6);
}

bool has_key(const Summary& summary, const std::string& key) {
  const auto& figures = summary.figures();
  return std::any_of(figures.begin(), figures.end(), [&](const Figure& f) { return f.key == key; });
}

}  // namespace

std::string percentile_key(const std::string& metric, double percentile) {
  return metric + "_p" + shortest(percentile) + "_s";
}

ServingMetrics::ServingMetrics(ServingMetricsKnobs knobs, std::size_t expected_requests,
                               const RequestList* requests)
    : knobs_(std::move(knobs)), requests_(requests) {
  samples_.reserve(expected_requests);
  if (requests_ == nullptr) reserve_large(tpot_s_, expected_requests);
  for (const double p : knobs_.percentiles) {
    for (const auto m : {LatencySamples::kTtft, LatencySamples::kE2el, LatencySamples::kWait})
      samples_.want(m, p / 100);
  }
  samples_.want_cdf(LatencySamples::kWait, kCdfPoints);
  samples_.want_cdf(LatencySamples::kTtft, kCdfPoints);
  samples_.want_cdf(LatencySamples::kE2el, kCdfPoints);
}

void ServingMetrics::count_tokens(SimTime first_token, SimTime last_token, std::int64_t tokens) {
  if (tokens <= 0) return;
  constexpr std::int64_t kSecond = 1'000'000'000;
  const std::int64_t origin = first_arrival_->count_ns();
  const std::int64_t from = first_token.count_ns();
  const std::int64_t span = (last_token - first_token).count_ns();
  const std::int64_t gaps = tokens - 1;
  // Token k of 0..tokens-1 at from + floor(k * span / gaps); those before E:
  // k * span < (E - from) * gaps, so ceil((E - from) * gaps / span) of them.
  auto before = [&](std::int64_t e) -> std::int64_t {
    if (e <= from) return 0;
    if (gaps == 0 || span == 0) return tokens;
    // Divided in 64 bits when the product fits (nearly always: a decode's
    // seconds), else in 128.
    std::int64_t bound64 = 0;
    const Int128 k =
        !__builtin_mul_overflow(e - from, gaps, &bound64) && bound64 <= INT64_MAX - span
            ? Int128{(bound64 + span - 1) / span}
            : (static_cast<Int128>(e - from) * gaps + span - 1) / span;
    return k >= tokens ? tokens : static_cast<std::int64_t>(k);
  };
  const auto first_second = static_cast<std::uint64_t>((from - origin) / kSecond);
  const auto last_second = static_cast<std::uint64_t>((from + span - origin) / kSecond);
  if (last_second - tokens_from_ >= tokens_a_second_.size()) {
    tokens_a_second_.resize(last_second - tokens_from_ + 1, 0);
  }
  std::int64_t counted = 0;
  for (std::uint64_t k = first_second; k <= last_second; ++k) {
    const std::int64_t upto = before(origin + static_cast<std::int64_t>(k + 1) * kSecond);
    tokens_a_second_[k - tokens_from_] += static_cast<std::uint64_t>(upto - counted);
    counted = upto;
  }
}

void ServingMetrics::reserve_token_gaps(std::size_t gaps) {
  if (knobs_.server_token_instants) reserve_large(itl_ns_, gaps);
}

void ServingMetrics::on_token_gaps(std::span<const Duration> gaps) {
  if (!knobs_.server_token_instants) return;
  for (const Duration gap : gaps) {
    itl_sum_s_ += gap.seconds();
    const std::int64_t ns = gap.count_ns();
    if (static_cast<std::uint64_t>(ns) <= std::numeric_limits<std::uint32_t>::max()) {
      itl_ns_.push_back(static_cast<std::uint32_t>(ns));
    } else {
      itl_long_ns_.push_back(ns);  // a gap is never negative
    }
  }
}

void ServingMetrics::on_request(std::uint64_t id, const Request& task, const RequestOutcome& o) {
  if (requests_ != nullptr && id != n_) {
    throw std::logic_error("ServingMetrics: requests not in id order");
  }
  if (o.rejected) {
    if (requests_ != nullptr) {
      throw std::logic_error(
          "ServingMetrics: a rejected request where TPOT is worked out at the end");
    }
    return;
  }
  if (tpot_percentiles_) tpot_percentiles_.reset();  // selected before this request
  const Duration ttft = o.first_token - task.arrival;
  const Duration e2el = o.response - task.arrival;
  const Duration wait = o.wait();
  ++n_;
  samples_.add(e2el, ttft, wait);
  double decode_ns = static_cast<double>((o.response - o.first_token).count_ns());
  double decode_tokens = task.generated_tokens - 1;
  if (knobs_.server_token_instants) {
    // BATCHING.md section 7: whole tokens, whole nanoseconds.
    const std::int64_t o_tokens = std::llround(task.generated_tokens);
    decode_tokens = static_cast<double>(o_tokens - 1);
    decode_ns = static_cast<double>((o.finish - o.first_token_server).count_ns());
  }
  if (decode_tokens > 0) {
    double tpot_s = decode_ns / 1e9 / decode_tokens;
    if (knobs_.server_token_instants) {
      tpot_s = (o.finish - o.first_token_server)
                   .divided_by(static_cast<std::int64_t>(decode_tokens))
                   .seconds();
    }
    if (requests_ == nullptr) tpot_s_.push_back(tpot_s);
    ++tpot_count_;
    tpot_sum_s_ += tpot_s;
  }
  input_tokens_ += task.context_tokens;
  output_tokens_ += task.generated_tokens;
  if (!first_arrival_ || task.arrival < *first_arrival_) first_arrival_ = task.arrival;
  last_response_ = std::max(last_response_, o.response);
  // Requests whose response came by this arrival are no longer in flight
  // (at equal times a request ends before another begins); one whose response
  // is its arrival never is.
  if (task.arrival < last_arrival_) {
    throw std::logic_error("ServingMetrics: requests not in arrival order");
  }
  last_arrival_ = task.arrival;
  const std::greater<> later;
  while (!in_flight_.empty() && in_flight_.front() <= task.arrival.count_ns()) {
    std::pop_heap(in_flight_.begin(), in_flight_.end(), later);
    in_flight_.pop_back();
  }
  if (o.response > task.arrival) {
    in_flight_.push_back(o.response.count_ns());
    std::push_heap(in_flight_.begin(), in_flight_.end(), later);
    peak_in_flight_ = std::max<std::uint64_t>(peak_in_flight_, in_flight_.size());
  }
  // The seconds before this arrival's are final: no later token falls there.
  const auto arrival_second =
      static_cast<std::uint64_t>((task.arrival - *first_arrival_).count_ns() / 1'000'000'000);
  if (arrival_second > tokens_from_) {
    const std::uint64_t done =
        std::min<std::uint64_t>(arrival_second - tokens_from_, tokens_a_second_.size());
    for (std::uint64_t k = 0; k < done; ++k)
      peak_tokens_ = std::max(peak_tokens_, tokens_a_second_[k]);
    tokens_a_second_.erase(tokens_a_second_.begin(),
                           tokens_a_second_.begin() + static_cast<std::ptrdiff_t>(done));
    tokens_from_ = arrival_second;
  }
  count_tokens(o.first_token, o.response, std::llround(task.generated_tokens));

  if (knobs_.goodput) {
    const GoodputBounds& g = *knobs_.goodput;
    bool good = true;
    if (const auto b = bound_ns(g.ttft_ms)) good = good && ttft.count_ns() <= *b;
    if (const auto b = bound_ns(g.e2el_ms)) good = good && e2el.count_ns() <= *b;
    if (const auto b = bound_ns(g.tpot_ms); b && decode_tokens > 0) {
      good = good && decode_ns <= static_cast<double>(*b) * decode_tokens;
    }
    good_ += good;
  }
}

std::vector<std::optional<double>> ServingMetrics::tpot_percentiles() {
  if (tpot_percentiles_) return *tpot_percentiles_;
  std::vector<double> fractions;
  for (const double p : knobs_.percentiles)
    fractions.push_back(p / 100);
  std::vector<std::optional<double>> tpot;
  if (requests_ == nullptr) {
    tpot = percentiles(tpot_s_, fractions);
  } else {
    // Each request's TPOT again, exactly as on_request had it: the decode time
    // is E2E latency - TTFT (response - first token).
    const std::int64_t* e2el = samples_.values(LatencySamples::kE2el).data();
    const std::int64_t* ttft = samples_.values(LatencySamples::kTtft).data();
    const RequestList* tasks = requests_;
    tpot = percentiles_of_keys(
        tpot_count_, n_,
        [=](std::size_t i) {
          const double generated = tasks->generated_tokens(i);
          if (!(generated > 1)) return kNoValue;
          const auto decode_ns = static_cast<double>(e2el[i] - ttft[i]);
          return order_key(decode_ns / 1e9 / (generated - 1));
        },
        fractions);
  }
  tpot_percentiles_ = tpot;
  return tpot;
}

bool ServingMetrics::prepare(bool spare_core) {
  auto first = [this] {
    tpot_percentiles();
    samples_.select_wanted(LatencySamples::kE2el);
  };
  auto second = [this] {
    samples_.select_wanted(LatencySamples::kTtft);
    samples_.select_wanted(LatencySamples::kWait);
  };
  if (!spare_core || n_ < kPrepareOnTwoThreadsFrom) {
    first();
    second();
    return false;
  }
  std::future<void> other = std::async(std::launch::async, first);
  try {
    second();
  } catch (...) {
    other.wait();
    throw;
  }
  other.get();
  return true;
}

void ServingMetrics::append_to(Summary& summary) {
  auto add = [&](const std::string& key, std::optional<double> value, bool integer = false) {
    if (!has_key(summary, key)) summary.add(key, value, integer);
  };
  auto distribution = [&](const std::string& metric, LatencySamples::Metric m) {
    add(metric + "_mean_s", samples_.mean_s(m));
    for (const double p : knobs_.percentiles)
      add(percentile_key(metric, p), samples_.percentile(m, p / 100));
  };
  distribution("ttft", LatencySamples::kTtft);
  add("tpot_mean_s", tpot_count_ == 0
                         ? std::nullopt
                         : std::optional<double>(tpot_sum_s_ / static_cast<double>(tpot_count_)));
  const std::vector<std::optional<double>> tpot = tpot_percentiles();
  for (std::size_t i = 0; i < tpot.size(); ++i)
    add(percentile_key("tpot", knobs_.percentiles[i]), tpot[i]);
  distribution("e2el", LatencySamples::kE2el);
  distribution("wait", LatencySamples::kWait);
  if (knobs_.server_token_instants) {
    // The gaps' sum in seconds, added in the order they came (on_token_gaps).
    const std::size_t gaps = itl_ns_.size() + itl_long_ns_.size();
    add("itl_mean_s",
        gaps == 0 ? std::nullopt : std::optional<double>(itl_sum_s_ / static_cast<double>(gaps)));
    std::vector<double> fractions;
    for (const double p : knobs_.percentiles)
      fractions.push_back(p / 100);
    const std::uint32_t* short_ns = itl_ns_.data();
    const std::int64_t* long_ns = itl_long_ns_.data();
    const std::size_t shorts = itl_ns_.size();
    const std::vector<std::optional<double>> itl = percentiles_of_keys(
        gaps, gaps,
        [=](std::size_t i) {
          return order_key(i < shorts ? std::int64_t{short_ns[i]} : long_ns[i - shorts]);
        },
        fractions,
        [](std::uint64_t key) { return Duration::ns(int64_of_order_key(key)).seconds(); });
    for (std::size_t i = 0; i < itl.size(); ++i)
      add(percentile_key("itl", knobs_.percentiles[i]), itl[i]);
  }

  std::optional<double> duration_s;
  if (first_arrival_ && last_response_ > *first_arrival_) {
    duration_s = (last_response_ - *first_arrival_).seconds();
  }
  auto per_s = [&](double count) -> std::optional<double> {
    if (!duration_s) return std::nullopt;
    return count / *duration_s;
  };
  add("benchmark_duration_s", duration_s);
  add("total_input_tokens", input_tokens_);
  add("total_output_tokens", output_tokens_);
  add("request_throughput_rps", per_s(static_cast<double>(n_)));
  add("output_throughput_tps", per_s(output_tokens_));
  add("total_token_throughput_tps", per_s(input_tokens_ + output_tokens_));
  add("max_concurrent_requests", static_cast<double>(peak_in_flight_), true);
  if (knobs_.client) {
    // What a benchmark reports beside vLLM's block: its cap (when it has
    // one), the mean in flight by Little's law (the requests' E2E summed over
    // the duration), a user's token rate (1 / mean TPOT) and a GPU's.
    if (knobs_.max_concurrency > 0)
      add("max_concurrency", static_cast<double>(knobs_.max_concurrency), true);
    const std::optional<double> e2el = samples_.mean_s(LatencySamples::kE2el);
    add("mean_in_flight", e2el ? per_s(*e2el * static_cast<double>(n_)) : std::nullopt);
    add("output_throughput_per_user_tps",
        tpot_count_ == 0 || tpot_sum_s_ <= 0
            ? std::nullopt
            : std::optional<double>(static_cast<double>(tpot_count_) / tpot_sum_s_));
    if (knobs_.gpus > 0) {
      const std::optional<double> output = per_s(output_tokens_);
      add("output_throughput_per_gpu_tps",
          output ? std::optional<double>(*output / knobs_.gpus) : std::nullopt);
    }
  }
  if (knobs_.goodput) {
    add("good_requests", static_cast<double>(good_), true);
    add("good_request_fraction",
        n_ == 0 ? std::nullopt
                : std::optional<double>(static_cast<double>(good_) / static_cast<double>(n_)));
    add("goodput_rps", per_s(static_cast<double>(good_)));
  }
  // Tokens in one second: a count, so tokens per second.
  std::uint64_t peak_tokens = peak_tokens_;
  for (const std::uint64_t tokens : tokens_a_second_)
    peak_tokens = std::max(peak_tokens, tokens);
  add("peak_output_throughput_tps",
      n_ == 0 ? std::nullopt : std::optional<double>(static_cast<double>(peak_tokens)), true);
}

LatencyCdf ServingMetrics::cdf(std::size_t max_points) {
  LatencyCdf out;
  if (n_ == 0) return out;
  for (const double q : LatencySamples::cdf_fractions(n_, max_points)) {
    out.fraction.push_back(q);
    out.wait_s.push_back(*samples_.percentile(LatencySamples::kWait, q));
    out.ttft_s.push_back(*samples_.percentile(LatencySamples::kTtft, q));
    out.e2el_s.push_back(*samples_.percentile(LatencySamples::kE2el, q));
  }
  return out;
}

}  // namespace infersim
