// test_blp.cpp — the BLP linear program (src/control/blp.hpp) and the planners built on it,
// without MPI: on a homogeneous mesh the optimum is the ring bound 2(N−1)S/(N·B); on hand-made
// graphs it meets the cut bound; every plan's flows respect every capacity and never beat a
// lower bound; graphs no plan can serve are refused; missing links are routed around; a 16-DC
// graph plans in under 2 s; the latency cap trades bandwidth for latency; ring-best finds the
// best ring order (checked against every permutation) and keeps the index order when it is as
// good.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "control/beliefs.hpp"
#include "control/blp.hpp"
#include "control/policy.hpp"
#include "control/sync_cost.hpp"
#include "core/rng.hpp"

using namespace strait;

namespace {

constexpr double S = 4e6;  // bytes

// A graph with every ordered pair at `gbps` and `ms`.
BlpGraph mesh(int n, double gbps, double ms = 0) {
  BlpGraph g{n, std::vector<double>(n * n, gbps), std::vector<double>(n * n, ms), S};
  for (int d = 0; d < n; ++d) g.gbps[d * n + d] = 0, g.latency_ms[d * n + d] = 0;
  return g;
}
// Links both ways between the listed pairs, nothing else.
BlpGraph sparse(int n, const std::vector<std::tuple<int, int, double>>& links) {
  BlpGraph g{n, std::vector<double>(n * n, 0.0), std::vector<double>(n * n, 0.0), S};
  for (auto [a, b, c] : links) g.gbps[a * n + b] = g.gbps[b * n + a] = c;
  return g;
}
double secs(double bytes, double gbps) { return bytes * 8 / (gbps * 1e9); }

// Uniform in [lo, hi) from the counter-based RNG (deterministic).
double uniform(uint64_t seed, uint64_t i, double lo, double hi) {
  return lo + (hi - lo) * uniform01(seed, 0, i);
}
BlpGraph random_mesh(int n, uint64_t seed) {
  BlpGraph g = mesh(n, 1.0);
  for (int l = 0; l < n * n; ++l)
    if (l / n != l % n)
      g.gbps[l] = uniform(seed, 2 * l, 0.2, 5.0), g.latency_ms[l] = uniform(seed, 2 * l + 1, 5, 120);
  return g;
}

SyncPlan as_plan(const BlpSolution& s) {
  SyncPlan p;
  p.strategy = "owners";
  p.owner_fraction = s.owner_fraction, p.reduce = s.reduce, p.broadcast = s.broadcast;
  return p;
}

// Every link's load within capacity × time, every route over existing links, a valid plan,
// and no bound beaten.
void expect_respects_capacities(const BlpGraph& g, const BlpSolution& s, BlpTime time) {
  ASSERT_TRUE(s.feasible) << s.why;
  const int n = g.n;
  const SyncPlan p = as_plan(s);
  EXPECT_NO_THROW(check_owner_plan(p, n));
  for (const auto* path : route_paths(p))
    for (size_t h = 0; h + 1 < path->size(); ++h)
      EXPECT_GT(g.gbps[(*path)[h] * n + (*path)[h + 1]], 0) << "a route over a missing link";
  const auto load = owner_plan_loads(p, n, g.bytes);
  for (int l = 0; l < n * n; ++l) {
    if (g.gbps[l] == 0) {
      EXPECT_EQ(load[0][l] + load[1][l], 0);
      continue;
    }
    const double cap = g.gbps[l] * 1e9 / 8;  // bytes/s
    if (time == BlpTime::joint) {
      EXPECT_LE(load[0][l] + load[1][l], cap * s.bandwidth_s * (1 + 1e-6)) << "link " << l;
    } else {
      EXPECT_LE(load[0][l], cap * s.reduce_s * (1 + 1e-6)) << "link " << l;
      EXPECT_LE(load[1][l], cap * s.broadcast_s * (1 + 1e-6)) << "link " << l;
    }
  }
  const SyncBounds b = sync_bounds(g);
  EXPECT_GE(s.bandwidth_s, b.cut_s * (1 - 1e-6));
  EXPECT_GE(s.bandwidth_s, b.traffic_s * (1 - 1e-6));
}

// A view of a world with these links (no config, no scenario: the planners read World only).
ControllerView view_of(const BlpGraph& g, double time_scale = 1) {
  World w;
  w.num_dcs = g.n;
  for (int d = 0; d < g.n; ++d) w.dc_names.push_back("dc" + std::to_string(d));
  w.gradient_bytes = g.bytes;
  w.time_scale = time_scale;
  w.link_gbps = g.gbps, w.link_latency_ms = g.latency_ms;
  return ControllerView(std::move(w), nullptr, Plan{});
}

PathDecision direct(int n) { return PathDecision{direct_paths(n), {}, "{}"}; }

}  // namespace

