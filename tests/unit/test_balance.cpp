// test_balance.cpp — the balancers "proportional" and "oracle" (src/control/balance.hpp):
// the split math (whole heads, every rank >= 1 head and >= 1 column, sums exact, optimal against
// brute force, speeds far apart, a rank at speed 0.05), the batch apportioning, the work model
// that makes loads under different splits comparable, and the rule on a simulated run: a slow
// rank is re-split away, a re-split that cannot repay its measured cost is not made, one whose
// cost was never measured is not made, small or noisy imbalances are left alone (no
// oscillation), a rank slow from the start is answered in the warm-up, a change followed by a
// further one in its direction counts as lasted, and the oracle reads the scenario's true speeds
// and not the noise of the compute.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "control/balance.hpp"
#include "control/policy.hpp"
#include "control/work.hpp"
#include "core/apportion.hpp"
#include "model/layout.hpp"
#include "scenario/scenario.hpp"
#include "tests/common/scratch.hpp"
#include "validate/validate.hpp"

namespace fs = std::filesystem;
using namespace strait;

namespace {

ModelConfig model(int heads, int d_ff) {
  ModelConfig m;
  m.layers = 2, m.d_model = 8 * heads, m.heads = heads, m.d_ff = d_ff, m.seq_len = 32;
  return m;
}

// max over ranks of ms_per_flop × FLOPs with the heads given (columns in proportion).
double worst(const ModelConfig& m, const std::vector<double>& k, const std::vector<int>& h) {
  double w = 0;
  for (size_t r = 0; r < k.size(); ++r)
    w = std::max(w, k[r] * sequence_flops(m, h[r], h[r] * double(m.d_ff) / m.heads));
  return w;
}

// The best max over every composition of the heads into parts >= 1 (brute force).
double brute(const ModelConfig& m, const std::vector<double>& k) {
  const int n = static_cast<int>(k.size());
  std::vector<int> h(n, 1);
  double best = 1e300;
  std::function<void(int, int)> go = [&](int r, int left) {
    if (r == n - 1) {
      h[r] = left;
      best = std::min(best, worst(m, k, h));
      return;
    }
    for (int x = 1; x <= left - (n - 1 - r); ++x) h[r] = x, go(r + 1, left - x);
  };
  go(0, m.heads);
  return best;
}

}  // namespace

TEST(BalanceMath, WholeHeadsEveryRankAtLeastOneSumsExactAndOptimal) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> speed(0.05, 1.0);
  for (int trial = 0; trial < 300; ++trial) {
    const int heads = 2 + static_cast<int>(rng() % 11);
    const int n = 1 + static_cast<int>(rng() % std::min(heads, 4));
    const ModelConfig m = model(heads, heads * 4 + static_cast<int>(rng() % 7));
    std::vector<double> k(n);
    for (double& x : k) x = 1.0 / speed(rng);
    const std::vector<int> h = balance_heads(m, k);
    ASSERT_EQ(static_cast<int>(h.size()), n);
    EXPECT_EQ(std::accumulate(h.begin(), h.end(), 0), heads);
    for (int x : h) EXPECT_GE(x, 1);
    EXPECT_NEAR(worst(m, k, h), brute(m, k), 1e-9 * brute(m, k)) << "trial " << trial;
    // As a split it passes the whole-head rule, and the shards it makes hold exactly those
    // heads and at least one MLP column each, all columns once.
    std::vector<double> split;
    for (int x : h) split.push_back(static_cast<double>(x) / heads);
    EXPECT_TRUE(check_split(m, split).ok());
    const std::vector<ShardSpec> specs = shard_specs(m, split);
    int cols = 0;
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(specs[r].heads, h[r]);
      EXPECT_GE(specs[r].cols, 1);
      cols += specs[r].cols;
    }
    EXPECT_EQ(cols, m.d_ff);
  }
}

TEST(BalanceMath, SpeedsFarApartAndARankAtFivePercent) {
  const ModelConfig m = model(16, 64);
  // Equal speeds: equal heads.
  EXPECT_EQ(balance_heads(m, {1, 1, 1, 1}), (std::vector<int>{4, 4, 4, 4}));
  // A rank at speed 0.05 keeps the one head it must hold; the others share the rest evenly.
  EXPECT_EQ(balance_heads(m, {1, 1 / 0.05, 1, 1}), (std::vector<int>{5, 1, 5, 5}));
  // Speeds 100× apart.
  EXPECT_EQ(balance_heads(m, {100, 1}), (std::vector<int>{1, 15}));
  // Twice as fast: about twice the heads (the replicated head costs both the same).
  const std::vector<int> h = balance_heads(m, {1, 2});
  EXPECT_GE(h[0], 10);
  EXPECT_LE(h[0], 12);
  // One rank: all heads.
  EXPECT_EQ(balance_heads(m, {3}), (std::vector<int>{16}));
}

