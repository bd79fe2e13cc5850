// fault.hpp — faults a test can inject into a run through the environment, so that the paths
// that handle them (a non-finite loss, a non-finite update) are exercised end to end by the real
// binary. Unset, nothing happens; docs/reliability.md lists the faults.
//   STRAIT_FAULT=nan-loss:STEP[:RANK]   the DC loss of STEP on RANK (default every rank) is NaN
//   STRAIT_FAULT=nan-grad:STEP[:RANK]   RANK's gradient of STEP is NaN before the sync: the
//                                       update makes the weights non-finite, the loss stays finite
#pragma once
#include <cstdint>

#include "backend/backend.hpp"

namespace strait {

class Faults {
 public:
  Faults();  // reads STRAIT_FAULT; a malformed value is ignored with a note on stderr
  // After the compute of `step` on world rank `rank`: applies what is asked for to the DC loss
  // and the rank's gradient (n elements of backend memory).
  void after_compute(int64_t step, int rank, double& loss, Backend<float>& be, float* grads,
                     size_t n) const;

 private:
  enum class Kind { none, nan_loss, nan_grad } kind_ = Kind::none;
  int64_t step_ = -1;
  int rank_ = -1;  // -1: every rank
};

}  // namespace strait
