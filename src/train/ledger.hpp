// ledger.hpp — rank 0's assembly of completed steps. A step's record has two halves that reach
// rank 0 in different control rounds when syncs overlap: what every rank measured while computing
// it (loss, compute, emulated load, waiting for the controller, the link traffic of that iteration)
// and what every rank measured when its sync and update completed (sync, wait for the sync,
// optimizer). A step is complete — and goes to the controller and the trace, in step order —
// once both halves from every rank are in. With control.report = after-compute every sequential
// step is so too: its report goes before its sync, whose completion comes with the next report.
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include "control/control_link.hpp"
#include "control/view.hpp"

namespace strait {

class StepLedger {
 public:
  explicit StepLedger(int world_size) : W_(world_size) {}

  // One control round: `computed` (>= 0) is the step computed in this iteration, with its global
  // loss, expert, tokens, rank 0's iteration time and the iteration's link traffic; the
  // completions in every report close their steps.
  void add(const ControlLink::Gathered& g, int64_t computed, int expert, double loss,
           int64_t tokens, double wall_ms, std::vector<LinkStep> links);
  // Records completed since the last call, in step order; each step once.
  std::vector<StepRecord> take_complete();
  // The compute halves of steps reported early (control.report = after-compute) not handed on
  // yet, in step order, each once (StepRecord::synced false): the controller hears a step's
  // loads while it syncs.
  std::vector<StepRecord> take_computed();
  bool empty() const { return open_.empty(); }

 private:
  struct Pending {
    StepRecord rec;
    bool computed = false;
    bool handed = false;  // its compute half went to take_computed
    int completions = 0;
  };
  int W_;
  std::map<int64_t, Pending> open_;
};

}  // namespace strait