TEST(BalanceMath, SequencesMinimiseTheSlowestDc) {
  EXPECT_EQ(balance_sequences({1, 1}, 8), (std::vector<int>{4, 4}));
  EXPECT_EQ(balance_sequences({1, 3}, 8), (std::vector<int>{6, 2}));
  EXPECT_EQ(balance_sequences({1, 1000}, 8), (std::vector<int>{7, 1}));  // each DC keeps one
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 3), B = n + static_cast<int>(rng() % 9);
    std::vector<double> c(n);
    for (double& x : c) x = 0.1 + (rng() % 1000) / 100.0;
    const std::vector<int> b = balance_sequences(c, B);
    EXPECT_EQ(std::accumulate(b.begin(), b.end(), 0), B);
    double got = 0, best = 1e300;
    for (int d = 0; d < n; ++d) {
      got = std::max(got, b[d] * c[d]);
      EXPECT_GE(b[d], 1);
    }
    std::function<void(int, int, double)> go = [&](int d, int left, double w) {
      if (d == n - 1) return void(best = std::min(best, std::max(w, left * c[d])));
      for (int x = 1; x <= left - (n - 1 - d); ++x) go(d + 1, left - x, std::max(w, x * c[d]));
    };
    go(0, B, 0);
    EXPECT_DOUBLE_EQ(got, best);
  }
}

