// in_flight.cpp — the sync thread (see in_flight.hpp).
#include "train/in_flight.hpp"

#include "core/check.hpp"
#include "core/timer.hpp"

#include <exception>
#include <string>

namespace strait {

InFlightSync::~InFlightSync() {
  if (!th_.joinable()) return;
  // Unwinding past a sync in flight: its peers wait for this rank in collectives that will never
  // come, so joining would hang the job. Take it down instead.
  if (std::uncaught_exceptions() > 0)
    STRAIT_FATAL("an error unwound the step loop while step " + std::to_string(step_) +
                 "'s sync was in flight");
  th_.join();
}

void InFlightSync::start(int64_t step, int expert, std::shared_ptr<const void> keep,
                         std::function<void()> work) {
  STRAIT_CHECK(!th_.joinable(), "a sync is already in flight");
  step_ = step, expert_ = expert, keep_ = std::move(keep);
  ran_ms_ = 0, error_ = nullptr;
  th_ = std::thread([this, work = std::move(work)] {
    const double t0 = now_ms();
    try {
      work();
    } catch (...) {
      error_ = std::current_exception();
    }
    ran_ms_ = now_ms() - t0;
  });
}

double InFlightSync::join() {
  STRAIT_CHECK(th_.joinable(), "no sync in flight");
  th_.join();
  keep_.reset();
  if (error_) std::rethrow_exception(error_);
  return ran_ms_;
}

}  // namespace strait
