#include "report/request_log.hpp"

#include <cmath>
#include <stdexcept>

#include "core/large_array.hpp"
#include "core/number_format.hpp"
#include "report/csv_field.hpp"
#include "report/run_folder.hpp"

namespace infersim {

RequestLog::RequestLog(std::size_t expected_requests, bool server_details, bool handovers)
    : server_details_(server_details), handovers_(server_details && handovers) {
  reserve_large(common_, expected_requests);
  if (server_details_) details_.reserve(expected_requests);
  if (handovers_) handovers_kept_.reserve(expected_requests);
}

void RequestLog::on_request(std::uint64_t id, const Request&, const RequestOutcome& o) {
  if (id != common_.size()) throw std::logic_error("RequestLog: requests out of id order");
  common_.push_back(
      {o.device, o.unit, o.server_arrival, o.start, o.finish, o.response, o.first_token});
  if (server_details_) {
    details_.push_back(
        {o.first_token_server, o.queued, o.preemptions, o.prefix_hit_tokens, o.rejected});
    if (handovers_)
      handovers_kept_.push_back({o.decode_unit, o.handed_over, o.transfer_end, o.decode_start});
  } else if (o.rejected) {
    throw std::logic_error("RequestLog: a rejected request without the server's details");
  }
}

RequestOutcome RequestLog::operator[](std::size_t k) const {
  const Common& c = common_[k];
  RequestOutcome o;
  o.device = c.device;
  o.unit = c.unit;
  o.server_arrival = c.server_arrival;
  o.start = c.start;
  o.finish = c.finish;
  o.response = c.response;
  o.first_token = c.first_token;
  if (server_details_) {
    const Details& d = details_[k];
    o.first_token_server = d.first_token_server;
    o.queued = d.queued;
    o.preemptions = d.preemptions;
    o.prefix_hit_tokens = d.prefix_hit_tokens;
    o.rejected = d.rejected;
  }
  if (handovers_) {
    const Handover& h = handovers_kept_[k];
    o.handed_over = h.handed_over;
    o.decode_unit = h.decode_unit;
    o.transfer_end = h.transfer_end;
    o.decode_start = h.decode_start;
  }
  return o;
}

void write_requests_csv(const std::filesystem::path& path, const RequestList& requests,
                        const RequestLog& log, const std::vector<std::string>& unit_class) {
  OutputFile file(path);
  std::string& out = file.buffer();
  out += kRequestsCsvHeader;
  if (log.server_details()) out += kBatchingCsvColumns;
  const bool classes = log.server_details() && !unit_class.empty();
  if (classes) out += ",replica_class";
  const bool handovers = classes && log.handovers();
  if (handovers) out += ",decode_replica,kv_transfer_s,decode_wait_s";
  out += '\n';
  // Each row is written into a fixed buffer (11 times, 2 reals, 6 integers,
  // separators: under 500 characters), then appended at once.
  char row[640];
  for (std::size_t id = 0; id < log.size(); ++id) {
    const Request t = requests[id];
    const RequestOutcome o = log[id];
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
    *p++ = ',';
    p = write_seconds9(p, o.server_arrival.count_ns());
    if (o.rejected) {
      // No start, finish, response, wait, TTFT or makespan of its own.
      for (int i = 0; i < 6; ++i)
        *p++ = ',';
      *p++ = ',';
      p = write_seconds9(p, t.budget.count_ns());
      for (const char c : std::string_view(",0,,,,,,1"))
        *p++ = c;
      if (classes) *p++ = ',';
      if (handovers) {
        for (int i = 0; i < 3; ++i)
          *p++ = ',';
      }
      *p++ = '\n';
      out.append(row, p);
      file.maybe_flush();
      continue;
    }
    for (const std::int64_t ns :
         {o.start.count_ns(), o.finish.count_ns(), o.response.count_ns(), o.wait().count_ns(),
          (o.first_token - t.arrival).count_ns(), makespan.count_ns(), t.budget.count_ns()}) {
      *p++ = ',';
      p = write_seconds9(p, ns);
    }
    *p++ = ',';
    *p++ = makespan <= t.budget ? '1' : '0';
    if (log.server_details()) {
      *p++ = ',';
      p = write_integer(p, o.unit);
      *p++ = ',';
      p = write_seconds9(p, o.first_token_server.count_ns());
      *p++ = ',';
      const std::int64_t generated = std::llround(t.generated_tokens);
      if (generated >= 2) {
        p = write_seconds9(p,
                           (o.finish - o.first_token_server).divided_by(generated - 1).count_ns());
      }
      *p++ = ',';
      p = write_integer(p, o.prefix_hit_tokens);
      *p++ = ',';
      p = write_integer(p, o.preemptions);
      *p++ = ',';
      *p++ = '0';
    }
    out.append(row, p);
    if (classes) {
      out += ',';
      append_csv_field(out, unit_class.at(o.unit));
    }
    if (handovers) {
      p = row;
      *p++ = ',';
      if (o.handed_over) {
        p = write_integer(p, o.decode_unit);
        *p++ = ',';
        p = write_seconds9(p, (o.transfer_end - o.first_token_server).count_ns());
        *p++ = ',';
        p = write_seconds9(p, (o.decode_start - o.transfer_end).count_ns());
      } else {
        *p++ = ',';
        *p++ = ',';
      }
      out.append(row, p);
    }
    out += '\n';
    file.maybe_flush();
  }
  file.commit();
}

}  // namespace infersim
