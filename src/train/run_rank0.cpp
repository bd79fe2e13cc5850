// run_rank0.cpp — rank 0's side of each control round (see run.hpp), on the control link's
// thread: the reports of step s go into the ledger; steps whose halves are all in go to the
// controller and the trace; the controller decides the record of step s + lag; the reply carries
// the stop flag and the global loss of step s.
#include <cmath>
#include <cstdio>

#include "core/check.hpp"
#include "core/timer.hpp"
#include "train/run.hpp"

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
  row.control_rtt_ms = r.control_rtt_ms;
  for (const RankStep& m : r.ranks) {  // the step is as slow as its slowest rank
    row.compute_ms = std::max(row.compute_ms, m.compute_ms);
    row.sync_ms = std::max(row.sync_ms, m.sync_ms);
    row.wait_ms = std::max(row.wait_ms, m.wait_ms);
    row.emulated_ms = std::max(row.emulated_ms, m.emulated_ms);
  }
  return row;
}

}  // namespace

Reply Run::on_round(const ControlLink::Gathered& g, std::vector<char>& plan_bytes) {
  Reply reply;
  const int n = topo_.num_dcs, B = cfg_.train.global_batch;
  const int64_t s = g.ranks[0].step;  // -1 for the last round, which computed nothing
  for (const auto& m : g.ranks) {
    reply.stop = std::max(reply.stop, m.stop);  // the gravest reason wins (Run::Stop)
    STRAIT_CHECK(m.step == s, "the ranks posted reports of different steps");
  }
  if (s >= 0)  // global loss: each DC's mean loss weighted by its sequences of the batch
    for (int d = 0; d < n; ++d) {
      const RankReport& first = g.ranks[topo_.dc_first_rank[d]];
      reply.loss += static_cast<double>(first.batch) / B * first.loss;
    }
  if (s >= 0)  // the first non-finite loss is the reason the run fails
    for (int r = 0; r < topo_.world_size; ++r)
      if (g.ranks[r].stop == kStopNonFinite && !std::isfinite(g.ranks[r].loss)) {
        fail(kStopNonFinite, "non-finite loss (" + std::to_string(g.ranks[r].loss) + ") at step " +
                                 std::to_string(s) + ", expert " +
                                 std::to_string(s % cfg_.model.experts) + ", in datacenter " +
                                 cfg_.datacenters[cfg_.dc_of_rank(r)].name + " (rank " +
                                 std::to_string(r) + ")");
        break;
      }
  {
    std::lock_guard<std::mutex> lock(fail_mu_);
    reply.stop = std::max(reply.stop, root_stop_);  // rank 0's own: an output that failed
  }
  std::vector<LinkStep> links(static_cast<size_t>(n) * n);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      LinkStep& l = links[a * n + b];
      const LinkCounters& c = g.links[a * n + b];
      l.bytes = c.bytes, l.control_bytes = c.control_bytes;
      l.wire_ms = c.wire_ms, l.queued_ms = c.queued_ms;
      l.latency_samples = c.latency_samples, l.shaper_busy_ms = c.shaper_busy_ms;
      l.stream_bytes = c.stream_bytes, l.stream_ms = c.stream_ms;
      l.backed_bytes = c.backed_bytes, l.backed_ms = c.backed_ms;
      l.late_bytes = c.late_bytes, l.late_ms = c.late_ms;
      l.late_stream_bytes = c.late_stream_bytes, l.late_stream_ms = c.late_stream_ms;
      l.held_bytes = c.held_bytes, l.held_ms = c.held_ms;
      l.route0_bytes = c.route0_bytes, l.route1_bytes = c.route1_bytes;
      l.moved_bytes = c.moved_bytes;
      l.latency_ms = c.latency_samples > 0 ? c.latency_ms / c.latency_samples : 0.0;
      l.configured_gbps = transport_->capacity_gbps(a, b);
      l.enforced_gbps = transport_->emulated_gbps(a, b);
      l.configured_latency_ms = transport_->latency_ms(a, b);
    }
  const int64_t tokens = static_cast<int64_t>(B) * cfg_.model.seq_len;
  ledger_.add(g, s, s >= 0 ? static_cast<int>(s % cfg_.model.experts) : 0, reply.loss, tokens,
              g.ranks[0].iteration_ms, std::move(links));

  // Completed steps go to the controller before it decides, so that the decision made at step s
  // has heard step s. (Deciding first left every policy one step staler than control.lag says:
  // a load that changed at step s was answered at s + lag + 1 at the earliest.) Their forecast
  // rows are taken first: record() forgets them.
  std::vector<StepRecord> done = ledger_.take_complete();
  std::vector<std::vector<ForecastRow>> forecasts;
  for (const StepRecord& r : done) {
    forecasts.push_back(ctl_->forecast_rows(r));
    ctl_->record(r);
  }
  // A step reported before its sync (control.report = after-compute) reaches the controller as
  // its compute half now, after every earlier step it completes here, and whole a round later.
  for (StepRecord& r : ledger_.take_computed()) ctl_->computed(std::move(r));
  if (s >= 0 && !reply.stop && s + lag_ < cfg_.train.steps) {
    const double t0 = now_ms();
    if (auto next = ctl_->decide(s, s + lag_, transport_->now(), decision_rows_))
      plan_bytes = encode(*next);
    ctl_ms_prev_ = now_ms() - t0;
  }
  // The trace: decision rows first (a row of step s is committed with step s's /steps row),
  // then the steps.
  const double t0 = now_ms();
  {
    std::lock_guard<std::timed_mutex> lock(trace_mu_);  // the watchdog may close it
    try {
      if (trace_ && !trace_failed_)
        for (const auto& d : decision_rows_) trace_->append_decision(d);
      decision_rows_.clear();
      for (size_t i = 0; i < done.size(); ++i) trace_step(done[i], forecasts[i]);
    } catch (const TraceError& e) {  // no more rows; every rank stops before step s + lag
      trace_failed_ = true;
      fail(kStopFailed, "trace " + opt_.trace_path + ": " + e.what());
      reply.stop = std::max<int32_t>(reply.stop, kStopFailed);
    }
  }
  trace_ms_prev_ = now_ms() - t0;
  return reply;
}

