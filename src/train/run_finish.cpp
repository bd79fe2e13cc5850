// run_finish.cpp — what a run writes: the trace rows of completed steps (rank 0), progress
// lines, checkpoints, and the finish phase (see run.hpp).
#include <cmath>
#include <cstdio>

#include "core/check.hpp"
#include "core/timer.hpp"
#include "train/model_state.hpp"
#include "train/run.hpp"
#include "train/startup.hpp"

namespace strait {

namespace {

StepRow step_row(const StepRecord& r) {
  StepRow row;
  row.step = r.step;
  row.expert = r.expert;
  row.loss = r.loss;
  row.tokens = r.tokens;
  row.wall_ms = r.wall_ms;
  row.overlapped = r.overlapped ? 1 : 0;
  for (const RankStep& m : r.ranks) {  // the step is as slow as its slowest rank
    row.compute_ms = std::max(row.compute_ms, m.compute_ms);
    row.sync_ms = std::max(row.sync_ms, m.sync_ms);
    row.wait_ms = std::max(row.wait_ms, m.wait_ms);
    row.emulated_ms = std::max(row.emulated_ms, m.emulated_ms);
  }
  return row;
}

}  // namespace

// Rank 0: per completed step its /ranks and /links rows, then the /steps row (the commit point),
// after the decision rows made so far.
void Run::trace_completed() {
  if (!root_) return;
  const double t0 = now_ms();
  if (trace_) {
    for (const auto& d : decision_rows_) trace_->append_decision(d);
  }
  decision_rows_.clear();
  const int n = topo_.num_dcs;
  for (const StepRecord& r : completed_) {
    StepRow row = step_row(r);
    row.controller_ms = ctl_ms_prev_;
    row.trace_ms = trace_ms_prev_;
    if (trace_) {
      std::vector<RankRow> rr;
      for (int k = 0; k < topo_.world_size; ++k) {
        const RankStep& m = r.ranks[k];
        rr.push_back(RankRow{r.step, k, cfg_.dc_of_rank(k), m.compute_ms, m.sync_ms, m.wait_ms,
                             m.emulated_ms, m.split});
      }
      trace_->append_ranks(rr);
      std::vector<LinkRow> lr;
      for (int s = 0; s < n; ++s)
        for (int d = 0; d < n; ++d) {
          if (s == d) continue;
          const LinkStep& l = r.links[s * n + d];
          const double none = std::nan("");  // not observable (tc) or no sample
          const bool shaped = transport_->shaped();
          lr.push_back(LinkRow{r.step, s, d, l.bytes, l.wire_ms, l.goodput_gbps(),
                               l.latency_samples > 0 ? l.latency_ms : none,
                               static_cast<int64_t>(l.latency_samples),
                               shaped ? l.queued_ms : none, shaped ? l.shaper_busy_ms : none,
                               l.configured_gbps, l.configured_latency_ms,
                               shaped ? l.enforced_gbps : none});
        }
      if (!lr.empty()) trace_->append_links(lr);
      trace_->append_step(row, offsets_.at(r.step));
    }
    offsets_.erase(r.step);
    sum_.tok_s += row.tokens / (row.wall_ms / 1e3), sum_.wall += row.wall_ms;
    sum_.compute += row.compute_ms, sum_.sync += row.sync_ms, sum_.wait += row.wait_ms;
    sum_.ctl += row.controller_ms, sum_.trace += row.trace_ms;
    ++sum_.steps;
    print_progress(row);
  }
  completed_.clear();
  trace_ms_prev_ = now_ms() - t0;
}

void Run::print_progress(const StepRow& row) {
  if (!opt_.verbose) return;
  const int64_t s = row.step;
  if ((s + 1) % cfg_.train.log_every != 0 && s != start_ && s + 1 != cfg_.train.steps) return;
  std::printf("step %5lld/%d  expert %d  loss %.4f  %8.0f tok/s  compute %7.1f ms  sync %7.1f ms"
              "  wait %6.1f ms%s\n",
              static_cast<long long>(s) + 1, cfg_.train.steps, row.expert, row.loss,
              row.tokens / (row.wall_ms / 1e3), row.compute_ms, row.sync_ms, row.wait_ms,
              row.emulated_ms > 0 ? "  (emulated load)" : "");
  std::fflush(stdout);
}

// Collective. Every expert's update must have landed: no sync may be in flight.
void Run::write_checkpoint(int64_t next_step) {
  if (opt_.checkpoint_path.empty()) return;
  if (in_flight_.active()) complete_in_flight();
  const Checkpoint c = assemble_checkpoint(cfg_, next_step, plan_->splits, plan_->shares, experts_,
                                           layouts_, channels_, topo_);
  std::string err;
  if (root_) {
    try {
      strait::write_checkpoint(opt_.checkpoint_path, c);
    } catch (const std::exception& ex) {
      err = ex.what();
    }
  }
  err = agree(topo_, err);
  if (!err.empty()) STRAIT_FATAL("writing checkpoint failed: " + err);
}

TrainOutcome Run::finish(bool stopped) {
  // The last overlapped sync lands, and one more exchange brings its measurements to rank 0.
  if (in_flight_.active()) complete_in_flight();
  measure_and_decide(nullptr, true);
  trace_completed();
  write_checkpoint(next_step_);
  if (opt_.keep_final_params && topo_.dc == 0) {
    const SyncInput in{&topo_, &layouts_, 1.0, nullptr, nullptr};
    for (size_t e = 0; e < experts_.size(); ++e) {
      std::vector<float> p, m, v;
      if (gather_expert(*experts_[e], channels_[e], in, p, m, v) && root_)
        out_.final_params.push_back(std::move(p));
    }
  }
  if (trace_) trace_->close(stopped ? "interrupted" : "complete");
  if (root_ && opt_.verbose && sum_.steps > 0) {
    const double last = out_.losses.back(), entropy_nats = corpus_.entropy_bits * 0.6931471805599453;
    std::printf("done: %lld steps, final loss %.4f nats (corpus unigram entropy %.3f nats)%s\n",
                static_cast<long long>(next_step_ - start_), last, entropy_nats,
                last < entropy_nats ? "" : "  [not below the unigram entropy]");
    std::printf("mean per step: wall %.1f ms, compute %.1f ms, sync %.1f ms, wait %.1f ms, "
                "%.0f tok/s; controller %.2f%%, trace %.2f%% of wall time\n",
                sum_.wall / sum_.steps, sum_.compute / sum_.steps, sum_.sync / sum_.steps,
                sum_.wait / sum_.steps, sum_.tok_s / sum_.steps, 100 * sum_.ctl / sum_.wall,
                100 * sum_.trace / sum_.wall);
    if (!opt_.checkpoint_path.empty()) std::printf("checkpoint: %s\n", opt_.checkpoint_path.c_str());
    std::fflush(stdout);
  }
  if (stopped && root_)
    std::fprintf(stderr, "strait: stopped by signal at step %lld; trace and checkpoint closed\n",
                 static_cast<long long>(next_step_));
  out_.exit_code = stopped ? 3 : 0;
  return std::move(out_);
}

}  // namespace strait
