// view.cpp — the configured world and the controller's view (see view.hpp).
#include "control/view.hpp"

#include <iterator>
#include <string>

#include "control/path_cost.hpp"
#include "core/check.hpp"
#include "model/layout.hpp"

namespace strait {

int World::dc_index(const std::string& name) const {
  for (int d = 0; d < num_dcs; ++d)
    if (dc_names[d] == name) return d;
  return -1;
}

World make_world(const Config& cfg, const Scenario& scenario, bool thread_multiple) {
  World w;
  w.cfg = &cfg;
  w.num_dcs = static_cast<int>(cfg.datacenters.size());
  w.world_size = cfg.world_size();
  w.experts = cfg.model.experts;
  w.global_batch = cfg.train.global_batch;
  for (int d = 0; d < w.num_dcs; ++d) {
    w.dc_first_rank.push_back(cfg.first_rank_of_dc(d));
    w.dc_ranks.push_back(cfg.datacenters[d].ranks);
    w.dc_names.push_back(cfg.datacenters[d].name);
    for (int i = 0; i < cfg.datacenters[d].ranks; ++i) w.dc_of_rank.push_back(d);
  }
  const Layout full = make_layout(cfg.model, shard_specs(cfg.model, {1.0})[0]);
  w.gradient_bytes = static_cast<double>(full.full_total) * sizeof(float);
  w.thread_multiple = thread_multiple;
  w.time_scale = scenario.time_scale();
  const int n = w.num_dcs;
  w.link_gbps.assign(static_cast<size_t>(n) * n, 0.0);
  w.link_latency_ms.assign(static_cast<size_t>(n) * n, 0.0);
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (const LinkSchedule* l = scenario.link(s, d)) {
        const LinkState st = l->at(0);
        w.link_gbps[s * n + d] = st.capacity_bps / 1e9;
        w.link_latency_ms[s * n + d] = st.latency_s * 1e3;
      }
  return w;
}

Clairvoyant::LinkTruth Clairvoyant::link(int src, int dst, double run_time_s) const {
  const LinkSchedule* l = s_->link(src, dst);
  if (!l) return {};
  const LinkState st = l->at(run_time_s / s_->time_scale());
  return {st.capacity_bps / 1e9, st.latency_s * 1e3};
}

ControllerView::ControllerView(World world, std::shared_ptr<const Scenario> scenario, Plan initial)
    : world_(std::move(world)), clairvoyant_(std::move(scenario)), plan_(std::move(initial)),
      in_force_{plan_} {
  effective_ = plan_.effective;
  sync_lead_ = world_.cfg ? world_.cfg->control.lag - world_.cfg->control.sync_ahead() : 0;
  const PathsConfig pc = world_.cfg ? world_.cfg->control.paths : PathsConfig{};
  // The estimates are in run units, as measured: the configured priors scaled like the links
  // the shaper enforces (capacity / time_scale, latency × time_scale).
  std::vector<double> gbps = world_.link_gbps, lat = world_.link_latency_ms;
  for (auto& g : gbps) g /= world_.time_scale;
  for (auto& l : lat) l *= world_.time_scale;
  // What the shaper's burst can lend a sliver: htb's under tc, none in the software shaper
  // (unknown without a config: the larger).
  const bool software = world_.cfg && world_.cfg->network.shaped();
  const double burst_over = software ? LinkStates::kBurstOverSoftware : LinkStates::kBurstOverTc;
  const double goodput_over = software ? LinkStates::kGoodputOverSoftware : LinkStates::kBurstOverTc;
  links_ = LinkStates(world_.num_dcs, std::move(gbps), std::move(lat),
                      LinkStates::Params{pc.states, pc.ewma_alpha, burst_over, goodput_over});
  opening_sync_ahead_ = world_.cfg && !world_.cfg->network.shaped();
}

void ControllerView::set_plan(Plan p) {
  in_force_.push_back(p);
  plan_ = std::move(p);
}

void ControllerView::observe_links(const StepRecord& r) {
  // The sync a record measures: its own step's, or, when the step's sync overlapped the next
  // step's compute (pipelined) or its report went before its sync (after-compute), the one that
  // ran since the previous report — the previous step's, under the decision in force then
  // (run_step.cpp takes the counters after it). With control.early_paths that sync ran on the
  // paths of the record of the step after it.
  // On a real network (network.shaper = "none": tc, a WAN) the run's first sync opens the
  // connections (Open MPI's TCP transport connects a pair on its first message) and runs in TCP
  // slow start: detour3 under tc measured some 0.1 Gbit/s links at 0.02-0.06 Gbit/s there, at
  // 0.07-0.10 from the next sync on. Taken as the links' rates, one such sample (b->a at 0.027)
  // had mdp send most of b->a's bytes round for eight steps, the link then carrying too little
  // to be measured again. The software shaper's first sync is the links' own; it is taken.
  if (opening_sync_ahead_) {
    for (const LinkStep& m : r.links)
      if (m.bytes - m.control_bytes > 0 || m.stream_bytes > 0) opening_sync_ahead_ = false;
    if (!opening_sync_ahead_) return;  // that sync: left out
  }
  const int64_t synced = (r.overlapped || r.early ? r.step - 1 : r.step) + sync_lead_;
  while (in_force_.size() > 1 && in_force_[1].effective <= synced) in_force_.pop_front();
  if (!in_force_.empty() && in_force_.front().effective <= synced) {
    const Carriage carried(world_.num_dcs, flow_paths(in_force_.front(), world_, &r.links));
    links_.observe(r, &carried);
  } else {
    links_.observe(r);
  }
}

void ControllerView::computed(StepRecord r) {
  STRAIT_CHECK(history_.empty() || history_.back().step < r.step,
               "step " + std::to_string(r.step) + "'s compute half came after a later step");
  // Only a report posted before its sync hands on a compute half (StepLedger::take_computed).
  // Its links are the previous step's whole sync: learned now, not with the complete record a
  // round later.
  STRAIT_CHECK(r.early,
               "step " + std::to_string(r.step) + "'s compute half was not reported early");
  observe_links(r);
  r.synced = false;
  history_.push_back(std::move(r));
  if (history_.size() > kHistory) history_.pop_front();
}

void ControllerView::record(StepRecord r) {
  r.synced = true;
  // In step order: the newest may be a compute half (its own, replaced; or a later step's, when
  // this one was posted after its sync and the next one before).
  auto it = history_.end();
  while (it != history_.begin() && std::prev(it)->step > r.step) --it;
  if (it != history_.begin() && std::prev(it)->step == r.step) {
    StepRecord& half = *std::prev(it);
    STRAIT_CHECK(!half.synced, "step " + std::to_string(r.step) + "'s record came twice");
    half = std::move(r);  // (its links were learned with the compute half)
    return;
  }
  observe_links(r);
  history_.insert(it, std::move(r));
  if (history_.size() > kHistory) history_.pop_front();
}

}  // namespace strait