TEST(Blp, HomogeneousMeshMeetsTheRingBound) {
  for (int n : {3, 4, 6}) {
    SCOPED_TRACE(n);
    const double c = 2.5;
    const BlpGraph g = mesh(n, c, 20);
    const double B = (n - 1) * c;  // a DC's outgoing capacity
    const double ring = secs(2.0 * (n - 1) * S, n * B);
    const SyncBounds b = sync_bounds(g);
    EXPECT_NEAR(b.ring_s, ring, 1e-12);
    EXPECT_NEAR(b.traffic_s, ring, 1e-12);
    for (BlpTime t : {BlpTime::joint, BlpTime::phased}) {
      BlpModel m(g, t);
      const BlpSolution s = m.solve();
      expect_respects_capacities(g, s, t);
      EXPECT_NEAR(s.bandwidth_s, ring, 1e-9 * ring);
      // Direct paths only (relays add byte-hops for nothing), latency = two direct hops.
      const SyncPlan p = as_plan(s);
      for (const auto* path : route_paths(p)) EXPECT_EQ(path->size(), 2u);
      EXPECT_NEAR(s.latency_s, 0.040, 1e-12);
    }
  }
}

TEST(Blp, MeetsTheCutBoundOnHandMadeGraphs) {
  // Two DCs, asymmetric: every byte of the sum must cross the slow direction once.
  BlpGraph two = mesh(2, 1.0);
  two.gbps[0 * 2 + 1] = 4.0, two.gbps[1 * 2 + 0] = 0.5;
  // A star of three leaves with different links (sparse): the hub owns everything.
  const BlpGraph star = sparse(4, {{0, 1, 2.0}, {0, 2, 1.0}, {0, 3, 3.0}});
  // A line 0 - 1 - 2 (sparse): the middle owns, 0 and 2 cannot see each other.
  const BlpGraph line = sparse(3, {{0, 1, 1.0}, {1, 2, 2.0}});
  // A mesh with one DC behind a narrow pair of links: its cut is the bottleneck.
  BlpGraph narrow = mesh(4, 10.0);
  for (int d = 0; d < 3; ++d) narrow.gbps[3 * 4 + d] = narrow.gbps[d * 4 + 3] = 0.1;
  const std::pair<const char*, const BlpGraph*> cases[] = {
      {"two", &two}, {"star", &star}, {"line", &line}, {"narrow", &narrow}};
  for (const auto& [name, g] : cases) {
    SCOPED_TRACE(name);
    const SyncBounds b = sync_bounds(*g);
    BlpModel m(*g, BlpTime::joint);
    const BlpSolution s = m.solve();
    expect_respects_capacities(*g, s, BlpTime::joint);
    EXPECT_NEAR(s.bandwidth_s, b.cut_s, 1e-7 * b.cut_s);
  }
  EXPECT_EQ(sync_bounds(two).cut_set, std::vector<int>{1});  // the side behind 0.5 Gbit/s
  // Two DCs phased (what the owners strategy runs): each phase moves half of S each way.
  BlpModel p(two, BlpTime::phased);
  EXPECT_NEAR(p.solve().bandwidth_s, sync_bounds(two).cut_s, 1e-7 * sync_bounds(two).cut_s);
}

TEST(Blp, PhasedIsSlowerThanJointOnAStar) {
  // Joint: the hub owns everything, leaves send up while the hub sends down: S/c, the cut
  // bound. Phased: a phase uses a link in one direction only, so the LP spreads the slices:
  // leaf j's uplink carries (1 − α_j)·S, the hub's downlink to j 3·α_j·S (from three sources),
  // so τ_reduce ≥ 3/4·S/c at α = 1/4 each, the same for the broadcast: 1.5·S/c.
  const BlpGraph star = sparse(4, {{0, 1, 1.0}, {0, 2, 1.0}, {0, 3, 1.0}});
  BlpModel j(star, BlpTime::joint), p(star, BlpTime::phased);
  const BlpSolution sj = j.solve(), sp = p.solve();
  expect_respects_capacities(star, sj, BlpTime::joint);
  expect_respects_capacities(star, sp, BlpTime::phased);
  EXPECT_NEAR(sj.bandwidth_s, secs(S, 1.0), 1e-6 * secs(S, 1.0));
  EXPECT_NEAR(sp.bandwidth_s, 1.5 * secs(S, 1.0), 1e-6 * secs(S, 1.0));
  for (double a : sp.owner_fraction) EXPECT_NEAR(a, 0.25, 1e-6);
}

TEST(Blp, FlowsRespectEveryCapacityOnRandomGraphs) {
  for (uint64_t seed = 1; seed <= 6; ++seed)
    for (int n : {3, 5, 7}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " n " + std::to_string(n));
      BlpGraph g = random_mesh(n, seed);
      if (seed % 2 == 0)  // drop some links (keeping a ring both ways, so it stays feasible)
        for (int a = 0; a < n; ++a)
          for (int b = 0; b < n; ++b)
            if (a != b && (a + b + seed) % 3 == 0 && std::abs(a - b) != 1 && std::abs(a - b) != n - 1)
              g.gbps[a * n + b] = 0;
      for (BlpTime t : {BlpTime::joint, BlpTime::phased}) {
        BlpModel m(g, t);
        expect_respects_capacities(g, m.solve(), t);
        // A latency cap gives a plan within it, or none.
        const double cap = m.path_latencies_ms()[m.path_latencies_ms().size() / 2];
        const BlpSolution c = m.solve(cap);
        if (c.feasible) {
          expect_respects_capacities(g, c, t);
          EXPECT_LE(c.latency_s, 2 * cap / 1e3 + 1e-12);
        }
      }
    }
}

