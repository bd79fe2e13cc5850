// standby.cpp — see standby.hpp.
#include "control/standby.hpp"

#include <algorithm>
#include <cmath>

namespace strait {

namespace {

double path_latency_ms(const std::vector<int>& p, const LinkFigure& latency_ms) {
  double ms = 0;
  for (size_t h = 0; h + 1 < p.size(); ++h) ms += latency_ms(p[h], p[h + 1]);
  return ms;
}

}  // namespace

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

void arm_standbys(PathDecision& d, const std::vector<int>& order,
                  const std::vector<PairTraffic>& traffic,
                  const std::function<std::vector<std::vector<int>>(int, int)>& candidates,
                  const LinkFigure& gbps, const LinkFigure& latency_ms) {
  const int n = static_cast<int>(order.size());
  if (n < 3 || static_cast<int>(d.paths.size()) != n * n) return;
  if (static_cast<int>(d.routes.size()) != n * n) d.routes.assign(static_cast<size_t>(n) * n, {});
  std::vector<int> hops;
  for (int i = 0; i < n; ++i) {
    const int pr = order[i] * n + order[(i + 1) % n];
    if (traffic[pr].messages > 0) hops.push_back(pr);
  }
  // The flows the decision puts on each link (the ring's hops run at once).
  std::vector<int> flows(static_cast<size_t>(n) * n, 0);
  auto used = [&](int pr) {
    std::vector<std::vector<int>> ps;
    for (const Route& r : d.routes[pr])
      if (r.fraction > 0) ps.push_back(r.path);
    if (ps.empty()) ps.push_back(d.paths[pr]);
    return ps;
  };
  for (int pr : hops)
    for (const auto& p : used(pr))
      for (size_t h = 0; h + 1 < p.size(); ++h) ++flows[p[h] * n + p[h + 1]];
  auto rate = [&](const std::vector<int>& p, int extra) {
    double g = 1e300;
    for (size_t h = 0; h + 1 < p.size(); ++h)
      g = std::min(g, gbps(p[h], p[h + 1]) / std::max(1, flows[p[h] * n + p[h + 1]] + extra));
    return g;
  };
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
    const double msg_bytes = traffic[pr].bytes / traffic[pr].messages;
    const double arrives_ms = path_latency_ms(path, latency_ms) + msg_bytes * 8 / (g * 1e9) * 1e3;
    std::vector<int> best;
    double best_g = 0;
    for (const auto& c : candidates(pr / n, pr % n)) {
      if (c == path || shares_a_link(c, path)) continue;
      if (path_latency_ms(c, latency_ms) > arrives_ms) continue;
      const double gc = rate(c, 1);
      if (gc > best_g && gc < 1e300) best_g = gc, best = c;
    }
    const double q = quantised_gbps(g), qs = quantised_gbps(best_g);
    if (!best.empty() && q > 0 && qs > 0) rs = {Route{path, 1.0, q}, Route{best, 0.0, qs}};
  }
}

}  // namespace strait
