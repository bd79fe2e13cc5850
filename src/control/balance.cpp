// balance.cpp — see balance.hpp.
#include "control/balance.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>

#include "control/work.hpp"
#include "core/apportion.hpp"
#include "core/check.hpp"

namespace strait {

std::vector<int> balance_heads(const ModelConfig& m, const std::vector<double>& ms_per_flop) {
  const int n = static_cast<int>(ms_per_flop.size());
  STRAIT_CHECK(n >= 1 && n <= m.heads, "balance_heads: 1 to model.heads ranks");
  const double cols_per_head = static_cast<double>(m.d_ff) / m.heads;
  auto time = [&](int r, int h) {
    return ms_per_flop[r] * sequence_flops(m, h, h * cols_per_head);
  };
  std::vector<int> h(n, 1);
  for (int left = m.heads - n; left > 0; --left) {
    int best = 0;
    for (int r = 1; r < n; ++r)
      if (time(r, h[r] + 1) < time(best, h[best] + 1)) best = r;
    ++h[best];
  }
  return h;
}

std::vector<int> balance_sequences(const std::vector<double>& ms_per_seq, int B) {
  const int n = static_cast<int>(ms_per_seq.size());
  STRAIT_CHECK(n >= 1 && n <= B, "balance_sequences: 1 to B datacenters");
  std::vector<int> b(n, 1);
  for (int left = B - n; left > 0; --left) {
    int best = 0;
    for (int d = 1; d < n; ++d)
      if ((b[d] + 1) * ms_per_seq[d] < (b[best] + 1) * ms_per_seq[best]) best = d;
    ++b[best];
  }
  return b;
}

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// A number for JSON, which has no NaN or infinity: null (not measured, not known yet).
std::string number(double x) {
  if (!std::isfinite(x)) return "null";
  std::ostringstream js;
  js.precision(6);
  js << x;
  return js.str();
}

std::string list(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ",";
    out += number(v[i]);
  }
  return out + "]";
}

std::string splits_json(const std::vector<std::vector<double>>& s) {
  std::string out = "[";
  for (size_t d = 0; d < s.size(); ++d) {
    if (d) out += ",";
    out += list(s[d]);
  }
  return out + "]";
}

// Every rank's FLOPs per step at its configured shard and batch: what a load at the reference
// work was measured on.
// Every rank's FLOPs per sequence under these splits.
std::vector<double> flops_of(const ModelConfig& m, const World& w,
                             const std::vector<std::vector<double>>& splits) {
  std::vector<double> f;
  for (int d = 0; d < w.num_dcs; ++d)
    for (const ShardSpec& s : shard_specs(m, splits[d])) f.push_back(sequence_flops(m, s));
  return f;
}

// The slowest DC's compute: its sequences × its slowest rank's time per sequence, each rank
// taking its load (at its reference work) per FLOP.
double dc_per_seq(const World& w, const std::vector<double>& loads,
                  const std::vector<double>& ref_flops, const std::vector<double>& flops, int d) {
  double worst = 0;
  for (int k = 0; k < w.dc_ranks[d]; ++k) {
    const int r = w.dc_first_rank[d] + k;
    worst = std::max(worst, loads[r] / ref_flops[r] * flops[r]);
  }
  return worst;
}
double compute_ms(const World& w, const std::vector<double>& loads,
                  const std::vector<double>& ref_flops, const std::vector<double>& flops,
                  const std::vector<int>& seqs) {
  double t = 0;
  for (int d = 0; d < w.num_dcs; ++d)
    t = std::max(t, seqs[d] * dc_per_seq(w, loads, ref_flops, flops, d));
  return t;
}

// Every rank's load at its reference work in one step.
std::vector<double> ref_loads(const StepRecord& s) {
  std::vector<double> loads;
  for (const RankStep& r : s.ranks) loads.push_back(r.ref_load_ms());
  return loads;
}

