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

std::vector<ServerKind>& added() {
  static std::vector<ServerKind> kinds;
  return kinds;
}

const std::vector<ServerKind>& entries() {
  static const std::vector<ServerKind> kEntries = [] {
    std::vector<ServerKind> kinds = {{"edge", "server", {}, {}, make_edge},
                                     {"batching", "batching", {}, {}, make_batching}};
    kinds.insert(kinds.end(), added().begin(), added().end());
    return kinds;
  }();
  return kEntries;
}

const ServerKind& entry(const std::string& kind) {
  for (const ServerKind& e : entries()) {
    if (e.name == kind) return e;
  }
  throw std::invalid_argument("server.kind: unknown server '" + kind + "'");
}

}  // namespace

void add_server_kind(ServerKind kind) {
  added().push_back(std::move(kind));
}

const std::vector<ServerKind>& server_kinds() {
  return entries();
}

const std::string& server_section(const std::string& kind) {
  return entry(kind).section;
}

bool section_of_another_kind(const std::string& section, const std::string& kind) {
  if (section == "server" || section == server_section(kind)) return false;
  for (const ServerKind& k : entries())
    if (k.section == section) return true;
  return false;
}

std::unique_ptr<ServerModel> make_server(const ServerChoice& choice,
                                         std::uint32_t block_id_tokens) {
  return entry(choice.kind).make(choice, block_id_tokens);
}

}  // namespace infersim
