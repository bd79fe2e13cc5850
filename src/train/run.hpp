// run.hpp — one training run as an object whose members own everything it holds (topology and
// communicators, backend, model state, sync channels, the controller, the transport, the trace,
// a sync thread), so that every exit path releases them in one place, in reverse order.
// Its phases are named methods:
//   start (the constructor, run_start.cpp): checks that may refuse the run, the start state, the
//     backend, the controller and its first decision record, the transport, the trace;
//   step  (run_step.cpp): the controller's answer to step s − lag (stop? a record from step s
//     on → apply) → sample → compute → emulate → sync → update → post this step's report; the
//     overlap in force decides whether sync + update run now or on the sync thread while the
//     next step computes (PGCS), and nothing else in the loop changes;
//   on rank 0, each round of the control link (run_rank0.cpp, on the link's thread): completed
//     steps to the controller and the trace, the controller's next decision;
//   finish (run_finish.cpp): drain the sync thread and the control link, checkpoint, summary.
// A stop reaches every rank at the same step boundary through the controller's reply (its stop
// field: a signal, a non-finite loss, an output that failed); a checkpoint that cannot be written
// is agreed by every rank where it is written. Either way the run ends cleanly and says why.
// A watchdog (train/watchdog.hpp) ends the job when a rank stops making progress.
#pragma once
#include <mpi.h>

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/select.hpp"
#include "control/control_link.hpp"
#include "control/controller.hpp"
#include "data/corpus.hpp"
#include "model/transformer.hpp"
#include "net/transport.hpp"
#include "scenario/scenario.hpp"
#include "sync/sync.hpp"
#include "topo/clock.hpp"
#include "topo/topology.hpp"
#include "trace/output_lock.hpp"
#include "trace/trace.hpp"
#include "train/fault.hpp"
#include "train/in_flight.hpp"
#include "train/ledger.hpp"
#include "train/pacer.hpp"
#include "train/trainer.hpp"
#include "train/watchdog.hpp"

namespace strait {

// Start-up refused the run (bad input): every rank throws it at the same point; exit status 2.
struct Refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Run {
 public:
  Run(const Config& cfg, MPI_Comm comm, const TrainOptions& opt);  // may throw Refused
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  // Why the steps ended before the last one, on every rank: the Reply's stop field carries the
  // largest code any rank or rank 0's own side reported.
  enum Stop : int32_t { kRunOn = 0, kStopSignal = 1, kStopNonFinite = 2, kStopFailed = 3 };

  // Runs the steps from the start step on; false when they stopped early (stop_ says why).
  bool steps();
  // Drains, writes the last trace rows, the checkpoint and the summary; the run's outcome.
  TrainOutcome finish(bool stopped);

 private:
  // What one step carries from phase to phase on this rank.
  struct Work {
    int64_t step = 0;
    int expert = 0;
    double t_begin_ms = 0;
    int batch = 0;          // sequences of this DC
    double loss = 0;        // this DC's mean loss
    double compute_ms = 0, emulated_ms = 0;
    double speed = 1;       // the scenario's relative speed of this rank in the step
    double reduce_ms = 0;   // in the DC's reductions during compute (part of compute_ms)
    double control_wait_ms = 0, control_rtt_ms = 0;  // hearing the controller before the step
    bool early = false;     // its report goes before its sync (control.report = after-compute)
  };

  // ---- step phases (run_step.cpp) ----
  bool step(int64_t s);
  bool hear_controller(int64_t s, Work& w);  // false: stop before step s
  void sample(Work& w);
  void compute(Work& w);
  void emulate(Work& w);
  // The record step s's sync runs on: the one in force, or with control.early_paths the sync
  // half (paths, routes, sync plan) of step s + 1's record, whose reply is heard here.
  std::shared_ptr<const Plan> hear_before_sync(int64_t s, Work& w);
  void sync_and_update(Work& w, const std::shared_ptr<const Plan>& plan);  // now, or on the sync thread
  void launch_sync(const Work& w, const std::shared_ptr<const Plan>& plan);
  void complete_in_flight();      // join the sync thread and update its expert
  void update(int expert, int64_t step, double sync_ms, double wait_ms, bool overlapped);
  void post_report(const Work* w);
  Reply collect(int64_t seq, double& blocked_ms, double& rtt_ms);  // one reply, in order
  void apply(const Plan& next);
  void check_record(const Plan& next) const;  // its paths and routes exist; fatal otherwise
  SyncInput sync_input(double weight, const Plan& plan) const;
  SyncStrategy& strategy(const std::string& name);