// Every rank's mean load at its reference work over the `window` completed steps before h[to].
// The mean, not the median: on a stationary two-valued load (each step 1.0 or 0.7 at even odds)
// a median of 20 steps is either value by chance, and acting on it chases the noise the gate is
// there to stop; spikes of the machine do not reach the loads on an emulated device (pacer.hpp).
std::vector<double> recent_mean(const std::deque<StepRecord>& h, size_t to, int window,
                                int world_size) {
  const size_t from = to > static_cast<size_t>(window) ? to - window : 0;
  std::vector<double> mean(world_size, 0.0);
  for (size_t j = from; j < to; ++j)
    for (int r = 0; r < world_size && static_cast<size_t>(r) < h[j].ranks.size(); ++r)
      mean[r] += h[j].ranks[r].ref_load_ms() / static_cast<double>(to - from);
  return mean;
}

// A rank's loads over the last `window` completed steps before h[to], newest first.
std::vector<double> rank_loads(const std::deque<StepRecord>& h, size_t to, int window, int rank) {
  std::vector<double> x;
  for (size_t j = to; j-- > 0 && x.size() < static_cast<size_t>(window);)
    if (static_cast<size_t>(rank) < h[j].ranks.size()) x.push_back(h[j].ranks[rank].ref_load_ms());
  return x;
}

// A candidate plan: splits per DC and sequences per DC, the FLOPs each rank then computes per
// sequence, its expected step time over the outcomes, and the cost of its re-splits.
struct Candidate {
  std::vector<std::vector<double>> splits;
  std::vector<int> seqs;
  std::vector<double> flops;  // per world rank, per sequence of its DC
  std::set<int> resplit;      // DCs whose split differs from the plan in force
  double step_ms = 0, cost_ms = 0;
};

}  // namespace

std::vector<double> reference_flops(const World& w) {
  std::vector<std::vector<double>> splits;
  for (const DatacenterConfig& dc : w.cfg->datacenters) splits.push_back(dc.split);
  return rank_flops(w, splits, w.cfg->train.batch_shares);
}

TunedPlan tune_plan(const World& w, const std::vector<double>& loads) {
  return tune_plan(w, loads, reference_flops(w));
}

TunedPlan tune_plan(const World& w, const std::vector<double>& loads,
                    const std::vector<double>& ref_flops) {
  const ModelConfig& m = w.cfg->model;
  TunedPlan t;
  for (int d = 0; d < w.num_dcs; ++d) {
    std::vector<double> k;
    for (int i = 0; i < w.dc_ranks[d]; ++i) {
      const int r = w.dc_first_rank[d] + i;
      k.push_back(loads[r] / ref_flops[r]);
    }
    std::vector<double> split;
    for (int x : balance_heads(m, k)) split.push_back(static_cast<double>(x) / m.heads);
    t.splits.push_back(split);
  }
  const std::vector<double> f = flops_of(m, w, t.splits);
  std::vector<double> ps;
  for (int d = 0; d < w.num_dcs; ++d) ps.push_back(dc_per_seq(w, loads, ref_flops, f, d));
  t.seqs = balance_sequences(ps, w.global_batch);
  return t;
}

double plan_compute_ms(const World& w, const std::vector<double>& loads, const TunedPlan& p) {
  return plan_compute_ms(w, loads, p, reference_flops(w));
}

double plan_compute_ms(const World& w, const std::vector<double>& loads, const TunedPlan& p,
                       const std::vector<double>& ref_flops) {
  return compute_ms(w, loads, ref_flops, flops_of(w.cfg->model, w, p.splits), p.seqs);
}

double von_neumann_ratio(const std::vector<double>& x) {
  if (x.size() < 8) return std::numeric_limits<double>::quiet_NaN();
  for (double v : x)
    if (!std::isfinite(v)) return std::numeric_limits<double>::quiet_NaN();
  const double mean = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
  double diff = 0, dev = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    dev += (x[i] - mean) * (x[i] - mean);
    if (i) diff += (x[i] - x[i - 1]) * (x[i] - x[i - 1]);
  }
  // Loads equal to rounding: no ratio (a forecast of them is their mean).
  return dev > 1e-12 * mean * mean * static_cast<double>(x.size())
             ? diff / dev
             : std::numeric_limits<double>::quiet_NaN();
}

