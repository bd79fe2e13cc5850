// path_oracle.cpp — path selector "oracle": an UPPER BOUND, not a method. It reads the scenario
// (view.clairvoyant()): for every pair, among the direct path, those through up to two relays and
// a split of the bytes over any two of them that share no link, the one whose predicted time
// (path_cost.hpp) on the links' TRUE capacity and latency at the time the decision takes effect
// is least — that time estimated as now + control.lag × the mean wall time of the last completed
// steps (control.lag − 1 with control.early_paths: the paths take effect one sync early). A
// split's share is the one that lets both parts arrive together (a split is in `mdp`'s actions
// too; without it the bound chose one path per pair, and `mdp`'s splits beat it by 28%
// on a clear triangle). Pairs the sync plan sends nothing on are ranked for one gradient-sized
// message.
// Under the hierarchical ring the pairs' choices interact: a ring position starts its next step
// when its predecessor's bytes have arrived, so a relay that shortens one hop can lengthen the
// chain of dependencies (sync_cost.hpp, ring_seconds). There the per-pair choice is refined
// jointly: coordinate descent over the ring's hops, each hop's path chosen to minimise the whole
// ring's time on the true figures, from the per-pair choices (with and without their splits) and
// from all-direct, the best kept; then the split hops' shares are set on the whole ring, where a
// relayed part may cross a link another hop's part crosses too (refine_ring_shares).
// (Per pair alone, on the measured mesh6 matrix with congestion, the oracle fell below `direct`.)
// "oracle-now" is the same on the true figures at the moment it decides instead of when the
// decision takes effect: a REACTION BOUND, what a selector that knew every link's state exactly
// but could not foresee a change during control.lag would reach (the paths' counterpart of
// bench/balance_bound.cpp's late-2). With control.paths.oracle_age_steps = k it reads the truth k
// mean steps before it decides instead: the bound for a selector whose newest information is that
// old (a measuring one's is the last sync's: on markov3 `mdp` sits between the bounds at ½ and 1
// step; docs/paths.md, "What markov3's gap to oracle-now is made of").
#include <sstream>

#include "control/beliefs.hpp"
#include "control/path_cost.hpp"
#include "control/policies.hpp"
#include "control/standby.hpp"
#include "control/sync_cost.hpp"

