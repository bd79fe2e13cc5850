// pacer.hpp — the emulated load of a rank, inside its compute. A rank at relative speed v < 1
// must be slower at its own work, not idle after it: under tensor parallelism the ranks of a DC
// meet at every reduction of the step (two per layer forward, two backward), so a slow device
// holds up each of those meetings by the extra time of its own shard of that stretch, and giving
// it a smaller shard is what helps (docs/balance.md, "Emulating a slow rank"). Idling once after
// the compute would make every rank of the DC wait at the same point whatever the split, and a
// re-split could never pay.
//
// So the Pacer wraps the DC's reductions (it is the DcComm the model calls) and paces every
// stretch of compute that ends at one (or at the end of the compute, finish()), in one of two
// ways:
//   - measured (no [device]): it idles (1/v − 1) × the rank's own compute of the stretch;
//   - emulated device ([device] gflops = G): the step's compute is to last the rank's FLOPs
//     / (G·v), an equal share per stretch: stretch k idles until k shares of the step are over
//     (its own compute and idle so far counted; cumulative, so one stretch the CPU ran late is
//     caught up by the next ones instead of adding to the load). On a CPU shared by several
//     ranks (and other work) a rank's wall time depends on what else runs, not on its shard; an
//     emulated device that is slower than the CPU's share makes the time a function of the
//     work, the speed and nothing else (docs/balance.md, "Emulating a slow rank").
// It also times the reductions themselves (waiting for slower peers included). A DC of one rank
// makes no reductions: its whole step is one stretch. Without load and without a device it only
// reads the clock around the reductions.
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
    double emulated_ms = 0;  // the idle the scenario asks for: (1/v − 1) × own_ms, or what
                             // the emulated device's time adds to own_ms
  };

  // The step's compute starts now, at relative speed `speed`. device_ms > 0: on the emulated
  // device it lasts device_ms (at this speed), in `stretches` equal shares (the DC's reductions
  // per step + 1); 0: idle in proportion to the measured compute.
  void begin(double speed, double device_ms = 0, int stretches = 1);
  Times finish();  // the compute has ended (device synchronized): pace the last stretch

  int size() const override { return inner_.size(); }
  void allreduce_sum(float* buf, size_t n) override;

 private:
  void pace(double now, double share_ms);  // the stretch since mark_ ends at `now`: idle

  DcComm<float>& inner_;
  Backend<float>& be_;
  bool sync_device_ = false;
  double speed_ = 1, mark_ = 0;
  double device_ms_ = 0, share_ms_ = 0;  // the emulated device's step, and one stretch's share
  int paced_ = 0;                        // stretches paced so far in this step
  Times t_;
};

}  // namespace strait
