// The per-request record of a run and its requests.csv (OUTPUT.md), one row a
// request in id order, times as seconds with nine decimals.
#pragma once

#include <filesystem>
#include <vector>

#include "model/request_observer.hpp"
#include "request/request_list.hpp"

namespace infersim {

class RequestLog : public RequestObserver {
 public:
  explicit RequestLog(std::size_t expected_requests = 0);
  void on_issued(std::uint64_t id, const Request& task, const RequestOutcome& outcome) override;
  bool wants_completions() const override { return false; }

  const std::vector<RequestOutcome>& outcomes() const { return outcomes_; }
  std::vector<RequestOutcome> release() { return std::move(outcomes_); }

 private:
  std::vector<RequestOutcome> outcomes_;
};

inline constexpr const char* kRequestsCsvHeader =
    "id,device,arrival_s,context_tokens,generated_tokens,server_arrival_s,start_s,finish_s,"
    "response_s,wait_s,ttft_s,makespan_s,budget_s,deadline_met";

void write_requests_csv(const std::filesystem::path& path, const RequestList& tasks,
                        const std::vector<RequestOutcome>& outcomes);

}  // namespace infersim
