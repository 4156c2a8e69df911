#include "report/request_log.hpp"

#include <stdexcept>

#include "core/large_array.hpp"
#include "report/number_format.hpp"
#include "report/run_folder.hpp"

namespace infersim {

RequestLog::RequestLog(std::size_t expected_requests) {
  reserve_large(outcomes_, expected_requests);
}

void RequestLog::on_issued(std::uint64_t id, const Request&, const RequestOutcome& outcome) {
  if (id != outcomes_.size()) throw std::logic_error("RequestLog: requests issued out of id order");
  outcomes_.push_back(outcome);
}

void write_requests_csv(const std::filesystem::path& path, const RequestList& tasks,
                        const std::vector<RequestOutcome>& outcomes) {
  OutputFile file(path);
  std::string& out = file.buffer();
  out += kRequestsCsvHeader;
  out += '\n';
  // Each row is written into a fixed buffer (9 times, 2 reals, 2 integers,
  // separators: under 400 characters), then appended at once.
  char row[512];
  for (std::size_t id = 0; id < outcomes.size(); ++id) {
    const Request t = tasks[id];
    const RequestOutcome& o = outcomes[id];
    const Duration makespan = o.response - t.arrival;
    char* p = write_integer(row, static_cast<std::int64_t>(id));
    *p++ = ',';
    p = write_integer(p, o.device);
    *p++ = ',';
    p = write_seconds9(p, t.arrival.count_ns());
    *p++ = ',';
    p = write_shortest(p, t.context_tokens);
    *p++ = ',';
    p = write_shortest(p, t.generated_tokens);
    for (const std::int64_t ns :
         {o.server_arrival.count_ns(), o.start.count_ns(), o.finish.count_ns(),
          o.response.count_ns(), o.wait().count_ns(), (o.first_token - t.arrival).count_ns(),
          makespan.count_ns(), t.budget.count_ns()}) {
      *p++ = ',';
      p = write_seconds9(p, ns);
    }
    *p++ = ',';
    *p++ = makespan <= t.budget ? '1' : '0';
    *p++ = '\n';
    out.append(row, p);
    file.maybe_flush();
  }
  file.commit();
}

}  // namespace infersim
