// stop.cpp — see stop.hpp.
#include "train/stop.hpp"

#include <atomic>
#include <csignal>

namespace strait {

namespace {
// Set by the handler, read by the step loop (and possibly another thread).
std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);
extern "C" void on_stop_signal(int sig) { g_stop_signal.store(sig, std::memory_order_relaxed); }
}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool stop_requested() { return g_stop_signal.load(std::memory_order_relaxed) != 0; }

}  // namespace strait