TEST(Blp, RefusesWhatNoPlanCanServe) {
  BlpGraph g = mesh(3, 1.0);
  g.gbps[2 * 3 + 0] = g.gbps[2 * 3 + 1] = 0;  // DC 2 cannot send
  try {
    BlpModel m(g, BlpTime::phased);
    FAIL() << "accepted a DC without outgoing links";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("datacenter 2 has no outgoing link"), std::string::npos)
        << e.what();
  }
  BlpGraph isolated = mesh(3, 1.0);
  for (int d = 0; d < 2; ++d) isolated.gbps[2 * 3 + d] = isolated.gbps[d * 3 + 2] = 0;
  EXPECT_THROW(BlpModel(isolated, BlpTime::joint), std::invalid_argument);
  EXPECT_THROW(sync_bounds(isolated), std::invalid_argument);
  BlpGraph no_bytes = mesh(3, 1.0);
  no_bytes.bytes = 0;
  EXPECT_THROW(BlpModel(no_bytes, BlpTime::joint), std::invalid_argument);
  // A line of six: no DC is within two hops of every other, so no owner can be reached over
  // direct-or-one-relay paths (the LP says infeasible rather than inventing a plan).
  const BlpGraph line6 = sparse(6, {{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 4, 1}, {4, 5, 1}});
  BlpModel m(line6, BlpTime::phased);
  const BlpSolution s = m.solve();
  EXPECT_FALSE(s.feasible);
  EXPECT_FALSE(s.why.empty());
  // A line of five: only the middle DC can own.
  const BlpGraph line5 = sparse(5, {{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 4, 1}});
  BlpModel m5(line5, BlpTime::phased);
  const BlpSolution s5 = m5.solve();
  expect_respects_capacities(line5, s5, BlpTime::phased);
  EXPECT_EQ(s5.owner_fraction, (std::vector<double>{0, 0, 1, 0, 0}));
}

TEST(Blp, RelaysAroundACongestedLink) {
  // 0→1 is a hundred times narrower than the rest: the LP sends most of its traffic via 2.
  BlpGraph g = mesh(3, 1.0, 1);
  g.gbps[0 * 3 + 1] = 0.01;
  BlpModel m(g, BlpTime::phased);
  const BlpSolution s = m.solve();
  expect_respects_capacities(g, s, BlpTime::phased);
  const SyncPlan p = as_plan(s);
  bool relayed = false;
  for (const auto* path : route_paths(p)) relayed = relayed || *path == std::vector<int>{0, 2, 1};
  EXPECT_TRUE(relayed);
  // Direct paths only (a cap below any relay) cost more bandwidth time.
  const BlpSolution d = m.solve(1);
  ASSERT_TRUE(d.feasible);
  EXPECT_GT(d.bandwidth_s, 1.4 * s.bandwidth_s);
}

// The 16-DC planning time is a benchmark figure (bench_sync --plan-scale, make bench-sync →
// results/bench/plan-scale.csv), not asserted here: a busy machine would fail a timed test.
TEST(Blp, SixteenDcsPlan) {
  const BlpGraph g = random_mesh(16, 42);
  const ControllerView v = view_of(g);
  auto planner = make_sync_planner("blp", Config{});
  ASSERT_TRUE(planner);
  const auto t0 = std::chrono::steady_clock::now();
  const SyncDecision d = planner->plan(v, direct(16));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("  16 DCs: plan in %.3f s; detail %s\n", s, d.detail.substr(0, 400).c_str());
  EXPECT_NO_THROW(check_owner_plan(d.plan, 16));
  // The planner's LP offers the 6 widest relays of each pair: 240 flows per phase, one direct
  // and 6 relayed paths each; rows: Σα, 480 flows, 2 × 240 links, Σ τ.
  BlpModel m(g, BlpTime::phased, 6);
  std::printf("  16 DCs phased LP: %d rows, %d columns, %d non-zeros\n", m.rows(), m.cols(), m.nonzeros());
  EXPECT_EQ(m.cols(), 2 + 16 + 2 * 240 * 7);
  EXPECT_EQ(m.rows(), 1 + 2 * 240 + 2 * 240 + 1);
  // All 14 relays: the optimum moves by little (the planner's choice, docs/sync.md).
  BlpModel all(g, BlpTime::phased);
  EXPECT_EQ(all.cols(), 2 + 16 + 2 * 240 * 15);
  const double t_all = all.solve().bandwidth_s, t6 = m.solve().bandwidth_s;
  std::printf("  16 DCs LP optimum: %.6g ms (6 relays) vs %.6g ms (all 14)\n", t6 * 1e3, t_all * 1e3);
  EXPECT_LE(t6, t_all * 1.001);
}

