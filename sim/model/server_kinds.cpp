#include "model/server_kinds.hpp"

#include <stdexcept>

#include "model/batching_server.hpp"

namespace infersim {
namespace {

std::unique_ptr<ServerModel> make_edge(const ServerChoice& choice, std::uint32_t) {
  return std::make_unique<EdgeServer>(choice.edge);
}

std::unique_ptr<ServerModel> make_batching(const ServerChoice& choice,
                                           std::uint32_t block_id_tokens) {
  if (choice.fleet.empty()) {
    check_batching_knobs(choice.batching, block_id_tokens, "");
    return std::make_unique<BatchingServer>(choice.batching);
  }
  for (const ReplicaClass& c : choice.fleet)
    check_batching_knobs(c.knobs, block_id_tokens, "");
  return std::make_unique<BatchingServer>(choice.batching, choice.fleet);
}

struct Entry {
  ServerKind kind;
  std::unique_ptr<ServerModel> (*make)(const ServerChoice&, std::uint32_t);
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> kEntries = {{{"edge", "server"}, make_edge},
                                              {{"batching", "batching"}, make_batching}};
  return kEntries;
}

const Entry& entry(const std::string& kind) {
  for (const Entry& e : entries()) {
    if (e.kind.name == kind) return e;
  }
  throw std::invalid_argument("server.kind: unknown server '" + kind + "'");
}

}  // namespace

const std::vector<ServerKind>& server_kinds() {
  static const std::vector<ServerKind> kKinds = [] {
    std::vector<ServerKind> kinds;
    for (const Entry& e : entries())
      kinds.push_back(e.kind);
    return kinds;
  }();
  return kKinds;
}

const std::string& server_section(const std::string& kind) {
  return entry(kind).kind.section;
}

std::unique_ptr<ServerModel> make_server(const ServerChoice& choice,
                                         std::uint32_t block_id_tokens) {
  return entry(choice.kind).make(choice, block_id_tokens);
}

}  // namespace infersim
