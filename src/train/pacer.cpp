// pacer.cpp — see pacer.hpp.
#include "train/pacer.hpp"

#include <chrono>
#include <thread>

#include "core/timer.hpp"

namespace strait {

void Pacer::begin(double speed) {
  speed_ = speed;
  t_ = Times{};
  mark_ = now_ms();
}

void Pacer::pace(double now) {
  const double own = now - mark_;
  t_.own_ms += own;
  if (speed_ >= 1.0) return;
  const double idle = (1.0 / speed_ - 1.0) * own;
  t_.emulated_ms += idle;
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(idle));
}

void Pacer::allreduce_sum(float* buf, size_t n) {
  if (inner_.size() <= 1 || n == 0) return inner_.allreduce_sum(buf, n);  // no meeting
  if (sync_device_) be_.synchronize();
  pace(now_ms());
  const double t0 = now_ms();
  inner_.allreduce_sum(buf, n);
  if (sync_device_) be_.synchronize();
  mark_ = now_ms();
  t_.reduce_ms += mark_ - t0;
}

Pacer::Times Pacer::finish() {
  pace(now_ms());
  mark_ = now_ms();
  return t_;
}

}  // namespace strait