namespace {

fs::path scratch() { return strait::test::scratch_dir("balance"); }

Config config(const std::string& name, const std::string& extra) {
  std::ofstream(scratch() / "corpus.txt")
      << "a corpus for the balancer tests, longer than one sequence of the model they use\n";
  const fs::path p = scratch() / (name + ".toml");
  std::ofstream(p) << "[[datacenter]]\nname = \"east\"\nranks = 2\n"
                      "[[datacenter]]\nname = \"west\"\nranks = 2\n"
                      "[model]\nlayers = 2\nd_model = 64\nheads = 8\nd_ff = 256\nseq_len = 32\n"
                      "[train]\nsteps = 400\nglobal_batch = 8\ncorpus = \""
                   << (scratch() / "corpus.txt").string()
                   << "\"\n[control]\nbalancer = \"proportional\"\n"
                   << extra;
  return load_valid_config(p.string());
}

TEST(BalanceMath, VonNeumannRatioOnAWorkedSeries) {
  // 1..8: successive differences all 1 (Σ = 7), deviations from 4.5 give Σ = 42: eta = 1/6.
  EXPECT_NEAR(von_neumann_ratio({1, 2, 3, 4, 5, 6, 7, 8}), 7.0 / 42.0, 1e-15);
  // Alternating 0, 1 (8 values): differences 1 (Σ = 7), deviations 1/4 each (Σ = 2): 3.5.
  EXPECT_NEAR(von_neumann_ratio({0, 1, 0, 1, 0, 1, 0, 1}), 3.5, 1e-15);
  EXPECT_TRUE(std::isnan(von_neumann_ratio({1, 2, 3, 4, 5, 6, 7})));  // under 8 values
  EXPECT_TRUE(std::isnan(von_neumann_ratio(std::vector<double>(20, 3.0))));
  EXPECT_TRUE(persists(std::vector<double>(20, 3.0)));  // a constant is its own forecast
  EXPECT_TRUE(persists({1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_FALSE(persists({0, 1, 0, 1, 0, 1, 0, 1}));
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(std::isnan(von_neumann_ratio({1, 2, 3, 4, inf, 6, 7, 8})));
  EXPECT_FALSE(persists({1, 2, 3, 4, inf, 6, 7, 8}));  // nothing to forecast from
}

TEST(BalanceMath, PersistenceTestFlagsAboutTwoPercentOfIndependentSeries) {
  // 20-value windows (noise_window's default). Independent values pass the test as persistent
  // about 2% of the time (two standard deviations, one-sided: 2.1% normal, 2.4% two-valued in a
  // numpy check of 20000 windows each); an AR(1) series with coefficient 0.8 87% of the time;
  // one change of level in the window always.
  std::mt19937_64 rng(7);
  std::normal_distribution<double> z(0, 1);
  const int windows = 20000, n = 20;
  int iid = 0, coin = 0, ar = 0;
  for (int k = 0; k < windows; ++k) {
    std::vector<double> a(n), b(n), c(n);
    double prev = z(rng) / std::sqrt(1 - 0.64);
    for (int t = 0; t < n; ++t) {
      a[t] = 5 + z(rng);
      b[t] = rng() % 2 ? 1.0 : 0.7;
      prev = 0.8 * prev + z(rng);
      c[t] = 10 + prev;
    }
    iid += persists(a), coin += persists(b), ar += persists(c);
  }
  EXPECT_GT(iid, windows * 0.01);
  EXPECT_LT(iid, windows * 0.035);
  EXPECT_GT(coin, windows * 0.01);
  EXPECT_LT(coin, windows * 0.04);
  EXPECT_GT(ar, windows * 0.8);
  for (int at = 1; at < n; ++at) {
    std::vector<double> step(n, 1.0);
    for (int t = at; t < n; ++t) step[t] = 0.25;
    EXPECT_TRUE(persists(step)) << "level change at " << at;
  }
}

// A run simulated on the controller's side: every rank's load is its work × its time per unit
// of work at full speed (10 ms at the configured shard) ÷ its speed × noise; the balancer sees
// last-value forecasts, and its decisions apply at once (lag 1).
struct Sim {
  Config cfg;
  std::shared_ptr<const Scenario> sc;
  ControllerView view;
  std::unique_ptr<Balancer> bal;
  double reshard_ms = 1.0;  // the cost the start-up probe measured; < 0: none measured
  int resplits = 0, share_moves = 0;
  std::vector<std::string> details;

  explicit Sim(Config c, const char* balancer = "proportional")
      : cfg(std::move(c)), sc(std::make_shared<const Scenario>(cfg)),
        view(make_world(cfg, *sc, true), sc, start(cfg)), bal(make_balancer(balancer, cfg)) {}
  static Plan start(const Config& c) {
    Plan p;
    for (const auto& dc : c.datacenters) p.splits.push_back(dc.split);
    p.shares = c.train.batch_shares;
    return p;
  }
  // Step s ran at these speeds (× noise); then the balancer decides step s + 1.
  void step(int64_t s, const std::vector<double>& speed, const std::vector<double>& noise) {
    const World& w = view.world();
    const std::vector<double> work = relative_work(w, view.plan().splits, view.plan().shares);
    const std::vector<int> seqs = apportion(view.plan().shares, w.global_batch, 1);
    StepRecord r;
    r.step = s;
    for (int k = 0; k < w.world_size; ++k) {
      RankStep m;
      const double own = 10 * work[k] * noise[k];
      m.compute_ms = own + 2, m.reduce_ms = 2, m.emulated_ms = own * (1 / speed[k] - 1);
      m.sync_ms = 5, m.speed = speed[k], m.batch = seqs[w.dc_of_rank[k]];
      m.split = view.plan().splits[w.dc_of_rank[k]][k - w.dc_first_rank[w.dc_of_rank[k]]];
      m.reshard_ms = s == 0 && reshard_ms > 0 ? reshard_ms : 0;
      r.ranks.push_back(m);
    }
    set_work(w, r);
    Forecast f;
    for (const RankStep& m : r.ranks) f.load_ms.push_back(m.load_ms());  // last value
    view.record(r);
    view.set_clock(s + 1, 0);
    const BalanceDecision d = bal->decide(view, f);
    details.push_back(d.detail);
    if (d.splits == view.plan().splits && d.shares == view.plan().shares) return;
    resplits += d.splits != view.plan().splits;
    share_moves += d.shares != view.plan().shares;
    Plan p = view.plan();
    p.splits = d.splits, p.shares = d.shares, p.effective = s + 1;
    view.set_plan(p);
  }
};

const std::vector<double> kOnes = {1, 1, 1, 1};

}  // namespace

TEST(BalanceRule, AHomogeneousWorldKeepsItsPlan) {
  Sim sim(config("homogeneous", ""));
  for (int64_t s = 0; s < 50; ++s) sim.step(s, kOnes, kOnes);
  EXPECT_EQ(sim.resplits, 0);
  EXPECT_EQ(sim.share_moves, 0);
  EXPECT_NE(sim.details.back().find("the plan in force is the best one"), std::string::npos)
      << sim.details.back();
}

TEST(BalanceRule, ASlowRankIsResplitAwayOnceAndTheSharesFollow) {
  Sim sim(config("slow", ""));
  for (int64_t s = 0; s < 5; ++s) sim.step(s, kOnes, kOnes);
  const std::vector<double> slow = {1, 0.25, 1, 1};
  for (int64_t s = 5; s < 40; ++s) sim.step(s, slow, kOnes);
  EXPECT_EQ(sim.resplits, 1);  // once, not back and forth
  const Plan& p = sim.view.plan();
  EXPECT_EQ(p.splits[0], (std::vector<double>{0.875, 0.125}));  // the slow rank keeps one head
  EXPECT_EQ(p.splits[1], (std::vector<double>{0.5, 0.5}));      // the other DC is untouched
  EXPECT_LT(p.shares[0], 0.5);                                   // east takes fewer sequences
  const std::string* resplit = nullptr;
  for (const std::string& d : sim.details)
    if (d.find("\"decision\":\"resplit\"") != std::string::npos) resplit = &d;
  ASSERT_TRUE(resplit);
  EXPECT_NE(resplit->find("\"resplit\":[\"east\"]"), std::string::npos) << *resplit;
  EXPECT_NE(resplit->find("\"cost_ms\":1,"), std::string::npos) << *resplit;
  EXPECT_NE(resplit->find("\"old\":{\"splits\":[[0.5,0.5],[0.5,0.5]]"), std::string::npos)
      << *resplit;
}

TEST(BalanceRule, AResplitThatCannotRepayItsMeasuredCostIsNotMade) {
  Sim sim(config("costly", "[control.balance]\ngain_steps = 2\n"));
  sim.reshard_ms = 1e4;  // measured: 10 s
  for (int64_t s = 0; s < 30; ++s) sim.step(s, {1, 0.25, 1, 1}, kOnes);
  EXPECT_EQ(sim.resplits, 0);
  EXPECT_NE(sim.details.back().find("does not repay"), std::string::npos) << sim.details.back();
  // The batch shares cost nothing to move: they still follow the slow DC.
  EXPECT_EQ(sim.share_moves, 1);
}

TEST(BalanceRule, AResplitWhoseCostWasNeverMeasuredIsNotMade) {
  Sim sim(config("unmeasured", "[control.balance]\nshares = false\n"));
  sim.reshard_ms = -1;
  for (int64_t s = 0; s < 20; ++s) sim.step(s, {1, 0.25, 1, 1}, kOnes);
  EXPECT_EQ(sim.resplits, 0);
  EXPECT_EQ(sim.share_moves, 0);
  EXPECT_NE(sim.details.back().find("\"unmeasured\":[\"east\"]"), std::string::npos)
      << sim.details.back();
}

TEST(BalanceRule, SmallImbalancesStayBelowTheHysteresis) {
  Sim sim(config("small", "[control.balance]\nhysteresis = 0.05\n"));
  for (int64_t s = 0; s < 30; ++s) sim.step(s, {1, 0.97, 1, 1}, kOnes);
  EXPECT_EQ(sim.resplits, 0);
  EXPECT_EQ(sim.share_moves, 0);
}

TEST(BalanceRule, StationaryNoiseIsNotChased) {
  // Every rank's compute is noisy (±25 %, independent each step) around equal speeds: last-value
  // forecasts see imbalances of up to 60 % that are gone a step later.
  Sim sim(config("noisy", ""));
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.75, 1.25);
  for (int64_t s = 0; s < 300; ++s) sim.step(s, kOnes, {u(rng), u(rng), u(rng), u(rng)});
  EXPECT_LE(sim.resplits, 1) << "re-splits on noise";
  EXPECT_LE(sim.share_moves, 2) << "share moves on noise";
  // The same imbalance without noise, lasting: acted on.
  Sim real(config("real", ""));
  for (int64_t s = 0; s < 30; ++s) real.step(s, {1, 0.25, 1, 1}, kOnes);
  EXPECT_EQ(real.resplits, 1);
}

TEST(BalanceRule, ASlowRankFromTheStartIsAnsweredInTheWarmUp) {
  // Rank 1 at a quarter of its speed from step 0: before the skill gate has scored anything the
  // rule acts on the mean of steps 1-2 as soon as the change wins on each of steps 0-2, on which
  // every rank's load is steady (the win on each is its confirmation), deciding after step 2 for
  // step 3.
  Sim sim(config("warm", ""));
  int64_t first = -1;
  for (int64_t s = 0; s < 12; ++s) {
    sim.step(s, {1, 0.25, 1, 1}, kOnes);
    if (first < 0 && sim.resplits > 0) first = s;
  }
  EXPECT_EQ(sim.resplits, 1);
  EXPECT_EQ(first, 2);
  EXPECT_EQ(sim.view.plan().splits[0], (std::vector<double>{0.875, 0.125}));
  bool warm = false;
  for (const std::string& d : sim.details)
    warm = warm || (d.find("\"decision\":\"resplit\"") != std::string::npos &&
                    d.find("warm-up: mean of the last 2 steps") != std::string::npos &&
                    d.find("it won on each of the last 3 steps") != std::string::npos);
  EXPECT_TRUE(warm);
}

TEST(BalanceRule, ASlowRankInANoisyWorldWaitsForFourSteps) {
  // The same rank at a quarter of its speed, every rank's compute ±10 % afresh each step: no 3
  // steps are steady, so the change must win on each of 4 (steps 0-3; decided after step 3).
  Sim sim(config("warm_noisy", ""));
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.9, 1.1);
  int64_t first = -1;
  for (int64_t s = 0; s < 12; ++s) {
    sim.step(s, {1, 0.25, 1, 1}, {u(rng), u(rng), u(rng), u(rng)});
    if (first < 0 && sim.resplits > 0) first = s;
  }
  EXPECT_EQ(first, 3);
  bool warm = false;
  for (const std::string& d : sim.details)
    warm = warm || (d.find("\"decision\":\"resplit\"") != std::string::npos &&
                    d.find("it won on each of the last 4 steps") != std::string::npos);
  EXPECT_TRUE(warm);
  EXPECT_NE(sim.details[2].find("or 3 on which every rank's load is steady"), std::string::npos)
      << sim.details[2];
}

TEST(BalanceRule, ARankSlowingAfterASteadyStartIsAnsweredOnTwoSteps) {
  // Steps 0-4 at full speed, steady; rank 1 at a quarter of its speed from step 5. A world seen
  // steady is answered on 2 steady steps at the new level: decided after step 6, for step 7
  // (3 steady steps would decide after step 7).
  Sim sim(config("steady_then_slow", ""));
  int64_t first = -1;
  for (int64_t s = 0; s < 12; ++s) {
    sim.step(s, s < 5 ? kOnes : std::vector<double>{1, 0.25, 1, 1}, kOnes);
    if (first < 0 && sim.resplits > 0) first = s;
  }
  EXPECT_EQ(first, 6);
  EXPECT_NE(sim.details[6].find("it won on each of the last 2 steps"), std::string::npos)
      << sim.details[6];
}

TEST(BalanceRule, ASlowFirstStepLeavesTheShortcutsAlone) {
  // Every rank's first step three times slower (allocations and first touches on a real
  // device), steps 1-4 steady at full speed, rank 1 at a quarter from step 5. The world counts
  // as seen steady without the run's first step: answered on 2 steady steps at the new level,
  // decided after step 6 (with the first step counted, on 4 steps after step 8).
  Sim sim(config("slow_first", ""));
  int64_t first = -1;
  for (int64_t s = 0; s < 12; ++s) {
    sim.step(s, s < 5 ? kOnes : std::vector<double>{1, 0.25, 1, 1},
             s == 0 ? std::vector<double>{3, 3, 3, 3} : kOnes);
    if (first < 0 && sim.resplits > 0) first = s;
  }
  EXPECT_EQ(first, 6);
  EXPECT_NE(sim.details[6].find("it won on each of the last 2 steps"), std::string::npos)
      << sim.details[6];
}

TEST(BalanceRule, TwoValuedNoiseIsNotChasedInTheWarmUpOrAfter) {
  // The "noisy" scenario of the benchmark: every rank 1.0 or 0.7 at even odds, afresh each step.
  // In the warm-up a rank is slow in all of 4 steps (and its peer fast in all), or every rank
  // repeats itself over 3, by chance only rarely; afterwards the skill gate sees the forecasts
  // lose. (Over 400 such runs: 15 re-splits and 4 share moves; 20 and 8 before the persistence
  // test and the world seen steady, 18 and 8 with the 3 steady steps
  // only, 14 and 4 when the warm-up always waited for 4 steps, 8 and 2 when it also asked a
  // confirmation and a change lasted only if the next decision asked for the same plan.)
  int resplits = 0, moves = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    Sim sim(config("two_valued" + std::to_string(seed), ""));
    std::mt19937_64 rng(seed);
    for (int64_t s = 0; s < 60; ++s) {
      std::vector<double> v(4);
      for (double& x : v) x = rng() % 2 ? 1.0 : 0.7;
      sim.step(s, v, kOnes);
    }
    resplits += sim.resplits, moves += sim.share_moves;
  }
  EXPECT_LE(resplits, 1) << "re-splits on noise in 10 runs of 60 steps";
  EXPECT_LE(moves, 2) << "share moves on noise in 10 runs of 60 steps";
}

