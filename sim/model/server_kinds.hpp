// The server models a run may name (settings' `server.kind`), the settings
// section each reads its own knobs from, and the one place a kind becomes a
// model. Whoever needs to know what a server is asks the model it built
// (ServerModel::describe), not its kind.
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/knob.hpp"
#include "model/batching_knobs.hpp"
#include "model/edge_server.hpp"
#include "model/replica_class.hpp"
#include "model/server_model.hpp"

namespace infersim {

// What a run's settings say of its server, in the models' own terms; only
// the named kind's knobs are used.
struct ServerChoice {
  std::string kind = "edge";
  EdgeServerKnobs edge;
  BatchingKnobs batching;           // the section's (a fleet's fleet-wide knobs)
  std::vector<ReplicaClass> fleet;  // BATCHING.md section 11; empty: none
  // The knobs of each kind added from outside (add_server_kind), by section.
  std::map<std::string, std::any> own;
};

struct ServerKind {
  std::string name;     // as `server.kind` names it
  std::string section;  // the settings section of its own knobs
  // A kind added from outside: its knobs' rows over its own struct, held in
  // a std::any (knobs_held), the struct with its defaults, and how it is built.
  std::vector<Knob<std::any>> rows;
  std::any defaults;
  std::function<std::unique_ptr<ServerModel>(const ServerChoice&, std::uint32_t)> make;
};

// Adds a kind to the table (a test's made-up server, a model kept outside
// the tree): its rows become settings keys of its section and flags, and
// `server.kind` may name it. Only before the first settings are read.
void add_server_kind(ServerKind kind);

// Every kind, in the order --help lists them.
const std::vector<ServerKind>& server_kinds();
// The section of `kind`'s own knobs ("server", "batching"); throws
// std::invalid_argument for a kind that is none of server_kinds().
const std::string& server_section(const std::string& kind);
// Whether a settings section is another kind's than `kind`'s own: its knobs
// say nothing of a run of `kind` ("server" holds the kind itself too, and is
// every run's).
bool section_of_another_kind(const std::string& section, const std::string& kind);

// The model `choice` names, its knobs checked against a trace whose block ids
// cover `block_id_tokens` tokens each (0: none); throws std::invalid_argument
// when they do not hold.
std::unique_ptr<ServerModel> make_server(const ServerChoice& choice, std::uint32_t block_id_tokens);

}  // namespace infersim
