// planner_ring_best.cpp — baseline sync planner "ring-best": the hierarchical ring (strategy
// "hierarchical"), with the ring ORDER chosen for the graph instead of the DC index order.
// The order minimises the ring's predicted time (ring_seconds, sync_cost.hpp: each position
// starts its next step when its own bytes have left and its predecessor's have arrived, so a
// slow hop's latency is paid along the dependency chain). Up to kEnumerateDcs datacenters every
// order is tried ((N−1)! of them, DC 0 first); above, up to kExactDcs, two orders found by
// dynamic programming over subsets (O(2^N·N²)) on the per-hop cost (latency of its path plus S/N
// bytes over its narrowest link) are tried: the least sum of hop costs (Held–Karp), and the
// least largest hop then the least sum (bottleneck travelling salesman); above that the index
// order is kept and the detail says so. The index order is kept whenever it is as good, so on a
// homogeneous graph ring-best is exactly hierarchical.
#include <algorithm>
#include <limits>
#include <numeric>
#include <sstream>

#include "control/beliefs.hpp"
#include "control/policies.hpp"
#include "control/sync_cost.hpp"

namespace strait {
namespace {

constexpr int kEnumerateDcs = 8;
constexpr int kExactDcs = 16;
constexpr double kInf = std::numeric_limits<double>::infinity();

// The ring (starting at DC 0) minimising the largest cost[u·n + v] over its hops u → v, then
// the sum of the costs (bottleneck = true), or the sum alone.
std::vector<int> best_ring(int n, const std::vector<double>& cost, bool bottleneck_first) {
  const size_t full = (size_t{1} << n) - 1;
  std::vector<double> dp((full + 1) * n, kInf);
  dp[1 * n + 0] = 0;  // the path {0} ending at 0
  // Pass 1: the smallest bottleneck of a path from 0 over `mask` ending at v.
  for (size_t m = 1; m <= full; m += 2)
    for (int v = 0; v < n; ++v) {
      if (dp[m * n + v] == kInf || !(m >> v & 1)) continue;
      for (int w = 1; w < n; ++w)
        if (!(m >> w & 1)) {
          double& to = dp[(m | size_t{1} << w) * n + w];
          to = std::min(to, std::max(dp[m * n + v], cost[v * n + w]));
        }
    }
  double bottleneck = kInf;
  for (int v = 1; v < n; ++v)
    bottleneck = std::min(bottleneck, std::max(dp[full * n + v], cost[v * n]));
  const double allowed = bottleneck_first ? bottleneck * (1 + 1e-12) : kInf;
  // Pass 2: the smallest sum over paths whose hops stay within the bottleneck.
  std::fill(dp.begin(), dp.end(), kInf);
  std::vector<int> parent((full + 1) * n, -1);
  dp[1 * n + 0] = 0;
  for (size_t m = 1; m <= full; m += 2)
    for (int v = 0; v < n; ++v) {
      if (dp[m * n + v] == kInf || !(m >> v & 1)) continue;
      for (int w = 1; w < n; ++w)
        if (!(m >> w & 1) && cost[v * n + w] <= allowed) {
          const size_t to = (m | size_t{1} << w) * n + w;
          if (dp[m * n + v] + cost[v * n + w] < dp[to])
            dp[to] = dp[m * n + v] + cost[v * n + w], parent[to] = v;
        }
    }
  int last = -1;
  double best = kInf;
  for (int v = 1; v < n; ++v)
    if (cost[v * n] <= allowed && dp[full * n + v] + cost[v * n] < best)
      best = dp[full * n + v] + cost[v * n], last = v;
  std::vector<int> order;
  for (size_t m = full; last >= 0;) {
    order.push_back(last);
    const int p = parent[m * n + last];
    m &= ~(size_t{1} << last);
    last = p;
  }
  std::reverse(order.begin(), order.end());  // 0 first
  return order;
}

class RingBest final : public SyncPlanner {
 public:
  std::string name() const override { return "ring-best"; }
  SyncDecision plan(const ControllerView& v, const PathDecision& chosen) override {
    const Paths& paths = chosen.paths;
    const World& w = v.world();
    const LinkBeliefs b = believed_links(v);
    const int n = w.num_dcs;
    const double S = w.gradient_bytes, run = w.time_scale * 1e3;
    SyncDecision d;
    d.plan.strategy = "hierarchical";
    if (n <= 2) {  // one ring only
      d.detail = "{\"on\":\"" + b.source + "\",\"order\":\"index (the only ring)\"}";
      return d;
    }
    const double index_s = ring_seconds(b, {}, paths, S);
    std::vector<int> order;
    double best_s = index_s;
    auto consider = [&](const std::vector<int>& ring) {
      const double t = ring_seconds(b, ring, paths, S);
      if (t < best_s * (1 - 1e-9)) best_s = t, order = ring;
    };
    if (n <= kEnumerateDcs) {
      std::vector<int> ring(n);
      std::iota(ring.begin(), ring.end(), 0);
      while (std::next_permutation(ring.begin() + 1, ring.end())) consider(ring);
    } else if (n <= kExactDcs) {
      std::vector<double> cost(static_cast<size_t>(n) * n, kInf);
      for (int a = 0; a < n; ++a)
        for (int c = 0; c < n; ++c)
          if (a != c) cost[a * n + c] = step_seconds(b, {{&paths[a * n + c], S / n}});
      consider(best_ring(n, cost, false));
      consider(best_ring(n, cost, true));
    }
    d.plan.ring = order;
    d.plan.predicted_ms = ring_seconds(b, order, paths, S) * run;
    std::ostringstream js;
    js << "{\"on\":\"" << b.source << "\",\"order\":";
    if (order.empty()) {
      js << (n <= kEnumerateDcs ? "\"index (as good as any)\""
             : n <= kExactDcs   ? "\"index (as good as the two searched orders)\""
                                : "\"index (more DCs than the search takes)\"");
    } else {
      js << "[";
      for (int i = 0; i < n; ++i) js << (i ? "," : "") << "\"" << w.dc_names[order[i]] << "\"";
      js << "]";
    }
    js << ",\"predicted_ms\":" << d.plan.predicted_ms << ",\"index_order_ms\":" << index_s * run << "}";
    d.detail = js.str();
    return d;
  }
};
}  // namespace

std::unique_ptr<SyncPlanner> make_ring_best_planner(const Config&) {
  return std::make_unique<RingBest>();
}

}  // namespace strait
