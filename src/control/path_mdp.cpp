// path_mdp.cpp — path selector "mdp": per ordered pair that the sync plan in force sends on, a
// Markov decision process over the congestion of the links its candidate paths use.
//   actions  the direct link (when it exists), K (control.paths.relays) relayed paths through
//            one or two other DCs — the one in force (with K >= 2), then the best by the pair's
//            predicted time (then fewer hops, then latency; a ring hop's first by the ring's
//            predicted time with the hop on the relay) — and a split of the bytes over the
//            first two candidates, its share the one
//            of least expected time over the links' beliefs (in proportion to the two paths'
//            rates where their state is known: split_share);
//   state    the joint congestion state of the links involved (link_state.hpp: each link's
//            measured rate cut into `states` levels) and the action in force (switching costs);
//   model    each link's own Markov chain (link_state.hpp: its transition counts under a prior
//            from the world's other links) — links move
//            independently, and our traffic does not change their state — and each state's mean
//            measured capacity; latency from the measured small-message samples;
//   cost     the expected time of the pair's traffic (path_cost.hpp: messages × latency + bytes /
//            bottleneck rate) when the decision takes effect, control.lag steps on, plus
//            control.paths.switch_cost_ms for changing the action; a link that the other pairs'
//            paths in force also use is counted at 1/(1 + their number) of its capacity (the
//            sync's flows run at once and share it — on a ring of 3 DCs every pair relaying over
//            the third would otherwise load the same two links twice);
//   solved   by value iteration (mdp.hpp) with the ε(1−γ)/(2γ) stopping rule, re-solved only when
//            a link's estimates have moved by more than control.paths.resolve_change.
// The state now is known only in part: a link measured exactly in the last step is in its
// measured level; one that was not (a path not in use) has a belief, its last level propagated
// by its chain; a lower bound (link_state.hpp) leaves the levels at or above its own. The
// action is the one of least expected cost under that joint belief, argmin_a Σ_x b(x) Q(x, p, a)
// with Q the solved MDP's action values (the QMDP rule of Littman, Cassandra and Kaelbling,
// 1995): a link that recovers half the time is weighed as such, rather
// than as its most likely level, which would send traffic back to it — and back off again —
// whenever recovery becomes a little more likely than not. With certain states this is the MDP's
// policy; with no switching cost that is the one-step best choice (tested). QMDP assumes the
// state is seen next step whatever is done, so alone it never pays to look at a link not in use;
// with control.paths.explore each action is credited with what trying it teaches (the knowledge
// gradient, explore_value below).
// Under the hierarchical ring the per-pair actions are then refined jointly over the ring's hops
// on the expected figures (joint_ring below), since a pair's best path alone can slow the ring;
// a split a pair chose for what it teaches is kept through that while it costs the ring less.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "control/beliefs.hpp"
#include "control/mdp.hpp"
#include "control/path_cost.hpp"
#include "control/policies.hpp"
#include "control/standby.hpp"
#include "control/sync_cost.hpp"

namespace strait {
namespace {

// The least relative gain of the ring for which the joint refinement overrides the pairs.
constexpr double kJointMargin = 0.01;
// The least part of a hop the shares on the likely states (joint_ring) move a split's part to: a
// sliver buys almost nothing and measures its links badly — on markov3 parts of 6–8% relayed
// over a clear a→c streamed there at 0.005–0.009 of its 0.1 Gbit/s, and a→c, then believed
// congested, was left unused through 16 steps in which it was the way round.
constexpr double kLeastPart = 0.1;

class Mdp final : public PathSelector {
 public:
  explicit Mdp(const Config& cfg)
      : pc_(cfg.control.paths), ahead_(cfg.control.sync_ahead()) {}
  std::string name() const override { return "mdp"; }

  PathDecision choose(const ControllerView& v) override {
    const World& w = v.world();
    const LinkStates& ls = v.links();
    const int n = w.num_dcs;
    const auto traffic = pair_traffic(v.plan(), w);
    PathDecision d{v.plan().paths, v.plan().routes, ""};
    if (static_cast<int>(d.paths.size()) != n * n) d.paths = direct_paths(n);
    if (static_cast<int>(d.routes.size()) != n * n) d.routes.assign(static_cast<size_t>(n) * n, {});
    strip_standbys(d.routes, n);  // the actions in force, as decided (standby.hpp)
    for (int s = 0; s < n; ++s)  // a pair without a usable path (the first record) gets the shortest
      for (int t = 0; t < n; ++t)
        if (s != t && !usable(ls, d.paths[s * n + t])) d.paths[s * n + t] = fewest_hop_path(ls, s, t);
    exploring_.clear();
    probing_.clear();
    // A ring hop's relays are ranked by the ring's predicted time with the hop moved onto each
    // (the plan in force elsewhere, on the expected figures the joint step plans on): that step
    // chooses among the pair's candidates on the ring, and the pair's own time does not see
    // where a relay's DC stands in it (decide_pair).
    ring_ = {};
    if (v.plan().sync.strategy == "hierarchical" && n > 2) {
      ring_.on = true;
      ring_.b = expected_links(v);
      ring_.order = ring_order(v.plan().sync.ring, n);
      ring_.paths = d.paths;
      ring_.routes = d.routes;
      ring_.bytes = w.gradient_bytes;
    }
    std::ostringstream js;
    js << "{\"pairs\":[";
    bool first = true;
    for (int s = 0; s < n; ++s)
      for (int t = 0; t < n; ++t) {
        const PairTraffic& tr = traffic[s * n + t];
        if (s == t || tr.messages == 0) continue;
        js << (first ? "" : ",");
        first = false;
        decide_pair(v, s, t, traffic, d, js);
      }
    js << "]";
    if (v.plan().sync.strategy == "hierarchical" && n > 2) joint_ring(v, d, js);
    if (pc_.standby && v.plan().sync.strategy == "hierarchical" && n > 2)
      arm_standbys(d, expected_links(v), v.plan().sync.ring, w.gradient_bytes, traffic,
                   [&](int s, int t) {
                     const auto it = pairs_.find(s * n + t);
                     return it == pairs_.end() ? simple_paths(ls, s, t, 2) : it->second.paths;
                   });
    js << "}";
    d.detail = js.str();
    return d;
  }

