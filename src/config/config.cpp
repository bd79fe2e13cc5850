// config.cpp — what a resolved Config answers once it is loaded: the rank → datacenter map,
// the parameter count, the per-rank memory estimate and the world-size check.
// Parsing, --set overrides and validation are in load.cpp.
#include "config/config.hpp"
#include "control/policy.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

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

const char* LinkConfig::schedule_kind() const {
  if (!schedule.empty()) return "piecewise";
  if (has_step) return "step";
  if (!markov_factors.empty()) return "markov";
  return "constant";
}

long long parameter_count(const ModelConfig& m) {
  const long long V = m.vocab, C = m.d_model, T = m.seq_len, F = m.d_ff, L = m.layers;
  // per layer: ln1 (2C), qkv (3C*C + 3C), attention out (C*C + C), ln2 (2C),
  // MLP up (C*F + F), MLP down (F*C + C); plus token and position embeddings and the final
  // layer norm; the LM head is tied to the token embedding.
  const long long per_layer = 2 * C + 3 * C * C + 3 * C + C * C + C + 2 * C + C * F + F + F * C + C;
  return V * C + T * C + L * per_layer + 2 * C;
}

MemoryEstimate estimate_memory(const Config& cfg, int world_rank) {
  const int d = cfg.dc_of_rank(world_rank);
  const int local = world_rank - cfg.first_rank_of_dc(d);
  const DatacenterConfig& dc = cfg.datacenters[d];
  const ModelConfig& m = cfg.model;
  const double V = m.vocab, C = m.d_model, T = m.seq_len, F = m.d_ff, L = m.layers, E = m.experts;
  const double f = dc.split.at(local);
  const double h = std::round(f * m.heads);           // this rank's heads
  const double hd = static_cast<double>(m.d_model / m.heads);
  const double fr = std::round(f * F);                 // this rank's MLP columns
  const double share = d < static_cast<int>(cfg.train.batch_shares.size())
                           ? cfg.train.batch_shares[d]
                           : 1.0 / static_cast<double>(cfg.datacenters.size());
  const double b = std::max(1.0, std::round(share * cfg.train.global_batch));  // DC batch

  // Replicated: embeddings, final norm, per-layer norms and biases of the row-parallel outputs;
  // sharded: qkv and attention-out by heads, the MLP by columns.
  const double P = V * C + T * C + 2 * C + L * (4 * C + C + C) +
                   L * (3 * C * h * hd + 3 * h * hd + h * hd * C + C * fr + fr + fr * C);
  MemoryEstimate est{};
  est.params_bytes = 4 * P * E;
  est.grads_bytes = 4 * P * E;
  est.adam_bytes = 8 * P * E;
  est.activations_bytes =
      4 * b * T * (L * (10 * C + 4 * h * hd + 2 * h * T + 3 * fr) + 2 * V + 4 * C);
  est.total_bytes = est.params_bytes + est.grads_bytes + est.adam_bytes + est.activations_bytes;
  return est;
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

// The names come from the controller's policy tables (control/registry.cpp), so a policy
// registered there is accepted here without a second list to keep in step.
const std::vector<std::string>& known_policy_names(const std::string& slot) {
  static std::map<std::string, std::vector<std::string>> cache;
  auto it = cache.find(slot);
  if (it == cache.end()) it = cache.emplace(slot, policy_names(slot)).first;
  return it->second;
}

}  // namespace strait
