// params.hpp — one expert's shard of parameters, gradients and Adam state (backend memory).
// Each buffer follows the rank's Layout (same offsets in all four). init_full() produces the
// full model deterministically from (seed, expert, tensor name), independent of the sharding.
#pragma once
#include <cstdint>
#include <vector>

#include "backend/backend.hpp"
#include "model/layout.hpp"

namespace strait {

template <typename T>
struct ParamSet {
  Backend<T>* be = nullptr;
  Layout layout;
  T* params = nullptr;
  T* grads = nullptr;
  T* adam_m = nullptr;
  T* adam_v = nullptr;
  int64_t adam_t = 0;  // Adam steps taken

  ParamSet(Backend<T>& backend, const Layout& l);
  ~ParamSet();
  ParamSet(const ParamSet&) = delete;
  ParamSet& operator=(const ParamSet&) = delete;

  // Full <-> shard for all three states at once (host vectors in canonical full layout).
  void load_full(const std::vector<T>& p, const std::vector<T>& m, const std::vector<T>& v);
  void shard_to_host(std::vector<T>& p, std::vector<T>& m, std::vector<T>& v) const;  // shard size
};

// The full initial parameters of `expert` (canonical layout): GPT-2 style, N(0, init_std) for
// matrices, residual projections scaled by 1/sqrt(2·layers), LayerNorm weights 1, biases 0.
template <typename T>
std::vector<T> init_full(const Layout& l, uint64_t seed, int expert);

}  // namespace strait
