#include "report/run_writer.hpp"

#include "report/number_format.hpp"
#include "report/request_log.hpp"

namespace infersim {

nlohmann::ordered_json summary_to_json(const Summary& summary) {
  nlohmann::ordered_json out;
  for (const Figure& f : summary.figures()) {
    if (!f.value) {
      out[f.key] = nullptr;
    } else if (f.integer) {
      out[f.key] = static_cast<std::int64_t>(*f.value);
    } else {
      out[f.key] = *f.value;
    }
  }
  return out;
}

std::string summary_csv(const std::vector<const ModeResult*>& results) {
  std::string out = "mode";
  if (!results.empty()) {
    for (const Figure& f : results.front()->summary.figures())
      out += "," + f.key;
  }
  out += '\n';
  for (const ModeResult* r : results) {
    out += r->mode;
    for (const Figure& f : r->summary.figures()) {
      out += ',';
      if (!f.value) continue;
      if (f.integer) {
        append_integer(out, static_cast<std::int64_t>(*f.value));
      } else {
        append_shortest(out, *f.value);
      }
    }
    out += '\n';
  }
  return out;
}

void write_recorded_run(const RunFolder& folder, const nlohmann::ordered_json& settings,
                        const ModeResult& result, bool per_request) {
  folder.create();
  write_file_atomically(folder.file("settings.json"), settings.dump(2) + "\n");
  write_file_atomically(folder.file("summary.json"),
                        summary_to_json(result.summary).dump(2) + "\n");
  write_file_atomically(folder.file("summary.csv"), summary_csv({&result}));
  if (per_request) write_requests_csv(folder.file("requests.csv"), result.tasks, result.outcomes);
}

}  // namespace infersim
