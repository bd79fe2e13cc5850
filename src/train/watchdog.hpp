// watchdog.hpp — ends a job in which a rank stopped making progress (issue 10): a process stopped
// with SIGSTOP, stuck in a collective, or dead without the MPI library noticing would otherwise
// hold every other rank forever, silently, with SIGTERM unanswered.
//
// Progress is the step loop moving from one phase to the next (beat(), a few atomic stores on the
// main thread). A thread per rank watches it:
//  - every rank sends rank 0 a small heartbeat (its step, phase, how long since it last moved, a
//    stop request) on a communicator of its own; rank 0 answers each with a ping;
//  - rank 0 judges: when a rank has not moved for run.stall_timeout_s — or for run.stop_grace_s
//    once SIGINT/SIGTERM asked the run to stop — it names the ranks that went silent (stopped,
//    dead) or that are furthest behind, and the phase each is in, closes the trace (`stalled`,
//    or `interrupted` after a stop request) with that reason, prints it, and aborts the job
//    (exit status 5, or 3 after a stop request). Checkpoints are written by rename, so the last
//    one is intact;
//  - a rank that hears nothing from rank 0 for that long (rank 0 itself stopped or dead) says so
//    and aborts the job; the trace, which only rank 0 writes, then stays `running`, as after kill.
// Without MPI_THREAD_MULTIPLE the thread cannot use MPI: each rank then judges only itself
// (a rank waiting for a stuck peer is named, not the peer) and rank 0 closes the trace when it
// is the one to judge.
#pragma once
#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "topo/topology.hpp"

namespace strait {

class Watchdog {
 public:
  enum class Phase : int32_t {
    start, controller, sample, compute, emulate, sync, report, checkpoint, finish, done
  };
  static const char* name(Phase p);

  // Collective over topo.world. stall_s = 0: no watchdog (beat() still costs nothing). On rank 0,
  // on_stall(status, reason) runs on the watchdog's thread just before the job is aborted; it
  // should close the trace and must not block for long.
  Watchdog(const Topology& topo, std::vector<std::string> dc_names, double stall_s, double grace_s,
           bool threaded,
           std::function<void(const std::string& status, const std::string& reason)> on_stall);
  ~Watchdog();  // stop()
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void beat(int64_t step, Phase p) {
    step_.store(step, std::memory_order_relaxed);
    phase_.store(static_cast<int32_t>(p), std::memory_order_relaxed);
    moved_.store(now_ms(), std::memory_order_release);
  }
  // The run is over on this rank: tell rank 0 (which stops judging it) and end the thread.
  void stop();

  static double now_ms();

 private:
  struct Beat {
    int64_t step = 0;
    int32_t rank = 0, phase = 0, stop = 0, done = 0;
    double idle_ms = 0;  // since this rank last moved
  };
  struct Seen {
    Beat last;
    double heard_ms = 0;  // when rank 0 last heard from it
    bool heard = false;   // at all
    bool done = false;
  };
  void loop();
  void loop_local();
  Beat mine() const;
  void judge_root(double now);
  std::string who(int rank) const;    // "rank 2 (datacenter b)"
  std::string where(int rank) const;  // its phase and step, as last heard (this rank: now)
  [[noreturn]] void end_job(const std::string& status, const std::string& reason, int code);

  const Topology& t_;
  const std::vector<std::string> dc_names_;
  const double stall_ms_, grace_ms_, tick_ms_;
  const bool threaded_;
  std::function<void(const std::string&, const std::string&)> on_stall_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::atomic<int64_t> step_{-1};
  std::atomic<int32_t> phase_{0};
  std::atomic<double> moved_{0};
  std::vector<Seen> seen_;        // rank 0: per world rank
  double root_heard_ms_ = 0;      // other ranks: when rank 0 last pinged
  double stop_seen_ms_ = -1;      // when a stop request was first seen (-1: none)
  std::mutex mu_;
  std::condition_variable cv_;
  bool quit_ = false;
  bool drained_ = false;          // every message on comm_ was received: it may be freed
  std::thread th_;
};

}  // namespace strait
