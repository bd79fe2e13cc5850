// path_cost.cpp — pair traffic, candidate paths and their predicted times (see path_cost.hpp).
#include "control/path_cost.hpp"

#include <algorithm>

namespace strait {

std::vector<PairTraffic> pair_traffic(const Plan& plan, const World& w) {
  const int n = w.num_dcs;
  std::vector<PairTraffic> t(static_cast<size_t>(n) * n);
  if (n < 2) return t;
  const double S = w.gradient_bytes;
  if (plan.sync.strategy == "hierarchical") {
    const std::vector<int> order = ring_order(plan.sync.ring, n);
    // Reduce-scatter and allgather: 2(N−1) rounds of S/N bytes to the next DC on the ring.
    for (int i = 0; i < n; ++i) {
      PairTraffic& p = t[order[i] * n + order[(i + 1) % n]];
      p.bytes += 2.0 * (n - 1) * S / n;
      p.messages += 2 * (n - 1);
    }
  } else if (plan.sync.strategy == "owners" &&
             static_cast<int>(plan.sync.owner_fraction.size()) == n) {
    for (int j = 0; j < n; ++j) {
      const double slice = plan.sync.owner_fraction[j] * S;
      if (slice <= 0) continue;
      for (int d = 0; d < n; ++d) {
        if (d == j) continue;
        t[d * n + j].bytes += slice, t[d * n + j].messages += 1;  // reduce
        t[j * n + d].bytes += slice, t[j * n + d].messages += 1;  // broadcast
      }
    }
  }
  return t;
}

std::vector<std::vector<int>> flow_paths(const Plan& plan, const World& w,
                                         const std::vector<LinkStep>* measured) {
  const int n = w.num_dcs;
  std::vector<std::vector<int>> out;
  const std::vector<PairTraffic> t = pair_traffic(plan, w);
  if (plan.sync.strategy == "hierarchical") {
    for (int pr = 0; pr < n * n; ++pr) {
      if (t[pr].messages == 0) continue;
      const bool routed = static_cast<int>(plan.routes.size()) == n * n && !plan.routes[pr].empty();
      if (!routed && static_cast<int>(plan.paths.size()) == n * n) out.push_back(plan.paths[pr]);
      if (!routed) continue;
      const LinkStep* m = measured && static_cast<int>(measured->size()) == n * n ? &(*measured)[pr] : nullptr;
      const bool reported = m && m->route0_bytes + m->route1_bytes > 0;
      for (size_t k = 0; k < plan.routes[pr].size(); ++k) {
        const double sent = k == 0 ? (m ? m->route0_bytes : 0) : k == 1 ? (m ? m->route1_bytes : 0) : -1;
        if (reported && sent >= 0 ? sent > 0 : plan.routes[pr][k].fraction > 0)
          out.push_back(plan.routes[pr][k].path);
      }
    }
  } else if (plan.sync.strategy == "owners" &&
             static_cast<int>(plan.sync.owner_fraction.size()) == n) {
    // reduce[src·n + owner], broadcast[owner·n + dst]: an owner without a slice sends nothing.
    for (int pr = 0; pr < n * n && pr < static_cast<int>(plan.sync.reduce.size()); ++pr)
      if (plan.sync.owner_fraction[pr % n] > 0)
        for (const Route& r : plan.sync.reduce[pr])
          if (r.fraction > 0) out.push_back(r.path);
    for (int pr = 0; pr < n * n && pr < static_cast<int>(plan.sync.broadcast.size()); ++pr)
      if (plan.sync.owner_fraction[pr / n] > 0)
        for (const Route& r : plan.sync.broadcast[pr])
          if (r.fraction > 0) out.push_back(r.path);
  }
  return out;
}

std::vector<std::vector<int>> simple_paths(const LinkStates& ls, int s, int d, int max_relays) {
  const int n = ls.n();
  std::vector<std::vector<int>> out;
  if (ls.has_link(s, d)) out.push_back({s, d});
  // Depth-first over relays, by hops: one relay, then two, ...
  for (int relays = 1; relays <= max_relays; ++relays) {
    std::vector<int> path{s};
    std::function<void()> extend = [&] {
      const int at = path.back();
      if (static_cast<int>(path.size()) == relays + 1) {
        if (ls.has_link(at, d)) {
          path.push_back(d);
          out.push_back(path);
          path.pop_back();
        }
        return;
      }
      for (int k = 0; k < n; ++k) {
        if (k == d || std::find(path.begin(), path.end(), k) != path.end() || !ls.has_link(at, k))
          continue;
        path.push_back(k);
        extend();
        path.pop_back();
      }
    };
    extend();
  }
  return out;
}

std::vector<int> fewest_hop_path(const LinkStates& ls, int s, int d) {
  const int n = ls.n();
  for (int relays = 0; relays < n - 1; ++relays) {
    const auto all = simple_paths(ls, s, d, relays);
    std::vector<int> best;
    double best_lat = 1e300;
    for (const auto& p : all) {
      if (static_cast<int>(p.size()) != relays + 2) continue;
      double lat = 0;
      for (size_t h = 0; h + 1 < p.size(); ++h) lat += ls.latency_ms(p[h], p[h + 1]);
      if (lat < best_lat) best_lat = lat, best = p;
    }
    if (!best.empty()) return best;
  }
  return {};
}

double bottleneck_gbps(const std::vector<int>& path, const LinkFigure& gbps) {
  double b = 1e300;
  for (size_t h = 0; h + 1 < path.size(); ++h) b = std::min(b, gbps(path[h], path[h + 1]));
  return b;
}

double path_ms(const std::vector<int>& path, const PairTraffic& t, const LinkFigure& gbps,
               const LinkFigure& latency_ms) {
  double lat = 0;
  for (size_t h = 0; h + 1 < path.size(); ++h) lat += latency_ms(path[h], path[h + 1]);
  const double cap = std::max(1e-12, bottleneck_gbps(path, gbps));
  return t.messages * lat + t.bytes * 8 / (cap * 1e6);
}

double least_time_share(const PairTraffic& t, double latency0_ms, double latency1_ms,
                        const std::vector<SplitState>& states) {
  // E is convex and piecewise linear in f: state x's term follows its second part up to f_x,
  // where the two parts end together, and its first part after. The least is at the breakpoint
  // where E's slope, Σ_{f_x < f} w·B/c0 − Σ_{f_x > f} w·B/c1, turns non-negative.
  struct Point {
    double f, up, down;  // breakpoint; slope of the term past it (w·B/c0) and before (w·B/c1)
  };
  std::vector<Point> pts;
  const double ms_gbit = t.bytes * 8 / 1e6;  // the bytes' milliseconds at 1 Gbit/s
  const double a0 = t.messages * latency0_ms, a1 = t.messages * latency1_ms;
  double slope = 0;
  for (const SplitState& x : states) {
    if (!(x.weight > 0)) continue;
    const double b0 = ms_gbit / std::max(x.gbps0, 1e-12), b1 = ms_gbit / std::max(x.gbps1, 1e-12);
    const double f = b0 + b1 > 0 ? std::clamp((a1 + b1 - a0) / (b0 + b1), 0.0, 1.0) : 0.5;
    pts.push_back({f, x.weight * b0, x.weight * b1});
    slope -= x.weight * b1;
  }
  if (pts.empty()) return 0.5;
  std::sort(pts.begin(), pts.end(), [](const Point& x, const Point& y) { return x.f < y.f; });
  for (const Point& x : pts) {
    slope += x.up + x.down;
    if (slope >= 0) return x.f;
  }
  return 1.0;
}

double split_time_ms(const PairTraffic& t, double latency0_ms, double latency1_ms, double f,
                     double gbps0, double gbps1) {
  return std::max(t.messages * latency0_ms + f * t.bytes * 8 / (gbps0 * 1e6),
                  t.messages * latency1_ms + (1 - f) * t.bytes * 8 / (gbps1 * 1e6));
}

bool shares_a_link(const std::vector<int>& p, const std::vector<int>& q) {
  for (size_t i = 0; i + 1 < p.size(); ++i)
    for (size_t j = 0; j + 1 < q.size(); ++j)
      if (p[i] == q[j] && p[i + 1] == q[j + 1]) return true;
  return false;
}

}  // namespace strait
