// watchdog.cpp — see watchdog.hpp.
#include "train/watchdog.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "core/check.hpp"
#include "train/stop.hpp"

namespace strait {

namespace {
constexpr int kTagBeat = 1, kTagPing = 2;
constexpr int32_t kPing = 1, kRootDone = 2;

std::string secs(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", ms / 1e3);
  return buf;
}
}  // namespace

const char* Watchdog::name(Phase p) {
  switch (p) {
    case Phase::start: return "start-up";
    case Phase::controller: return "waiting for the controller's answer";
    case Phase::sample: return "sampling";
    case Phase::compute: return "compute (forward + backward, its datacenter's reductions)";
    case Phase::emulate: return "emulated load";
    case Phase::sync: return "gradient sync + update";
    case Phase::report: return "posting its report";
    case Phase::checkpoint: return "checkpoint";
    case Phase::finish: return "finishing (last rounds, final checkpoint)";
    case Phase::done: return "done";
  }
  return "?";
}

double Watchdog::now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Watchdog::Watchdog(const Topology& topo, std::vector<std::string> dc_names, double stall_s,
                   double grace_s, bool threaded,
                   std::function<void(const std::string&, const std::string&)> on_stall)
    : t_(topo), dc_names_(std::move(dc_names)), stall_ms_(stall_s * 1e3), grace_ms_(grace_s * 1e3),
      // Ten looks per timeout, at least four per grace, between 50 ms and 1 s apart.
      tick_ms_(std::clamp(std::min(stall_s * 1e3 / 10, grace_s * 1e3 / 4), 50.0, 1000.0)),
      threaded_(threaded), on_stall_(std::move(on_stall)) {
  moved_.store(now_ms());
  if (stall_ms_ <= 0) return;  // every rank has the same config: all or none get here
  if (threaded_) {
    MPI_CHECK(MPI_Comm_dup(t_.world, &comm_));
    // Nobody sends on it before everybody has it: Open MPI queues a message for a communicator
    // still being created, and its handling of that queue under threads is fragile.
    MPI_CHECK(MPI_Barrier(comm_));
  }
  const double now = now_ms();
  seen_.assign(static_cast<size_t>(t_.world_size), Seen{});
  for (auto& s : seen_) s.heard_ms = now;
  root_heard_ms_ = now;
  th_ = std::thread([this] { threaded_ ? loop() : loop_local(); });
}

Watchdog::~Watchdog() { stop(); }

void Watchdog::stop() {
  if (!th_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  th_.join();
  int fin = 0;
  MPI_Finalized(&fin);
  // Freed only when every message sent on it was received (the done handshake below): a later
  // communicator may get its context id, and a stray message would land there. Otherwise it is
  // left to MPI_Finalize.
  if (!fin && comm_ != MPI_COMM_NULL && drained_) MPI_Comm_free(&comm_);
}

Watchdog::Beat Watchdog::mine() const {
  Beat b;
  b.step = step_.load(std::memory_order_relaxed);
  b.rank = t_.world_rank;
  b.phase = phase_.load(std::memory_order_relaxed);
  b.stop = stop_requested() ? 1 : 0;
  b.idle_ms = now_ms() - moved_.load(std::memory_order_acquire);
  return b;
}

void Watchdog::end_job(const std::string& status, const std::string& reason, int code) {
  std::fprintf(stderr, "strait: watchdog: rank %d: %s\n", t_.world_rank, reason.c_str());
  std::fflush(stderr);
  if (t_.world_rank == 0 && on_stall_) on_stall_(status, reason);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

void Watchdog::loop_local() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, std::chrono::duration<double, std::milli>(tick_ms_), [&] { return quit_; })) {
    const Beat b = mine();
    const bool stopping = b.stop != 0;
    const double limit = stopping ? std::min(stall_ms_, grace_ms_) : stall_ms_;
    if (b.idle_ms < limit) continue;
    end_job(stopping ? "interrupted" : "stalled",
            std::string(stopping ? "stopped by signal, but " : "") + "no progress for " +
                secs(b.idle_ms) + " in " + name(static_cast<Phase>(b.phase)) + " of step " +
                std::to_string(b.step) +
                " (this rank judges only itself: MPI gives no second thread); ending the job",
            stopping ? 3 : 5);
  }
}