 private:
  struct Pair {
    std::vector<std::vector<int>> paths;  // the candidate paths; action paths.size() = split
    bool split = false;                   // the split action exists (over paths[0] and [1])
    std::vector<int> links;               // involved links (src·n + dst), one digit each
    std::vector<double> fingerprint;      // the model it was solved on
    MdpSolution sol;
    std::vector<double> q;                // Q[(x·A + p)·A + a]: cost now + γ · expected value next
    int A = 0, X = 0;
    double share0 = 1;                    // the split's share on paths[0]
  };
  // The ring in force, for ranking a ring hop's relays (choose, decide_pair).
  struct RingContext {
    bool on = false;
    LinkBeliefs b;
    std::vector<int> order;
    Paths paths;
    Routes routes;
    double bytes = 0;
    bool hop(int s, int t) const {
      for (size_t i = 0; on && i < order.size(); ++i)
        if (order[i] == s && order[(i + 1) % order.size()] == t) return true;
      return false;
    }
    double seconds_via(int s, int t, const std::vector<int>& p) const {
      const int n = b.n;
      Paths ps = paths;
      Routes rs = routes;
      ps[s * n + t] = p;
      rs[s * n + t].clear();
      return ring_seconds(b, order, ps, bytes, &rs);
    }
  };
  struct Stale {
    int digit;    // the link's index in Pair::links
    double stay;  // the chance it keeps a level a step on, under its belief now
  };
  // The split's two parts in each joint state x of the pair's links: their paths' bottleneck
  // rates (c0[x], c1[x]) and latencies, for what a measurement is worth to the split's share
  // (explore_value). Empty when the pair has no split.
  struct SplitParts {
    std::vector<double> c0, c1;
    double l0 = 0, l1 = 0;
    PairTraffic tr;
  };
  static SplitParts split_parts(const Pair& pr, const PairTraffic& tr,
                                const std::vector<std::vector<double>>& g,
                                const std::vector<double>& lat, int K, int n) {
    SplitParts sp;
    sp.tr = tr;
    const std::vector<int> d[2] = {digits_of(pr, pr.paths[0], n), digits_of(pr, pr.paths[1], n)};
    for (int i : d[0]) sp.l0 += lat[i];
    for (int i : d[1]) sp.l1 += lat[i];
    std::vector<int> power(pr.links.size(), 1);
    for (size_t i = 1; i < power.size(); ++i) power[i] = power[i - 1] * K;
    sp.c0.assign(static_cast<size_t>(pr.X), 1e300);
    sp.c1.assign(static_cast<size_t>(pr.X), 1e300);
    for (int x = 0; x < pr.X; ++x)
      for (int h = 0; h < 2; ++h) {
        double& c = (h == 0 ? sp.c0 : sp.c1)[static_cast<size_t>(x)];
        for (int i : d[h]) c = std::min(c, g[i][(x / power[i]) % K]);
        c = std::max(c, 1e-12);  // as solve() prices a path
      }
    return sp;
  }

  static int n_of(const ControllerView& v) { return v.world().num_dcs; }

  // The links (src·n + dst) that the paths cross, each once, in the order first crossed.
  static std::vector<int> links_of(const std::vector<std::vector<int>>& ps, int n) {
    std::vector<int> links;
    for (const auto& p : ps)
      for (size_t h = 0; h + 1 < p.size(); ++h) {
        const int l = p[h] * n + p[h + 1];
        if (std::find(links.begin(), links.end(), l) == links.end()) links.push_back(l);
      }
    return links;
  }

  // A path of the pair as the digits (indices in Pair::links) of the links it crosses.
  static std::vector<int> digits_of(const Pair& pr, const std::vector<int>& path, int n) {
    std::vector<int> ds;
    for (size_t h = 0; h + 1 < path.size(); ++h)
      ds.push_back(static_cast<int>(
          std::find(pr.links.begin(), pr.links.end(), path[h] * n + path[h + 1]) - pr.links.begin()));
    return ds;
  }

  static bool usable(const LinkStates& ls, const std::vector<int>& p) {
    if (p.size() < 2) return false;
    for (size_t h = 0; h + 1 < p.size(); ++h)
      if (!ls.has_link(p[h], p[h + 1])) return false;
    return true;
  }

