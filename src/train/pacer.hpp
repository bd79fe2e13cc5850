// pacer.hpp — the emulated load of a rank, inside its compute. A rank at relative speed v < 1
// must be slower at its own work, not idle after it: under tensor parallelism the ranks of a DC
// meet at every reduction of the step (two per layer forward, two backward), so a slow device
// holds up each of those meetings by the extra time of its own shard of that stretch, and giving
// it a smaller shard is what helps (docs/balance.md, "Emulating a slow rank"). Idling once after
// the compute would make every rank of the DC wait at the same point whatever the split, and a
// re-split could never pay.
//
// So the Pacer wraps the DC's reductions (it is the DcComm the model calls): before each one it
// idles (1/v − 1) × the rank's own compute since the previous reduction, and it times the
// reductions themselves (waiting for slower peers included). finish() idles for the stretch
// after the last reduction. A DC of one rank makes no reductions: it idles once at the end, as
// before. Without load (speed 1) it only reads the clock around the reductions.
#pragma once
#include <cstddef>

#include "backend/backend.hpp"
#include "backend/dc_comm.hpp"

namespace strait {

class Pacer final : public DcComm<float> {
 public:
  // sync_device: synchronize the backend at every measurement (needed when compute is
  // asynchronous, as on CUDA, to see the rank's own work; the trainer asks for it only when
  // the scenario loads some rank, so a run without load keeps its streams overlapped).
  Pacer(DcComm<float>& inner, Backend<float>& be, bool sync_device)
      : inner_(inner), be_(be), sync_device_(sync_device) {}

  // Times of one step's compute, in ms, all from the same clock readings.
  struct Times {
    double own_ms = 0;       // the rank's own work: compute outside the reductions
    double reduce_ms = 0;    // inside the DC's reductions (waiting for slower peers included)
    double emulated_ms = 0;  // the idle the scenario asks for: (1/v − 1) × own_ms
  };

  void begin(double speed);  // the step's compute starts now, at relative speed `speed`
  Times finish();            // the compute has ended (device synchronized): idle for the tail

  int size() const override { return inner_.size(); }
  void allreduce_sum(float* buf, size_t n) override;

 private:
  void pace(double now);  // the stretch since mark_ ends at `now`: account for it and idle

  DcComm<float>& inner_;
  Backend<float>& be_;
  bool sync_device_ = false;
  double speed_ = 1, mark_ = 0;
  Times t_;
};

}  // namespace strait
