// hierarchical.cpp — the baseline sync strategy: gather each DC's shards to its gateway,
// ring-allreduce the weighted full gradients among the gateways (in the plan's ring order, each
// ring hop over the path the path selector chose), scatter the shards back. It handles DCs that
// shard differently (the full vector is the common language) and makes replicated tensors'
// gradients bit-identical on every rank of a DC.
#include "sync/hierarchical.hpp"

namespace strait {

namespace {
const std::vector<int> kIndexOrder;  // no plan: the ring in DC index order
}  // namespace

void HierarchicalSync::sync(ParamSet<float>& ps, SyncChannel& ch, const SyncInput& in,
                            Transport& tr) {
  sync_through_gateways(ps, ch, in, tr,
                        [](float* buf, size_t n, SyncChannel& c, const SyncInput& i, Transport& t) {
                          ring_allreduce(buf, n, c, *i.topo, t, *i.paths,
                                         i.plan ? i.plan->ring : kIndexOrder, i.routes);
                        });
}

}  // namespace strait
