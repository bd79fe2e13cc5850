// pacer.cpp — see pacer.hpp.
#include "train/pacer.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/timer.hpp"

namespace strait {

void Pacer::begin(double speed, double device_ms, int stretches) {
  speed_ = speed;
  device_ms_ = device_ms;
  share_ms_ = device_ms / std::max(1, stretches);
  paced_ = 0;
  t_ = Times{};
  mark_ = now_ms();
}

void Pacer::pace(double now, double share_ms) {
  const double own = now - mark_;
  t_.own_ms += own;
  ++paced_;
  // On the emulated device the deadlines are cumulative: stretch k ends no earlier than k shares
  // after the step began (its own compute and idle so far counted), so a stretch the CPU ran
  // late (another process, a page fault) is caught up by the idle of the next ones and the
  // step's load stays FLOPs / (G·v) unless the CPU's whole step is slower than the device's.
  const double idle = device_ms_ > 0 ? std::max(0.0, paced_ * share_ms - (t_.own_ms + t_.emulated_ms))
                      : speed_ < 1.0 ? (1.0 / speed_ - 1.0) * own
                                     : 0.0;
  if (idle <= 0) return;
  t_.emulated_ms += idle;
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(idle));
}

void Pacer::allreduce_sum(float* buf, size_t n) {
  if (inner_.size() <= 1 || n == 0) return inner_.allreduce_sum(buf, n);  // no meeting
  if (sync_device_) be_.synchronize();
  pace(now_ms(), share_ms_);
  const double t0 = now_ms();
  inner_.allreduce_sum(buf, n);
  if (sync_device_) be_.synchronize();
  mark_ = now_ms();
  t_.reduce_ms += mark_ - t0;
}

Pacer::Times Pacer::finish() {
  // The last stretch ends with the device's step (all of it without reductions).
  pace(now_ms(), device_ms_ / (paced_ + 1));
  mark_ = now_ms();
  return t_;
}

}  // namespace strait
