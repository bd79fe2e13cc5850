// run_finish.cpp — checkpoints and the finish phase (see run.hpp): the last sync lands, one more
// control round carries its measurements, every outstanding reply is heard and the control link
// stops; then the checkpoint, the trace's close and the summary. A run that failed (a non-finite
// loss, a checkpoint or trace that could not be written) ends with status "failed", the reason in
// the trace and on stderr, exit status 4, and its last good checkpoint untouched.
#include <cmath>
#include <cstdio>

#include "core/check.hpp"
#include "core/timer.hpp"
#include "train/model_state.hpp"
#include "train/run.hpp"
#include "train/startup.hpp"

namespace strait {

void Run::fail(int32_t code, const std::string& why) {
  std::lock_guard<std::mutex> lock(fail_mu_);
  if (failure_.empty()) failure_ = why;
  root_stop_ = std::max(root_stop_, code);
}

// Collective. Every expert's update must have landed: no sync may be in flight. A failure (a full
// disk, a non-finite parameter) is agreed by every rank; the file at the path is left as it was.
bool Run::write_checkpoint(int64_t next_step) {
  if (opt_.checkpoint_path.empty()) return true;
  if (in_flight_.active()) complete_in_flight();
  // A DC that saw a non-finite loss knows before the controller's reply tells everyone: no
  // checkpoint after it replaces the last good one.
  int bad = nonfinite_ ? 1 : 0, any_bad = 0;
  MPI_CHECK(MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, topo_.world));
  const Checkpoint c = assemble_checkpoint(cfg_, next_step, plan_->splits, plan_->shares, experts_,
                                           layouts_, channels_, topo_);
  std::string err;
  if (any_bad) {
    err = "checkpoint " + opt_.checkpoint_path + " not written: a step before " +
          std::to_string(next_step) + " had a non-finite loss";
  } else if (root_) {
    try {
      strait::write_checkpoint(opt_.checkpoint_path, c);
    } catch (const std::exception& ex) {
      err = ex.what();
    }
  }
  err = agree(topo_, err);
  if (err.empty()) {
    last_checkpoint_ = next_step;
    return true;
  }
  checkpoint_failed_ = true;
  if (root_) fail(kStopFailed, "at step " + std::to_string(next_step) + ": " + err);
  return false;
}

TrainOutcome Run::finish(bool stopped) {
  beat(next_step_, Watchdog::Phase::finish);
  if (in_flight_.active()) complete_in_flight();
  post_report(nullptr);
  double blocked = 0, rtt = 0;
  while (heard_ < posted_) {
    const Reply r = collect(heard_, blocked, rtt);
    if (r.stop >= kStopNonFinite) stop_ = std::max(stop_, r.stop);  // in the last steps
  }
  control_.reset();  // its thread is done: rank 0's trace and figures are the main thread's now
  // After a non-finite step the weights are not worth keeping: the last good checkpoint stays.
  if (stop_ != kStopNonFinite && !checkpoint_failed_) write_checkpoint(next_step_);
  const bool failed = stop_ >= kStopNonFinite || checkpoint_failed_;
  if (opt_.keep_final_params && topo_.dc == 0) {
    const SyncInput in{&topo_, &layouts_, 1.0, nullptr, nullptr};
    for (size_t e = 0; e < experts_.size(); ++e) {
      std::vector<float> p, m, v;
      if (gather_expert(*experts_[e], channels_[e], in, p, m, v) && root_)
        out_.final_params.push_back(std::move(p));
    }
  }
  const std::string status = failed ? "failed" : stopped ? "interrupted" : "complete";
  std::string reason;
  {
    std::lock_guard<std::mutex> lock(fail_mu_);
    reason = failed ? failure_ : stopped ? "stopped by signal before step " + std::to_string(next_step_) : "";
  }
  bool closed = true;
  if (trace_ && !trace_failed_) {
    std::lock_guard<std::timed_mutex> lock(trace_mu_);
    try {
      trace_->close(status, reason);
    } catch (const TraceError& e) {
      closed = false;
      fail(kStopFailed, "trace " + opt_.trace_path + ": " + e.what());
    }
  }
  if (root_ && opt_.verbose && sum_.steps > 0) {
    const double last = out_.losses.back(), entropy_nats = corpus_.entropy_bits * 0.6931471805599453;
    std::printf("done: %lld steps, final loss %.4f nats (corpus unigram entropy %.3f nats)%s\n",
                static_cast<long long>(next_step_ - start_), last, entropy_nats,
                last < entropy_nats ? "" : "  [not below the unigram entropy]");
    // The controller and the trace run on the control link's thread, beside the step loop: their
    // time is not a share of the step's (on a short run it can exceed it).
    std::printf("mean per step: wall %.1f ms, compute %.1f ms, sync %.1f ms, wait %.1f ms, "
                "%.0f tok/s; controller %.2f ms, trace %.2f ms (beside the step loop)\n",
                sum_.wall / sum_.steps, sum_.compute / sum_.steps, sum_.sync / sum_.steps,
                // tokens over wall time, not a mean of per-step rates (which overweights
                // the fast steps)
                sum_.wait / sum_.steps, sum_.tokens / (sum_.wall / 1e3), sum_.ctl / sum_.steps,
                sum_.trace / sum_.steps);
    if (!opt_.checkpoint_path.empty()) std::printf("checkpoint: %s\n", opt_.checkpoint_path.c_str());
    std::fflush(stdout);
  }
  const bool ok = !failed && closed && !trace_failed_;
  if (!ok && root_) {
    std::lock_guard<std::mutex> lock(fail_mu_);
    const std::string kept =
        opt_.checkpoint_path.empty() ? "no checkpoint path"
        : last_checkpoint_ >= 0      ? opt_.checkpoint_path + " (step " + std::to_string(last_checkpoint_) + ")"
                                     : "none written";
    std::fprintf(stderr, "strait: run failed: %s; trace %s; last checkpoint: %s\n", failure_.c_str(),
                 trace_ && closed && !trace_failed_ ? "closed as 'failed'" : "not writable",
                 kept.c_str());
  } else if (stopped && root_) {
    std::fprintf(stderr, "strait: stopped by signal at step %lld; trace and checkpoint closed\n",
                 static_cast<long long>(next_step_));
  }
  if (watchdog_) watchdog_->stop();  // every rank is past its last collective of the run
  out_.exit_code = !ok ? 4 : stopped ? 3 : 0;
  return std::move(out_);
}

}  // namespace strait
