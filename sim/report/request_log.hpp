// The per-request record of a run and its requests.csv (OUTPUT.md), one row a
// request in id order, times as seconds with nine decimals; a server that
// batches adds its columns (BATCHING.md section 7) after OUTPUT.md's.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "model/request_observer.hpp"
#include "request/request_list.hpp"

namespace infersim {

// Every request's outcome, kept in 48 bytes a request (the fields every server
// has), and the batching server's own in 32 more when asked for.
class RequestLog : public RequestObserver {
 public:
  RequestLog() : RequestLog(0, false) {}
  // `handovers`: the server hands requests from prefill to decode replicas
  // (BATCHING.md section 12); their decode side is kept too.
  explicit RequestLog(std::size_t expected_requests, bool server_details = false,
                      bool handovers = false);
  void on_request(std::uint64_t id, const Request& request, const RequestOutcome& outcome) override;

  std::size_t size() const { return common_.size(); }
  bool server_details() const { return server_details_; }
  bool handovers() const { return handovers_; }
  // Request k's outcome as told (the batching fields zero without details).
  RequestOutcome operator[](std::size_t k) const;

 private:
  struct Common {
    std::uint32_t device, unit;
    SimTime server_arrival, start, finish, response, first_token;
  };
  struct Details {
    SimTime first_token_server, queued;
    std::uint32_t preemptions, prefix_hit_tokens;
    bool rejected;
  };
  struct Handover {
    std::uint32_t decode_unit;
    bool handed_over;
    SimTime transfer_end, decode_start;
  };
  std::vector<Common> common_;
  std::vector<Details> details_;
  std::vector<Handover> handovers_kept_;
  bool server_details_;
  bool handovers_;
};

inline constexpr const char* kRequestsCsvHeader =
    "id,device,arrival_s,context_tokens,generated_tokens,server_arrival_s,start_s,finish_s,"
    "response_s,wait_s,ttft_s,makespan_s,budget_s,deadline_met";
// After kRequestsCsvHeader in a batching run's requests.csv.
inline constexpr const char* kBatchingCsvColumns =
    ",replica,first_token_s,tpot_s,prefix_hit_tokens,preemptions,rejected";

// The rows of `log` (kept for the requests of `requests`, in id order); the
// batching columns when the log kept the server's details. A rejected
// request's row holds its id, device, arrival, tokens, server arrival, budget,
// deadline_met 0 and rejected 1, its other fields empty. With `unit_class`
// (a fleet's class a replica index), a last column `replica_class` (empty for
// a rejected request; BATCHING.md section 11); when the log kept handovers,
// then `decode_replica`, `kv_transfer_s` and `decode_wait_s` (empty for a
// request served on one replica; section 12).
void write_requests_csv(const std::filesystem::path& path, const RequestList& requests,
                        const RequestLog& log, const std::vector<std::string>& unit_class = {});

}  // namespace infersim
