// What one mode of a run (recorded or synthetic) produced: its requests, their
// outcomes when kept, the summary, the time series and the latency CDF, and
// what the server was made of. The scenario fills it; reporters format it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sim_time.hpp"
#include "model/server_model.hpp"
#include "report/replica_series.hpp"
#include "report/request_log.hpp"
#include "report/serving_metrics.hpp"
#include "report/summary.hpp"
#include "report/time_series.hpp"
#include "request/request_list.hpp"

namespace infersim {

struct ModeResult {
  std::string mode;  // "recorded" or "synthetic"
  RequestList tasks;
  RequestLog log;  // each request's outcome; empty unless requests were kept
  Summary summary;
  SimTime run_length;
  std::uint64_t dropped = 0;
  std::uint64_t events = 0;
  std::uint64_t seed = 0;  // synthetic: the (first) seed drawn with
  // Synthetic: how the arrivals were drawn, as the reports name the mode
  // ("poisson", "gamma, burstiness 4"); empty for the recorded mode.
  std::string arrivals;
  // What served the requests, as it describes itself (the edge server's
  // words unless told), made of `server.units` of `server.unit`.
  ServerDescription server;
  std::string rejection_limit;  // ServerUsage's: what refuses a request on arrival
  // A fleet's (BATCHING.md section 11): each replica's class by index, and
  // each class's figures; empty without a fleet.
  std::vector<std::string> unit_class;
  std::vector<ClassUsage> classes;
  // The batching server's replicas (summary.json's `replicas`); empty else.
  std::vector<ReplicaUsage> replicas;
  // Synthetic mode with replications: `summary` holds each figure's mean over
  // them, `ci95` its 95 % confidence half-width (Student t), `replications` each
  // seed's own summary; tasks and outcomes are the first seed's.
  Summary ci95;
  std::vector<Summary> replications;
  // timeseries.csv and cdf.csv (the first seed's when replicated).
  TimeSeries time_series;
  ReplicaSeries replica_series;  // the batching server's replicas apart (replicas.csv)
  LatencyCdf latency_cdf;
  // Replicated: every seed's time series and CDF, the first seed's first (the
  // bands the plots draw around the first seed's curves).
  std::vector<TimeSeries> replication_series;
  std::vector<LatencyCdf> replication_cdfs;
  // A benchmark's client sent the requests (MODEL.md section 4b): its cap on
  // requests in flight (0: none) and its pace (none: all at once).
  bool client = false;
  std::uint32_t max_concurrency = 0;
  std::optional<double> request_rate;
};

}  // namespace infersim
