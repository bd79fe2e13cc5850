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

  // One transfer per route of a flow of `len` floats from DC `from` to DC `to`: part [a, b) of
  // the flow leaves from send + a on `from` and lands at recv + a on `to`.
  auto add_flow = [&](std::vector<Transfer>& xs, const std::vector<Route>& routes, size_t len,
                      int from, const float* send, int to, float* recv) {
    for (size_t r = 0; r < routes.size(); ++r) {
      const auto [a, b] = route_part(routes, r, len);
      if (b == a) continue;
      Transfer x;
      x.path = routes[r].path;
      x.bytes = (b - a) * sizeof(float);
      if (self == from) x.sbuf = send + a;
      if (self == to) x.rbuf = recv + a;
      xs.push_back(std::move(x));
    }
  };
  std::vector<Transfer> reduce, broadcast;
  for (int j = 0; j < N; ++j) {
    const auto [lo, hi] = owner_slice(plan, j, n);
    if (hi == lo) continue;
    for (int d = 0; d < N; ++d) {
      if (d == j) continue;
      add_flow(reduce, plan.reduce[d * N + j], hi - lo, d, buf + lo, j,
               ch.owned.data() + static_cast<size_t>(d) * own_len);
      add_flow(broadcast, plan.broadcast[j * N + d], hi - lo, j, buf + lo, d, buf + lo);
    }
  }
  // An owner broadcasts once its parts have arrived, whether or not its own reduce sends have
  // (the transport's courier delivers them).
  tr.execute(ch.gateways, self, reduce, 0, false);
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
  tr.execute(ch.gateways, self, broadcast, 1, false);
}

void OwnersSync::sync(ParamSet<float>& ps, SyncChannel& ch, const SyncInput& in, Transport& tr) {
  STRAIT_CHECK(in.plan != nullptr, "the owners strategy needs a sync plan");
  sync_through_gateways(ps, ch, in, tr,
                        [](float* buf, size_t n, SyncChannel& c, const SyncInput& i, Transport& t) {
                          owner_allreduce(buf, n, c, *i.topo, t, *i.plan);
                        });
}

}  // namespace strait
