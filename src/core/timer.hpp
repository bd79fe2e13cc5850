// timer.hpp — wall-clock timing for step measurements (MPI_Wtime based, milliseconds).
#pragma once
#include <mpi.h>

namespace strait {

inline double now_ms() { return MPI_Wtime() * 1e3; }

// Accumulates elapsed milliseconds of a scope into a double.
class ScopedTimer {
 public:
  explicit ScopedTimer(double& acc) : acc_(acc), t0_(now_ms()) {}
  ~ScopedTimer() { acc_ += now_ms() - t0_; }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  double& acc_;
  double t0_;
};

}  // namespace strait
