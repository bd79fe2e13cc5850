// run_finish.cpp — checkpoints and the finish phase (see run.hpp): the last sync lands, one more
// control round carries its measurements, every outstanding reply is heard and the control link
// stops; then the checkpoint, the trace's close and the summary.
#include <cmath>
#include <cstdio>

#include "core/check.hpp"
#include "core/timer.hpp"
#include "train/model_state.hpp"
#include "train/run.hpp"
#include "train/startup.hpp"

namespace strait {

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
  if (in_flight_.active()) complete_in_flight();
  post_report(nullptr);
  double blocked = 0, rtt = 0;
  while (heard_ < posted_) collect(heard_, blocked, rtt);
  control_.reset();  // its thread is done: rank 0's trace and figures are the main thread's now
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
