#include "report/request_log.hpp"

#include <stdexcept>

#include "report/number_format.hpp"
#include "report/run_folder.hpp"

namespace infersim {

void RequestLog::on_issued(std::uint64_t id, const Task&, const RequestOutcome& outcome) {
  if (id != outcomes_.size()) throw std::logic_error("RequestLog: requests issued out of id order");
  outcomes_.push_back(outcome);
}

void write_requests_csv(const std::filesystem::path& path, const TaskList& tasks,
                        const std::vector<RequestOutcome>& outcomes) {
  OutputFile file(path);
  std::string& out = file.buffer();
  out += kRequestsCsvHeader;
  out += '\n';
  for (std::size_t id = 0; id < outcomes.size(); ++id) {
    const Task t = tasks[id];
    const RequestOutcome& o = outcomes[id];
    const Duration makespan = o.response - t.arrival;
    append_integer(out, static_cast<std::int64_t>(id));
    out += ',';
    append_integer(out, o.device);
    out += ',';
    append_seconds9(out, t.arrival.count_ns());
    out += ',';
    append_shortest(out, t.context_tokens);
    out += ',';
    append_shortest(out, t.generated_tokens);
    for (const std::int64_t ns :
         {o.server_arrival.count_ns(), o.start.count_ns(), o.finish.count_ns(),
          o.response.count_ns(), o.wait().count_ns(), (o.first_token - t.arrival).count_ns(),
          makespan.count_ns(), t.budget.count_ns()}) {
      out += ',';
      append_seconds9(out, ns);
    }
    out += makespan <= t.budget ? ",1\n" : ",0\n";
    file.maybe_flush();
  }
  file.commit();
}

}  // namespace infersim