TEST(BalanceRule, ASingleNoisyRankAmongQuietOnesIsNotChased) {
  // Rank 1 at 1.0 or 0.7 at even odds, afresh each step; the other three at 1.0. On the rank's
  // mean speed (0.85) the even split is the better plan (by about 6 % of the DC's compute, below
  // the step's hysteresis once sync and reduce are counted), and no run of the rank's says
  // otherwise for long. The skill gate alone trusted the last-value forecasts whenever a
  // coin flip's mean score was positive (half the time): two slow steps in a row asked for a
  // re-split, two fast ones for the way back: 58 re-splits in these 10 runs, 1984 in 400. With
  // the rank's own loads tested for persistence (von Neumann's ratio) the rule acts on its mean,
  // and the warm-up's steady shortcuts no longer take the rank repeating itself for a steady
  // world: 9 here, 455 in 400 runs (at most one in 320 of them; about half of what is left is
  // one move in the warm-up, where 4 slow steps in a row are a slow device as far as anyone can
  // tell; docs/balance.md item 9).
  int resplits = 0, by_mean = 0, mixed = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    Sim sim(config("one_noisy" + std::to_string(seed), ""));
    std::mt19937_64 rng(seed);
    for (int64_t s = 0; s < 60; ++s) sim.step(s, {1, rng() % 2 ? 1.0 : 0.7, 1, 1}, kOnes);
    resplits += sim.resplits;
    EXPECT_EQ(sim.share_moves, 0) << "seed " << seed;
    for (const std::string& d : sim.details) {
      // The persistence test's own answer: the quiet ranks' predictions, the noisy rank's mean.
      mixed += d.find("\"acting_on\":\"prediction where loads persist\"") != std::string::npos;
      by_mean += d.find("\"acting_on\":\"recent mean\"") != std::string::npos;
    }
  }
  EXPECT_LE(resplits, 12) << "re-splits on one noisy rank in 10 runs of 60 steps";
  EXPECT_GE(mixed + by_mean, 10 * 40) << "the noisy rank's mean, not its last value";
  EXPECT_GE(mixed, 10 * 15) << "where the skill gate trusts the forecasts, the test still does not";
}

