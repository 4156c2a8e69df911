#include "scenario/scenario.hpp"

#include "core/input_error.hpp"
#include "core/sha256.hpp"
#include "model/edge_simulation.hpp"
#include "report/request_log.hpp"
#include "trace/azure_csv_reader.hpp"

namespace infersim {

LoadedTrace load_trace(const Settings& settings) {
  LoadedTrace loaded;
  // Only one format exists so far; "auto" resolves to it.
  loaded.trace = read_azure_csv(settings.trace_path);
  try {
    loaded.sha256 = sha256_file_hex(settings.trace_path);
  } catch (const std::runtime_error& e) {
    throw InputError(e.what());
  }
  if (settings.trace_sha256 && *settings.trace_sha256 != loaded.sha256) {
    throw InputError(settings.trace_path, 0, "trace.sha256",
                     "the file's SHA-256 is " + loaded.sha256 + ", the settings expect " +
                         *settings.trace_sha256 + " (another file than the run being reproduced)");
  }
  return loaded;
}

ModeResult simulate(const Settings& settings, std::string mode, std::vector<Task> tasks,
                    SimTime run_length, std::uint64_t dropped, bool keep_requests) {
  ModeResult result;
  result.mode = std::move(mode);
  result.tasks = std::move(tasks);
  result.run_length = run_length;
  result.dropped = dropped;

  DeviceFleet fleet(settings.devices);
  const NetworkPath network(settings.hops);
  EdgeServer server(settings.cores);
  const EnergyModel energy(settings.energy_knobs());
  SummaryCollector collector(result.tasks.size());
  RequestLog log(keep_requests ? result.tasks.size() : 0);

  EdgeSimulation simulation(result.tasks, fleet, network, server);
  simulation.add_observer(collector);
  if (keep_requests) simulation.add_observer(log);
  simulation.run();

  result.events = simulation.events_executed();
  result.summary = collector.summarize({run_length, dropped, settings.cores, &energy});
  if (keep_requests) result.outcomes = log.release();
  return result;
}

GeneratedTasks generate_recorded(const Settings& settings, const Trace& trace) {
  return TraceTaskGenerator(settings.arrival_knobs(), settings.task_knobs()).generate(trace);
}

ModeResult run_recorded(const Settings& settings, const Trace& trace, bool keep_requests) {
  GeneratedTasks generated = generate_recorded(settings, trace);
  return simulate(settings, "recorded", std::move(generated.tasks), generated.run_length,
                  generated.dropped, keep_requests);
}

}  // namespace infersim