namespace strait {
namespace {

class Oracle final : public PathSelector {
 public:
  Oracle(const Config& cfg, bool at_effect)
      : ahead_(cfg.control.sync_ahead()),
        at_effect_(at_effect),
        age_steps_(at_effect ? 0.0 : cfg.control.paths.oracle_age_steps),
        standby_(cfg.control.paths.standby) {}
  std::string name() const override { return at_effect_ ? "oracle" : "oracle-now"; }
  PathDecision choose(const ControllerView& v) override {
    const World& w = v.world();
    const LinkStates& ls = v.links();
    const int n = w.num_dcs;
    double step_s = 0;
    const auto& h = v.history();
    std::vector<double> walls;  // the last 5 steps' iterations (a step still syncing has none yet)
    for (size_t i = h.size(); i-- > 0 && walls.size() < 5;)
      if (h[i].synced) walls.push_back(h[i].wall_ms / 1e3);
    for (double x : walls) step_s += x / walls.size();
    const double at =
        std::max(0.0, v.run_time_s() + (at_effect_ ? ahead_ * step_s : -age_steps_ * step_s));
    const auto& truth = v.clairvoyant();
    const LinkFigure gbps = [&](int a, int b) { return truth.link(a, b, at).gbps / w.time_scale; };
    const LinkFigure lat = [&](int a, int b) { return truth.link(a, b, at).latency_ms * w.time_scale; };
    const auto traffic = pair_traffic(v.plan(), w);
    PathDecision d{direct_paths(n), Routes(static_cast<size_t>(n) * n), ""};
    Paths single = d.paths;  // per pair the best one path (d: the best of paths and splits)
    for (int s = 0; s < n; ++s)
      for (int t = 0; t < n; ++t) {
        if (s == t) continue;
        PairTraffic tr = traffic[s * n + t];
        if (tr.messages == 0) tr = PairTraffic{w.gradient_bytes, 1};
        const auto cand = simple_paths(ls, s, t, 2);
        double best = 1e300;
        for (const auto& p : cand) {
          const double ms = path_ms(p, tr, gbps, lat);
          if (ms < best * (1 - 1e-9)) best = ms, d.paths[s * n + t] = p;
        }
        if (best >= 1e300) d.paths[s * n + t] = fewest_hop_path(ls, s, t);
        single[s * n + t] = d.paths[s * n + t];
        // Splits only where the plan sends bytes (a pair it does not use keeps one path).
        if (best >= 1e300 || traffic[s * n + t].messages == 0) continue;
        // Splits: part i takes fixed_i + f_i · bytes_i (its latencies, then its share of the
        // bytes at its bottleneck); both parts end together at f0 = (fixed1 − fixed0 + bytes1) /
        // (bytes0 + bytes1).
        const PairTraffic none{0, tr.messages};
        for (size_t i = 0; i < cand.size(); ++i)
          for (size_t j = i + 1; j < cand.size(); ++j) {
            if (shares_a_link(cand[i], cand[j])) continue;
            const double fixed0 = path_ms(cand[i], none, gbps, lat);
            const double fixed1 = path_ms(cand[j], none, gbps, lat);
            const double bytes0 = path_ms(cand[i], tr, gbps, lat) - fixed0;
            const double bytes1 = path_ms(cand[j], tr, gbps, lat) - fixed1;
            if (!(bytes0 + bytes1 > 0)) continue;
            const double f0 = (fixed1 - fixed0 + bytes1) / (bytes0 + bytes1);
            if (!(f0 > 1e-3 && f0 < 1 - 1e-3)) continue;  // one path alone is as good
            const double ms = fixed0 + f0 * bytes0;
            if (ms < best * (1 - 1e-9)) {
              best = ms;
              d.paths[s * n + t] = f0 >= 0.5 ? cand[i] : cand[j];
              d.routes[s * n + t] = {Route{cand[i], f0}, Route{cand[j], 1 - f0}};
            }
          }
      }
    std::string joint = "none";
    double ring_ms = -1;  // the ring's predicted time on the truth (hierarchical, > 2 DCs)
    const SyncPlan& plan = v.plan().sync;
    if (plan.strategy == "hierarchical" && n > 2) {
      // The true figures as the planners' model takes them (run units: only comparisons here).
      LinkBeliefs b{n, std::vector<double>(static_cast<size_t>(n) * n, 0.0),
                    std::vector<double>(static_cast<size_t>(n) * n, 0.0), "truth"};
      for (int a = 0; a < n; ++a)
        for (int c = 0; c < n; ++c)
          if (a != c && ls.has_link(a, c)) b.gbps[a * n + c] = gbps(a, c), b.latency_ms[a * n + c] = lat(a, c);
      const std::vector<int> ring = ring_order(plan.ring, n);
      const double S = w.gradient_bytes;
      const HopCandidates around = [&](int a, int c) { return simple_paths(ls, a, c, 2); };
      auto descend = [&](Paths paths) { return descend_ring(b, ring, std::move(paths), {}, S, around); };
      Paths start = direct_paths(n);
      for (int s = 0; s < n; ++s)
        for (int t = 0; t < n; ++t)
          if (s != t && !ls.has_link(s, t)) start[s * n + t] = single[s * n + t];
      // Three starts, the best end kept: the pairs' choices with their splits (the descent moves
      // a split hop only to one path), the pairs' single paths, and all-direct.
      const RingChoice ends[3] = {descend_ring(b, ring, d.paths, d.routes, S, around),
                                  descend(single), descend(start)};
      const RingChoice* best_end = &ends[0];
      for (const RingChoice& e : ends)
        if (e.seconds < best_end->seconds * (1 - 1e-9)) best_end = &e;
      RingChoice pick = *best_end;
      refine_ring_shares(b, ring, pick, S);
      for (int i = 0; i < n; ++i) {
        const int s = ring[i], t = ring[(i + 1) % n];
        d.paths[s * n + t] = pick.paths[s * n + t];
        d.routes[s * n + t] = pick.routes[s * n + t];  // descend_ring gives one entry per pair
      }
      joint = "ring";
      ring_ms = pick.seconds * 1e3;
      if (standby_)
        arm_standbys(d, b, ring, S, traffic, [&](int a, int c) { return simple_paths(ls, a, c, 2); });
    }
    std::ostringstream js;
    js << "{\"" << (at_effect_ ? "upper_bound" : "reaction_bound")
       << "\":true,\"truth_at_s\":" << at << ",\"joint\":\"" << joint << "\"";
    if (ring_ms >= 0) js << ",\"ring_ms\":" << ring_ms;
    js << ",\"splits\":[";  // the pairs whose bytes go two ways: from, to, share of the first route
    bool first = true;
    for (int pr = 0; pr < n * n; ++pr)
      if (d.routes[pr].size() == 2 && d.routes[pr][1].fraction > 0) {
        js << (first ? "" : ",") << "[" << pr / n << "," << pr % n << ","
           << d.routes[pr][0].fraction << "]";
        first = false;
      }
    js << "]}";
    d.detail = js.str();
    return d;
  }

 private:
  int ahead_;  // steps from the decision to the first sync on its paths (ControlConfig::sync_ahead)
  bool at_effect_;
  double age_steps_;  // oracle-now: control.paths.oracle_age_steps (oracle: 0)
  bool standby_;  // control.paths.standby: the ring's routes adaptive, as mdp's (standby.hpp)
};
}  // namespace

std::unique_ptr<PathSelector> make_oracle_path_selector(const Config& cfg) {
  return std::make_unique<Oracle>(cfg, true);
}

std::unique_ptr<PathSelector> make_oracle_now_path_selector(const Config& cfg) {
  return std::make_unique<Oracle>(cfg, false);
}

}  // namespace strait