TEST(BlpPlanner, WeighsLatencyAgainstBandwidth) {
  // 0→1 narrow: relaying via 2 saves bandwidth time but adds a hop of latency.
  BlpGraph g = mesh(3, 1.0, 50);
  g.gbps[0 * 3 + 1] = 0.2;
  auto planner = make_sync_planner("blp", Config{});
  // Latency dominates at 4 MB and 50 ms a hop: only direct paths.
  const SyncDecision d = planner->plan(view_of(g), direct(3));
  for (const auto* p : route_paths(d.plan)) EXPECT_EQ(p->size(), 2u) << d.detail;
  EXPECT_NEAR(d.plan.predicted_ms,
              owner_plan_seconds(believed_links(view_of(g)), d.plan, S) * 1e3, 1e-9);
  // Without latency the relay pays.
  BlpGraph fast = g;
  std::fill(fast.latency_ms.begin(), fast.latency_ms.end(), 0.0);
  auto planner2 = make_sync_planner("blp", Config{});
  const SyncDecision r = planner2->plan(view_of(fast), direct(3));
  bool relayed = false;
  for (const auto* p : route_paths(r.plan)) relayed = relayed || p->size() == 3;
  EXPECT_TRUE(relayed) << r.detail;
  // The detail carries the LP optimum, the bounds and the prediction, in run ms.
  for (const char* key : {"\"lp_optimum_ms\"", "\"joint_optimum_ms\"", "\"cut_bound_ms\"",
                          "\"traffic_bound_ms\"", "\"predicted_ms\"", "\"rows\"", "\"ms\""})
    EXPECT_NE(r.detail.find(key), std::string::npos) << key;
}

TEST(BlpPlanner, ReplansOnlyWhenBeliefsMove) {
  BlpGraph g = mesh(3, 1.0, 1);
  g.gbps[0 * 3 + 1] = 0.3;
  auto planner = make_sync_planner("blp", Config{});
  const SyncDecision a = planner->plan(view_of(g), direct(3));
  BlpGraph nudged = g;
  nudged.gbps[1 * 3 + 2] *= 1.03;  // within 5%: the plan stands
  const SyncDecision b = planner->plan(view_of(nudged), direct(3));
  EXPECT_TRUE(a.plan == b.plan);
  EXPECT_EQ(a.detail, b.detail);
  BlpGraph moved = g;
  moved.gbps[0 * 3 + 1] = 3.0;  // the narrow link is wide now
  const SyncDecision c = planner->plan(view_of(moved), direct(3));
  EXPECT_FALSE(a.plan == c.plan);
}

TEST(RingBest, FindsTheBestOrderOfEveryPermutation) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const int n = 6;
    const BlpGraph g = random_mesh(n, 100 + seed);
    const ControllerView v = view_of(g);
    const PathDecision paths = direct(n);
    const SyncDecision d = make_sync_planner("ring-best", Config{})->plan(v, paths);
    EXPECT_EQ(d.plan.strategy, "hierarchical");
    EXPECT_NO_THROW(check_ring(d.plan, n));
    std::vector<int> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    double best = 1e300;
    do best = std::min(best, ring_seconds(believed_links(v), perm, paths.paths, S));
    while (std::next_permutation(perm.begin() + 1, perm.end()));
    EXPECT_NEAR(d.plan.predicted_ms, best * 1e3, 1e-9 * best * 1e3) << d.detail;
  }
}

// The ring's time as the executor runs it (a position goes on when its own bytes have left and
// its predecessor's have arrived): on 3 DCs with one 100 ms hop (0→1) and two 5 ms hops, by hand,
// the four steps end at 2·100 + 2·5 ms + 4 transmissions — not 4 × (100 ms + one transmission) as
// in lockstep (measured with the software shaper: 220 ms, and 408 before the transport's Outbox;
// 220 under tc). Homogeneous: 2(N−1) × (latency + transmission), as before.
TEST(RingSeconds, ASlowHopIsPaidAlongTheChainNotEveryStep) {
  BlpGraph g = mesh(3, 1.0, 5);
  g.latency_ms[0 * 3 + 1] = 100;
  const double beta = secs(S / 3, 1.0);
  const double t = ring_seconds(believed_links(view_of(g)), {}, direct(3).paths, S);
  EXPECT_NEAR(t, 2 * 0.100 + 2 * 0.005 + 4 * beta, 1e-12);
  EXPECT_LT(t, 4 * (0.100 + beta) * 0.6);
  const double h = ring_seconds(believed_links(view_of(mesh(5, 1.0, 7))), {}, direct(5).paths, S);
  EXPECT_NEAR(h, 2 * 4 * (0.007 + secs(S / 5, 1.0)), 1e-12);
}