TEST(BalanceRule, AOneStepOutlierMovesNothing) {
  // Rank 1 is four times slower for one step only (a hiccup of its device). In a world where
  // nothing else happens the predictions never beat the mean (the skill gate scores 0), so the
  // rule acts on the mean and the outlier moves nothing, whatever `confirm`.
  for (const int confirm : {2, 1}) {
    Sim sim(config("outlier" + std::to_string(confirm),
                   "[control.balance]\nconfirm = " + std::to_string(confirm) + "\n"));
    for (int64_t s = 0; s < 40; ++s) sim.step(s, s == 25 ? std::vector<double>{1, 0.25, 1, 1} : kOnes, kOnes);
    EXPECT_EQ(sim.resplits + sim.share_moves, 0) << "confirm " << confirm;
  }
  // Rank 2 halves its speed at step 12 and stays there: last-value predictions beat the mean
  // right after, and earn the rule's trust. Then confirm is what keeps the outlier out.
  for (const int confirm : {2, 1}) {
    Sim sim(config("outlier_trusted" + std::to_string(confirm),
                   "[control.balance]\nconfirm = " + std::to_string(confirm) + "\n"));
    for (int64_t s = 0; s < 40; ++s) {
      std::vector<double> v = {1, 1, s >= 12 ? 0.5 : 1.0, 1};
      if (s == 25) v[1] = 0.25;
      sim.step(s, v, kOnes);
    }
    if (confirm == 2) {
      EXPECT_EQ(sim.resplits, 1) << "west once; the default waits for a second look at east";
    } else {
      EXPECT_EQ(sim.resplits, 3) << "west once, and east on one look, there and back";
    }
  }
}

