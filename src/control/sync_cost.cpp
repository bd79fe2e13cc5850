// sync_cost.cpp — see sync_cost.hpp.
#include "control/sync_cost.hpp"

#include <algorithm>

namespace strait {

namespace {

// Per flow of one step: its path's latency and how long its most loaded link needs for all the
// bytes crossing it (seconds); the flow arrives after their sum, and its sender is done after
// the second alone (its bytes have left: the transport's courier).
std::vector<std::pair<double, double>> flow_times(const LinkBeliefs& b, const Flows& flows) {
  const int n = b.n;
  std::vector<double> load(static_cast<size_t>(n) * n, 0.0);
  for (const auto& [path, bytes] : flows)
    for (size_t h = 0; h + 1 < path->size(); ++h) load[(*path)[h] * n + (*path)[h + 1]] += bytes;
  std::vector<std::pair<double, double>> out;
  for (const auto& [path, bytes] : flows) {
    double latency = 0, busy = 0;
    for (size_t h = 0; h + 1 < path->size(); ++h) {
      const int l = (*path)[h] * n + (*path)[h + 1];
      latency += b.latency_ms[l] / 1e3;
      busy = std::max(busy, load[l] * 8 / (b.gbps[l] * 1e9));
    }
    out.push_back({latency, busy});
  }
  return out;
}

}  // namespace

double step_seconds(const LinkBeliefs& b, const Flows& flows) {
  double worst = 0;
  for (const auto& [latency, busy] : flow_times(b, flows)) worst = std::max(worst, latency + busy);
  return worst;
}

double owner_plan_seconds(const LinkBeliefs& b, const SyncPlan& p, double bytes) {
  const int n = b.n;
  if (n <= 1) return 0;
  // Owner j broadcasts once all its parts have arrived and its own reduce bytes have left; the
  // sync ends with the last broadcast flow's arrival.
  Flows reduce, broadcast;
  std::vector<int> reduce_src, reduce_dst, broadcast_src;
  for (int j = 0; j < n; ++j) {
    const double slice = p.owner_fraction[j] * bytes;
    if (slice <= 0) continue;
    for (int d = 0; d < n; ++d) {
      if (d == j) continue;
      for (const Route& r : p.reduce[d * n + j]) {
        reduce.push_back({&r.path, slice * r.fraction});
        reduce_src.push_back(d), reduce_dst.push_back(j);
      }
      for (const Route& r : p.broadcast[j * n + d]) {
        broadcast.push_back({&r.path, slice * r.fraction});
        broadcast_src.push_back(j);
      }
    }
  }
  std::vector<double> ready(n, 0.0);
  const auto rt = flow_times(b, reduce);
  for (size_t f = 0; f < rt.size(); ++f) {
    ready[reduce_dst[f]] = std::max(ready[reduce_dst[f]], rt[f].first + rt[f].second);
    ready[reduce_src[f]] = std::max(ready[reduce_src[f]], rt[f].second);
  }
  double end = 0;
  const auto bt = flow_times(b, broadcast);
  for (size_t f = 0; f < bt.size(); ++f)
    end = std::max(end, ready[broadcast_src[f]] + bt[f].first + bt[f].second);
  return end;
}

double ring_seconds(const LinkBeliefs& b, const std::vector<int>& order, const Paths& paths,
                    double bytes, const Routes* routes) {
  const int n = b.n;
  if (n <= 1) return 0;
  const std::vector<int> ring = ring_order(order, n);
  const bool split = routes && static_cast<int>(routes->size()) == n * n;
  Flows parts;
  std::vector<int> hop_of;  // per part: its hop (position i to i + 1)
  for (int i = 0; i < n; ++i) {
    const int pair = ring[i] * n + ring[(i + 1) % n];
    const size_t before = parts.size();
    if (split)
      for (const Route& r : (*routes)[pair])
        if (r.fraction > 0) parts.push_back({&r.path, bytes / n * r.fraction}), hop_of.push_back(i);
    if (parts.size() == before) {  // no routes (or none with a share): the hop's path
      parts.push_back({&paths[pair], bytes / n});
      hop_of.push_back(i);
    }
  }
  const auto ft = flow_times(b, parts);
  // Per hop: when its bytes have left the sender, and when the last of them has arrived.
  std::vector<double> leave(n, 0.0), arrive(n, 0.0);
  for (size_t f = 0; f < parts.size(); ++f) {
    leave[hop_of[f]] = std::max(leave[hop_of[f]], ft[f].second);
    arrive[hop_of[f]] = std::max(arrive[hop_of[f]], ft[f].first + ft[f].second);
  }
  // A relay forwards within its own step (every DC on a path runs the step's transfers), so it
  // finishes the step only when the relayed bytes have reached it: per part, each relay's ring
  // position and the path's latency up to it.
  std::vector<int> pos(n);
  for (int i = 0; i < n; ++i) pos[ring[i]] = i;
  std::vector<std::vector<std::pair<int, double>>> relays(n);  // per hop: (position, reached at)
  // And a relay receives the step's relayed chunks only once it is in that step itself (the
  // transport's exchange for the step posts them), so a part cannot arrive before the relay's
  // start of the step plus the rest of its path: per hop, (relay position, latency from it to
  // the destination + the part's transmission). Without it a relay through a DC that starts its
  // steps late looked as fast as through one in step: on mesh6-c, where latencies of 40-115 ms
  // stagger the positions' starts, mdp took relays that ran 15-30% slower than direct, and the
  // oracle ran at 273 tok/s against 292 with it, one run each (test:
  // ARelayForwardsOnlyInItsOwnStep).
  std::vector<std::vector<std::pair<int, double>>> gates(n);
  for (size_t f = 0; f < parts.size(); ++f) {
    const std::vector<int>& p = *parts[f].first;
    double lat = 0;
    for (size_t h = 1; h + 1 < p.size(); ++h) {
      lat += b.latency_ms[p[h - 1] * n + p[h]] / 1e3;
      relays[hop_of[f]].push_back({pos[p[h]], lat + ft[f].second});
    }
    // From the last relay back: the latency from each relay to the destination. (A second
    // relay's own wait for the first one's start is not modelled: `relays` has it reached from
    // the sender's start.)
    double rest = 0;
    for (size_t h = p.size(); h >= 3; --h) {
      rest += b.latency_ms[p[h - 2] * n + p[h - 1]] / 1e3;
      gates[hop_of[f]].push_back({pos[p[h - 2]], rest + ft[f].second});
    }
  }
  // Position i finishes a step when its own bytes have left and its predecessor's have arrived
  // (and what it relays has reached it); it starts the next step then (the transport's courier: a
  // sender does not wait for its bytes to arrive). Steps are therefore not in lockstep: on a ring
  // with one slow hop the slow hop's latency is paid along the dependency chain, not by every
  // position at every step.
  std::vector<double> start(n, 0.0), done(n);
  for (int k = 0; k < 2 * (n - 1); ++k) {
    for (int i = 0; i < n; ++i) {
      const int prev = (i + n - 1) % n;
      done[i] = std::max(start[i] + leave[i], start[prev] + arrive[prev]);
      for (const auto& [r, rest] : gates[prev]) done[i] = std::max(done[i], start[r] + rest);
    }
    for (int i = 0; i < n; ++i)
      for (const auto& [r, at] : relays[i]) done[r] = std::max(done[r], start[i] + at);
    start = done;
  }
  return *std::max_element(done.begin(), done.end());
}

RingChoice descend_ring(const LinkBeliefs& b, const std::vector<int>& ring, Paths paths,
                        Routes routes, double bytes, const HopCandidates& candidates,
                        int passes) {
  const int n = b.n;
  const std::vector<int> order = ring_order(ring, n);
  const int N = static_cast<int>(order.size());
  if (static_cast<int>(routes.size()) != n * n) routes.assign(static_cast<size_t>(n) * n, {});
  double best = ring_seconds(b, order, paths, bytes, &routes);
  for (int pass = 0; pass < passes; ++pass) {
    bool moved = false;
    for (int i = 0; i < N; ++i) {
      const int pair = order[i] * n + order[(i + 1) % N];
      for (const auto& p : candidates(order[i], order[(i + 1) % N])) {
        std::vector<int> keep_path = paths[pair];
        std::vector<Route> keep_routes = std::move(routes[pair]);
        paths[pair] = p;
        routes[pair].clear();
        const double sec = ring_seconds(b, order, paths, bytes, &routes);
        if (sec < best * (1 - 1e-9)) {
          best = sec, moved = true;
        } else {
          paths[pair] = std::move(keep_path);
          routes[pair] = std::move(keep_routes);
        }
      }
    }
    if (!moved) break;
  }
  return {best, std::move(paths), std::move(routes)};
}

RingChoice refine_ring(const LinkBeliefs& b, const std::vector<int>& order, const Paths& paths,
                       const Routes& routes, double bytes, const HopCandidates& candidates,
                       const SplitCandidates& splittable) {
  const int n = b.n;
  // The split hops' shares fitted to the ring on `b` before the descent compares them with
  // single paths: a share fitted on other figures (a pair's own model) can make a split look
  // slower than its relay alone where at its best share it is faster — tc detour3 dropped the
  // sliver a pair kept on its congested direct link, and with it the link's measurements
  // (docs/paths.md, "A sliver that keeps looking").
  RingChoice start{ring_seconds(b, order, paths, bytes, &routes), paths, routes};
  refine_ring_shares(b, order, start, bytes);
  RingChoice best = descend_ring(b, order, start.paths, start.routes, bytes, candidates);
  Paths all_paths = paths;
  Routes all_routes = routes;
  if (static_cast<int>(all_routes.size()) != n * n) all_routes.assign(static_cast<size_t>(n) * n, {});
  int evened = 0;
  for (const auto& [pair, two] : splittable) {
    if (!all_routes[pair].empty()) continue;
    all_routes[pair] = {Route{two.first, 0.5}, Route{two.second, 0.5}};
    all_paths[pair] = two.first;
    ++evened;
  }
  if (evened > 0) {
    // Shares first set on the ring, then the descent (which may unsplit a hop).
    RingChoice even{ring_seconds(b, order, all_paths, bytes, &all_routes), all_paths, all_routes};
    refine_ring_shares(b, order, even, bytes);
    RingChoice split = descend_ring(b, order, even.paths, even.routes, bytes, candidates);
    if (split.seconds < best.seconds * (1 - 1e-9)) best = std::move(split);
  }
  refine_ring_shares(b, order, best, bytes);
  return best;
}

double expected_ring_seconds(const std::vector<WeightedLinks>& states, const std::vector<int>& order,
                             const Paths& paths, double bytes, const Routes* routes) {
  double sec = 0;
  for (const WeightedLinks& s : states) sec += s.weight * ring_seconds(s.b, order, paths, bytes, routes);
  return sec;
}

void refine_ring_shares(const LinkBeliefs& b, const std::vector<int>& order, RingChoice& c,
                        double bytes, int passes) {
  refine_ring_shares(std::vector<WeightedLinks>{{1.0, b}}, order, c, bytes, passes);
}

void refine_ring_shares(const std::vector<WeightedLinks>& states, const std::vector<int>& order,
                        RingChoice& c, double bytes, int passes, double least) {
  if (states.empty()) return;
  const int n = states.front().b.n;
  if (static_cast<int>(c.routes.size()) != n * n) return;
  const std::vector<int> ring = ring_order(order, n);
  const int N = static_cast<int>(ring.size());
  for (int pass = 0; pass < passes; ++pass) {
    bool moved = false;
    for (int i = 0; i < N; ++i) {
      std::vector<Route>& r = c.routes[ring[i] * n + ring[(i + 1) % N]];
      if (r.size() != 2) continue;
      double best_f = r[0].fraction;
      for (int g = 1; g < 50; ++g) {
        const double f = g / 50.0;
        if (f < least - 1e-12 || 1 - f < least - 1e-12) continue;
        r[0].fraction = f, r[1].fraction = 1 - f;
        const double sec = expected_ring_seconds(states, ring, c.paths, bytes, &c.routes);
        if (sec < c.seconds * (1 - 1e-9)) c.seconds = sec, best_f = f, moved = true;
      }
      r[0].fraction = best_f, r[1].fraction = 1 - best_f;
      c.paths[ring[i] * n + ring[(i + 1) % N]] = r[best_f >= 0.5 ? 0 : 1].path;
    }
    if (!moved) break;
  }
}

int keep_probes(const LinkBeliefs& b, const std::vector<int>& order, RingChoice& c, double bytes,
                const std::vector<Probe>& probes) {
  const int n = b.n;
  if (static_cast<int>(c.routes.size()) != n * n) c.routes.assign(static_cast<size_t>(n) * n, {});
  int kept = 0;
  for (const Probe& p : probes) {
    const std::vector<Route>& rs = c.routes[p.pair];
    auto split = [](const std::vector<Route>& r) {
      return r.size() == 2 && r[0].fraction > 0 && r[1].fraction > 0;
    };
    if (split(rs) || !split(p.routes)) continue;  // split already, or a part that measures nothing
    RingChoice with = c;
    with.routes[p.pair] = p.routes;
    with.paths[p.pair] = p.routes[p.routes[0].fraction >= 0.5 ? 0 : 1].path;
    with.seconds = ring_seconds(b, order, with.paths, bytes, &with.routes);
    refine_ring_shares(b, order, with, bytes);  // shares are free: every split hop's refitted
    if (with.seconds - c.seconds < p.worth_s) c = std::move(with), ++kept;
  }
  return kept;
}

}  // namespace strait