// A relay forwards within its own ring step, so it waits for the relayed bytes: on a ring of 4
// DCs at 5 ms, hop 3→0 relayed through 2 with 3→2 at 100 ms ties DC 2's steps to DC 3's by
// 100 ms and DC 3's to DC 2's by 5 ms (the ring hop 2→3), so the six steps take at least
// 3 × (100 + 5) ms. A model that only lengthened the hop (3→2→0: 105 ms) says 2 × 105 + 4 × 5.
TEST(RingSeconds, ARelayWaitsForWhatItRelays) {
  BlpGraph g = mesh(4, 1.0, 5);
  g.latency_ms[3 * 4 + 2] = 100;
  PathDecision p = direct(4);
  p.paths[3 * 4 + 0] = {3, 2, 0};
  const double beta = secs(S / 4, 1.0);
  const double t = ring_seconds(believed_links(view_of(g)), {}, p.paths, S);
  EXPECT_GE(t, 3 * (0.100 + 0.005) + 6 * beta - 1e-12);
  EXPECT_LT(t, 3 * (0.100 + 0.005) + 6 * 2 * beta + 0.020);
}

// A relay posts a step's relayed chunks only in its own exchange of that step (ring_allreduce),
// so a relayed part cannot arrive before the relay starts the step plus the rest of its path.
// On a ring of 4 DCs at 1 ms with hop 0→1 relayed through 2 and 2→1 at 20 ms, DC 2 starts its
// step k when DC 1's bytes of step k−1 arrive, and DC 1 starts its step only when the part
// relayed by DC 2 in that step has arrived: by hand (positions' starts step by step) the six
// steps end at 64 ms + 6 transmissions. A relay that forwarded as soon as the chunks reached it
// would finish at 46 ms + 6 transmissions.
TEST(RingSeconds, ARelayForwardsOnlyInItsOwnStep) {
  BlpGraph g = mesh(4, 1.0, 1);
  g.latency_ms[2 * 4 + 1] = 20;
  PathDecision p = direct(4);
  p.paths[0 * 4 + 1] = {0, 2, 1};
  const double beta = secs(S / 4, 1.0);
  EXPECT_NEAR(ring_seconds(believed_links(view_of(g)), {}, p.paths, S), 0.064 + 6 * beta, 1e-12);
}

// The joint choice of the ring's hops (the oracle's and mdp's): on a ring of 3 whose hop 0→1 is
// narrow (0.01 Gbit/s) it relays that hop through 2 and nothing else; where a relay would only
// lengthen the chain (ARelayWaitsForWhatItRelays' graph, starting from that relay) it goes back
// to direct. Never worse than where it started; pairs off the ring are left alone.
TEST(RingSeconds, JointDescentPicksTheHopsThatShortenTheRing) {
  auto around = [](int n) {
    return [n](int s, int t) {
      std::vector<std::vector<int>> c{{s, t}};
      for (int k = 0; k < n; ++k)
        if (k != s && k != t) c.push_back({s, k, t});
      return c;
    };
  };
  BlpGraph g = mesh(3, 1.0, 5);
  g.gbps[0 * 3 + 1] = 0.01;
  const LinkBeliefs b = believed_links(view_of(g));
  const Paths start = direct(3).paths;
  const auto [t, paths, routes] = descend_ring(b, {0, 1, 2}, start, {}, S, around(3));
  EXPECT_EQ(paths[0 * 3 + 1], (std::vector<int>{0, 2, 1}));
  EXPECT_EQ(paths[1 * 3 + 2], (std::vector<int>{1, 2}));
  EXPECT_EQ(paths[2 * 3 + 0], (std::vector<int>{2, 0}));
  EXPECT_EQ(paths[1 * 3 + 0], start[1 * 3 + 0]);  // off the ring
  EXPECT_DOUBLE_EQ(t, ring_seconds(b, {0, 1, 2}, paths, S));
  EXPECT_LT(t, ring_seconds(b, {0, 1, 2}, start, S) / 5);

  BlpGraph h = mesh(4, 1.0, 5);
  h.latency_ms[3 * 4 + 2] = 100;
  const LinkBeliefs c = believed_links(view_of(h));
  Paths relayed = direct(4).paths;
  relayed[3 * 4 + 0] = {3, 2, 0};
  const auto [u, back, unsplit] = descend_ring(c, {0, 1, 2, 3}, relayed, {}, S, around(4));
  EXPECT_EQ(back[3 * 4 + 0], (std::vector<int>{3, 0}));
  EXPECT_LT(u, ring_seconds(c, {0, 1, 2, 3}, relayed, S) * 0.5);
  EXPECT_TRUE(unsplit.empty() || unsplit[3 * 4 + 0].empty());

  // A split hop (mdp's split action): the relayed half ties DC 2's steps to DC 3's as the whole
  // did, so the descent makes the hop direct again. A one-route split is its path.
  Routes split(16);
  split[3 * 4 + 0] = {Route{{3, 0}, 0.5}, Route{{3, 2, 0}, 0.5}};
  EXPECT_GE(ring_seconds(c, {0, 1, 2, 3}, direct(4).paths, S, &split), 3 * (0.100 + 0.005) - 1e-12);
  const auto [v, joined, routes_after] = descend_ring(c, {0, 1, 2, 3}, direct(4).paths, split, S, around(4));
  EXPECT_TRUE(routes_after[3 * 4 + 0].empty());
  EXPECT_EQ(joined[3 * 4 + 0], (std::vector<int>{3, 0}));
  EXPECT_NEAR(v, ring_seconds(c, {0, 1, 2, 3}, direct(4).paths, S), 1e-12);
  Routes one(16);
  one[3 * 4 + 0] = {Route{{3, 2, 0}, 1.0}};
  EXPECT_DOUBLE_EQ(ring_seconds(c, {0, 1, 2, 3}, direct(4).paths, S, &one),
                   ring_seconds(c, {0, 1, 2, 3}, relayed, S));
  // A split with no share on any route carries the hop on its path (not in no time).
  Routes none(16);
  none[3 * 4 + 0] = {Route{{3, 0}, 0.0}, Route{{3, 2, 0}, 0.0}};
  EXPECT_DOUBLE_EQ(ring_seconds(c, {0, 1, 2, 3}, relayed, S, &none),
                   ring_seconds(c, {0, 1, 2, 3}, relayed, S));

  // An empty order is the index order, for the descent as for ring_seconds.
  const auto [e, e_paths, e_routes] = descend_ring(b, {}, start, {}, S, around(3));
  EXPECT_EQ(e_paths, paths);
  EXPECT_DOUBLE_EQ(e, t);
}

