#include "scenario/scenario.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <future>
#include <mutex>
#include <thread>

#include "core/cores.hpp"
#include "core/input_error.hpp"
#include "core/number_format.hpp"
#include "core/sha256.hpp"
#include "core/statistics.hpp"
#include "model/batching_server.hpp"
#include "model/edge_server.hpp"
#include "model/simulation.hpp"
#include "report/closed_loop_beside.hpp"
#include "report/replica_series.hpp"
#include "report/request_log.hpp"
#include "trace/trace_reader.hpp"

namespace infersim {

LoadedTrace load_trace(const Settings& settings, unsigned threads) {
  LoadedTrace loaded;
  // The digest is computed on a second thread while the trace is parsed; it
  // costs about as much as the parse.
  std::future<std::string> digest = std::async(std::launch::async, [path = settings.trace_path] {
    try {
      return sha256_file_hex(path);
    } catch (const std::runtime_error&) {
      return std::string();  // the reader reports the unreadable file
    }
  });
  try {
    TraceSource source = settings.trace_source();
    source.read_threads = std::min(threads, 2u);
    loaded.trace = read_trace(source);
  } catch (...) {
    digest.wait();
    throw;
  }
  loaded.sha256 = digest.get();
  if (loaded.sha256.empty()) throw InputError(settings.trace_path, 0, "", "cannot read the file");
  if (settings.trace_sha256 && *settings.trace_sha256 != loaded.sha256) {
    throw InputError(settings.trace_path, 0, "trace.sha256",
                     "the file's SHA-256 is " + loaded.sha256 + ", the settings expect " +
                         *settings.trace_sha256 + " (another file than the run being reproduced)");
  }
  return loaded;
}

namespace {

// The gaps between the tokens of every request, were each served: an upper
// bound on the inter-token gaps a batching run reports (BATCHING.md section
// 7's whole tokens).
std::size_t token_gaps_at_most(const RequestList& requests) {
  std::size_t gaps = 0;
  for (std::size_t k = 0; k < requests.size(); ++k) {
    const std::int64_t tokens = std::llround(requests.generated_tokens(k));
    if (tokens > 1) gaps += static_cast<std::size_t>(tokens - 1);
  }
  return gaps;
}

}  // namespace

ModeResult simulate(const Settings& settings, std::string mode, RequestList tasks,
                    SimTime run_length, std::uint64_t dropped, bool keep_requests,
                    bool spare_core) {
  ModeResult result;
  result.mode = std::move(mode);
  result.tasks = std::move(tasks);
  result.run_length = run_length;
  result.dropped = dropped;

  // A closed loop's clients are its devices (MODEL.md section 4b).
  const ClosedLoop loop = settings.closed_loop();
  const std::uint64_t clients = loop.clients(result.tasks.size());
  if (clients > std::numeric_limits<std::uint32_t>::max()) {
    throw InputError("", 0, key_and_flag(settings.client_key()),
                     "a client a request: more requests than " +
                         std::to_string(std::numeric_limits<std::uint32_t>::max()) +
                         "; give client.max_concurrency (--max-concurrency N)");
  }
  DeviceFleet fleet(loop.on() ? static_cast<std::uint32_t>(clients) : settings.devices);
  const NetworkPath network(settings.hops);
  const ServerChoice choice = server_choice(settings);
  const std::unique_ptr<ServerModel> server = make_server(choice, result.tasks.block_id_tokens());
  result.server = server->describe();
  const RadioEnergy radio(settings.energy_knobs());
  // A server that steps tells each token's instant, its steps and its units apart.
  const bool steps = result.server.steps;
  ServingMetricsKnobs serving_knobs = settings.serving_knobs();
  serving_knobs.server_token_instants = steps;
  serving_knobs.max_concurrency = loop.max_concurrency;
  serving_knobs.client = loop.on();
  // A batching server's GPUs: a replica each, or its fleet's classes' GPUs
  // at their count at 0 (an autoscaled class's count varies: at 0).
  if (steps) {
    double gpus = 0;
    for (const ReplicaClass& c : choice.fleet)
      gpus += static_cast<double>(c.replicas * c.gpus);
    serving_knobs.gpus = choice.fleet.empty() ? static_cast<double>(result.server.units) : gpus;
  }
  // TPOT worked out at the end from the request list needs every request
  // served and the edge server's rule.
  ServingMetrics serving(serving_knobs, result.tasks.size(), steps ? nullptr : &result.tasks);
  if (steps) serving.reserve_token_gaps(token_gaps_at_most(result.tasks));
  // The summary's percentiles read the serving figures' samples: kept once.
  SummaryCollector collector(result.tasks.size(), &serving.samples());
  TimeSeriesCollector series(Duration::from_seconds(settings.slice_duration_s));
  if (!result.server.unit_dynamic_w.empty())
    series.set_unit_dynamic_w(result.server.unit_dynamic_w);
  series.set_handovers(result.server.hands_over);
  ReplicaSeriesCollector replicas(Duration::from_seconds(settings.slice_duration_s),
                                  steps ? result.server.units : 0);
  RequestLog log(keep_requests ? result.tasks.size() : 0, steps, result.server.hands_over);

  Simulation simulation(result.tasks, fleet, network, *server, loop);
  simulation.add_observer(collector);
  simulation.add_observer(serving);
  simulation.add_observer(series);
  simulation.add_server_observer(serving);
  simulation.add_server_observer(series);
  if (steps) simulation.add_server_observer(replicas);
  if (keep_requests) simulation.add_observer(log);
  simulation.run();

  result.events = simulation.events_executed();
  if (loop.on()) {
    // A benchmark's client runs until its last response.
    run_length = collector.end(SimTime::zero());
    result.run_length = run_length;
    result.max_concurrency = loop.max_concurrency;
    result.client = true;
    result.request_rate = settings.request_rate;
  }
  const ServerUsage usage = server->usage(collector.end(run_length));
  result.rejection_limit = usage.rejection_limit;
  result.unit_class = usage.unit_class;
  result.classes = usage.classes;
  result.replicas = usage.replicas;
  result.time_series = series.compute(run_length, *server, usage, radio);
  if (steps) {
    const std::vector<TimeSlice>& slices = result.time_series.slices;
    result.replica_series = replicas.finish(slices.empty() ? run_length : slices.back().end);
    // A fleet's replicas by class, and those its autoscaler ever started.
    result.replica_series.unit_class = usage.unit_class;
    if (!usage.unit_class.empty()) {
      result.replica_series.provisioned.assign(usage.unit_class.size(), 0);
      for (const ReplicaSpan& span : usage.spans) {
        if (span.unit < usage.unit_class.size()) result.replica_series.provisioned[span.unit] = 1;
      }
    }
  }
  serving.prepare(spare_core);
  result.summary = collector.summarize({run_length, dropped, &usage, &radio});
  serving.append_to(result.summary);  // after OUTPUT.md's figures
  result.latency_cdf = serving.cdf();
  if (keep_requests) result.log = std::move(log);
  if (result.mode != "recorded") {
    result.arrivals = settings.synthetic_arrivals;
    if (settings.synthetic_arrivals == "gamma") {
      result.arrivals += ", burstiness " + shortest(settings.burstiness);
    }
  }
  return result;
}

GeneratedRequests generate_recorded(const Settings& settings, const Trace& trace) {
  return TraceRequestGenerator(settings.arrival_knobs(), settings.request_knobs()).generate(trace);
}

SimTime shared_run_length(const Settings& settings, const Trace& trace) {
  const ArrivalKnobs knobs = settings.arrival_knobs();
  if (knobs.duration) return SimTime::zero() + *knobs.duration;
  // The last request the recorded mode replays, after the window and the gap
  // cap, as TraceRequestGenerator finds it.
  OffsetReplay replay(knobs);
  std::optional<std::int64_t> last;
  for (const TraceRecord& record : trace.records) {
    if (const std::optional<std::int64_t> offset = replay.next(record.offset_ns)) last = offset;
  }
  if (!last) return SimTime::zero();
  return run_length_for(arrival_for_offset(*last, knobs));
}

GeneratedRequests generate_synthetic(const Settings& settings, const Trace& trace,
                                     std::uint64_t seed) {
  const SyntheticRequestGenerator generator(settings.arrival_knobs(), settings.request_knobs(),
                                            settings.synthetic_knobs(seed));
  return generator.generate(trace, shared_run_length(settings, trace));
}

std::pair<Summary, Summary> summarize_replications(const std::vector<Summary>& runs) {
  Summary mean, ci;
  if (runs.empty()) return {mean, ci};
  for (std::size_t i = 0; i < runs.front().figures().size(); ++i) {
    const std::string& key = runs.front().figures()[i].key;
    std::vector<double> values;
    for (const Summary& run : runs) {
      if (run.figures()[i].value) values.push_back(*run.figures()[i].value);
    }
    if (values.empty()) {
      mean.add(key, std::nullopt);
      ci.add(key + "_ci95", std::nullopt);
      continue;
    }
    const MeanCi m = mean_ci95(values);
    mean.add(key, m.mean);
    ci.add(key + "_ci95", m.half_width);
  }
  return {mean, ci};
}

ModeResult run_synthetic(const Settings& settings, const Trace& trace, bool keep_requests,
                         unsigned threads, const std::string& mode) {
  if (settings.client_loop()) {
    throw InputError("", 0, key_and_flag(settings.client_key()),
                     "a benchmark's client runs the recorded mode alone (MODEL.md section 4b): "
                     "the " +
                         mode + " mode draws its own instants; give --modes recorded");
  }
  const std::uint32_t runs = settings.replications;
  // Fail on input (no mean rate) before any thread starts.
  trace_rates(trace, settings.arrival_knobs());
  std::vector<ModeResult> results(runs);
  std::atomic<std::uint32_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    for (std::uint32_t i = next++; i < runs; i = next++) {
      try {
        GeneratedRequests generated = generate_synthetic(settings, trace, settings.seed + i);
        // A lone replication has the other core to itself.
        results[i] = simulate(settings, mode, std::move(generated.tasks), generated.run_length, 0,
                              keep_requests && i == 0, threads > 1 && runs == 1);
        if (i > 0) results[i].tasks.clear();  // only the first seed's requests are written
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  const unsigned pool = std::max(1u, std::min<unsigned>(threads, runs));
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < pool; ++t)
    workers.emplace_back(worker);
  worker();
  for (std::thread& t : workers)
    t.join();
  if (failure) std::rethrow_exception(failure);

  std::vector<Summary> summaries;
  std::vector<TimeSeries> series;
  std::vector<LatencyCdf> cdfs;
  for (ModeResult& r : results) {
    summaries.push_back(r.summary);
    if (runs > 1) {
      series.push_back(r.time_series);
      cdfs.push_back(r.latency_cdf);
    }
  }
  ModeResult out = std::move(results.front());
  out.seed = settings.seed;
  if (runs > 1) {
    out.replication_series = std::move(series);
    out.replication_cdfs = std::move(cdfs);
    out.replications = std::move(summaries);
    auto [mean, ci] = summarize_replications(out.replications);
    out.summary = std::move(mean);
    out.ci95 = std::move(ci);
  }
  return out;
}

std::vector<const ModeResult*> ScenarioResult::modes() const {
  std::vector<const ModeResult*> out;
  if (recorded) out.push_back(&*recorded);
  if (synthetic) out.push_back(&*synthetic);
  return out;
}

std::vector<const ModeResult*> ScenarioResult::all_modes() const {
  std::vector<const ModeResult*> out;
  if (recorded) out.push_back(&*recorded);
  if (retimed) out.push_back(&*retimed);
  if (synthetic) out.push_back(&*synthetic);
  return out;
}

namespace {

// A closed loop's requests (MODEL.md section 4b): the trace's in their order
// or the random dataset's, at their pacing offsets; its length is found by
// the run.
GeneratedRequests closed_loop_requests(const Settings& settings, GeneratedRequests generated) {
  if (settings.dataset == "random") {
    generated.tasks =
        random_dataset(settings.random_dataset(), settings.request_knobs(), settings.seed);
    generated.dropped = 0;
    generated.outside_window = 0;
  }
  pace_requests(generated.tasks, settings.request_rate, settings.burstiness, settings.seed);
  generated.run_length = SimTime::zero();
  return generated;
}

// The recorded mode on its tasks, said first on `progress`.
ModeResult replay(const Settings& settings, GeneratedRequests generated, bool keep_requests,
                  unsigned threads, ScenarioProgress* progress) {
  if (settings.client_loop()) generated = closed_loop_requests(settings, std::move(generated));
  if (progress) progress->replaying(generated);
  return simulate(settings, "recorded", std::move(generated.tasks), generated.run_length,
                  generated.dropped, keep_requests, threads > 1);
}

}  // namespace

ScenarioResult run_scenario(const Settings& settings, const Trace& trace, bool keep_requests,
                            unsigned threads, ScenarioProgress* progress) {
  ScenarioResult result;
  const bool with_recorded = settings.mode != "synthetic";
  const bool with_synthetic = settings.mode != "recorded";
  // Fail on input (a trace with no mean rate) before simulating anything.
  std::optional<TraceRates> rates;
  if (with_synthetic) rates = trace_rates(trace, settings.arrival_knobs());
  if (with_recorded) {
    result.recorded =
        replay(settings, generate_recorded(settings, trace), keep_requests, threads, progress);
  }
  if (with_recorded && settings.compare_closed_loop) {
    // The same requests, sent by as many clients as the hour held in flight.
    Settings closed = settings;
    closed.mode = "recorded";
    closed.compare_closed_loop = false;
    closed.max_concurrency = clients_for(*result.recorded);
    result.closed_loop =
        replay(closed, generate_recorded(closed, trace), keep_requests, threads, nullptr);
    result.closed_loop->mode = "closed-loop";
  }
  if (with_synthetic) {
    result.synthetic = run_synthetic(settings, trace, keep_requests, threads);
    if (progress) progress->drew(*result.synthetic, *rates);
  }
  // Comparing: the recorded requests at the synthetic instants, between them.
  if (with_recorded && with_synthetic && settings.synthetic_sizes != "recorded") {
    Settings retimed = settings;
    retimed.synthetic_sizes = "recorded";
    result.retimed = run_synthetic(retimed, trace, keep_requests, threads, "retimed");
    if (progress) progress->drew_retimed(*result.retimed, *rates);
  }
  return result;
}

ModeResult run_mode(const Settings& settings, const Trace& trace, const std::string& mode,
                    unsigned threads) {
  if (mode == "recorded") {
    Settings recorded = settings;
    recorded.mode = "recorded";
    return replay(recorded, generate_recorded(recorded, trace), false, threads, nullptr);
  }
  Settings synthetic = settings;
  synthetic.mode = "synthetic";
  if (mode == "retimed") synthetic.synthetic_sizes = "recorded";
  return run_synthetic(synthetic, trace, false, threads, mode);
}

ScenarioResult run_scenario_taking_records(const Settings& settings, Trace& trace,
                                           bool keep_requests, unsigned threads,
                                           ScenarioProgress* progress) {
  if (settings.mode != "recorded") {
    return run_scenario(settings, trace, keep_requests, threads, progress);
  }
  const TraceRequestGenerator generator(settings.arrival_knobs(), settings.request_knobs());
  ScenarioResult result;
  result.recorded =
      replay(settings, generator.generate_taking_records(trace), keep_requests, threads, progress);
  return result;
}

}  // namespace infersim
