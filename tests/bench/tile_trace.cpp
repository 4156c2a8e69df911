// Tiles an Azure LLM CSV trace end to end until it holds N requests: each copy
// is shifted by the trace's span plus one second, in the same format (header,
// calendar timestamps with seven fractional digits, CRLF), for benchmarks.
//
//   tile_trace INPUT.csv N OUTPUT.csv
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "trace/timestamp.hpp"

namespace {

// Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
void civil_from_days(std::int64_t z, int& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int>(yoe + era * 400 + (m <= 2));
}

void format(std::int64_t ns, char (&out)[64]) {
  const std::int64_t seconds = ns / 1'000'000'000;
  const std::int64_t fraction = (ns % 1'000'000'000) / 100;  // seven digits
  int y;
  unsigned m, d;
  civil_from_days(seconds / 86400, y, m, d);
  const std::int64_t s = seconds % 86400;
  std::snprintf(out, sizeof(out), "%04d-%02u-%02u %02lld:%02lld:%02lld.%07lld", y, m, d,
                static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60),
                static_cast<long long>(s % 60), static_cast<long long>(fraction));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: tile_trace INPUT.csv N OUTPUT.csv\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "tile_trace: cannot read " << argv[1] << "\n";
    return 2;
  }
  const long long wanted = std::atoll(argv[2]);
  struct Row {
    std::int64_t ns;
    std::string rest;  // ",ContextTokens,GeneratedTokens"
  };
  std::vector<Row> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const auto comma = line.find(',');
    const auto parsed = infersim::parse_datetime_ns(line.substr(0, comma));
    if (!parsed.error.empty()) {
      std::cerr << "tile_trace: " << parsed.error << "\n";
      return 2;
    }
    rows.push_back({parsed.ns, line.substr(comma)});
  }
  if (rows.empty() || wanted <= 0) {
    std::cerr << "tile_trace: nothing to tile\n";
    return 2;
  }
  const std::int64_t shift = rows.back().ns - rows.front().ns + 1'000'000'000;
  std::ofstream out(argv[3], std::ios::binary);
  std::string buffer = "TIMESTAMP,ContextTokens,GeneratedTokens";
  char stamp[64];
  for (long long i = 0; i < wanted; ++i) {
    const Row& r = rows[static_cast<std::size_t>(i) % rows.size()];
    format(r.ns + static_cast<std::int64_t>(i / static_cast<long long>(rows.size())) * shift,
           stamp);
    buffer += "\r\n";
    buffer += stamp;
    buffer += r.rest;
    if (buffer.size() > (1 << 20)) {
      out << buffer;
      buffer.clear();
    }
  }
  out << buffer;  // no newline after the last line, like the published file
  return out ? 0 : 1;
}