// refine_ring (mdp's joint step): on a clear ring of 3 (every link 1 Gbit/s, small latencies)
// with one hop split, the descent alone cannot split the other two — splitting one more hop
// leaves the third, unsplit, as slow as before, and the ring is as slow as its slowest hop —
// while the second start, every splittable hop split and the shares set on the ring, splits
// all three and beats all-direct by more than 10%. A hop left out of `splittable` stays as it
// was; with nothing splittable it is the descent and the share refinement alone.
TEST(RingSeconds, RefineRingSplitsEveryHopWhereOneAtATimeCannot) {
  const LinkBeliefs b = believed_links(view_of(mesh(3, 1.0, 0.01)));
  auto around = [](int s, int t) { return std::vector<std::vector<int>>{{s, t}, {s, 3 - s - t, t}}; };
  Routes one(9);
  one[0 * 3 + 1] = {Route{{0, 1}, 0.5}, Route{{0, 2, 1}, 0.5}};
  const Paths direct3 = direct(3).paths;
  const double all_direct = ring_seconds(b, {0, 1, 2}, direct3, S);
  SplitCandidates every;
  for (auto [s, t] : {std::pair{0, 1}, {1, 2}, {2, 0}})
    every.push_back({s * 3 + t, {{s, t}, {s, 3 - s - t, t}}});
  auto split_hops = [](const Routes& r) {
    int k = 0;
    for (int pair : {0 * 3 + 1, 1 * 3 + 2, 2 * 3 + 0}) k += r[pair].size() == 2;
    return k;
  };

  const RingChoice alone = refine_ring(b, {0, 1, 2}, direct3, one, S, around, {});
  EXPECT_LT(split_hops(alone.routes), 3);
  EXPECT_GT(alone.seconds, 0.95 * all_direct);  // one split hop shortens nothing much

  const RingChoice joint = refine_ring(b, {0, 1, 2}, direct3, one, S, around, every);
  EXPECT_EQ(split_hops(joint.routes), 3);
  EXPECT_LT(joint.seconds, 0.9 * all_direct);
  EXPECT_DOUBLE_EQ(joint.seconds, ring_seconds(b, {0, 1, 2}, joint.paths, S, &joint.routes));
  for (int pair : {0 * 3 + 1, 1 * 3 + 2, 2 * 3 + 0}) {
    const auto& r = joint.routes[pair];
    EXPECT_NEAR(r[0].fraction + r[1].fraction, 1.0, 1e-12);
    EXPECT_EQ(joint.paths[pair], r[r[0].fraction >= 0.5 ? 0 : 1].path);  // the larger part's
  }

  SplitCandidates two(every.begin(), every.begin() + 2);  // 0→1 and 1→2 only
  const RingChoice partial = refine_ring(b, {0, 1, 2}, direct3, one, S, around, two);
  EXPECT_TRUE(partial.routes[2 * 3 + 0].empty());  // the descent never splits a hop
  EXPECT_LE(partial.seconds, alone.seconds * (1 + 1e-12));
  EXPECT_GT(partial.seconds, joint.seconds);
}