// /ranks and /links rows of a completed step, then its /steps row (the commit point).
void Run::trace_step(const StepRecord& r, const std::vector<ForecastRow>& forecasts) {
  const int n = topo_.num_dcs;
  StepRow row = step_row(r);
  row.controller_ms = ctl_ms_prev_;
  row.trace_ms = trace_ms_prev_;
  std::vector<int64_t> offsets;
  {
    std::lock_guard<std::mutex> lock(offsets_mu_);
    offsets = std::move(offsets_.at(r.step));
    offsets_.erase(r.step);
  }
  if (trace_ && !trace_failed_) {
    std::vector<RankRow> rr;
    for (int k = 0; k < topo_.world_size; ++k) {
      const RankStep& m = r.ranks[k];
      rr.push_back(RankRow{r.step, k, cfg_.dc_of_rank(k), m.compute_ms, m.sync_ms, m.wait_ms,
                           m.emulated_ms, m.split, m.slack_ms, m.speed, m.reduce_ms,
                           m.reshard_ms});
    }
    trace_->append_ranks(rr);
    trace_->append_forecasts(forecasts);
    std::vector<LinkRow> lr;
    const double none = std::nan("");  // not observable (tc) or no sample
    const bool shaped = transport_->shaped();
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        if (a == b) continue;
        const LinkStep& l = r.links[a * n + b];
        lr.push_back(LinkRow{r.step, a, b, l.bytes, l.control_bytes, l.wire_ms, l.goodput_gbps(),
                             l.stream_ms > 0 ? l.stream_gbps() : none,
                             l.backed_ms > 0 ? l.backed_gbps() : none,
                             l.late_ms > 0 ? l.late_gbps() : none,
                             l.late_stream_ms > 0 ? l.late_stream_gbps() : none,
                             l.held_ms > 0 ? l.held_gbps() : none,
                             l.latency_samples > 0 ? l.latency_ms : none,
                             static_cast<int64_t>(l.latency_samples),
                             shaped ? l.queued_ms : none, shaped ? l.shaper_busy_ms : none,
                             l.configured_gbps, l.configured_latency_ms,
                             shaped ? l.enforced_gbps : none, l.route0_bytes, l.route1_bytes,
                             l.moved_bytes});
      }
    if (!lr.empty()) trace_->append_links(lr);
    trace_->append_step(row, offsets);
  }
  sum_.tokens += row.tokens, sum_.wall += row.wall_ms;
  sum_.compute += row.compute_ms, sum_.sync += row.sync_ms, sum_.wait += row.wait_ms;
  sum_.ctl += row.controller_ms, sum_.trace += row.trace_ms;
  ++sum_.steps;
  print_progress(row);
}

void Run::print_progress(const StepRow& row) {
  if (!opt_.verbose) return;
  const int64_t s = row.step;
  if ((s + 1) % cfg_.train.log_every != 0 && s != start_ && s + 1 != cfg_.train.steps) return;
  // Steps as the trace numbers them: 0 .. train.steps - 1.
  std::printf("step %5lld/%d  expert %d  loss %.4f  %8.0f tok/s  compute %7.1f ms  sync %7.1f ms"
              "  wait %6.1f ms%s\n",
              static_cast<long long>(s), cfg_.train.steps - 1, row.expert, row.loss,
              row.tokens / (row.wall_ms / 1e3), row.compute_ms, row.sync_ms, row.wait_ms,
              row.emulated_ms > 0 ? "  (emulated load)" : "");
  std::fflush(stdout);
}

}  // namespace strait
