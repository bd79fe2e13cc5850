// sync_cost.cpp — see sync_cost.hpp.
#include "control/sync_cost.hpp"

#include <algorithm>
#include <numeric>

namespace strait {

double step_seconds(const LinkBeliefs& b, const Flows& flows) {
  const int n = b.n;
  std::vector<double> load(static_cast<size_t>(n) * n, 0.0);
  for (const auto& [path, bytes] : flows)
    for (size_t h = 0; h + 1 < path->size(); ++h) load[(*path)[h] * n + (*path)[h + 1]] += bytes;
  double worst = 0;
  for (const auto& [path, bytes] : flows) {
    double latency = 0, busy = 0;
    for (size_t h = 0; h + 1 < path->size(); ++h) {
      const int l = (*path)[h] * n + (*path)[h + 1];
      latency += b.latency_ms[l] / 1e3;
      busy = std::max(busy, load[l] * 8 / (b.gbps[l] * 1e9));
    }
    worst = std::max(worst, latency + busy);
  }
  return worst;
}

double owner_plan_seconds(const LinkBeliefs& b, const SyncPlan& p, double bytes) {
  const int n = b.n;
  if (n <= 1) return 0;
  Flows reduce, broadcast;
  for (int j = 0; j < n; ++j) {
    const double slice = p.owner_fraction[j] * bytes;
    if (slice <= 0) continue;
    for (int d = 0; d < n; ++d) {
      if (d == j) continue;
      for (const Route& r : p.reduce[d * n + j]) reduce.push_back({&r.path, slice * r.fraction});
      for (const Route& r : p.broadcast[j * n + d]) broadcast.push_back({&r.path, slice * r.fraction});
    }
  }
  return step_seconds(b, reduce) + step_seconds(b, broadcast);
}

double ring_seconds(const LinkBeliefs& b, const std::vector<int>& order, const Paths& paths,
                    double bytes) {
  const int n = b.n;
  if (n <= 1) return 0;
  std::vector<int> ring = order;
  if (ring.empty()) {
    ring.resize(n);
    std::iota(ring.begin(), ring.end(), 0);
  }
  Flows hops;
  for (int i = 0; i < n; ++i) hops.push_back({&paths[ring[i] * n + ring[(i + 1) % n]], bytes / n});
  return 2.0 * (n - 1) * step_seconds(b, hops);
}

}  // namespace strait