  void decide_pair(const ControllerView& v, int s, int t, const std::vector<PairTraffic>& traffic,
                   PathDecision& d, std::ostringstream& js) {
    const PairTraffic& tr = traffic[s * n_of(v) + t];
    const LinkStates& ls = v.links();
    const int n = ls.n(), K = ls.states();
    // Candidates: direct, the relayed path in force (below), and the best of the rest through one
    // or two relays (sparse graphs need the second: on a ring of 4 the way round a congested link
    // has three hops) — K (control.paths.relays) relayed paths in all.
    const bool direct = ls.has_link(s, t);
    const LinkFigure ewma = [&](int i, int j) { return ls.ewma_gbps(i, j); };
    std::vector<std::pair<std::tuple<double, double, size_t, double>, std::vector<int>>> relayed;
    // Ranked by the pair's predicted time on the believed figures (messages × latency + bytes /
    // bottleneck): on WAN latencies a wide path through two far relays is no detour. A ring
    // hop's first by the ring's predicted time with the hop on the relay (ring_): on mesh6-c,
    // with the fast links at the prior alike (their held-up samples left out: docs/paths.md,
    // "Held-up chunks"), netherlands→tokyo's relays through us-east
    // (3→0→4, and 3→0→1→4) ranked first by their 3.7 ms less latency than through us-west
    // (3→1→4), which then was no candidate; round us-east the spell's steps ran ~780 ms, round
    // us-west (the oracle's) 640–690, since us-east starts each ring step late (its input
    // comes from singapore, 108 ms away).
    const bool ring_hop = ring_.hop(s, t);
    auto offer = [&](std::vector<int> p) {
      double lat = 0;
      for (size_t h = 0; h + 1 < p.size(); ++h) lat += ls.latency_ms(p[h], p[h + 1]);
      const double ms = tr.messages * lat + tr.bytes * 8 / (std::max(bottleneck_gbps(p, ewma), 1e-12) * 1e6);
      const double ring_s = ring_hop ? ring_.seconds_via(s, t, p) : 0.0;
      relayed.push_back({{ring_s, ms, p.size(), lat}, std::move(p)});
    };
    for (int k = 0; k < n; ++k) {
      if (k == s || k == t || !ls.has_link(s, k)) continue;
      if (ls.has_link(k, t)) offer({s, k, t});
      for (int m = 0; m < n; ++m)
        if (m != s && m != t && m != k && ls.has_link(k, m) && ls.has_link(m, t)) offer({s, k, m, t});
    }
    std::sort(relayed.begin(), relayed.end());
    // The candidates for a list of relayed paths, the joint state space kept small enough to
    // solve at every step (K^L <= 4096) by dropping relays from the last.
    auto assemble = [&](const std::vector<std::vector<int>>& relays) {
      std::vector<std::vector<int>> c;
      if (direct) c.push_back({s, t});
      c.insert(c.end(), relays.begin(), relays.end());
      if (c.empty()) c.push_back(fewest_hop_path(ls, s, t));
      while (c.size() > 1 && std::pow(K, links_of(c, n).size()) > 4096) c.pop_back();
      return c;
    };
    std::vector<std::vector<int>> by_rank;
    for (int i = 0; i < static_cast<int>(relayed.size()) && i < pc_.relays; ++i)
      by_rank.push_back(relayed[i].second);
    std::vector<std::vector<int>> cand = assemble(by_rank);
    // A relayed path in force (of a split, its relayed part) keeps a slot, first among the
    // relays, when there are two or more (the rest still go by rank): it is the one path whose
    // links are measured while it carries the bytes, and on a busy machine they read below the
    // prior of links no one uses (the median measured reference), so by rank it fell behind
    // relays that had never been measured. On mesh6-c the relay that ran netherlands→tokyo at
    // the oracle's pace (3→1→4, 640–690 ms steps) dropped out after two steps of it; the joint
    // step, left with direct and two worse relays, sent the bytes back over the congested link
    // (~760 ms) or round a relay that runs ~725 ms.
    const std::vector<int>* in_force = &d.paths[s * n + t];
    for (const Route& r : d.routes[s * n + t])
      if (r.path.size() > 2) {
        in_force = &r.path;
        break;
      }
    if (pc_.relays >= 2 && in_force->size() > 2 && usable(ls, *in_force)) {
      std::vector<std::vector<int>> relays{*in_force};
      for (size_t i = 0; i < relayed.size() && static_cast<int>(relays.size()) < pc_.relays; ++i)
        if (relayed[i].second != *in_force) relays.push_back(relayed[i].second);
      // Only while the pair keeps an alternative to it: a pair without a direct link whose
      // state space leaves room for one path only would otherwise stay on the one it is on.
      std::vector<std::vector<int>> with = assemble(relays);
      if (with.size() >= 2) cand = std::move(with);
    }
    // How many other pairs' paths in force use each link (their flows share it with ours).
    std::vector<int> sharers(static_cast<size_t>(n) * n, 0);
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        if (a == b || (a == s && b == t) || traffic[a * n + b].messages == 0) continue;
        const auto& routes = d.routes[a * n + b];
        std::vector<std::vector<int>> ps;
        if (routes.empty()) ps.push_back(d.paths[a * n + b]);
        for (const Route& r : routes) ps.push_back(r.path);
        for (const auto& p : ps)
          for (size_t h = 0; h + 1 < p.size(); ++h) ++sharers[p[h] * n + p[h + 1]];
      }
    Pair fresh;
    fresh.paths = cand;
    fresh.split = cand.size() >= 2;
    fresh.links = links_of(cand, n);
    fresh.A = static_cast<int>(cand.size()) + (fresh.split ? 1 : 0);
    fresh.X = static_cast<int>(std::pow(K, fresh.links.size()));

    // The model: per link its chain, its levels' capacities and its latency.
    std::vector<std::vector<double>> P, g;
    std::vector<double> lat, fp{tr.bytes, static_cast<double>(tr.messages)};
    for (int l : fresh.links) {
      const int a = l / n, b = l % n;
      P.push_back(ls.transition(a, b));
      g.push_back(ls.state_gbps(a, b));
      for (double& x : g.back()) x /= 1 + sharers[l];
      lat.push_back(ls.latency_ms(a, b));
      fp.insert(fp.end(), P.back().begin(), P.back().end());
      fp.insert(fp.end(), g.back().begin(), g.back().end());
      fp.push_back(lat.back());
    }
    if (fresh.split) {
      // The share that makes the split's expected time least over the links' beliefs when the
      // decision takes effect, on the model the MDP is solved on (split_share below).
      const int64_t at = v.sync_step();
      std::vector<std::vector<double>> bel;
      for (int l : fresh.links) bel.push_back(ls.belief(l / n, l % n, at));
      fresh.share0 = split_share(fresh, tr, bel, g, lat, K, n);
      fp.push_back(fresh.share0);
    }
    Pair& pair = pairs_[s * n + t];
    const bool same_shape = pair.paths == fresh.paths && pair.fingerprint.size() == fp.size();
    bool resolve = !same_shape;
    for (size_t i = 0; !resolve && i < fp.size(); ++i)
      resolve = std::fabs(fp[i] - pair.fingerprint[i]) >
                pc_.resolve_change * std::max(std::fabs(fp[i]), std::fabs(pair.fingerprint[i])) + 1e-12;
    if (resolve) {
      fresh.fingerprint = fp;
      // The same candidates: start from the last solution (the model moves little a step).
      solve(fresh, tr, P, g, lat, K, n, same_shape ? pair.sol.value : std::vector<double>{});
      pair = std::move(fresh);
    }

