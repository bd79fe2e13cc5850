// plan.cpp — owner-plan helpers, checks and encodings (see plan.hpp).
#include "sync/plan.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace strait {

namespace {

// Part i of a partition of n by `fractions`: cut points floor(prefix · n). A part of fraction
// <= 0 is empty, whatever rounding leaves over; the last part of positive fraction ends at n, so
// the parts cover everything (fractions summing to 1 within rounding leave no tail behind).
std::pair<size_t, size_t> cut(const std::vector<double>& fractions, size_t i, size_t n) {
  double before = 0;
  for (size_t k = 0; k < i; ++k) before += std::max(0.0, fractions[k]);
  auto at = [&](double f) {
    return std::min(n, static_cast<size_t>(std::floor(f * static_cast<double>(n) + 1e-9)));
  };
  const size_t lo = i == 0 ? 0 : at(before);
  if (!(fractions[i] > 0)) return {lo, lo};
  bool last = true;
  for (size_t k = i + 1; k < fractions.size(); ++k) last = last && !(fractions[k] > 0);
  const size_t hi = last ? n : at(before + fractions[i]);
  return {lo, std::max(lo, hi)};
}

void check_routes(const std::vector<Route>& rs, int from, int to, int n, const char* what) {
  const std::string pair = std::string(what) + " " + std::to_string(from) + "->" + std::to_string(to);
  if (rs.empty()) throw std::invalid_argument("sync plan: no route for " + pair);
  double sum = 0;
  for (const auto& r : rs) {
    if (!(r.fraction >= 0)) throw std::invalid_argument("sync plan: negative route fraction for " + pair);
    sum += r.fraction;
    if (r.path.size() < 2 || r.path.front() != from || r.path.back() != to)
      throw std::invalid_argument("sync plan: a route of " + pair + " does not run from " +
                                  std::to_string(from) + " to " + std::to_string(to));
    for (int d : r.path)
      if (d < 0 || d >= n) throw std::invalid_argument("sync plan: a route of " + pair + " names DC " + std::to_string(d));
  }
  if (std::fabs(sum - 1.0) > 1e-6)
    throw std::invalid_argument("sync plan: route fractions of " + pair + " sum to " + std::to_string(sum));
}

}  // namespace

SyncPlan star_plan(int n, int hub, const Paths& paths, const Routes* routes) {
  SyncPlan p;
  p.strategy = "owners";
  p.owner_fraction.assign(n, 0.0);
  p.owner_fraction[hub] = 1.0;
  p.reduce.assign(static_cast<size_t>(n) * n, {});
  p.broadcast.assign(static_cast<size_t>(n) * n, {});
  // The path selector's split routes, fixed: a standby (fraction 0) and the rates that make a
  // ring's routes adaptive are the ring exchange's (net/transport.hpp), not an owner plan's.
  auto routes_of = [&](int a, int b) {
    std::vector<Route> out;
    if (routes && static_cast<int>(routes->size()) == n * n)
      for (const Route& r : (*routes)[a * n + b])
        if (r.fraction > 0) out.push_back(Route{r.path, r.fraction});
    if (out.size() == 1) out[0].fraction = 1.0;
    if (out.empty()) out.push_back(Route{paths.at(a * n + b), 1.0});
    return out;
  };
  for (int d = 0; d < n; ++d) {
    if (d == hub) continue;
    p.reduce[d * n + hub] = routes_of(d, hub);
    p.broadcast[hub * n + d] = routes_of(hub, d);
  }
  return p;
}

void check_owner_plan(const SyncPlan& p, int n) {
  if (static_cast<int>(p.owner_fraction.size()) != n)
    throw std::invalid_argument("sync plan: " + std::to_string(p.owner_fraction.size()) +
                                " owner fractions for " + std::to_string(n) + " datacenters");
  double sum = 0;
  for (double f : p.owner_fraction) {
    if (!(f >= 0)) throw std::invalid_argument("sync plan: a negative owner fraction");
    sum += f;
  }
  if (std::fabs(sum - 1.0) > 1e-6)
    throw std::invalid_argument("sync plan: owner fractions sum to " + std::to_string(sum));
  const size_t nn = static_cast<size_t>(n) * n;
  if (p.reduce.size() != nn || p.broadcast.size() != nn)
    throw std::invalid_argument("sync plan: reduce and broadcast need one entry per ordered pair");
  for (int j = 0; j < n; ++j) {
    if (p.owner_fraction[j] <= 0) continue;
    for (int d = 0; d < n; ++d) {
      if (d == j) continue;
      check_routes(p.reduce[d * n + j], d, j, n, "reduce");
      check_routes(p.broadcast[j * n + d], j, d, n, "broadcast");
    }
  }
}

