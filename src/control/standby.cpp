// standby.cpp — see standby.hpp.
#include "control/standby.hpp"

#include "control/sync_cost.hpp"

#include <algorithm>
#include <cmath>

namespace strait {

double quantised_gbps(double x) {
  if (!(x > 0) || !std::isfinite(x)) return 0;
  return std::exp2(std::round(std::log2(x) * 4) / 4);
}

void strip_standbys(Routes& routes, int n) {
  if (static_cast<int>(routes.size()) != n * n) return;
  for (auto& rs : routes) {
    std::erase_if(rs, [](const Route& r) { return !(r.fraction > 0); });
    for (Route& r : rs) r.gbps = 0;
    if (rs.size() == 1) rs.clear();
  }
}

void arm_standbys(PathDecision& d, const LinkBeliefs& b, const std::vector<int>& order,
                  double bytes, const std::vector<PairTraffic>& traffic,
                  const std::function<std::vector<std::vector<int>>(int, int)>& candidates) {
  const int n = b.n;
  if (n < 3 || static_cast<int>(d.paths.size()) != n * n ||
      static_cast<int>(traffic.size()) != n * n)
    return;
  if (static_cast<int>(d.routes.size()) != n * n) d.routes.assign(static_cast<size_t>(n) * n, {});
  const std::vector<int> ring = ring_order(order, n);
  std::vector<int> hops;
  for (int i = 0; i < n; ++i) {
    const int pr = ring[i] * n + ring[(i + 1) % n];
    if (traffic[pr].messages > 0) hops.push_back(pr);
  }
  // The flows the decision puts on each link (the ring's hops run at once).
  std::vector<int> flows(static_cast<size_t>(n) * n, 0);
  for (int pr : hops) {
    std::vector<std::vector<int>> ps;
    for (const Route& r : d.routes[pr])
      if (r.fraction > 0) ps.push_back(r.path);
    if (ps.empty()) ps.push_back(d.paths[pr]);
    for (const auto& p : ps)
      for (size_t h = 0; h + 1 < p.size(); ++h) ++flows[p[h] * n + p[h + 1]];
  }
  auto rate = [&](const std::vector<int>& p, int extra) {
    double g = 1e300;
    for (size_t h = 0; h + 1 < p.size(); ++h)
      g = std::min(g, b.gbps[p[h] * n + p[h + 1]] / std::max(1, flows[p[h] * n + p[h + 1]] + extra));
    return g;
  };
  // The ring with the standbys accepted so far as parts of (next to) no bytes.
  constexpr double kProbe = 1e-9;
  Routes probe = d.routes;
  double ring_s = ring_seconds(b, ring, d.paths, bytes, &probe);
  for (int pr : hops) {
    std::vector<Route>& rs = d.routes[pr];
    if (rs.size() == 2) {  // a split: both routes adaptive at their expected rates
      const double g0 = quantised_gbps(rate(rs[0].path, 0)), g1 = quantised_gbps(rate(rs[1].path, 0));
      if (g0 > 0 && g1 > 0) rs[0].gbps = g0, rs[1].gbps = g1;
      continue;
    }
    if (!rs.empty()) continue;  // more routes than the transport adapts: as decided
    const std::vector<int>& path = d.paths[pr];
    const double g = rate(path, 0);
    if (!(g > 0) || g >= 1e300) continue;
    std::vector<int> best;
    double best_g = 0;
    for (const auto& c : candidates(pr / n, pr % n)) {
      if (c == path || shares_a_link(c, path)) continue;
      const double gc = rate(c, 1);
      if (gc > best_g && gc < 1e300) best_g = gc, best = c;
    }
    const double q = quantised_gbps(g), qs = quantised_gbps(best_g);
    if (best.empty() || !(q > 0) || !(qs > 0)) continue;
    probe[pr] = {Route{path, 1 - kProbe}, Route{best, kProbe}};
    const double with = ring_seconds(b, ring, d.paths, bytes, &probe);
    if (with > ring_s * (1 + kStandbyMargin)) {
      probe[pr].clear();
      continue;
    }
    ring_s = with;
    rs = {Route{path, 1.0, q}, Route{best, 0.0, qs}};
  }
}

}  // namespace strait