    // The belief now: per link its state distribution (one-hot where measured exactly in the
    // last step), the joint one their product (the links' chains are independent); shown as the
    // most likely level per link.
    const int64_t now = v.last() ? v.last()->step : -1;
    std::vector<double> joint(static_cast<size_t>(pair.X), 1.0);
    std::vector<Stale> stale;  // the involved links whose level is not known
    std::ostringstream state;
    for (size_t i = 0, mult = 1; i < pair.links.size(); ++i, mult *= K) {
      const int a = pair.links[i] / n, b = pair.links[i] % n;
      std::vector<double> bel(K, 0.0);
      if (now >= 0 && ls.measured(a, b)) bel = ls.belief(a, b, now);
      else bel[ls.last_state(a, b)] = 1.0;
      if (*std::max_element(bel.begin(), bel.end()) < 1 - 1e-9) {
        // The chance a level, once seen, is still the link's a step later: Σ_k b_k P_kk.
        const std::vector<double> P = ls.transition(a, b);
        double stay = 0;
        for (int k = 0; k < K; ++k) stay += bel[k] * P[k * K + k];
        stale.push_back({static_cast<int>(i), stay});
      }
      for (int x = 0; x < pair.X; ++x) joint[x] *= bel[(x / mult) % K];
      state << (i ? "," : "")
            << static_cast<int>(std::max_element(bel.begin(), bel.end()) - bel.begin());
    }
    int p = 0;
    const auto& routes = d.routes[s * n + t];
    if (pair.split && routes.size() == 2 && routes[0].path == pair.paths[0] &&
        routes[1].path == pair.paths[1])
      p = pair.A - 1;
    else
      for (size_t i = 0; i < pair.paths.size(); ++i)
        if (routes.empty() && d.paths[s * n + t] == pair.paths[i]) p = static_cast<int>(i);
    int a = 0;
    double best = 1e300;
    std::vector<double> expected(pair.A, 0.0);
    for (int c = 0; c < pair.A; ++c) {
      double& e = expected[c];
      for (int x = 0; x < pair.X; ++x)
        if (joint[x] > 0) e += joint[x] * pair.q[(static_cast<size_t>(x) * pair.A + p) * pair.A + c];
      if (e < best - 1e-12) best = e, a = c;
    }
    // What trying an action teaches (see explore_value): taken over the QMDP choice when the
    // expected saving from the next decisions on what it measures outweighs its expected cost now.
    const int qmdp = a;
    std::vector<double> info(pair.A, 0.0);
    if (pc_.explore) {
      const SplitParts parts =
          pair.split && !stale.empty() ? split_parts(pair, tr, g, lat, K, n) : SplitParts{};
      double score = best;
      for (int c = 0; c < pair.A; ++c) {
        info[c] = explore_value(pair, joint, p, c, best, stale, K, n, parts);
        if (expected[c] - info[c] < score - 1e-12) score = expected[c] - info[c], a = c;
      }
    }
    if (a != qmdp) exploring_.insert(s * n + t);
    if (pair.split && a == pair.A - 1 && info[a] > 0) probing_[s * n + t] = info[a];
    if (pair.split && a == pair.A - 1) {
      // Split with the share the MDP was solved for (split_share, when it was solved).
      const double f0 = pair.share0;
      d.paths[s * n + t] = pair.paths[f0 >= 0.5 ? 0 : 1];
      d.routes[s * n + t] = {Route{pair.paths[0], f0}, Route{pair.paths[1], 1 - f0}};
    } else {
      d.paths[s * n + t] = pair.paths[a];
      d.routes[s * n + t].clear();
    }
    js << "{\"from\":" << s << ",\"to\":" << t << ",\"paths\":[";
    for (size_t c = 0; c < pair.paths.size(); ++c) {
      js << (c ? ",[" : "[");
      for (size_t h = 0; h < pair.paths[c].size(); ++h) js << (h ? "," : "") << pair.paths[c][h];
      js << "]";
    }
    js << "],\"state\":[" << state.str() << "],\"action\":"
       << (pair.split && a == pair.A - 1 ? std::string("\"split\"") : std::to_string(a))
       << ",\"explored\":" << (a != qmdp ? "true" : "false")
       << ",\"expected_ms\":" << expected[a] << ",\"by_action_ms\":[";
    for (int c = 0; c < pair.A; ++c) js << (c ? "," : "") << expected[c];
    js << "],\"info_ms\":[";
    for (int c = 0; c < pair.A; ++c) js << (c ? "," : "") << info[c];
    js << "]"
       << ",\"iterations\":" << pair.sol.iterations << ",\"resolved\":" << (resolve ? "true" : "false")
       << "}";
  }

  // Under the hierarchical ring the pairs' choices interact: a ring position starts its next step
  // when its predecessor's bytes have arrived, and a relay forwards within its own step, so a
  // relay or split that is best for its pair alone can lengthen the chain of the whole ring
  // (sync_cost.hpp, descend_ring). The ring's hops are refined jointly, as the oracle does on the
  // true figures, on the rates expected when the decision takes effect
  // (LinkStates::expected_gbps) and the believed latencies (windowed minima): coordinate descent
  // from two starts (below), each hop among its pair's candidate paths (a split hop may become
  // one of them), then the split hops' shares set on the whole ring. Kept when its expected
  // time over the MDP's horizon plus the switching cost of the hops whose paths it changes
  // against the plan in force is below the per-pair choices' (their time and switches).
  // Last, the split hops' shares are set on the ring's time expected over the links' likely
  // states (likely_states below).
  // Each link's rate expected at the sync the decision first runs (its belief then and its
  // levels' mean measured capacities) and its believed latency: what the joint step plans on.
  static LinkBeliefs expected_links(const ControllerView& v) {
    const LinkStates& ls = v.links();
    const int n = v.world().num_dcs;
    const int64_t at = v.sync_step();
    LinkBeliefs b{n, std::vector<double>(static_cast<size_t>(n) * n, 0.0),
                  std::vector<double>(static_cast<size_t>(n) * n, 0.0), "expected"};
    for (int a = 0; a < n; ++a)
      for (int c = 0; c < n; ++c) {
        if (a == c || !ls.has_link(a, c)) continue;
        b.gbps[a * n + c] = ls.expected_gbps(a, c, at);
        b.latency_ms[a * n + c] = ls.latency_ms(a, c);
      }
    return b;
  }

