// owners.cpp — the owner-plan allreduce among gateways. Two communication steps, each one
// Transport::execute with every transfer of the step (concurrent, chunked, relayed as their
// paths say): (1) every DC sends its part of slice j to owner j, split over the plan's routes;
// (2) each owner sends its reduced slice to every DC. An owner adds the DCs' parts in DC index
// order, so the result does not depend on arrival order and every DC ends with identical bits.
#include "sync/owners.hpp"

#include <algorithm>

#include "core/check.hpp"

namespace strait {

void owner_allreduce(float* buf, size_t n, SyncChannel& ch, const Topology& t, Transport& tr,
                     const SyncPlan& plan) {
  const int N = t.num_dcs, self = t.dc;
  if (N <= 1) return;
  STRAIT_CHECK(static_cast<int>(plan.owner_fraction.size()) == N, "owner plan for another DC count");
  const auto [own_lo, own_hi] = owner_slice(plan, self, n);
  const size_t own_len = own_hi - own_lo;
  // Parts of my slice from every other DC, one region per source DC.
  ch.owned.resize(own_len * N);

  std::vector<Transfer> reduce, broadcast;
  for (int j = 0; j < N; ++j) {
    const auto [lo, hi] = owner_slice(plan, j, n);
    if (hi == lo) continue;
    const size_t len = hi - lo;
    for (int d = 0; d < N; ++d) {
      if (d == j) continue;
      const auto& up = plan.reduce[d * N + j];
      for (size_t r = 0; r < up.size(); ++r) {
        const auto [a, b] = route_part(up, r, len);
        if (b == a) continue;
        Transfer x;
        x.path = up[r].path;
        x.bytes = (b - a) * sizeof(float);
        if (self == d) x.sbuf = buf + lo + a;
        if (self == j) x.rbuf = ch.owned.data() + static_cast<size_t>(d) * own_len + a;
        reduce.push_back(std::move(x));
      }
      const auto& down = plan.broadcast[j * N + d];
      for (size_t r = 0; r < down.size(); ++r) {
        const auto [a, b] = route_part(down, r, len);
        if (b == a) continue;
        Transfer x;
        x.path = down[r].path;
        x.bytes = (b - a) * sizeof(float);
        if (self == j) x.sbuf = buf + lo + a;
        if (self == d) x.rbuf = buf + lo + a;
        broadcast.push_back(std::move(x));
      }
    }
  }
  tr.execute(ch.gateways, self, reduce, 0);
  if (own_len > 0) {
    // My own part goes in its region too, so the sum runs over DCs in index order.
    std::copy_n(buf + own_lo, own_len, ch.owned.data() + static_cast<size_t>(self) * own_len);
    float* acc = buf + own_lo;
    std::copy_n(ch.owned.data(), own_len, acc);
    for (int d = 1; d < N; ++d) {
      const float* part = ch.owned.data() + static_cast<size_t>(d) * own_len;
      for (size_t i = 0; i < own_len; ++i) acc[i] += part[i];
    }
  }
  tr.execute(ch.gateways, self, broadcast, 1);
}

void OwnersSync::sync(ParamSet<float>& ps, SyncChannel& ch, const SyncInput& in, Transport& tr) {
  STRAIT_CHECK(in.plan != nullptr, "the owners strategy needs a sync plan");
  sync_through_gateways(ps, ch, in, tr,
                        [](float* buf, size_t n, SyncChannel& c, const SyncInput& i, Transport& t) {
                          owner_allreduce(buf, n, c, *i.topo, t, *i.plan);
                        });
}

}  // namespace strait
