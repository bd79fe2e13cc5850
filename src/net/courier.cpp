// courier.cpp — see courier.hpp.
#include "net/courier.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>

#include "core/check.hpp"

namespace strait {

Courier::Courier(double t0, bool threaded) : t0_(t0), threaded_(threaded) {
  if (threaded_) th_ = std::thread([this] { loop(); });
}

Courier::~Courier() {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin && std::uncaught_exceptions() > 0) {
    // Unwinding after an error: a peer may never receive what is still in flight, and waiting
    // for it would hang the job. Take it down instead (as the control link does).
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_locked())
      STRAIT_FATAL("an error unwound the transport with " + std::to_string(items_.size() + reqs_.size()) +
                   " chunk(s) still in flight");
  } else if (!fin) {
    flush();
  }
  if (th_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
      if (fin) items_.clear(), reqs_.clear(), sent_.clear();  // MPI is gone: nothing can go
    }
    wake_.notify_all();
    th_.join();
  }
}

void Courier::post(Item item) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Usually the latest delivery so far: insert from the back, after every equal time.
    auto at = std::upper_bound(items_.begin(), items_.end(), item.deliver,
                               [](double d, const Item& i) { return d < i.deliver; });
    items_.insert(at, std::move(item));
  }
  if (threaded_) wake_.notify_one();
}

double Courier::pump_locked() {
  const double t = now();
  size_t due = 0;
  while (due < items_.size() && items_[due].deliver <= t) {
    Item& it = items_[due++];
    int size = 1;
    MPI_Type_size(it.type, &size);
    MPI_Request r;
    MPI_CHECK(MPI_Isend(it.data.data(), static_cast<int>(it.data.size() / size), it.type, it.dst,
                        it.tag, it.channel, &r));
    reqs_.push_back(r);
    sent_.push_back(std::move(it.data));  // MPI may read it until the request completes
  }
  items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(due));
  if (!reqs_.empty()) {
    // Release each send (and its copy) as it completes: overlapped syncs and control traffic may
    // keep some send outstanding for long, and Testall would hold every copy until then.
    int done = 0;
    std::vector<int> which(reqs_.size());
    MPI_CHECK(MPI_Testsome(static_cast<int>(reqs_.size()), reqs_.data(), &done, which.data(),
                           MPI_STATUSES_IGNORE));
    if (done > 0 && done != MPI_UNDEFINED) {
      size_t keep = 0;
      for (size_t i = 0; i < reqs_.size(); ++i)
        if (reqs_[i] != MPI_REQUEST_NULL) {  // Testsome nulls the completed ones
          if (keep != i) reqs_[keep] = reqs_[i], sent_[keep] = std::move(sent_[i]);
          ++keep;
        }
      reqs_.resize(keep);
      sent_.resize(keep);
    }
  }
  return items_.empty() ? 1e300 : items_.front().deliver;
}

double Courier::pump() {
  std::lock_guard<std::mutex> lock(mu_);
  return pump_locked();
}

void Courier::flush() {
  if (threaded_) {
    std::unique_lock<std::mutex> lock(mu_);
    wake_.notify_one();
    idle_.wait(lock, [this] { return idle_locked(); });
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    const double next = pump_locked();
    if (items_.empty()) break;
    const double dt = std::min(next - now(), 1e-3);
    lock.unlock();
    if (dt > 0) std::this_thread::sleep_for(std::chrono::duration<double>(dt));
    lock.lock();
  }
  MPI_CHECK(MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE));
  reqs_.clear();
  sent_.clear();
}

void Courier::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (quit_ && idle_locked()) return;  // no MPI call: MPI may be finalized by now
    const double next = pump_locked();
    if (idle_locked()) {
      idle_.notify_all();
      if (quit_) return;
      wake_.wait(lock);
      continue;
    }
    const double wake = reqs_.empty() ? next : std::min(next, now() + kProgressSeconds);
    const double dt = wake - now();
    if (dt > 0) wake_.wait_for(lock, std::chrono::duration<double>(dt));
  }
}

}  // namespace strait