  void joint_ring(const ControllerView& v, PathDecision& d, std::ostringstream& js) const {
    const LinkStates& ls = v.links();
    const World& w = v.world();
    const int n = w.num_dcs;
    const int64_t at = v.sync_step();
    const LinkBeliefs b = expected_links(v);
    const std::vector<int> ring = ring_order(v.plan().sync.ring, n);
    const HopCandidates around = [&](int s, int t) {
      const auto it = pairs_.find(s * n + t);
      return it == pairs_.end() ? std::vector<std::vector<int>>{d.paths[s * n + t]} : it->second.paths;
    };
    const double S = w.gradient_bytes;
    const double before = ring_seconds(b, ring, d.paths, S, &d.routes);
    // refine_ring (sync_cost.hpp) from the pairs' choices, and from every hop whose pair has a
    // split action split over its two candidates: tc clear3 ran its first 30 steps with one or
    // two of its three hops split, 57 ms a step against the oracle's 45, since each pair alone
    // saw its relay cross links the other pairs' splits use. That second start splits only
    // over links believed clear — the likeliest level as last seen in the upper half
    // of the levels (with 5 levels, at least 0.6 of the reference; a clear link under tc reads
    // 0.7–1.0 of it): the per-pair MDP weighed each split's risk on its links' chains, the
    // joint step sees only their expected rates, and without the condition it put a fifth of a
    // pair's bytes on a link that had just congested (tc detour3, six steps at ~1 s).
    // The level as last seen, not the belief propagated to the effective step: a congested
    // link the pairs left is not measured, its belief drifts towards recovery, and with the
    // belief at the effective step the start put 44% of a→b's bytes back on it in the middle of
    // its congestion (tc detour3, 430 ms steps). A link never measured is in its prior, the top.
    const int clear_from = (ls.states() + 1) / 2;
    auto clear = [&](const std::vector<int>& p) {
      for (size_t h = 0; h + 1 < p.size(); ++h)
        if (ls.last_state(p[h], p[h + 1]) < clear_from) return false;
      return true;
    };
    SplitCandidates splittable;
    for (int i = 0; i < n; ++i) {
      const int pair = ring[i] * n + ring[(i + 1) % n];
      const auto it = pairs_.find(pair);
      if (it == pairs_.end() || !it->second.split) continue;
      const Pair& pr = it->second;
      if (clear(pr.paths[0]) && clear(pr.paths[1]))
        splittable.push_back({pair, {pr.paths[0], pr.paths[1]}});
    }
    // A round in which a ring hop tries a path for what it teaches (decide_pair) is not refined:
    // the expected figures here are the ones on which that path looked worse, and the other
    // hops would be fitted to a ring in which it was moved.
    int exploring = 0;
    for (int i = 0; i < n; ++i) exploring += exploring_.count(ring[i] * n + ring[(i + 1) % n]) > 0;
    const RingChoice joint = exploring ? RingChoice{before, d.paths, d.routes}
                                       : refine_ring(b, ring, d.paths, d.routes, S, around, splittable);
    // Switches: hops whose set of paths differs from the plan in force (a share moved is free).
    Routes now_routes = v.plan().routes;  // as decided, without standbys
    strip_standbys(now_routes, n);
    const Plan& now = v.plan();
    auto path_set = [&](const Paths& ps, const Routes& rs, int pair) {
      std::vector<std::vector<int>> set;
      if (static_cast<int>(rs.size()) == n * n)
        for (const Route& r : rs[pair]) set.push_back(r.path);
      if (set.empty() && static_cast<int>(ps.size()) == n * n) set.push_back(ps[pair]);
      std::sort(set.begin(), set.end());
      return set;
    };
    int switches_pairs = 0, switches_joint = 0, differ = 0;
    for (int i = 0; i < n; ++i) {
      const int pair = ring[i] * n + ring[(i + 1) % n];
      const auto in_force = path_set(now.paths, now_routes, pair);
      switches_pairs += path_set(d.paths, d.routes, pair) != in_force;
      switches_joint += path_set(joint.paths, joint.routes, pair) != in_force;
      differ += joint.paths[pair] != d.paths[pair] || joint.routes[pair] != d.routes[pair];
    }
    // A saving lasts while the beliefs do: the ring's time counts over the MDP's horizon,
    // 1 / (1 − γ) steps (one step's saving against the switches kept a ring 20% faster out
    // for a 5 ms switch on each of 3 hops).
    // And only a gain above 1% of the ring: the joint step sees expected rates where the
    // per-pair MDP weighed each link's spread, and its share grid is 2% of a hop's bytes (on a
    // ring of 4 it moved a fifth of a pair's bytes back onto a link at 1% of its capacity for a
    // predicted 0.2%).
    const double horizon = 1e3 / (1 - pc_.gamma);
    const bool keep = differ > 0 && joint.seconds < (1 - kJointMargin) * before &&
                      joint.seconds * horizon + pc_.switch_cost_ms * switches_joint <
                          before * horizon + pc_.switch_cost_ms * switches_pairs;
    if (keep)
      for (int i = 0; i < n; ++i) {
        const int pair = ring[i] * n + ring[(i + 1) % n];
        d.paths[pair] = joint.paths[pair];
        d.routes[pair] = joint.routes[pair];
      }
    // A split its pair chose partly for what it teaches (a part on a link whose level is not
    // known now: decide_pair's knowledge gradient) is put back where the joint step dropped it,
    // while this sync of the ring is slower by less than that value (keep_probes,
    // sync_cost.hpp): what the split teaches is what one measurement saves the decisions after
    // it, already summed over the steps it lasts, and its price is this one sync — the probe is
    // weighed anew at every decision, as decide_pair weighs the same value against the actions'
    // expected costs. On tc detour3 the joint step relayed all of a congested a→b's hop where the
    // pair kept a sliver on it, and a→b, unmeasured, was relayed round for 27 steps after it
    // recovered (docs/paths.md, "A probe the joint step keeps").
    int probes_kept = 0;
    if (keep && !probing_.empty()) {
      std::vector<Probe> probes;
      for (const auto& [pair, worth] : probing_) {
        const auto it = pairs_.find(pair);
        if (it == pairs_.end() || !ring_.hop(pair / n, pair % n)) continue;
        const Pair& pr = it->second;
        probes.push_back({pair, {Route{pr.paths[0], pr.share0}, Route{pr.paths[1], 1 - pr.share0}},
                          worth / 1e3});
      }
      RingChoice c{ring_seconds(b, ring, d.paths, S, &d.routes), d.paths, d.routes};
      probes_kept = keep_probes(b, ring, c, S, probes);
      if (probes_kept > 0)
        for (int i = 0; i < n; ++i) {
          const int pair = ring[i] * n + ring[(i + 1) % n];
          d.paths[pair] = c.paths[pair];
          d.routes[pair] = c.routes[pair];
        }
    }
    // The split hops' shares, last, on the ring's time expected over the links' likely states
    // at the effective step rather than its time at their expected rates: a split ends with its
    // slower part, and the time at the expected rates spreads a relay's few percent of collapse
    // over every step as a slower rate, where it is a slow step now and then in which the
    // relayed part is the slower whatever share nearby is chosen (docs/paths.md, "the shares on
    // the links' likely states"). Not in a round that explores: the try's shares are its pair's.
    int split_hops = 0;
    for (int i = 0; i < n; ++i) split_hops += d.routes[ring[i] * n + ring[(i + 1) % n]].size() == 2;
    std::vector<WeightedLinks> states;
    double states_chosen_ms = -1, states_refined_ms = -1;
    bool shares_kept = false;
    if (split_hops > 0 && !exploring) {
      std::vector<std::vector<int>> ps;
      for (int i = 0; i < n; ++i) {
        const int pair = ring[i] * n + ring[(i + 1) % n];
        ps.push_back(d.paths[pair]);
        for (const Route& r : d.routes[pair]) ps.push_back(r.path);
      }
      std::vector<int> links = links_of(ps, n);
      std::sort(links.begin(), links.end());  // the order likely_states adds its states in, as before
      states = likely_states(ls, b, links, at);
      RingChoice c{expected_ring_seconds(states, ring, d.paths, S, &d.routes), d.paths, d.routes};
      const double chosen = c.seconds;  // with the shares the pairs or the joint step chose
      refine_ring_shares(states, ring, c, S, 4, kLeastPart);
      states_chosen_ms = chosen * 1e3, states_refined_ms = c.seconds * 1e3;
      shares_kept = c.seconds < (1 - kJointMargin) * chosen;
      // Only for a gain above kJointMargin, as the joint step (its grid is as coarse): on the
      // sparse ring of MdpGoesTheLongWayRoundASparseRing a share grid point 10⁻⁵ faster put a
      // fifth of a→b's bytes back on its link at 1% of capacity.
      if (shares_kept)
        for (int i = 0; i < n; ++i) {
          const int pair = ring[i] * n + ring[(i + 1) % n];
          d.paths[pair] = c.paths[pair];
          d.routes[pair] = c.routes[pair];
        }
    }
    js << ",\"joint\":{\"ring_ms_per_pair\":" << before * 1e3 << ",\"ring_ms_joint\":"
       << joint.seconds * 1e3 << ",\"hops_changed\":" << differ << ",\"splittable\":" << splittable.size()
       << ",\"switches\":[" << switches_pairs << "," << switches_joint << "],\"kept\":"
       << (keep ? "true" : "false") << ",\"exploring\":" << exploring << ",\"probes_kept\":" << probes_kept << ",\"shares\":{\"states\":"
       << states.size() << ",\"ring_ms_chosen\":";
    number(js, states_chosen_ms);
    js << ",\"ring_ms_refined\":";
    number(js, states_refined_ms);
    js << ",\"kept\":" << (shares_kept ? "true" : "false") << "},\"expected_gbps\":[";
    for (int i = 0; i < n * n; ++i) {
      js << (i ? "," : "");
      number(js, b.gbps[i]);
    }
    js << "]}";
  }