void Watchdog::loop() {
  const int me = t_.world_rank, n = t_.world_size;
  MPI_Request in = MPI_REQUEST_NULL, out = MPI_REQUEST_NULL;
  std::vector<MPI_Request> pings(static_cast<size_t>(n), MPI_REQUEST_NULL);
  Beat in_beat, out_beat;
  int32_t in_ping = 0;
  const int32_t ping = kPing;
  bool root_done = false;
  auto post = [&] {
    if (me == 0)
      MPI_CHECK(MPI_Irecv(&in_beat, sizeof(Beat), MPI_BYTE, MPI_ANY_SOURCE, kTagBeat, comm_, &in));
    else
      MPI_CHECK(MPI_Irecv(&in_ping, 1, MPI_INT32_T, 0, kTagPing, comm_, &in));
  };
  post();
  // After stop(): non-root ranks send "done" and wait for rank 0's "done"; rank 0 waits for
  // everyone's, then sends its own. Every message is then received before the comm is freed
  // (MPI keeps the order of messages between two ranks).
  bool sent_done = false;
  double quit_at = -1;
  const double drain_ms = std::max(stall_ms_, 10000.0);
  double last_look = now_ms(), frozen_until = -1;
  std::unique_lock<std::mutex> lock(mu_);
  for (bool first = true;; first = false) {  // the first beat at once, then one per tick
    if (!first) cv_.wait_for(lock, std::chrono::duration<double, std::milli>(quit_ ? 5.0 : tick_ms_));
    const double now = now_ms();
    if (quit_ && quit_at < 0) quit_at = now;
    // Rank 0 judges by its own clock: when this thread itself did not run for a while (the
    // process was stopped with SIGSTOP, or starved), the silence it then sees is its own, and
    // the others' idle time is time spent waiting for it.
    const double gap = now - last_look;
    last_look = now;
    if (me == 0 && !quit_ && gap >= std::max(4 * tick_ms_, 2000.0)) {
      if (gap >= stall_ms_)
        end_job("stalled",
                "no progress for " + secs(gap) + " (run.stall_timeout_s = " + secs(stall_ms_) +
                    "): " + who(0) + " itself did not run (stopped, or starved of CPU), last in " +
                    where(0) + ". The job is ended; the last checkpoint is intact",
                5);
      frozen_until = now + stall_ms_;  // the others' idle time includes ours: judge afresh
      for (auto& s : seen_) s.heard_ms = now;
    }
    for (int flag = 1; flag;) {  // everything that arrived
      MPI_CHECK(MPI_Test(&in, &flag, MPI_STATUS_IGNORE));
      if (!flag) break;
      if (me == 0) {
        const int r = in_beat.rank;
        if (r > 0 && r < n) {
          seen_[r].last = in_beat;
          seen_[r].heard_ms = now;
          seen_[r].heard = true;
          seen_[r].done = seen_[r].done || in_beat.done;
        }
      } else {
        root_heard_ms_ = now;
        root_done = root_done || in_ping == kRootDone;
      }
      post();
    }
    if (me != 0) {
      int sent = 1;
      if (out != MPI_REQUEST_NULL) MPI_CHECK(MPI_Test(&out, &sent, MPI_STATUS_IGNORE));
      if (sent && !sent_done) {
        out_beat = mine();
        out_beat.done = quit_ ? 1 : 0;
        sent_done = quit_;
        MPI_CHECK(MPI_Isend(&out_beat, sizeof(Beat), MPI_BYTE, 0, kTagBeat, comm_, &out));
      }
      if (quit_ && (root_done || now - quit_at > drain_ms)) {
        drained_ = root_done;
        break;
      }
      const bool stopping = stop_requested();
      const double limit = stopping ? std::min(stall_ms_, grace_ms_) : stall_ms_;
      // Rank 0 went silent: nobody else can judge, so this rank ends the job (later ranks a
      // little later, so that one message is usually enough).
      if (!quit_ && !root_done && now - root_heard_ms_ >= limit + me * tick_ms_)
        end_job(stopping ? "interrupted" : "stalled",
                "rank 0 sent nothing for " + secs(now - root_heard_ms_) +
                    " (stopped, stuck outside MPI, or dead); this rank was in " +
                    name(static_cast<Phase>(std::clamp(mine().phase, 0, static_cast<int32_t>(Phase::done)))) +
                    " of step " + std::to_string(mine().step) +
                    ". Ending the job; the trace, which rank 0 writes, stays 'running'; the last "
                    "checkpoint is intact",
                stopping ? 3 : 5);
      continue;
    }
    bool all_done = true;
    for (int r = 1; r < n; ++r) all_done = all_done && seen_[r].done;
    if (quit_ && (all_done || now - quit_at > drain_ms)) {
      drained_ = all_done;
      if (drained_) {  // the last word on this comm: nobody judges rank 0 any more
        const int32_t done = kRootDone;
        for (int r = 1; r < n; ++r) {
          if (pings[r] != MPI_REQUEST_NULL) MPI_Wait(&pings[r], MPI_STATUS_IGNORE);
          MPI_Send(&done, 1, MPI_INT32_T, r, kTagPing, comm_);
        }
      }
      break;
    }
    if (!quit_)
      for (int r = 1; r < n; ++r) {
        int sent = 1;
        if (pings[r] != MPI_REQUEST_NULL) MPI_CHECK(MPI_Test(&pings[r], &sent, MPI_STATUS_IGNORE));
        if (sent) MPI_CHECK(MPI_Isend(&ping, 1, MPI_INT32_T, r, kTagPing, comm_, &pings[r]));
      }
    if (now >= frozen_until) judge_root(now);
  }
  lock.unlock();
  if (me != 0 && out != MPI_REQUEST_NULL) MPI_Wait(&out, MPI_STATUS_IGNORE);
  if (me == 0)
    for (auto& p : pings)
      if (p != MPI_REQUEST_NULL) MPI_Wait(&p, MPI_STATUS_IGNORE);
  MPI_Cancel(&in);
  MPI_Wait(&in, MPI_STATUS_IGNORE);
}

