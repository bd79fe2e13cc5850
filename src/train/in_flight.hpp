// in_flight.hpp — one gradient sync running on a thread of its own: how the pipelined overlap
// (PGCS) runs step s's sync while step s+1 computes. The trainer starts it after the step's
// backward and joins it before that expert's update; the sync's inputs (the decision it runs
// under, the batch weight) travel with it, so a new decision taking effect meanwhile cannot
// change a sync already under way. Joined on destruction, so no path leaves a thread behind.
#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <thread>

namespace strait {

class InFlightSync {
 public:
  InFlightSync() = default;
  ~InFlightSync();
  InFlightSync(const InFlightSync&) = delete;
  InFlightSync& operator=(const InFlightSync&) = delete;

  bool active() const { return th_.joinable(); }
  int64_t step() const { return step_; }
  int expert() const { return expert_; }

  // Runs `work` on a new thread; `keep` stays alive until the work has finished.
  void start(int64_t step, int expert, std::shared_ptr<const void> keep, std::function<void()> work);
  // Waits for the work; returns how long it ran (ms, on its own thread). Rethrows its exception.
  double join();

 private:
  std::thread th_;
  int64_t step_ = -1;
  int expert_ = -1;
  double ran_ms_ = 0;
  std::exception_ptr error_;
  std::shared_ptr<const void> keep_;
};

}  // namespace strait
