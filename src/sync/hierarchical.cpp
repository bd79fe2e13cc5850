// hierarchical.cpp — the baseline sync strategy: gather each DC's shards to its gateway,
// ring-allreduce the weighted full gradients among the gateways, scatter the shards back.
// It handles DCs that shard differently (the full vector is the common language) and makes
// replicated tensors' gradients bit-identical on every rank of a DC.
#include "sync/hierarchical.hpp"

namespace strait {

void HierarchicalSync::sync(ParamSet<float>& ps, SyncChannel& ch, const SyncInput& in,
                            Transport& tr) {
  const auto& t = *in.topo;
  ch.shard.resize(ps.layout.shard_total);
  ps.be->stage_out(ch.shard.data(), ps.grads, ch.shard.size());
  gather_full_to_gateway(ch.shard.data(), ch, in);
  if (t.is_gateway) {
    const float w = static_cast<float>(in.weight);
    if (t.num_dcs > 1)
      for (float& x : ch.full) x *= w;
    ring_allreduce(ch.full.data(), ch.full.size(), ch, t, tr);
  }
  scatter_full_from_gateway(ch, in);
  ps.be->stage_in(ps.grads, ch.shard.data(), ch.shard.size());
}

}  // namespace strait