bool persists(const std::vector<double>& x) {
  for (double v : x)
    if (!std::isfinite(v)) return false;  // nothing to forecast from
  const double eta = von_neumann_ratio(x);
  if (std::isnan(eta)) return true;
  const double n = static_cast<double>(x.size());
  return eta < 2 - 2 * std::sqrt(4 * (n - 2) / ((n - 1) * (n + 1)));
}

void BalanceRule::score(const ControllerView& v) {
  const auto& h = v.history();
  if (h.empty()) return;
  const World& w = v.world();
  const size_t window = static_cast<size_t>(cfg_.noise_window);
  const std::vector<double> ref = reference_flops(w);
  for (auto it = predicted_.begin(); it != predicted_.end() && it->first <= h.back().step;) {
    // The step predicted, and the loads of the steps before it (at most a window of them).
    size_t at = h.size();
    for (size_t j = h.size(); j-- > 0 && h[j].step >= it->first;)
      if (h[j].step == it->first) at = j;
    if (at < h.size() && at >= 2 && static_cast<int>(h[at].ranks.size()) == w.world_size) {
      const std::vector<double> actual = ref_loads(h[at]);
      const std::vector<double> recent = recent_mean(h, at, cfg_.noise_window, w.world_size);
      // On the loads that came: the plan the prediction asked for against the plan the recent
      // mean asks for.
      const double by_mean = plan_compute_ms(w, actual, tune_plan(w, recent, ref), ref);
      const double by_pred = plan_compute_ms(w, actual, tune_plan(w, it->second, ref), ref);
      if (by_mean > 0) backtest_.push_back((by_mean - by_pred) / by_mean);
      while (backtest_.size() > window) backtest_.pop_front();
    }
    it = predicted_.erase(it);
  }
}