// The split shares on the links' likely states (mdp's last step): hop 0→1 of a ring of 3 at a
// quarter of 1 Gbit/s, split with the relay 0→2→1, whose first link is clear but collapses to a
// twentieth with 2%. At the harmonic expected rate of that link (1 / (0.98 / 1 + 0.02 / 0.05) =
// 0.725) the shares leave more on the congested direct part than the expected ring time
// (0.98 · clear + 0.02 · collapsed) wants: in the collapse the relayed part is the slower
// whatever share nearby is chosen, so hedging for it costs every clear step. The refinement on
// the two states finds the grid's minimum of that expected time (brute force over the grid);
// with a floor it moves no part below it.
TEST(RingSeconds, SharesOnLikelyStatesWeighTheSplitsMaximum) {
  BlpGraph g = mesh(3, 1.0, 5);
  g.gbps[0 * 3 + 1] = 0.25;
  const LinkBeliefs clear = believed_links(view_of(g));
  LinkBeliefs collapsed = clear, expected = clear;
  collapsed.gbps[0 * 3 + 2] = 0.05;
  expected.gbps[0 * 3 + 2] = 1 / (0.98 / 1.0 + 0.02 / 0.05);
  const std::vector<WeightedLinks> states{{0.98, clear}, {0.02, collapsed}};
  const Paths paths = direct(3).paths;
  Routes split(9);
  split[0 * 3 + 1] = {Route{{0, 1}, 0.5}, Route{{0, 2, 1}, 0.5}};

  RingChoice plug{ring_seconds(expected, {0, 1, 2}, paths, S, &split), paths, split};
  refine_ring_shares(expected, {0, 1, 2}, plug, S);
  RingChoice over{expected_ring_seconds(states, {0, 1, 2}, paths, S, &split), paths, split};
  refine_ring_shares(states, {0, 1, 2}, over, S);
  const double f_plug = plug.routes[0 * 3 + 1][0].fraction, f_over = over.routes[0 * 3 + 1][0].fraction;

  double best = 1e300, best_f = -1;
  for (int k = 1; k < 50; ++k) {
    Routes r = split;
    r[0 * 3 + 1][0].fraction = k / 50.0, r[0 * 3 + 1][1].fraction = 1 - k / 50.0;
    const double t = 0.98 * ring_seconds(clear, {0, 1, 2}, paths, S, &r) +
                     0.02 * ring_seconds(collapsed, {0, 1, 2}, paths, S, &r);
    if (t < best * (1 - 1e-9)) best = t, best_f = k / 50.0;
  }
  EXPECT_NEAR(f_over, best_f, 1e-12);
  EXPECT_NEAR(over.seconds, best, 1e-12 * best);
  EXPECT_GT(f_plug, f_over + 0.03);  // the plug-in keeps more on the quarter link
  Routes at_plug = split;
  at_plug[0 * 3 + 1] = plug.routes[0 * 3 + 1];
  EXPECT_GT(expected_ring_seconds(states, {0, 1, 2}, paths, S, &at_plug), 1.02 * over.seconds);

  // With a floor: a hop whose direct link is nearly gone (0.005) would keep a sliver on it; the
  // share stops at the floor, a tenth, and the relayed part takes the rest.
  BlpGraph h = mesh(3, 1.0, 5);
  h.gbps[0 * 3 + 1] = 0.005;
  const std::vector<WeightedLinks> gone{{1.0, believed_links(view_of(h))}};
  RingChoice free{expected_ring_seconds(gone, {0, 1, 2}, paths, S, &split), paths, split};
  RingChoice floored = free;
  refine_ring_shares(gone, {0, 1, 2}, free, S);
  refine_ring_shares(gone, {0, 1, 2}, floored, S, 4, 0.1);
  EXPECT_LT(free.routes[0 * 3 + 1][0].fraction, 0.1 - 1e-9);
  EXPECT_NEAR(floored.routes[0 * 3 + 1][0].fraction, 0.1, 1e-12);
  EXPECT_NEAR(floored.routes[0 * 3 + 1][1].fraction, 0.9, 1e-12);
  EXPECT_EQ(floored.paths[0 * 3 + 1], (std::vector<int>{0, 2, 1}));
}

