// run_step.cpp — the phases of one step (see run.hpp). Step s trains expert e = s mod E.
// With the sequential overlap a step syncs and updates before the next one computes; with the
// pipelined overlap (PGCS) step s's sync runs on the sync thread while step s+1 computes expert
// e+1, and expert e is updated before it computes again — so both orders train on the same
// weights and give the same losses, only the wall time differs. The controller hears step s's
// report while later steps run, and its answer takes effect at step s + lag on every rank.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/apportion.hpp"
#include "core/check.hpp"
#include "control/work.hpp"
#include "core/timer.hpp"
#include "train/model_state.hpp"
#include "train/run.hpp"
#include "train/stop.hpp"

namespace strait {

bool Run::steps() {
  for (int64_t s = start_; s < cfg_.train.steps; ++s)
    if (!step(s)) return false;
  return true;
}

bool Run::step(int64_t s) {
  Work w;
  w.step = s;
  w.expert = static_cast<int>(s % cfg_.model.experts);
  w.t_begin_ms = now_ms();
  // Each phase tells the watchdog (train/watchdog.hpp) that this rank moved, and where it is.
  beat(s, Watchdog::Phase::controller);
  if (!hear_controller(s, w)) return false;
  beat(s, Watchdog::Phase::sample);
  sample(w);
  beat(s, Watchdog::Phase::compute);
  compute(w);
  beat(s, Watchdog::Phase::emulate);
  emulate(w);
  // control.report = after-compute: the report goes before a sequential step's sync, so the
  // controller decides while the step syncs (a pipelined step posts once its sync has started,
  // as with after-sync). A sync still in flight finishes first, so that the report's link
  // traffic is the whole of the previous step's sync, as the controller reads it (view.cpp).
  w.early = report_early_ && !(plan_->overlap == Overlap::pipelined && topo_.world_size > 1);
  if (w.early) {
    if (in_flight_.active()) complete_in_flight();
    next_step_ = s + 1;
    beat(s, Watchdog::Phase::report);
    post_report(&w);
  }
  beat(s, Watchdog::Phase::controller);
  const std::shared_ptr<const Plan> sync_plan = hear_before_sync(s, w);
  beat(s, Watchdog::Phase::sync);
  sync_and_update(w, sync_plan);
  if (!w.early) {
    next_step_ = s + 1;
    beat(s, Watchdog::Phase::report);
    post_report(&w);
  }
  if (cfg_.checkpoint.every > 0 && (s + 1) % cfg_.checkpoint.every == 0 && s + 1 < cfg_.train.steps) {
    beat(s, Watchdog::Phase::checkpoint);
    if (!write_checkpoint(s + 1)) return false;  // every rank agreed it failed
  }
  return true;
}

// ---- the controller's answer to step s − lag, and the record that applies from step s ----
bool Run::hear_controller(int64_t s, Work& w) {
  if (s - lag_ >= start_) {
    // With control.early_paths the reply was heard before the previous step's sync.
    const int32_t stop = heard_ == s - lag_ - start_
                             ? collect(s - lag_ - start_, w.control_wait_ms, w.control_rtt_ms).stop
                             : early_stop_;
    if (stop) {  // every rank heard the same reply: all stop before step s, for one reason
      stop_ = stop;
      return false;
    }
  }
  if (auto it = pending_.find(s); it != pending_.end()) {
    apply(it->second);
    pending_.erase(it);
  }
  return true;
}

Reply Run::collect(int64_t seq, double& blocked_ms, double& rtt_ms) {
  STRAIT_CHECK(seq == heard_, "control replies are heard in order");
  std::vector<char> bytes;
  const Reply r = control_->wait(seq, bytes, blocked_ms, rtt_ms);
  ++heard_;
  if (seq < next_step_ - start_) out_.losses.push_back(r.loss);  // the last post computed nothing
  if (r.has_plan) {
    Plan p = decode_plan(bytes);
    STRAIT_CHECK(p.effective >= next_step_, "a decision record for step " +
                                                std::to_string(p.effective) + " arrived after it");
    pending_[p.effective] = std::move(p);
  }
  return r;
}

// ---- control.early_paths: the reply step s + 1 would hear at its start, heard before step s's
// sync instead; its record's sync half runs this sync. The round trip hides behind this step's
// compute, and the paths are chosen on links one step fresher than the record's lag. A stop it
// carries still stops the run before step s + 1, where every rank would have heard it. ----
std::shared_ptr<const Plan> Run::hear_before_sync(int64_t s, Work& w) {
  if (!early_paths_) return plan_;
  const int64_t next = s + 1;
  if (next - lag_ >= start_ && next < cfg_.train.steps) {
    double blocked = 0, rtt = 0;
    early_stop_ = collect(next - lag_ - start_, blocked, rtt).stop;
    if (w.early) {  // this step's report went before its sync: the next one carries the wait
      control_wait_ms_ += blocked;
      control_rtt_ms_ = rtt;
    } else {
      w.control_wait_ms += blocked;
      w.control_rtt_ms = rtt;
    }
  }
  const auto it = pending_.find(next);
  if (it == pending_.end()) return plan_;
  const Plan& rec = it->second;
  check_record(rec);
  auto p = std::make_shared<Plan>(*plan_);
  p->paths = rec.paths;
  p->routes = rec.routes;
  p->sync = rec.sync;
  return p;
}

// ---- sample: this DC's slice of the global batch (a pure function of seed and step) ----
void Run::sample(Work& w) {
  const int B = cfg_.train.global_batch, T = cfg_.model.seq_len;
  const auto offsets = batch_offsets(corpus_, cfg_.train.seed, w.step, B, T);
  int begin = 0;
  for (int d = 0; d < topo_.dc; ++d) begin += seqs_[d];
  w.batch = seqs_[topo_.dc];
  make_tokens(corpus_, offsets, begin, w.batch, T, tokens_, targets_);
  if (root_) {
    std::lock_guard<std::mutex> lock(offsets_mu_);
    offsets_[w.step] = offsets;
  }
}

// ---- compute: forward + backward, tensor parallel in the DC ----
void Run::compute(Work& w) {
  // An expert never computes on weights whose update is still in flight, whatever the plan.
  if (in_flight_.active() && in_flight_.expert() == w.expert) complete_in_flight();
  Backend<float>& be = *compute_.be;
  w.speed = scenario_->rank_speed(topo_.world_rank, w.step);
  // The load is emulated inside the compute, at every DC reduction (pacer.hpp); on an emulated
  // device ([device] gflops) the step lasts the shard's FLOPs on this batch / (rate × speed),
  // spread over the 4 reductions per layer and the stretch after the last one.
  double device_ms = 0;
  if (cfg_.device_gflops > 0)
    device_ms = sequence_flops(cfg_.model, layouts_[topo_.local_rank].spec) * w.batch /
                (cfg_.device_gflops * 1e9 * w.speed) * 1e3;
  pacer_->begin(w.speed, device_ms, 4 * cfg_.model.layers + 1);
  w.loss = model_->forward_backward(*experts_[w.expert], tokens_.data(), targets_.data(), w.batch);
  be.synchronize();
  faults_.after_compute(w.step, topo_.world_rank, w.loss, be, experts_[w.expert]->grads,
                        experts_[w.expert]->layout.shard_total);
  // Known here, on this DC's ranks, right after the compute; every rank learns it from the
  // controller's reply (the report carries it) and all stop before step s + lag, consistently.
  if (!std::isfinite(w.loss)) nonfinite_ = true;
}

// ---- emulate: a rank slower than its device idles (1/v − 1) × its own compute (pacer.hpp);
// what is left after the DC's last reduction of the step is idled now ----
void Run::emulate(Work& w) {
  const Pacer::Times t = pacer_->finish();
  w.compute_ms = t.own_ms + t.reduce_ms;  // forward + backward, the rank's own idle excluded
  w.reduce_ms = t.reduce_ms;
  w.emulated_ms = t.emulated_ms;
}

SyncInput Run::sync_input(double weight, const Plan& plan) const {
  return SyncInput{&topo_, &layouts_, weight, &plan.paths, &plan.routes, &plan.sync};
}

SyncStrategy& Run::strategy(const std::string& name) {
  auto it = strategies_.find(name);
  if (it == strategies_.end()) {
    auto s = make_sync_strategy(name);
    STRAIT_CHECK(s != nullptr, "the decision record names unknown sync strategy " + name);
    it = strategies_.emplace(name, std::move(s)).first;
  }
  return *it->second;
}

// ---- sync + update: now, or on the sync thread (pipelined) ----
void Run::sync_and_update(Work& w, const std::shared_ptr<const Plan>& plan) {
  // Only one sync is ever in flight: the previous step's, which finishes before this one goes.
  if (in_flight_.active()) complete_in_flight();
  const double weight = static_cast<double>(w.batch) / cfg_.train.global_batch;
  if (plan_->overlap == Overlap::pipelined && topo_.world_size > 1) {
    launch_sync(w, plan);
    return;
  }
  const double t0 = now_ms();
  // A world of one rank holds the global gradient already (weight 1): no strategy has anything
  // to do, and skipping it keeps a single-GPU run free of the host round trip.
  if (topo_.world_size > 1) {
    const SyncInput in = sync_input(weight, *plan);
    strategy(plan->sync.strategy).sync(*experts_[w.expert], channels_[w.expert], in, *transport_);
  }
  update(w.expert, w.step, now_ms() - t0, 0.0, false);
  // Posted before its sync, the step's report could not say how long its iteration took.
  if (w.early) done_.back().iteration_ms = now_ms() - w.t_begin_ms;
}

void Run::launch_sync(const Work& w, const std::shared_ptr<const Plan>& sync_plan) {
  const double weight = static_cast<double>(w.batch) / cfg_.train.global_batch;
  std::shared_ptr<const Plan> plan = sync_plan;  // the sync runs under the record it started with
  SyncStrategy* strat = &strategy(plan->sync.strategy);
  ParamSet<float>* ps = experts_[w.expert].get();
  SyncChannel* ch = &channels_[w.expert];
  const SyncInput in = sync_input(weight, *plan);
  in_flight_.start(w.step, w.expert, plan,
                   [strat, ps, ch, in, this] { strat->sync(*ps, *ch, in, *transport_); });
}

void Run::complete_in_flight() {
  const double t0 = now_ms();
  const int expert = in_flight_.expert();
  const int64_t step = in_flight_.step();
  const double sync_ms = in_flight_.join();
  update(expert, step, sync_ms, now_ms() - t0, true);
}

// ---- update: AdamW on this rank's shard of the expert ----
void Run::update(int expert, int64_t step, double sync_ms, double wait_ms, bool overlapped) {
  Backend<float>& be = *compute_.be;
  ParamSet<float>& ps = *experts_[expert];
  const TrainConfig& t = cfg_.train;
  const double t0 = now_ms();
  ps.adam_t += 1;
  be.adam(ps.params, ps.grads, ps.adam_m, ps.adam_v, ps.layout.shard_total,
          static_cast<float>(t.lr), static_cast<float>(t.beta1), static_cast<float>(t.beta2),
          static_cast<float>(t.eps), static_cast<float>(t.weight_decay), ps.adam_t);
  be.synchronize();
  done_.push_back(Completion{step, sync_ms, wait_ms, now_ms() - t0, overlapped ? 1 : 0});
}

// ---- measure: this step's report to the controller (answered before step s + lag): after
// its sync, or, posted early (control.report = after-compute), after its compute ----
void Run::post_report(const Work* w) {
  RankReport me;
  me.step = w ? w->step : -1;
  me.stop = nonfinite_ ? kStopNonFinite : stop_requested() ? kStopSignal : kRunOn;
  if (w) {
    me.batch = w->batch;
    me.early = w->early ? 1 : 0;
    me.compute_ms = w->compute_ms, me.emulated_ms = w->emulated_ms, me.loss = w->loss;
    me.speed = w->speed, me.reduce_ms = w->reduce_ms;
    // A wait heard after an early post (control.early_paths) comes with the next report.
    me.control_wait_ms = w->control_wait_ms + control_wait_ms_;
    me.control_rtt_ms = std::max(w->control_rtt_ms, control_rtt_ms_);
    control_wait_ms_ = control_rtt_ms_ = 0;
    me.iteration_ms = now_ms() - w->t_begin_ms;
  }
  me.split = plan_->splits[topo_.dc][topo_.local_rank];
  me.reshard_ms = reshard_ms_;  // re-splits applied since the last post (before this step)
  reshard_ms_ = 0;
  STRAIT_CHECK(done_.size() <= static_cast<size_t>(RankReport::kMaxDone), "too many completions");
  me.n_done = static_cast<int32_t>(done_.size());
  std::copy(done_.begin(), done_.end(), me.done);
  done_.clear();
  me.ready_ms = (MPI_Wtime() + clock_.offset_s) * 1e3;
  control_->post(me, transport_->take_counters());
  ++posted_;
}

// ---- apply: a decision record, from the step about to begin ----
void Run::check_record(const Plan& next) const {
  try {  // the controller checked its proposal's shape; these check its content first
    transport_->check_paths(next.paths);
    const int n = topo_.num_dcs;
    if (!next.routes.empty() && static_cast<int>(next.routes.size()) != n * n)
      throw std::invalid_argument("routes for " + std::to_string(next.routes.size()) +
                                  " pairs; expected one entry per ordered pair");
    for (int s = 0; s < static_cast<int>(next.routes.size()); ++s) {
      const auto& rs = next.routes[s];
      double sum = 0;
      for (const Route& r : rs) {
        transport_->check_path(r.path, s / n, s % n);
        if (!(r.fraction >= 0) || !(r.gbps >= 0) || !std::isfinite(r.gbps))
          throw std::invalid_argument("a route of " + std::to_string(s / n) + "->" +
                                      std::to_string(s % n) + " has a negative share or rate");
        sum += r.fraction;
      }
      if (!rs.empty() && std::fabs(sum - 1) > 1e-6)
        throw std::invalid_argument("the routes of " + std::to_string(s / n) + "->" +
                                    std::to_string(s % n) + " share " + std::to_string(sum) +
                                    " of its bytes; expected 1");
    }
    if (next.sync.strategy == "owners") {
      check_owner_plan(next.sync, topo_.num_dcs);
      for (int j = 0; j < topo_.num_dcs; ++j)
        for (int d = 0; d < topo_.num_dcs; ++d) {
          for (const Route& r : next.sync.reduce[d * topo_.num_dcs + j]) transport_->check_path(r.path, d, j);
          for (const Route& r : next.sync.broadcast[j * topo_.num_dcs + d]) transport_->check_path(r.path, j, d);
        }
    }
  } catch (const std::invalid_argument& e) {
    STRAIT_FATAL(std::string("the decision record for step ") + std::to_string(next.effective) +
                 " is unusable: " + e.what());
  }
}

void Run::apply(const Plan& next) {
  const Plan& cur = *plan_;
  check_record(next);
  if (next.splits[topo_.dc] != cur.splits[topo_.dc]) {
    // A re-split moves every expert's parameters and Adam state: no sync may be in flight.
    if (in_flight_.active()) complete_in_flight();
    // Timed on every rank of the DC: the balancers weigh a re-split's gain against this cost,
    // which reaches them in the report of the step it delayed.
    const double t0 = now_ms();
    reshard(experts_, layouts_, dc_layouts(cfg_.model, next.splits[topo_.dc]), channels_, topo_,
            *compute_.be);
    reshard_ms_ += now_ms() - t0;
  }
  if (next.splits != cur.splits && started_) ++out_.resplits;
  seqs_ = apportion(next.shares, cfg_.train.global_batch, 1);
  Plan p = next;
  // The sync thread calls MPI while the main thread does: without MPI_THREAD_MULTIPLE a
  // pipelined record runs sequentially, whichever policy made it (every rank sees the same
  // thread level, so all of them agree).
  if (p.overlap == Overlap::pipelined && !thread_multiple_) p.overlap = Overlap::sequential;
  plan_ = std::make_shared<const Plan>(std::move(p));
}

}  // namespace strait