std::string Watchdog::who(int r) const {
  std::string dc;
  for (int d = 0; d < t_.num_dcs; ++d)
    if (r >= t_.dc_first_rank[d] && r < t_.dc_first_rank[d] + t_.dc_ranks[d])
      dc = d < static_cast<int>(dc_names_.size()) ? dc_names_[d] : std::to_string(d);
  return "rank " + std::to_string(r) + " (datacenter " + dc + ")";
}

std::string Watchdog::where(int r) const {
  const Beat& b = r == t_.world_rank ? mine() : seen_[r].last;
  if (r != t_.world_rank && !seen_[r].heard) return "nothing since start-up";
  const int32_t p = std::clamp(b.phase, 0, static_cast<int32_t>(Phase::done));
  return std::string(name(static_cast<Phase>(p))) + " of step " + std::to_string(b.step);
}

void Watchdog::judge_root(double now) {
  seen_[0].last = mine();
  seen_[0].heard_ms = now;
  seen_[0].heard = true;
  const int n = t_.world_size;
  bool stopping = false;
  for (int r = 0; r < n; ++r) stopping = stopping || (!seen_[r].done && seen_[r].last.stop);
  if (stopping && stop_seen_ms_ < 0) stop_seen_ms_ = now;
  const double limit = stopping ? std::min(stall_ms_, grace_ms_) : stall_ms_;
  // How long each rank has not moved, as of now; a rank not heard from counts from its last word.
  std::vector<double> idle(static_cast<size_t>(n), 0);
  double worst = 0;
  for (int r = 0; r < n; ++r) {
    if (seen_[r].done) continue;
    idle[r] = seen_[r].last.idle_ms + (now - seen_[r].heard_ms);
    worst = std::max(worst, idle[r]);
  }
  if (worst < limit) return;
  // Silent ranks (no heartbeat for several looks) are the stuck ones; when every rank still talks,
  // the ones that stopped moving first are.
  const double silent_after = std::max(4 * tick_ms_, 2000.0);
  std::vector<int> silent, behind;
  for (int r = 0; r < n; ++r)
    if (!seen_[r].done && now - seen_[r].heard_ms >= silent_after) silent.push_back(r);
  if (silent.empty())
    for (int r = 0; r < n; ++r)
      if (!seen_[r].done && idle[r] >= worst - 2 * tick_ms_) behind.push_back(r);
  std::string reason = std::string(stopping ? "stopped by signal, but no" : "no") +
                       " progress for " + secs(worst) + " (run." +
                       (stopping && grace_ms_ < stall_ms_ ? "stop_grace_s" : "stall_timeout_s") +
                       " = " + secs(limit) + "): ";
  std::string culprits;
  for (int r : silent)
    culprits += (culprits.empty() ? "" : "; ") + who(r) + " sent nothing for " +
                secs(now - seen_[r].heard_ms) +
                " (stopped, stuck outside MPI, or dead), last word: " + where(r);
  for (int r : behind)
    culprits += (culprits.empty() ? "" : "; ") + who(r) + " stuck in " + where(r) + " for " +
                secs(idle[r]);
  reason += culprits;
  std::string others;
  for (int r = 0; r < n; ++r) {
    if (seen_[r].done || std::find(silent.begin(), silent.end(), r) != silent.end() ||
        std::find(behind.begin(), behind.end(), r) != behind.end())
      continue;
    others += (others.empty() ? "" : ", ") + std::to_string(r) + " in " + where(r);
  }
  if (!others.empty()) reason += "; waiting for them: ranks " + others;
  reason += ". The job is ended; the last checkpoint is intact";
  end_job(stopping ? "interrupted" : "stalled", reason, stopping ? 3 : 5);
}

}  // namespace strait