// A probe (mdp's split kept for what it teaches, keep_probes): on a ring of 3 whose hop 0→1 is
// nearly dead (0.001 Gbit/s) and relayed through 2, putting back a split with a part on 0→1
// slows the ring even at the least share the refit allows (a fiftieth). It is put back when it
// is worth more than that slowdown, with its shares refitted (the ring's time as stated), and
// not when worth less; a hop already split keeps its shares, and a probe with an empty part is
// none. Where the link is fast enough that
// the split beats the relay alone, the probe costs nothing and is kept at any worth.
TEST(RingSeconds, AProbeIsPutBackWhileItTeachesMoreThanItCosts) {
  BlpGraph g = mesh(3, 1.0, 5);
  g.gbps[0 * 3 + 1] = 0.001;
  const LinkBeliefs b = believed_links(view_of(g));
  const std::vector<int> order{0, 1, 2};
  Paths relayed = direct(3).paths;
  relayed[0 * 3 + 1] = {0, 2, 1};
  const RingChoice start{ring_seconds(b, order, relayed, S), relayed, Routes(9)};
  const std::vector<Route> sliver{Route{{0, 1}, 0.05}, Route{{0, 2, 1}, 0.95}};
  RingChoice with = start;
  with.routes[0 * 3 + 1] = sliver;
  with.seconds = ring_seconds(b, order, with.paths, S, &with.routes);
  refine_ring_shares(b, order, with, S);
  const double cost = with.seconds - start.seconds;
  ASSERT_GT(cost, 0);

  RingChoice worth_more = start;
  EXPECT_EQ(keep_probes(b, order, worth_more, S, {Probe{0 * 3 + 1, sliver, 2 * cost}}), 1);
  const auto& r = worth_more.routes[0 * 3 + 1];
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].path, (std::vector<int>{0, 1}));
  EXPECT_GT(r[0].fraction, 0);
  EXPECT_LE(r[0].fraction, 0.05 + 1e-12);
  EXPECT_EQ(worth_more.paths[0 * 3 + 1], (std::vector<int>{0, 2, 1}));  // the larger part's
  EXPECT_NEAR(worth_more.seconds, start.seconds + cost, 1e-12);
  EXPECT_DOUBLE_EQ(worth_more.seconds,
                   ring_seconds(b, order, worth_more.paths, S, &worth_more.routes));

  RingChoice worth_less = start;
  EXPECT_EQ(keep_probes(b, order, worth_less, S, {Probe{0 * 3 + 1, sliver, cost / 2}}), 0);
  EXPECT_TRUE(worth_less.routes[0 * 3 + 1].empty());
  EXPECT_EQ(worth_less.paths, relayed);
  EXPECT_DOUBLE_EQ(worth_less.seconds, start.seconds);

  RingChoice split = start;
  split.routes[0 * 3 + 1] = {Route{{0, 1}, 0.3}, Route{{0, 2, 1}, 0.7}};
  split.seconds = ring_seconds(b, order, split.paths, S, &split.routes);
  EXPECT_EQ(keep_probes(b, order, split, S, {Probe{0 * 3 + 1, sliver, 1.0}}), 0);
  EXPECT_DOUBLE_EQ(split.routes[0 * 3 + 1][0].fraction, 0.3);
  RingChoice empty_part = start;  // a probe whose part on 0→1 carries nothing measures nothing
  EXPECT_EQ(keep_probes(b, order, empty_part, S,
                        {Probe{0 * 3 + 1, {Route{{0, 1}, 0.0}, Route{{0, 2, 1}, 1.0}}, 1.0}}),
            0);
  EXPECT_TRUE(empty_part.routes[0 * 3 + 1].empty());

  g.gbps[0 * 3 + 1] = 0.2;
  const LinkBeliefs fast = believed_links(view_of(g));
  RingChoice free{ring_seconds(fast, order, relayed, S), relayed, Routes(9)};
  const double relay_alone = free.seconds;
  EXPECT_EQ(keep_probes(fast, order, free, S, {Probe{0 * 3 + 1, sliver, 0.0}}), 1);
  EXPECT_LT(free.seconds, relay_alone);
  EXPECT_GT(free.routes[0 * 3 + 1][0].fraction, 0.05);  // refitted to the faster link
}

TEST(RingBest, AvoidsTheSlowHopsOfTheIndexOrder) {
  // The index ring 0→1→2→3→0 runs over four narrow links; its reverse over wide ones.
  BlpGraph g = mesh(4, 1.0, 10);
  for (int i = 0; i < 4; ++i) g.gbps[i * 4 + (i + 1) % 4] = 0.05;
  const ControllerView v = view_of(g);
  const SyncDecision d = make_sync_planner("ring-best", Config{})->plan(v, direct(4));
  EXPECT_EQ(d.plan.ring, (std::vector<int>{0, 3, 2, 1})) << d.detail;
  EXPECT_LT(d.plan.predicted_ms, ring_seconds(believed_links(v), {}, direct(4).paths, S) * 1e3 / 5);
  // Homogeneous: the index order is as good as any and is kept (the plan is hierarchical's).
  const SyncDecision h =
      make_sync_planner("ring-best", Config{})->plan(view_of(mesh(4, 1.0, 10)), direct(4));
  EXPECT_TRUE(h.plan.ring.empty()) << h.detail;
}

TEST(SyncPlan, RingOrderIsCheckedAndRoundTrips) {
  SyncPlan p;
  p.ring = {0, 2, 1};
  EXPECT_NO_THROW(check_ring(p, 3));
  wire::Writer w;
  encode(w, p);
  SyncPlan q;
  wire::Reader r(w.bytes());
  decode(r, q);
  EXPECT_EQ(q.ring, p.ring);
  EXPECT_TRUE(p == q);
  EXPECT_NE(to_json(p).find("\"ring\":[0,2,1]"), std::string::npos);
  SyncPlan other = p;
  other.ring = {};
  EXPECT_FALSE(p == other);
  for (std::vector<int> bad : {std::vector<int>{0, 1}, {0, 1, 1}, {0, 1, 3}}) {
    p.ring = bad;
    EXPECT_THROW(check_ring(p, 3), std::invalid_argument);
  }
}
