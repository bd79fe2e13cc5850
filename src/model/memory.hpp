// memory.hpp — the per-rank memory estimate: parameters, gradients, Adam state and activations
// (fp32 bytes) of the shard the run gives a rank (shard_specs, make_layout) with the sequences
// its datacenter gets (apportion of the batch shares), so the estimate, `strait validate`'s
// table and the run agree on every head and column. validate/ compares it with the limit.
#pragma once
#include "config/config.hpp"

namespace strait {

struct MemoryEstimate {
  double params_bytes, grads_bytes, adam_bytes, activations_bytes, total_bytes;
};

// For world_rank at the configured (initial) split. Needs a config whose splits and model size
// passed validation (shard_specs aborts otherwise); validate/ checks those first.
MemoryEstimate estimate_memory(const Config& cfg, int world_rank);

}  // namespace strait