TEST(BalanceRule, ChangesThatLastAreMadeOnTheirFirstAskOnceTheRunHasSeenThemLast) {
  // Rank 1 drops to a quarter of its speed for 8 steps in every 16, from step 24 (after the
  // warm-up, whose steady steps would answer the first drop at once): every change
  // lasts. The first ones wait for `confirm` asks (no evidence yet, p = ½); once enough have
  // lasted (confirm 2: two, p = ¾; confirm 3: one, p = ⅔ > ⅗) a change is made on its first ask,
  // confirm − 1 decisions earlier than without act_early; never a re-split more.
  for (const int confirm : {2, 3}) {
    std::vector<int64_t> at[2];
    int early = 0;
    for (const bool act_early : {true, false}) {
      Sim sim(config("lasting_" + std::to_string(confirm) + (act_early ? "_early" : "_late"),
                     "[control.balance]\nconfirm = " + std::to_string(confirm) +
                         "\nact_early = " + (act_early ? "true" : "false") + "\n"));
      for (int64_t s = 0; s < 88; ++s) {
        const int before = sim.resplits;
        sim.step(s, {1, s >= 24 && (s / 8) % 2 ? 0.25 : 1.0, 1, 1}, kOnes);
        if (sim.resplits > before) at[act_early].push_back(s);
      }
      for (const std::string& d : sim.details) {
        const bool made_early = d.find("\"early\":true") != std::string::npos;
        EXPECT_TRUE(act_early || !made_early) << d;
        if (made_early) {
          EXPECT_NE(d.find("\"decision\":\"resplit\""), std::string::npos) << d;
          EXPECT_NE(d.find("\"lasted\":{\"ask\":1,"), std::string::npos) << d;  // a first ask
          EXPECT_NE(d.find("made on its first ask"), std::string::npos) << d;
        }
        early += made_early;
      }
    }
    ASSERT_EQ(at[1].size(), at[0].size()) << "confirm " << confirm << ": the same changes, no more";
    ASSERT_GE(at[1].size(), 6u);
    int sooner = 0;
    for (size_t i = 0; i < at[1].size(); ++i) {
      EXPECT_TRUE(at[1][i] == at[0][i] || at[1][i] == at[0][i] - (confirm - 1))
          << "confirm " << confirm << ", change " << i << ": " << at[1][i] << " vs " << at[0][i];
      sooner += at[1][i] < at[0][i];
    }
    EXPECT_EQ(at[1][0], at[0][0]) << "the first change waits: nothing has lasted yet";
    EXPECT_GE(sooner, 3) << "confirm " << confirm << ": later changes are made sooner";
    EXPECT_EQ(early, sooner) << "confirm " << confirm;
  }
}

