// registry.cpp — the table of sync strategies, by the name a config uses.
// A new strategy adds one file and one row here.
#include <functional>

#include "sync/hierarchical.hpp"
#include "sync/mpi_allreduce.hpp"
#include "sync/owners.hpp"
#include "sync/sync.hpp"

namespace strait {
namespace {

struct Entry {
  const char* name;
  std::function<std::unique_ptr<SyncStrategy>()> make;
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> t = {
      {"hierarchical", [] { return std::make_unique<HierarchicalSync>(); }},
      {"owners", [] { return std::make_unique<OwnersSync>(); }},
      {"mpi-allreduce", [] { return std::make_unique<MpiAllreduceSync>(); }},
  };
  return t;
}

}  // namespace

std::unique_ptr<SyncStrategy> make_sync_strategy(const std::string& name) {
  for (const auto& e : table())
    if (name == e.name) return e.make();
  return nullptr;
}

std::vector<std::string> sync_strategy_names() {
  std::vector<std::string> out;
  for (const auto& e : table()) out.push_back(e.name);
  return out;
}

}  // namespace strait