  // A figure for the detail's JSON: null where it is not finite (JSON has no inf or NaN).
  static void number(std::ostringstream& js, double x) {
    if (std::isfinite(x)) js << x;
    else js << "null";
  }

  // The links' likely joint states at step `at`, for the split shares (joint_ring): every link
  // of `links` measured so far in its likeliest level, and beside that state each such link
  // alone in each other level it holds with more than kLikely, weighted by the beliefs
  // (independent links) and renormalised; levels at level_gbps, and every other figure as in
  // `b` (a link never measured: its prior). One link off its likeliest level at a time: on a
  // ring of 3 the six links' product has 15625 states. What that leaves out — two or more
  // links off at once, about 3% with six links at 5% each, more where beliefs have spread — goes
  // to the others by the renormalisation, mostly to the likeliest state.
  static std::vector<WeightedLinks> likely_states(const LinkStates& ls, const LinkBeliefs& b,
                                                  const std::vector<int>& links, int64_t at) {
    constexpr double kLikely = 0.01;
    struct Link {
      int l, mode;
      std::vector<double> bel, g;
    };
    const int n = b.n;
    std::vector<Link> held;
    LinkBeliefs base = b;
    double w = 1;
    for (int l : links) {
      if (!ls.measured(l / n, l % n)) continue;
      Link x{l, 0, ls.belief(l / n, l % n, at), ls.level_gbps(l / n, l % n)};
      x.mode = static_cast<int>(std::max_element(x.bel.begin(), x.bel.end()) - x.bel.begin());
      base.gbps[l] = x.g[x.mode];
      w *= x.bel[x.mode];
      held.push_back(std::move(x));
    }
    std::vector<WeightedLinks> out{{w, base}};
    for (const Link& x : held)
      for (size_t k = 0; k < x.bel.size(); ++k) {
        if (static_cast<int>(k) == x.mode || x.bel[k] <= kLikely) continue;
        out.push_back({w / x.bel[x.mode] * x.bel[k], base});
        out.back().b.gbps[x.l] = x.g[k];
      }
    double sum = 0;
    for (const WeightedLinks& s : out) sum += s.weight;
    for (WeightedLinks& s : out) s.weight /= sum;
    return out;
  }

