// balance.cpp — see balance.hpp.
#include "control/balance.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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

std::string list(const std::vector<double>& v) {
  std::ostringstream js;
  js.precision(6);
  js << "[";
  for (size_t i = 0; i < v.size(); ++i) {
    js << (i ? "," : "");
    if (std::isfinite(v[i])) js << v[i];
    else js << "null";  // JSON has no NaN: not measured
  }
  js << "]";
  return js.str();
}

std::string splits_json(const std::vector<std::vector<double>>& s) {
  std::string out = "[";
  for (size_t d = 0; d < s.size(); ++d) {
    if (d) out += ",";
    out += list(s[d]);
  }
  return out + "]";
}

// A candidate plan: splits per DC and sequences per DC, with its predicted step time.
struct Candidate {
  std::vector<std::vector<double>> splits;
  std::vector<int> seqs;
  std::set<int> resplit;  // DCs whose split differs from the plan in force
  double step_ms = 0, cost_ms = 0;
};

}  // namespace

void BalanceRule::score(const ControllerView& v) {
  const auto& h = v.history();
  if (h.empty()) return;
  errors_.resize(h.back().ranks.size());
  for (auto it = predicted_.begin(); it != predicted_.end() && it->first <= h.back().step;) {
    for (auto s = h.rbegin(); s != h.rend(); ++s) {
      if (s->step < it->first) break;
      if (s->step != it->first) continue;
      for (size_t r = 0; r < errors_.size() && r < it->second.size(); ++r) {
        const double actual = s->ranks[r].ref_load_ms();
        if (!(actual > 0)) continue;
        errors_[r].push_back(std::fabs(it->second[r] - actual) / actual);
        while (errors_[r].size() > static_cast<size_t>(cfg_.noise_window)) errors_[r].pop_front();
      }
    }
    it = predicted_.erase(it);
  }
}

double BalanceRule::noise(const ControllerView& v, int dc) const {
  const World& w = v.world();
  std::vector<double> pooled;
  const int first = dc < 0 ? 0 : w.dc_first_rank[dc];
  const int ranks = dc < 0 ? w.world_size : w.dc_ranks[dc];
  for (int k = 0; k < ranks; ++k) {
    const size_t r = static_cast<size_t>(first + k);
    if (r < errors_.size()) pooled.insert(pooled.end(), errors_[r].begin(), errors_[r].end());
  }
  // Two standard deviations of the relative error, the deviation estimated robustly as 1.4826 ×
  // the median absolute error (exact for normal errors; a few large errors right after a real
  // change do not raise it): an imbalance the forecasts' own noise makes 95 % of the time
  // stays below it.
  return 2 * 1.4826 * median(pooled);
}