std::vector<int> ring_order(const std::vector<int>& ring, int n) {
  if (!ring.empty()) return ring;
  std::vector<int> order(static_cast<size_t>(std::max(n, 0)));
  std::iota(order.begin(), order.end(), 0);
  return order;
}

void check_ring(const SyncPlan& p, int n) {
  if (p.ring.empty()) return;
  std::vector<bool> seen(n, false);
  bool ok = static_cast<int>(p.ring.size()) == n;
  for (int d : p.ring) {
    ok = ok && d >= 0 && d < n && !seen[d];
    if (ok) seen[d] = true;
  }
  if (!ok) throw std::invalid_argument("sync plan: the ring order is not a permutation of the " +
                                       std::to_string(n) + " datacenters");
}

std::vector<const std::vector<int>*> route_paths(const SyncPlan& p) {
  std::vector<const std::vector<int>*> out;
  for (const auto* flows : {&p.reduce, &p.broadcast})
    for (const auto& rs : *flows)
      for (const auto& r : rs) out.push_back(&r.path);
  return out;
}

std::pair<size_t, size_t> owner_slice(const SyncPlan& p, int owner, size_t n) {
  return cut(p.owner_fraction, static_cast<size_t>(owner), n);
}


namespace {
void encode_routes(wire::Writer& w, const std::vector<std::vector<Route>>& v) {
  w.put<uint64_t>(v.size());
  for (const auto& rs : v) {
    w.put<uint64_t>(rs.size());
    for (const auto& r : rs) w.put(r.path), w.put(r.fraction);
  }
}
void decode_routes(wire::Reader& rd, std::vector<std::vector<Route>>& v) {
  v.resize(rd.get<uint64_t>());
  for (auto& rs : v) {
    rs.resize(rd.get<uint64_t>());
    for (auto& r : rs) rd.get(r.path), rd.get(r.fraction);
  }
}
void json_routes(std::ostringstream& js, const std::vector<std::vector<Route>>& v, int n) {
  js << "[";
  bool first = true;
  for (size_t k = 0; k < v.size(); ++k)
    for (const auto& r : v[k]) {
      js << (first ? "" : ",") << "{\"from\":" << k / n << ",\"to\":" << k % n << ",\"path\":[";
      for (size_t i = 0; i < r.path.size(); ++i) js << (i ? "," : "") << r.path[i];
      js << "],\"fraction\":" << r.fraction << "}";
      first = false;
    }
  js << "]";
}
}  // namespace

void encode(wire::Writer& w, const SyncPlan& p) {
  w.put(p.strategy);
  w.put(p.owner_fraction);
  encode_routes(w, p.reduce);
  encode_routes(w, p.broadcast);
  w.put(p.ring);
  w.put(p.predicted_ms);
}

void decode(wire::Reader& r, SyncPlan& p) {
  r.get(p.strategy);
  r.get(p.owner_fraction);
  decode_routes(r, p.reduce);
  decode_routes(r, p.broadcast);
  r.get(p.ring);
  r.get(p.predicted_ms);
}

std::string to_json(const SyncPlan& p) {
  std::ostringstream js;
  js.precision(10);
  js << "{\"strategy\":\"" << p.strategy << "\"";
  if (!p.owner_fraction.empty()) {
    const int n = static_cast<int>(p.owner_fraction.size());
    js << ",\"owner_fraction\":[";
    for (size_t i = 0; i < p.owner_fraction.size(); ++i) js << (i ? "," : "") << p.owner_fraction[i];
    js << "],\"reduce\":";
    json_routes(js, p.reduce, n);
    js << ",\"broadcast\":";
    json_routes(js, p.broadcast, n);
  }
  if (!p.ring.empty()) {
    js << ",\"ring\":[";
    for (size_t i = 0; i < p.ring.size(); ++i) js << (i ? "," : "") << p.ring[i];
    js << "]";
  }
  if (p.predicted_ms > 0) js << ",\"predicted_ms\":" << p.predicted_ms;
  js << "}";
  return js.str();
}

}  // namespace strait