  // What trying action c teaches, in milliseconds: the knowledge gradient of Frazier, Powell and
  // Dayanik (2008) in its online form (Ryzhov, Powell and Frazier 2012). A link that is not in
  // use is not measured, so its belief stays where its chain has drifted — on markov3 a link left
  // at a twentieth that had recovered was believed at 1/Σ b_k/g_k ≈ 0.013 of 0.1 Gbit/s for 26
  // steps, because the QMDP rule assumes the state is seen next step whatever is done, and so
  // never pays to look. Trying c measures the levels y of its links not known now (on its path,
  // or on the split's two: below): a decision
  // is then argmin_a Σ_x b(x | y) Q(x, p, a) instead of argmin_a Σ_x b(x) Q(x, p, a) (p the
  // action in force: the switch to c is charged in Q(·, p, c); the information is worth the
  // same whichever action measured it, so the cheaper of a relay and a split that cross the
  // link is the one tried). The expected saving of one such decision,
  //   ν_c = min_a Σ_x b(x) Q(x, p, a) − Σ_y min_a Σ_{x ∈ y} b(x) Q(x, p, a)   (≥ 0),
  // lasts while what was seen still holds: each later step with the chance ρ that every learned
  // link keeps its level (Π Σ_k b_k P_kk), discounted by γ, from the first decision that can
  // know it, h = ahead_ + 1 steps after the try's sync — ν_c · (γρ)^h / (1 − γρ). Action c is
  // then taken over the QMDP choice a* when E[Q(c)] − value(c) < E[Q(a*)] − value(a*). Where
  // nothing is stale, or nothing seen could change the choice (a relay that cannot beat a clear
  // direct link), the value is 0 and the QMDP choice stands.
  // `now` is min_a Σ_x b(x) Q(x, p, a), the QMDP choice's expected cost (decide_pair's best).
  double explore_value(const Pair& pair, const std::vector<double>& joint, int p, int c,
                       double now, const std::vector<Stale>& stale, int K, int n,
                       const SplitParts& parts) const {
    const int A = pair.A;
    std::vector<int> learn;  // digits of c's stale links
    double stay = 1;
    const bool split = pair.split && c == A - 1;
    for (int i = 0; i < (split ? 2 : 1); ++i) {
      // Every link of the path: the first streams at its own rate (the sender has the bytes); a
      // relayed hop is either the bottleneck, and then measured, or paced by the hops before it,
      // and then a bound that rules out the levels below it (link_state.hpp, pacing) — which is
      // what the choice turns on: whether the link is still congested. On markov3 the relay
      // a→c→b stalled for 16 steps with c→b unmeasured and believed at 0.013 Gbit/s while a→c
      // was known clear, when only first links counted.
      for (int digit : digits_of(pair, pair.paths[split ? i : c], n))
        for (const Stale& st : stale)
          if (st.digit == digit && std::find(learn.begin(), learn.end(), digit) == learn.end())
            learn.push_back(digit), stay *= st.stay;
    }
    if (learn.empty()) return 0;
    std::vector<int> power(pair.links.size(), 1);
    for (size_t i = 1; i < power.size(); ++i) power[i] = power[i - 1] * K;
    const int Y = static_cast<int>(std::pow(K, learn.size()));
    std::vector<double> e(static_cast<size_t>(Y) * A, 0.0);  // Σ_{x ∈ y} b(x) Q(x, p, a)
    std::vector<int> ys(static_cast<size_t>(pair.X), -1);    // x's y (−1: b(x) = 0)
    for (int x = 0; x < pair.X; ++x) {
      if (joint[x] <= 0) continue;
      int y = 0;
      for (size_t j = 0, m = 1; j < learn.size(); ++j, m *= K) y += (x / power[learn[j]]) % K * m;
      ys[static_cast<size_t>(x)] = y;
      for (int a = 0; a < A; ++a)
        e[static_cast<size_t>(y) * A + a] += joint[x] * pair.q[(static_cast<size_t>(x) * A + p) * A + a];
    }
    // What is learned also refits the split's share: the next decision splits at the share
    // fitted to its belief then (split_share), so on the split knowing y saves what the share
    // fitted to the states in y saves against the one fitted to the whole belief now (≥ 0; 0
    // when every y would keep the same share). Q prices the split at the share it was solved for
    // only, so where the split is the choice whatever is learned the action values see no value:
    // on tc detour3 (an experiment build whose senders cut on their first link's true rate), with
    // a→b's sliver dropped beside its relay, a→b's recovery went unseen for the last 40 steps, in
    // which the share would have gone from a sliver back to ~58% (docs/paths.md, "What is learned
    // refits the share"). The states are taken as they are now, not at the effect step (the
    // persistence discount below prices that).
    if (pair.split && !parts.c0.empty()) {
      const PairTraffic& tr = parts.tr;
      auto split_ms = [&](int x, double f) {
        return split_time_ms(tr, parts.l0, parts.l1, f, parts.c0[x], parts.c1[x]);
      };
      // The states grouped by y (a counting sort: one buffer, not one vector per y — mesh6-c's
      // pairs have up to 4096 joint states).
      std::vector<int> start(static_cast<size_t>(Y) + 1, 0);
      std::vector<SplitState> all;
      for (int x = 0; x < pair.X; ++x) {
        if (ys[static_cast<size_t>(x)] < 0) continue;
        ++start[static_cast<size_t>(ys[static_cast<size_t>(x)]) + 1];
        all.push_back({joint[x], parts.c0[x], parts.c1[x]});
      }
      for (int y = 0; y < Y; ++y) start[static_cast<size_t>(y) + 1] += start[static_cast<size_t>(y)];
      std::vector<int> by_y(all.size()), next(start.begin(), start.end() - 1);
      for (int x = 0; x < pair.X; ++x)
        if (ys[static_cast<size_t>(x)] >= 0) by_y[static_cast<size_t>(next[static_cast<size_t>(ys[static_cast<size_t>(x)])]++)] = x;
      const double f_all = least_time_share(tr, parts.l0, parts.l1, all);
      std::vector<SplitState> st;
      for (int y = 0; y < Y; ++y) {
        const int lo = start[static_cast<size_t>(y)], hi = start[static_cast<size_t>(y) + 1];
        if (lo == hi) continue;
        st.clear();
        for (int i = lo; i < hi; ++i) {
          const int x = by_y[static_cast<size_t>(i)];
          st.push_back({joint[x], parts.c0[x], parts.c1[x]});
        }
        const double f_y = least_time_share(tr, parts.l0, parts.l1, st);
        if (f_y == f_all) continue;
        double saved = 0;
        for (int i = lo; i < hi; ++i) {
          const int x = by_y[static_cast<size_t>(i)];
          saved += joint[x] * (split_ms(x, f_all) - split_ms(x, f_y));
        }
        e[static_cast<size_t>(y) * A + A - 1] -= std::max(0.0, saved);
      }
    }
    double after = 0;
    for (int y = 0; y < Y; ++y)
      after += *std::min_element(e.begin() + static_cast<std::ptrdiff_t>(y) * A,
                                 e.begin() + static_cast<std::ptrdiff_t>(y + 1) * A);
    // The try's sync is `ahead_` steps on, and the first decision that knows what it measured
    // takes effect `ahead_` + 1 steps after that: the saving counts from then.
    // `now` and `after` are summed in different orders: a difference at rounding level is no
    // value (it would turn a tie into a try).
    if (now - after <= 1e-9 * std::fabs(now)) return 0;
    const double g = pc_.gamma * stay;
    return (now - after) * std::pow(g, ahead_ + 1) / (1 - g);
  }