BalanceDecision BalanceRule::decide(const ControllerView& v, const std::vector<double>& ref_ms,
                                    const std::string& source) {
  const World& w = v.world();
  const Plan& cur = v.plan();
  const ModelConfig& m = w.cfg->model;
  const int n = w.num_dcs, B = w.global_batch;
  BalanceDecision keep{cur.splits, cur.shares, ""};
  score(v);
  std::ostringstream js;
  js.precision(6);
  js << "{\"source\":\"" << source << "\",\"effective\":" << v.effective_step();
  bool usable = static_cast<int>(ref_ms.size()) == w.world_size && !cur.splits.empty();
  for (double x : ref_ms) usable = usable && std::isfinite(x) && x > 0;
  if (!usable) {
    keep.detail = js.str() + ",\"decision\":\"keep\",\"why\":\"no loads to go on yet\"}";
    return keep;
  }
  predicted_[v.effective_step()] = ref_ms;

  // Each rank's predicted ms per FLOP: its load at its reference work over that work's FLOPs.
  std::vector<std::vector<double>> ref_splits;
  for (const DatacenterConfig& dc : w.cfg->datacenters) ref_splits.push_back(dc.split);
  const std::vector<double> ref_flops = rank_flops(w, ref_splits, w.cfg->train.batch_shares);
  std::vector<double> kappa(w.world_size);
  for (int r = 0; r < w.world_size; ++r) kappa[r] = ref_ms[r] / ref_flops[r];
  auto per_seq = [&](int d, const std::vector<double>& split) {
    double worst = 0;
    const std::vector<ShardSpec> specs = shard_specs(m, split);
    for (int k = 0; k < w.dc_ranks[d]; ++k)
      worst = std::max(worst, kappa[w.dc_first_rank[d] + k] * sequence_flops(m, specs[k]));
    return worst;
  };

  // The sync time of the plan in force: measured (the gateway that arrived last waits least,
  // so the least sync of a step is the sync's own time; median over recent steps), else the
  // planner's prediction before any step has completed.
  std::vector<double> syncs;
  const auto& h = v.history();
  const size_t window = static_cast<size_t>(cfg_.noise_window);
  for (size_t j = h.size() > window ? h.size() - window : 0; j < h.size(); ++j) {
    double least = std::numeric_limits<double>::infinity();
    for (const RankStep& r : h[j].ranks) least = std::min(least, r.sync_ms);
    if (std::isfinite(least)) syncs.push_back(least);
  }
  const double sync_ms = syncs.empty() ? cur.sync.predicted_ms : median(syncs);
  const bool overlapped = cur.overlap == Overlap::pipelined;

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

  const std::vector<int> cur_seqs = apportion(cur.shares, B, 1);
  std::vector<std::vector<double>> best_splits = cur.splits;
  for (int d = 0; d < n; ++d) {
    if (w.dc_ranks[d] < 2) continue;
    std::vector<double> k(kappa.begin() + w.dc_first_rank[d],
                          kappa.begin() + w.dc_first_rank[d] + w.dc_ranks[d]);
    const std::vector<int> heads = balance_heads(m, k);
    const std::vector<ShardSpec> now = shard_specs(m, cur.splits[d]);
    bool same = true;
    for (size_t i = 0; i < heads.size(); ++i) same = same && heads[i] == now[i].heads;
    if (same) continue;  // keep the split's own numbers: an equal split must compare equal
    best_splits[d].clear();
    for (int x : heads) best_splits[d].push_back(static_cast<double>(x) / m.heads);
  }
  auto make = [&](const std::set<int>& resplit) {
    Candidate c;
    c.resplit = resplit;
    c.splits = cur.splits;
    for (int d : resplit) c.splits[d] = best_splits[d];
    std::vector<double> ps(n);
    for (int d = 0; d < n; ++d) ps[d] = per_seq(d, c.splits[d]);
    c.seqs = cfg_.shares ? balance_sequences(ps, B) : cur_seqs;
    double compute = 0;
    for (int d = 0; d < n; ++d) compute = std::max(compute, c.seqs[d] * ps[d]);
    c.step_ms = overlapped ? std::max(compute, sync_ms) : compute + sync_ms;
    for (int d : resplit) c.cost_ms = std::max(c.cost_ms, cost[d]);
    return c;
  };
  const Candidate now = make({});
  Candidate in_force = now;
  in_force.seqs = cur_seqs;
  {
    double compute = 0;
    for (int d = 0; d < n; ++d)
      compute = std::max(compute, cur_seqs[d] * per_seq(d, cur.splits[d]));
    in_force.step_ms = overlapped ? std::max(compute, sync_ms) : compute + sync_ms;
  }
  const double K = cfg_.gain_steps;
  auto value = [&](const Candidate& c) { return K * (in_force.step_ms - c.step_ms) - c.cost_ms; };
  // The noise level of each DC (and of all ranks pooled): the recent relative error of the
  // loads predicted for it. A change is considered only where it promises more than that.
  std::vector<double> noise_dc(n);
  for (int d = 0; d < n; ++d) noise_dc[d] = noise(v, d);
  const double noise_all = noise(v, -1);
  // A DC may be re-split when its slowest rank is predicted faster per sequence by more than
  // the hysteresis and the DC's noise, and the cost of its re-split has been measured.
  std::vector<double> dc_gain(n, 0.0);
  std::vector<int> eligible;
  std::vector<std::string> unmeasured;
  for (int d = 0; d < n; ++d) {
    if (best_splits[d] == cur.splits[d]) continue;
    const double c0 = per_seq(d, cur.splits[d]);
    dc_gain[d] = (c0 - per_seq(d, best_splits[d])) / c0;
    if (!(dc_gain[d] > std::max(cfg_.hysteresis, noise_dc[d]))) continue;
    if (std::isnan(cost[d])) unmeasured.push_back(w.dc_names[d]);
    else eligible.push_back(d);
  }
  // New shares alone when they promise more than the hysteresis and the pooled noise; then the
  // eligible re-splits that add most net value (gain_steps × gain − cost), one at a time.
  const double shares_gain = (in_force.step_ms - now.step_ms) / in_force.step_ms;
  Candidate best = shares_gain > std::max(cfg_.hysteresis, noise_all) ? now : in_force;
  for (;;) {
    Candidate next = best;
    for (int d : eligible) {
      if (best.resplit.count(d)) continue;
      std::set<int> with = best.resplit;
      with.insert(d);
      const Candidate c = make(with);
      if (value(c) > value(next)) next = c;
    }
    if (next.resplit == best.resplit) break;
    best = next;
  }
  const double gain = in_force.step_ms - best.step_ms;
  const double rel = in_force.step_ms > 0 ? gain / in_force.step_ms : 0;
  std::vector<double> new_shares = cur.shares;
  if (best.seqs != cur_seqs) {
    new_shares.clear();
    for (int x : best.seqs) new_shares.push_back(static_cast<double>(x) / B);
  }

  std::string decision = "keep", why;
  if (best.resplit.empty() && best.seqs == cur_seqs) {
    const bool best_already = now.seqs == cur_seqs && std::all_of(dc_gain.begin(), dc_gain.end(),
                                                                  [](double g) { return g == 0; });
    if (best_already) why = "the plan in force is the best one whole heads and sequences allow";
    else if (!eligible.empty())
      why = "the gain over gain_steps does not repay the measured re-split cost";
    else if (!unmeasured.empty()) why = "the re-splits that would pay have no measured cost yet";
    else why = "no change promises more than the hysteresis and the forecasts' noise";
  } else if (!(rel > cfg_.hysteresis)) {
    why = "predicted step-time gain below the hysteresis";
  } else if (!(value(best) > 0)) {
    why = "the gain over gain_steps does not repay the measured re-split cost";
  } else {
    decision = best.resplit.empty() ? "shares" : "resplit";
    why = best.resplit.empty() ? "new batch shares pay" : "the re-split repays its measured cost";
  }
  js << ",\"decision\":\"" << decision << "\",\"why\":\"" << why << "\"";
  js << ",\"predicted_ms\":{\"in_force\":" << in_force.step_ms << ",\"new\":" << best.step_ms
     << "},\"sync_ms\":" << sync_ms << ",\"gain_ms_per_step\":" << gain
     << ",\"relative_gain\":" << rel << ",\"hysteresis\":" << cfg_.hysteresis
     << ",\"dc_gain\":" << list(dc_gain) << ",\"noise\":" << list(noise_dc)
     << ",\"noise_all\":" << noise_all << ",\"gain_steps\":" << cfg_.gain_steps
     << ",\"gain_ms\":" << K * gain << ",\"cost_ms\":" << best.cost_ms << ",\"resplit\":[";
  bool first = true;
  for (int d : best.resplit) {
    js << (first ? "" : ",") << "\"" << w.dc_names[d] << "\"";
    first = false;
  }
  js << "],\"resplit_cost_ms\":" << list(cost) << ",\"unmeasured\":[";
  for (size_t i = 0; i < unmeasured.size(); ++i)
    js << (i ? "," : "") << "\"" << unmeasured[i] << "\"";
  js << "],\"old\":{\"splits\":" << splits_json(cur.splits) << ",\"shares\":" << list(cur.shares)
     << "},\"new\":{\"splits\":" << splits_json(best.splits) << ",\"shares\":" << list(new_shares)
     << "}}";
  BalanceDecision d = keep;
  if (decision != "keep") d.splits = best.splits, d.shares = new_shares;
  d.detail = js.str();
  return d;
}

}  // namespace strait
