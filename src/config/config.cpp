// config.cpp — what a resolved Config answers once it is loaded: the rank → datacenter map,
// where a key came from, the memory limit and the world-size check.
// Parsing, --set overrides and the config-level checks are in load.cpp.
#include "config/config.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace strait {

int Config::world_size() const {
  int n = 0;
  for (const auto& dc : datacenters) n += dc.ranks;
  return n;
}

int Config::dc_of_rank(int world_rank) const {
  int first = 0;
  for (int d = 0; d < static_cast<int>(datacenters.size()); ++d) {
    if (world_rank >= first && world_rank < first + datacenters[d].ranks) return d;
    first += datacenters[d].ranks;
  }
  throw std::out_of_range("dc_of_rank: world rank " + std::to_string(world_rank) +
                          " is outside 0.." + std::to_string(world_size() - 1));
}

int Config::first_rank_of_dc(int dc) const {
  if (dc < 0 || dc >= static_cast<int>(datacenters.size()))
    throw std::out_of_range("first_rank_of_dc: no datacenter " + std::to_string(dc));
  int first = 0;
  for (int d = 0; d < dc; ++d) first += datacenters[d].ranks;
  return first;
}

std::string Config::where_of(const std::string& key) const {
  for (std::string k = key;;) {
    const auto it = where.find(k);
    if (it != where.end()) return it->second;
    if (k.empty()) return source_file + ":0";
    const auto dot = k.rfind('.');
    k = dot == std::string::npos ? "" : k.substr(0, dot);
  }
}

const char* LinkConfig::schedule_kind() const {
  if (!schedule.empty()) return "piecewise";
  if (has_step) return "step";
  if (!markov_factors.empty()) return "markov";
  return "constant";
}

double memory_limit_bytes(const Config& cfg) {
  if (cfg.memory_limit_gb > 0) return cfg.memory_limit_gb * 1073741824.0;
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemTotal:", 0) == 0) {
      std::istringstream ss(line.substr(9));
      double kb = 0;
      if (ss >> kb) return kb * 1024.0;
    }
  }
  return 0;
}

void check_world_size(const Config& cfg, int actual_world_size) {
  const int n = cfg.world_size();
  if (n == actual_world_size) return;
  throw ConfigError(cfg.source_file + ": datacenter: the datacenters have " + std::to_string(n) +
                    " ranks in all but the job has " + std::to_string(actual_world_size) +
                    "; expected mpirun -np " + std::to_string(n));
}

}  // namespace strait