TEST(BalanceRule, AChangeFollowedByAFurtherOneInItsDirectionLasted) {
  // East's ranks at half speed from step 0: the warm-up moves the batch shares for step 3 (steps
  // 0-2 steady). At step 3 rank 0 drops to a quarter, so east wants a re-split on top of the new
  // shares (decided after step 4: steps 3-4 steady at a new level). The
  // share move lasted (the step heard since still favours it over the shares it replaced),
  // although the next decision did not ask for the same plan again.
  Sim sim(config("further", ""));
  std::vector<std::string> changes;
  for (int64_t s = 0; s < 12; ++s) {
    sim.step(s, s < 3 ? std::vector<double>{0.5, 0.5, 1, 1} : std::vector<double>{0.25, 0.5, 1, 1},
             kOnes);
    const std::string& d = sim.details.back();
    if (d.find("\"decision\":\"keep\"") == std::string::npos &&
        d.find("\"decision\":") != std::string::npos)
      changes.push_back(d);
  }
  ASSERT_GE(changes.size(), 2u);
  EXPECT_NE(changes[0].find("\"decision\":\"shares\""), std::string::npos) << changes[0];
  EXPECT_NE(changes[0].find("warm-up"), std::string::npos) << changes[0];
  EXPECT_NE(changes[1].find("\"decision\":\"resplit\""), std::string::npos) << changes[1];
  EXPECT_NE(changes[1].find("\"asks\":1,\"lasted\":1,"), std::string::npos) << changes[1];
}