  // The split's share on paths[0]: least_time_share (path_cost.hpp) over the joint states of the
  // two paths' links at the effective step (their beliefs; independent links), on the levels'
  // capacities the MDP is solved on (g). Not the ratio of the paths' expected rates: those take
  // a link's current level at its last measured rate (LinkStates::level_gbps) where the MDP
  // prices the level's mean, and a sliver on a congested a→b sized on one fast reading (0.0070
  // where the level's mean was 0.0052) was priced slower than the relay it hedged — tc detour3
  // dropped the split, a→b went unmeasured, and 41 steps of its recovery passed relayed
  // (docs/paths.md, "A sliver that keeps looking").
  static double split_share(const Pair& pr, const PairTraffic& tr,
                            const std::vector<std::vector<double>>& bel,
                            const std::vector<std::vector<double>>& g, const std::vector<double>& lat,
                            int K, int n) {
    const std::vector<int> digits[2] = {digits_of(pr, pr.paths[0], n), digits_of(pr, pr.paths[1], n)};
    std::vector<int> used;
    double l[2] = {0, 0};
    for (int i = 0; i < 2; ++i)
      for (int d : digits[i]) {
        l[i] += lat[d];
        if (std::find(used.begin(), used.end(), d) == used.end()) used.push_back(d);
      }
    std::vector<SplitState> states;
    std::vector<int> level(pr.links.size(), 0);
    const int Y = static_cast<int>(std::pow(K, used.size()));
    for (int y = 0; y < Y; ++y) {
      double w = 1;
      for (size_t j = 0, m = 1; j < used.size(); ++j, m *= K) {
        level[used[j]] = static_cast<int>((y / m) % K);
        w *= bel[used[j]][level[used[j]]];
      }
      if (w <= 0) continue;
      double c[2] = {1e300, 1e300};
      for (int i = 0; i < 2; ++i)
        for (int d : digits[i]) c[i] = std::min(c[i], g[d][level[d]]);
      states.push_back({w, c[0], c[1]});
    }
    return least_time_share(tr, l[0], l[1], states);
  }

  // Builds the pair's MDP on the model (P, g, lat per involved link) and solves it.
  void solve(Pair& pair, const PairTraffic& tr, const std::vector<std::vector<double>>& P,
             const std::vector<std::vector<double>>& g, const std::vector<double>& lat, int K,
             int n, const std::vector<double>& start) {
    const int X = pair.X, A = pair.A, L = static_cast<int>(pair.links.size());
    std::vector<int> power(L, 1);
    for (int i = 1; i < L; ++i) power[i] = power[i - 1] * K;
    // Each candidate path as the digits of its links.
    std::vector<std::vector<int>> digits;
    for (const auto& path : pair.paths) digits.push_back(digits_of(pair, path, n));
    const double share0 = pair.share0;
    // time[a][x]: the traffic's time on action a when the links are in joint state x.
    std::vector<std::vector<double>> time(A, std::vector<double>(X));
    for (int x = 0; x < X; ++x) {
      std::vector<double> cap(pair.paths.size(), 1e300), l(pair.paths.size(), 0.0);
      for (size_t a = 0; a < pair.paths.size(); ++a) {
        for (int i : digits[a]) {
          cap[a] = std::min(cap[a], g[i][(x / power[i]) % K]);
          l[a] += lat[i];
        }
        cap[a] = std::max(cap[a], 1e-12);
        time[a][x] = tr.messages * l[a] + tr.bytes * 8 / (cap[a] * 1e6);
      }
      // The split's share is fixed when the MDP is solved (split_share, as executed); each part
      // then moves at its path's rate in state x.
      if (pair.split)
        time[A - 1][x] = split_time_ms(tr, l[0], l[1], share0, cap[0], cap[1]);
    }
    // The decision's paths take effect `ahead_` steps on: its expected time then, from the state
    // now.
    std::vector<std::vector<double>> c(A);
    for (int a = 0; a < A; ++a) {
      c[a] = time[a];
      for (int k = 0; k < ahead_; ++k) c[a] = contract_product_chains(c[a], P, K);
    }
    const int S = X * A;  // state (x, action in force)
    std::vector<double> cost(static_cast<size_t>(S) * A);
    for (int x = 0; x < X; ++x)
      for (int p = 0; p < A; ++p)
        for (int a = 0; a < A; ++a)
          cost[(static_cast<size_t>(x) * A + p) * A + a] = c[a][x] + (p != a ? pc_.switch_cost_ms : 0.0);
    const MdpExpect expect = [&](int a, const std::vector<double>& V, std::vector<double>& out) {
      std::vector<double> va(X);
      for (int x = 0; x < X; ++x) va[x] = V[static_cast<size_t>(x) * A + a];  // in force next: a
      const std::vector<double> wx = contract_product_chains(std::move(va), P, K);
      out.resize(S);
      for (int x = 0; x < X; ++x)
        for (int p = 0; p < A; ++p) out[static_cast<size_t>(x) * A + p] = wx[x];
    };
    pair.sol = value_iteration(S, A, cost, expect, pc_.gamma, pc_.epsilon_ms,
                               kMaxValueIterations, start);
    pair.q.assign(static_cast<size_t>(S) * A, 0.0);
    std::vector<double> next;
    for (int a = 0; a < A; ++a) {
      expect(a, pair.sol.value, next);
      for (int sp = 0; sp < S; ++sp)
        pair.q[static_cast<size_t>(sp) * A + a] = cost[static_cast<size_t>(sp) * A + a] + pc_.gamma * next[sp];
    }
  }

  PathsConfig pc_;
  int ahead_;  // steps from a decision to the first sync on its paths (ControlConfig::sync_ahead)
  std::map<int, Pair> pairs_;
  std::set<int> exploring_;  // pairs (src·n + dst) whose action now was taken for what it teaches
  // Pairs whose chosen split crosses a link whose level is not known now, and what it teaches
  // (explore_value, ms over the MDP's horizon): the joint step keeps such a split (joint_ring).
  std::map<int, double> probing_;
  RingContext ring_;          // this decision's ring in force (choose)
};

}  // namespace

std::unique_ptr<PathSelector> make_mdp_path_selector(const Config& cfg) {
  return std::make_unique<Mdp>(cfg);
}

}  // namespace strait