  // ---- rank 0, on the control link's thread (run_rank0.cpp) ----
  Reply on_round(const ControlLink::Gathered& g, std::vector<char>& plan_bytes);
  void trace_step(const StepRecord& r, const std::vector<ForecastRow>& forecasts);
  void print_progress(const StepRow& row);

  // ---- finish (run_finish.cpp) ----
  bool write_checkpoint(int64_t next_step);  // false: not written (agreed); the run fails
  void fail(int32_t code, const std::string& why);  // rank 0: the first failure is the reason
  void beat(int64_t step, Watchdog::Phase p) {
    if (watchdog_) watchdog_->beat(step, p);
  }

  const Config& cfg_;
  const TrainOptions& opt_;
  // Rank 0: the trace and checkpoint paths, claimed for the run's life (released after the trace
  // is closed: declared before it).
  std::vector<std::unique_ptr<OutputLock>> locks_;
  Topology topo_;
  bool root_ = false;
  int64_t start_ = 0;
  std::shared_ptr<const Scenario> scenario_;
  Corpus corpus_;
  ComputeBackend compute_;
  std::vector<Layout> layouts_;                          // every rank of this DC
  std::vector<std::unique_ptr<ParamSet<float>>> experts_;
  std::vector<SyncChannel> channels_;                    // per expert
  std::unique_ptr<Pacer> pacer_;                         // the DC's reductions, paced (load)
  std::unique_ptr<Transformer<float>> model_;
  ClockOffsets clock_;
  std::unique_ptr<Controller> ctl_;                      // rank 0
  std::shared_ptr<const Plan> plan_;                     // the decision record in force
  std::vector<int> seqs_;                                // sequences per DC under plan_
  std::map<std::string, std::unique_ptr<SyncStrategy>> strategies_;
  // Declared after channels_: destroyed first, so its courier has delivered (flushed) everything
  // before the channels' communicators are freed (net/courier.hpp's contract).
  std::unique_ptr<Transport> transport_;
  std::map<int64_t, Plan> pending_;                      // records for steps not yet begun
  std::vector<Completion> done_;                         // completions not yet reported
  std::vector<int32_t> tokens_, targets_;
  int lag_ = 1;                                          // control.lag
  bool report_early_ = false;                            // control.report = after-compute
  bool early_paths_ = false;                             // control.early_paths
  int32_t early_stop_ = kRunOn;                          // a stop heard before a sync (early_paths)
  int64_t posted_ = 0, heard_ = 0;                       // control rounds posted / collected
  double control_wait_ms_ = 0, control_rtt_ms_ = 0;      // for the next report (a wait after an early post)
  double reshard_ms_ = 0;                                // re-splits not yet reported
  Faults faults_;                                        // STRAIT_FAULT (tests)
  bool nonfinite_ = false;                               // this rank saw a non-finite loss
  int32_t stop_ = kRunOn;                                // why the steps stopped
  bool checkpoint_failed_ = false;                       // a checkpoint was not written
  int64_t last_checkpoint_ = -1;                         // step of the last one written / resumed
  std::mutex fail_mu_;                                   // rank 0: failure_ from either thread
  std::string failure_;                                  // rank 0: why the run failed
  int32_t root_stop_ = kRunOn;                           // rank 0: its own reason to stop
  bool trace_failed_ = false;                            // rank 0: the trace takes no more rows
  std::timed_mutex trace_mu_;                            // rank 0: the link's thread and the watchdog

  // Rank 0's side of the control link: touched by the link's thread during the steps, by the
  // main thread only before the first post and after the link is gone.
  std::unique_ptr<TraceWriter> trace_;
  StepLedger ledger_;
  std::vector<DecisionRow> decision_rows_;               // not yet traced
  std::mutex offsets_mu_;                                // the main thread adds, the link's reads
  std::map<int64_t, std::vector<int64_t>> offsets_;      // corpus offsets by step
  double ctl_ms_prev_ = 0, trace_ms_prev_ = 0;
  struct Summary {
    double tokens = 0, wall = 0, compute = 0, sync = 0, wait = 0, ctl = 0, trace = 0;
    int steps = 0;
  } sum_;

  TrainOutcome out_;
  int64_t next_step_ = 0;  // the first step not yet computed
  bool started_ = false;   // the first decision record has been applied
  bool thread_multiple_ = false;  // MPI_THREAD_MULTIPLE: the sync and control threads may call MPI
  // Last: the control link's thread and the sync thread stop before anything they use goes.
  std::unique_ptr<ControlLink> control_;
  InFlightSync in_flight_;
  std::unique_ptr<Watchdog> watchdog_;  // watches to the end; stops first
};

}  // namespace strait