TEST(BalanceRule, TheOracleReadsTheTrueSpeeds) {
  // Rank 1 slows to 0.25 at step 20; the oracle re-splits for step 20 itself, from its decision
  // after step 19, before any slow step was measured.
  Sim sim(config("oracle", "[[load]]\nranks = [1]\nkind = \"step\"\nspeed = 1.0\nat_step = 20\n"
                           "speed_after = 0.25\n"),
          "oracle");
  for (int64_t s = 0; s < 20; ++s) sim.step(s, kOnes, kOnes);
  EXPECT_EQ(sim.view.plan().splits[0], (std::vector<double>{0.875, 0.125}));
  EXPECT_NE(sim.details.back().find("\"upper_bound\":true"), std::string::npos);
  EXPECT_NE(policy_summary("balancer", "oracle").find("UPPER BOUND"), std::string::npos);
}

TEST(BalanceRule, TheOracleDoesNotReadNoiseAsSpeed) {
  // Equal true speeds, every rank's compute noisy (±25 %, independent each step; rank 1 also
  // 40 % slower in the first step, like a warm-up): the oracle pools the full-speed time over
  // the ranks and divides by the true speeds, so it sees equal loads and keeps its plan. (Each
  // rank's own median of load × speed re-split this world.)
  Sim sim(config("oracle_noise", ""), "oracle");
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.75, 1.25);
  for (int64_t s = 0; s < 100; ++s) {
    std::vector<double> noise = {u(rng), u(rng), u(rng), u(rng)};
    if (s == 0) noise[1] *= 1.4;
    sim.step(s, kOnes, noise);
  }
  EXPECT_EQ(sim.resplits, 0);
  EXPECT_EQ(sim.share_moves, 0);
}

// With control.report = after-compute the controller hears a step's compute half first and its
// complete record a round later; a step posted after its sync (pipelined) may complete after a
// later step's half has come. The history stays in step order, one entry per step.
TEST(View, ComputeHalvesAndCompleteRecordsStayInStepOrder) {
  Sim sim(config("halves", ""));
  auto rec = [](int64_t step, bool early) {
    StepRecord r;
    r.step = step, r.early = early;
    r.ranks.resize(4);
    return r;
  };
  sim.view.record(rec(12, false));
  sim.view.computed(rec(14, true));
  ASSERT_FALSE(sim.view.last()->synced);
  sim.view.record(rec(13, false));  // completes after 14's half came
  sim.view.record(rec(14, true));   // in place of its half
  std::vector<int64_t> steps;
  for (const StepRecord& r : sim.view.history()) {
    steps.push_back(r.step);
    EXPECT_TRUE(r.synced) << r.step;
  }
  EXPECT_EQ(steps, (std::vector<int64_t>{12, 13, 14}));
  EXPECT_DEATH(sim.view.computed(rec(13, true)), "came after a later step");
  EXPECT_DEATH(sim.view.computed(rec(15, false)), "not reported early");
  EXPECT_DEATH(sim.view.record(rec(14, false)), "came twice");
}

TEST(Work, ResplitsChangeWorkNotSpeed) {
  const Config cfg = config("work", "");
  const Scenario sc(cfg);
  const World w = make_world(cfg, sc, true);
  const std::vector<double> even = relative_work(w, {{0.5, 0.5}, {0.5, 0.5}}, {0.5, 0.5});
  for (double x : even) EXPECT_DOUBLE_EQ(x, 1.0);
  const std::vector<double> moved = relative_work(w, {{0.875, 0.125}, {0.5, 0.5}}, {0.25, 0.75});
  // Half the sequences and 7/4 of the heads: between half and 7/8 of the work (the replicated
  // LM head does not grow with the heads); the rank left with one head does under a third of it.
  EXPECT_GT(moved[0], 0.5);
  EXPECT_LT(moved[0], 0.875);
  EXPECT_LT(moved[1], moved[0] / 3);
  EXPECT_DOUBLE_EQ(moved[2], 1.5);         // 3/2 of the sequences, the same shard
  // A rank's load at its reference work is its load / its work: the same speed reads the same.
  RankStep a, b;
  a.compute_ms = 12, a.reduce_ms = 2, a.emulated_ms = 10, a.work = 1;
  b.compute_ms = 22, b.reduce_ms = 2, b.emulated_ms = 20, b.work = 2;
  EXPECT_DOUBLE_EQ(a.ref_load_ms(), 20);
  EXPECT_DOUBLE_EQ(b.ref_load_ms(), 20);
}