BalanceDecision BalanceRule::decide(const ControllerView& v, const std::vector<double>& ref_ms,
                                    const std::string& source,
                                    const std::vector<std::vector<double>>& futures) {
  const World& w = v.world();
  const Plan& cur = v.plan();
  const ModelConfig& m = w.cfg->model;
  const int n = w.num_dcs, B = w.global_batch, W = w.world_size;
  BalanceDecision keep{cur.splits, cur.shares, ""};
  score(v);
  std::ostringstream js;
  js.precision(6);
  js << "{\"source\":\"" << source << "\",\"effective\":" << v.effective_step();
  bool usable = static_cast<int>(ref_ms.size()) == W && !cur.splits.empty();
  for (double x : ref_ms) usable = usable && std::isfinite(x) && x > 0;
  if (!usable) {
    keep.detail = js.str() + ",\"decision\":\"keep\",\"why\":\"no loads to go on yet\"}";
    return keep;
  }
  predicted_[v.effective_step()] = ref_ms;

  // The skill gate: on the loads that came, the plans the last noise_window predictions asked
  // for against the plans the mean of the steps before each asked for. A forecast that chases
  // noise asks for splits the next step undoes and loses to the mean: unless the predictions'
  // plans do better on average, the rule acts on the recent mean instead (which also undoes a
  // change an outlier slipped through). Known loads (the oracle's) need no gate. The gate
  // decides once half a window is scored.
  const size_t needed = std::max<size_t>(2, static_cast<size_t>(cfg_.noise_window) / 2);
  double skill = 0;
  for (double g : backtest_) skill += g / static_cast<double>(std::max<size_t>(1, backtest_.size()));
  //
  // Until then (warm-up) a change must win by more than the hysteresis on each of the last
  // kSteady steps heard (the newest may be a compute half: its loads are whole), not only on
  // their mean: a rank slow in all of them is slow, one slow in some is noise. That is the
  // change's confirmation: it needs no second ask. The
  // rule acts on the mean of those steps without the run's first, whose allocations and first
  // touches are not load; the first step may still veto a change (it must win there too), which
  // a uniformly slow first step does not. Waiting for the gate instead left a rank at a quarter
  // of its speed unanswered for the first 14 steps; leaving the first step out of the steps a
  // change must win on, and asking a confirmation on top, answered from step 6 with lag 1.
  // The last kFew steps do when the world is steady: when every rank's loads agree across them
  // within the hysteresis. Noise that varies from step to step rarely repeats itself on every
  // rank (a rank at 1.0 or 0.7 at even odds repeats on all four ranks of a 2 x 2 world over 3
  // steps one time in 256), a slow device does: on the real duty-cycle traces the rule waited
  // a step more at a third of the oracle's speed for evidence it already had. Over 2 steps
  // alone (one time in 16) the two-valued noise moved the plan in 1 run of 10 (26 re-splits
  // and 14 share moves in 400 runs against 18 and 8); but kNew = 2 steady steps at a new level
  // after a world steady until then (kFew steps at least) do (both one time in 4096): `duty-b`'s
  // drop at step 3 is answered from step 5, not 6. (With a single noisy rank among quiet ones
  // steadiness is that rank repeating itself: see docs/balance.md items 8 and 9.)
  constexpr size_t kSteady = 4, kFew = 3, kNew = 2;
  const auto& hist = v.history();
  std::vector<std::vector<double>> steady;  // warm-up: the loads a change must win on, each
  std::vector<double> acting_on = ref_ms;
  if (futures.empty()) {
    js << ",\"backtest\":{\"steps\":" << backtest_.size() << ",\"mean_gain\":" << number(skill)
       << "}";
    if (backtest_.size() < needed) {
      // The loads of steps [from, to) of the history, when all are complete; empty otherwise.
      using Loads = std::vector<std::vector<double>>;
      auto steps = [&](size_t from, size_t to) {
        Loads at;
        for (size_t j = from; j < to; ++j) {
          if (static_cast<int>(hist[j].ranks.size()) != W) return Loads{};
          at.push_back(ref_loads(hist[j]));
        }
        return at;
      };
      auto last = [&](size_t n) {
        return n <= hist.size() ? steps(hist.size() - n, hist.size()) : Loads{};
      };
      // Steady: each rank's loads within the hysteresis of their mean.
      auto is_steady = [&](const Loads& at) {
        if (at.empty()) return false;
        for (int r = 0; r < W; ++r) {
          double lo = std::numeric_limits<double>::infinity(), hi = 0, sum = 0;
          for (const auto& x : at) lo = std::min(lo, x[r]), hi = std::max(hi, x[r]), sum += x[r];
          if (hi - lo > cfg_.hysteresis * sum / static_cast<double>(at.size())) return false;
        }
        return true;
      };
      // Every step of [0, to) steady — without the run's first, whose allocations and first
      // touches are not load (slow on a real device), when at least kFew steps are left.
      auto seen_steady = [&](size_t to) {
        return is_steady(steps(to > kFew ? 1 : 0, to));
      };
      // A new level: the last kNew steps steady, every one before them (at least kFew) steady,
      // and some rank's mean moved between the two by more than the hysteresis.
      auto new_level = [&]() {
        if (hist.size() < kFew + kNew) return false;
        if (!seen_steady(hist.size() - kNew) || !is_steady(last(kNew))) return false;
        const std::vector<double> b = recent_mean(hist, hist.size() - kNew, kFew, W);
        const std::vector<double> n = recent_mean(hist, hist.size(), kNew, W);
        for (int r = 0; r < W; ++r)
          if (std::abs(n[r] - b[r]) > cfg_.hysteresis * b[r]) return true;
        return false;
      };
      steady = new_level() ? last(kNew) : last(kFew);
      // The shortcuts are for a world seen steady: 3 steady steps only when every step so far
      // is (in effect, the run's first 3, or steps 1-3 after a slow first), 2 at a new level only
      // when every step before them is. A rank that has shown noise may repeat itself by chance
      // (a rank at 1.0 or 0.7 at even odds among quiet ones, 3 times in a row one time in 4
      // after its first), and over the ~10 decisions of the warm-up it did in most runs.
      if (steady.size() == kFew && !seen_steady(hist.size()))
        steady = last(kSteady);
      if (steady.empty()) {
        js << ",\"decision\":\"keep\",\"why\":\"waiting for " << kSteady
           << " completed steps, or " << kFew << " on which every rank's load is steady\"}";
        keep.detail = js.str();
        return keep;
      }
      const size_t mean_of = std::min(steady.size(), hist.size() - 1);  // without the first step
      acting_on = recent_mean(hist, hist.size(), static_cast<int>(mean_of), W);
      js << ",\"acting_on\":\"warm-up: mean of the last " << mean_of << " steps\"";
    } else {
      // Predictions only when their plans have done better than the mean's: with no evidence
      // either way (a stable world scores 0 — both ask for the plan in force) the mean is the
      // safer of the two, since a spike of the machine lasting `confirm` steps would otherwise
      // re-split a stable world on a last-value forecast.
      // And per rank, only where its loads persist from step to step (persists, balance.hpp): a
      // single noisy rank among quiet ones scores positive half the time on a coin flip, and
      // two slow steps in a row then asked for a re-split, two fast ones for the way back.
      const bool trust = skill > 0;
      const std::vector<double> mean = recent_mean(hist, hist.size(), cfg_.noise_window, W);
      std::vector<double> eta(W);
      int predicted = 0;
      for (int r = 0; r < W; ++r) {
        const std::vector<double> x = rank_loads(hist, hist.size(), cfg_.noise_window, r);
        eta[r] = von_neumann_ratio(x);
        const bool use = trust && persists(x);
        if (!use) acting_on[r] = mean[r];
        predicted += use;
      }
      js << ",\"acting_on\":\""
         << (predicted == W ? "prediction" : predicted == 0 ? "recent mean"
                                                            : "prediction where loads persist")
         << "\",\"von_neumann\":" << list(eta);
    }
  }
  // The loads a plan is judged on: the next gain_steps steps where they are known, else those
  // it acts on, held until the change repays.
  const std::vector<std::vector<double>> outcomes =
      futures.empty() ? std::vector<std::vector<double>>{acting_on} : futures;
  const std::vector<double> ref_flops = reference_flops(w);

  // The sync time of the plan in force: measured (the gateway that arrived last waits least,
  // so the least sync of a step is the sync's own time; median over recent steps), else the
  // planner's prediction before any step has completed.
  std::vector<double> syncs;
  const auto& h = v.history();
  const size_t window = static_cast<size_t>(cfg_.noise_window);
  for (size_t j = h.size(); j-- > 0 && syncs.size() < window;) {
    if (!h[j].synced) continue;  // its sync is still running
    double least = std::numeric_limits<double>::infinity();
    for (const RankStep& r : h[j].ranks) least = std::min(least, r.sync_ms);
    if (std::isfinite(least)) syncs.push_back(least);
  }
  const double sync_ms = syncs.empty() ? cur.sync.predicted_ms : median(syncs);
  const bool overlapped = cur.overlap == Overlap::pipelined;
  auto step_on = [&](const Candidate& c, const std::vector<double>& loads) {
    const double compute = compute_ms(w, loads, ref_flops, c.flops, c.seqs);
    return overlapped ? std::max(compute, sync_ms) : compute + sync_ms;
  };
  auto expected_step = [&](const Candidate& c) {
    double sum = 0;
    for (const auto& o : outcomes) sum += step_on(c, o);
    return sum / outcomes.size();
  };

  // The measured cost of re-splitting each DC: its slowest rank's latest re-split (the start-up
  // probe counts); NaN until one has been measured.
  std::vector<double> cost(n, std::numeric_limits<double>::quiet_NaN());
  for (int d = 0; d < n; ++d)
    for (auto s = h.rbegin(); s != h.rend() && std::isnan(cost[d]); ++s) {
      double c = 0;
      for (int k = 0; k < w.dc_ranks[d]; ++k)
        c = std::max(c, s->ranks[w.dc_first_rank[d] + k].reshard_ms);
      if (c > 0) cost[d] = c;
    }

  // A plan (splits, shares) as a candidate to weigh: the FLOPs and sequences it gives each rank.
  using Ask = std::pair<std::vector<std::vector<double>>, std::vector<double>>;
  auto plan_of = [&](const Ask& a) {
    Candidate c;
    c.splits = a.first;
    c.flops = flops_of(m, w, a.first);
    c.seqs = apportion(a.second, B, 1);
    return c;
  };
  Candidate in_force = plan_of(Ask{cur.splits, cur.shares});
  in_force.step_ms = expected_step(in_force);
  const double K = cfg_.gain_steps;
  auto value = [&](const Candidate& c) { return K * (in_force.step_ms - c.step_ms) - c.cost_ms; };

  // The best plan whole heads and sequences allow for one set of loads (those of the step decided
  // for), kept to the changes that pay on the outcomes.
  struct Choice {
    Candidate plan;
    std::vector<double> dc_gain;  // relative gain per sequence of re-splitting each DC
    std::vector<std::string> unmeasured;
    bool best_already = true;     // the plan in force is what these loads ask for
    bool repays = true;           // every re-split that gains enough repays its cost
  };
  auto choose = [&](const std::vector<double>& loads) {
    Choice ch;
    ch.dc_gain.assign(n, 0.0);
    const TunedPlan t = tune_plan(w, loads);
    std::vector<std::vector<double>> best_splits = cur.splits;
    for (int d = 0; d < n; ++d) {
      const std::vector<ShardSpec> now = shard_specs(m, cur.splits[d]);
      const std::vector<ShardSpec> want = shard_specs(m, t.splits[d]);
      bool same = true;
      for (size_t i = 0; i < now.size(); ++i) same = same && want[i].heads == now[i].heads;
      // An equal split keeps its own numbers, so that it compares equal.
      if (!same) best_splits[d] = t.splits[d], ch.best_already = false;
    }
    auto make = [&](const std::set<int>& resplit, bool reshare) {
      Candidate c;
      c.resplit = resplit;
      c.splits = cur.splits;
      for (int d : resplit) c.splits[d] = best_splits[d];
      c.flops = flops_of(m, w, c.splits);
      std::vector<double> ps(n);
      for (int d = 0; d < n; ++d) ps[d] = dc_per_seq(w, loads, ref_flops, c.flops, d);
      c.seqs = reshare && cfg_.shares ? balance_sequences(ps, B) : in_force.seqs;
      c.step_ms = expected_step(c);
      for (int d : resplit) c.cost_ms = std::max(c.cost_ms, cost[d]);
      return c;
    };
    // A DC may be re-split when that makes its slowest rank faster per sequence on the outcomes
    // by more than the hysteresis, and its re-split cost has been measured.
    std::vector<int> eligible;
    for (int d = 0; d < n; ++d) {
      if (best_splits[d] == cur.splits[d]) continue;
      const Candidate alone = make({d}, false);
      for (const auto& o : outcomes)
        ch.dc_gain[d] += (1 - dc_per_seq(w, o, ref_flops, alone.flops, d) /
                                  dc_per_seq(w, o, ref_flops, in_force.flops, d)) /
                         outcomes.size();
      if (!(ch.dc_gain[d] > cfg_.hysteresis)) continue;
      if (std::isnan(cost[d])) ch.unmeasured.push_back(w.dc_names[d]);
      else eligible.push_back(d);
    }
    // New shares alone when they lower the step time by more than the hysteresis; then the
    // eligible re-splits that add most net value, one at a time.
    const Candidate shares = make({}, true);
    ch.best_already = ch.best_already && shares.seqs == in_force.seqs;
    ch.plan = in_force.step_ms - shares.step_ms > cfg_.hysteresis * in_force.step_ms ? shares
                                                                                     : in_force;
    for (;;) {
      Candidate next = ch.plan;
      for (int d : eligible) {
        if (ch.plan.resplit.count(d)) continue;
        std::set<int> with = ch.plan.resplit;
        with.insert(d);
        const Candidate c = make(with, true);
        if (value(c) > value(next)) next = c;
      }
      if (next.resplit == ch.plan.resplit) break;
      ch.plan = next;
    }
    for (int d : eligible) ch.repays = ch.repays && ch.plan.resplit.count(d) > 0;
    return ch;
  };
  // Tuned to the loads of the step decided for only: a plan tuned to the mean of the oracle's
  // known next steps moved ahead of a change (the batch shares 13 steps before the step change
  // of "step", slowing every step in between) although the rule decides again every step.
  const Choice ch = choose(acting_on);
  const Candidate& best = ch.plan;
  const double gain = in_force.step_ms - best.step_ms;
  const double rel = in_force.step_ms > 0 ? gain / in_force.step_ms : 0;
  std::vector<double> new_shares = cur.shares;
  if (best.seqs != in_force.seqs) {
    new_shares.clear();
    for (int x : best.seqs) new_shares.push_back(static_cast<double>(x) / B);
  }
  const std::vector<std::string>& unmeasured = ch.unmeasured;

  std::string decision = "keep", why;
  if (best.resplit.empty() && best.seqs == in_force.seqs) {
    if (ch.best_already)
      why = "the plan in force is the best one whole heads and sequences allow";
    else if (!ch.repays)
      why = "the gain over gain_steps does not repay the measured re-split cost";
    else if (!unmeasured.empty())
      why = "the re-splits that would pay have no measured cost yet";
    else
      why = "no change gains more than the hysteresis";
  } else if (!(rel > cfg_.hysteresis)) {
    why = "expected step-time gain below the hysteresis";
  } else if (!(value(best) > 0)) {
    why = "the gain over gain_steps does not repay the measured re-split cost";
  } else {
    decision = best.resplit.empty() ? "shares" : "resplit";
    why = best.resplit.empty() ? "new batch shares pay" : "the re-split repays its measured cost";
  }
  // Warm-up: the change must win by more than the hysteresis on each of the last steps' loads.
  if (decision != "keep")
    for (const auto& o : steady)
      if (!(step_on(best, o) < (1 - cfg_.hysteresis) * step_on(in_force, o))) {
        decision = "keep";
        why = "warm-up: the change does not win on each of the last " +
              std::to_string(steady.size()) + " steps";
        break;
      }
  // Did the change first asked for at the previous decision last? It did if the loads of the
  // step heard since (the newest) still favour the plan it asked for over the plan in force
  // when it was asked, by more than the hysteresis — made or not, and whatever this decision
  // asks for on top: with several ranks drifting, a change is often followed by a further one
  // in the same direction (new shares, then a re-split once a DC's ranks drift apart), and
  // asking for the same plan again counted those as changes that did not last. The newest
  // step's loads alone, not those this decision acts on: a mean (the warm-up's, the gate's)
  // shares all but one step with the mean the change was asked on, and would call it lasted
  // whatever came. The last noise_window first asks count.
  const Ask want{best.splits, new_shares};
  // (pending_ with pending_count_ 1 is that first ask, pending_from_ the plan it would replace:
  // nothing between two decisions changes them.)
  if (futures.empty() && pending_count_ == 1) {
    const std::vector<double> newest = ref_loads(hist.back());
    if (static_cast<int>(newest.size()) == W)
      lasted_.push_back(step_on(plan_of(pending_), newest) <
                        (1 - cfg_.hysteresis) * step_on(plan_of(pending_from_), newest));
    while (lasted_.size() > static_cast<size_t>(cfg_.noise_window)) lasted_.pop_front();
  }
  // Hysteresis in time (predictions only): the same change must be asked for by `confirm`
  // decisions in a row, so a one-step outlier does not move the plan (and back the next step) —
  // unless recent changes have lasted often enough that acting on the first ask pays
  // (act_early): with p the odds that a change asked for once still pays on the next step's
  // loads (Laplace over the last noise_window first asks), g the gain per step and c the
  // re-split cost, acting on the first ask wins g on each of the confirm − 1 steps it saves
  // when the change lasts and, when it does not, loses the re-split there and back (2c) and
  // about g on each of the `confirm` steps the undo waits for: act when
  // p (confirm − 1) g > (1 − p)(2c + confirm g). With no evidence (p = ½) that never holds.
  if (decision == "keep") {
    pending_count_ = 0;
  } else if (futures.empty()) {
    pending_count_ = want == pending_ ? pending_count_ + 1 : 1;
    pending_ = want;
    if (pending_count_ == 1) pending_from_ = Ask{cur.splits, cur.shares};
    const int seen = static_cast<int>(lasted_.size());
    const int kept = static_cast<int>(std::count(lasted_.begin(), lasted_.end(), true));
    const double p = (kept + 1.0) / (seen + 2.0);
    const double g = gain, c = best.resplit.empty() ? 0.0 : best.cost_ms;
    const bool warm_up = !steady.empty();  // confirmed by its win on each step: not an ask
    const bool early = !warm_up && cfg_.act_early && pending_count_ == 1 && cfg_.confirm > 1 &&
                       p * (cfg_.confirm - 1) * g > (1 - p) * (2 * c + cfg_.confirm * g);
    // ask: how many decisions in a row asked for this change; asks, lasted: the window's first
    // asks and how many of them lasted.
    js << ",\"lasted\":{\"ask\":" << pending_count_ << ",\"asks\":" << seen << ",\"lasted\":" << kept
       << ",\"p\":" << number(p) << ",\"early\":" << (early ? "true" : "false") << "}";
    if (warm_up) {
      why += "; warm-up: it won on each of the last " + std::to_string(steady.size()) + " steps";
    } else if (early) {
      why += "; made on its first ask: recent changes lasted often enough to repay it";
    } else if (pending_count_ < cfg_.confirm) {
      js << ",\"confirmations\":" << pending_count_;
      why = "asked for " + std::to_string(pending_count_) + " of the " +
            std::to_string(cfg_.confirm) + " decisions in a row a change needs";
      decision = "keep";
    }
  }
  js << ",\"decision\":\"" << decision << "\",\"why\":\"" << why << "\"";
  js << ",\"outcomes\":" << outcomes.size() << ",\"expected_ms\":{\"in_force\":"
     << number(in_force.step_ms) << ",\"new\":" << number(best.step_ms)
     << "},\"sync_ms\":" << number(sync_ms) << ",\"gain_ms_per_step\":" << number(gain)
     << ",\"relative_gain\":" << number(rel) << ",\"hysteresis\":" << cfg_.hysteresis
     << ",\"dc_gain\":" << list(ch.dc_gain) << ",\"gain_steps\":" << cfg_.gain_steps
     << ",\"gain_ms\":" << number(K * gain) << ",\"cost_ms\":" << number(best.cost_ms)
     << ",\"resplit\":[";
  bool first = true;
  for (int d : best.resplit) {
    js << (first ? "" : ",") << "\"" << w.dc_names[d] << "\"";
    first = false;
  }
  js << "],\"resplit_cost_ms\":" << list(cost) << ",\"unmeasured\":[";
  for (size_t i = 0; i < unmeasured.size(); ++i)
    js << (i ? "," : "") << "\"" << unmeasured[i] << "\"";
  js << "],\"predicted_ms\":" << list(ref_ms) << ",\"acting_on_ms\":" << list(acting_on)
     << ",\"old\":{\"splits\":" << splits_json(cur.splits)
     << ",\"shares\":" << list(cur.shares) << "},\"new\":{\"splits\":" << splits_json(best.splits)
     << ",\"shares\":" << list(new_shares) << "}}";
  BalanceDecision d = keep;
  if (decision != "keep") d.splits = best.splits, d.shares = new_shares;
  d.detail = js.str();
  return d;
}

}  // namespace strait
