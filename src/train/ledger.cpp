// ledger.cpp — see ledger.hpp.
#include "train/ledger.hpp"

#include <algorithm>

#include "core/check.hpp"

namespace strait {

void StepLedger::add(const ControlLink::Gathered& g, int64_t computed, int expert, double loss,
                     int64_t tokens, double wall_ms, std::vector<LinkStep> links) {
  if (computed >= 0) {
    Pending& p = open_[computed];
    STRAIT_CHECK(!p.computed, "step " + std::to_string(computed) + " computed twice");
    p.computed = true;
    StepRecord& r = p.rec;
    r.step = computed, r.expert = expert, r.loss = loss, r.tokens = tokens, r.wall_ms = wall_ms;
    r.links = std::move(links);
    r.early = g.ranks[0].early != 0;
    r.ranks.resize(W_);
    double last_in = -1e300;  // the slowest rank done with the step's work, on rank 0's clock
    for (const auto& m : g.ranks) last_in = std::max(last_in, m.ready_ms);
    for (int k = 0; k < W_; ++k) {
      const RankReport& m = g.ranks[k];
      STRAIT_CHECK(m.step == computed, "ranks computed different steps");
      STRAIT_CHECK((m.early != 0) == r.early, "ranks posted step " + std::to_string(computed) +
                                                  " at different points");
      RankStep& s = r.ranks[k];
      s.compute_ms = m.compute_ms, s.emulated_ms = m.emulated_ms, s.split = m.split;
      s.speed = m.speed, s.reduce_ms = m.reduce_ms, s.reshard_ms = m.reshard_ms;
      s.batch = m.batch;
      s.slack_ms = std::max(0.0, last_in - m.ready_ms);
      s.wait_ms += m.control_wait_ms;
      r.control_rtt_ms = std::max(r.control_rtt_ms, m.control_rtt_ms);
    }
  }
  for (int k = 0; k < W_; ++k) {
    const RankReport& m = g.ranks[k];
    for (int i = 0; i < m.n_done; ++i) {
      const Completion& c = m.done[i];
      auto it = open_.find(c.step);
      STRAIT_CHECK(it != open_.end() && it->second.computed,
                   "a completion for step " + std::to_string(c.step) + " before its compute");
      RankStep& s = it->second.rec.ranks[k];
      s.sync_ms = c.sync_ms, s.optimizer_ms = c.optimizer_ms;
      s.wait_ms += c.wait_ms;
      it->second.rec.overlapped = c.overlapped != 0;
      // Reported early, the step's iteration time (rank 0's) comes with its completion.
      if (k == 0 && it->second.rec.early) it->second.rec.wall_ms = c.iteration_ms;
      ++it->second.completions;
    }
  }
}

std::vector<StepRecord> StepLedger::take_computed() {
  std::vector<StepRecord> out;
  for (auto& [step, p] : open_)
    if (p.computed && p.rec.early && !p.handed && p.completions < W_) {
      out.push_back(p.rec);
      out.back().synced = false;
      out.back().wall_ms = 0;  // not known until the sync completes
      p.handed = true;
    }
  return out;
}

std::vector<StepRecord> StepLedger::take_complete() {
  std::vector<StepRecord> out;
  // In step order, and only a prefix: a step is handed on once every earlier one has been.
  while (!open_.empty() && open_.begin()->second.computed &&
         open_.begin()->second.completions == W_) {
    out.push_back(std::move(open_.begin()->second.rec));
    open_.erase(open_.begin());
  }
  return out;
}

}  // namespace strait
