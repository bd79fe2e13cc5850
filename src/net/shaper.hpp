// shaper.hpp — software link shaping as virtual-time reservations on an explicit clock.
// The transport (transport.cpp) asks a Link when a chunk may go and when it arrives, sleeps until
// those times and hands the chunk to MPI; this file only computes the times (no MPI, no sleeping),
// so it is exact, deterministic and unit-testable on a simulated clock.
//
// Link: one directed link. It is a token bucket of depth one chunk, i.e. a serialising pipe: a
// chunk asking at `now` starts when the link is free (start = max(now, end of the previous
// reservation)), occupies it for transmit_time(start, bytes) under the link's schedule, and is
// delivered latency (taken at the end of transmission) later, plus jitter. Reservations are FIFO
// across all flows, so flows that interleave their chunks share the capacity fairly (round
// robin by chunk): a flow should reserve chunk i+1 when chunk i starts on that link, not all its
// chunks at once (simulate_flows does exactly that; the transport should do the same).
// Jitter: uniform in [0, jitter_s] added to each chunk's delivery, drawn from the counter-based
// RNG (seed, kJitterStream, chunk number on this link). Deliveries on one link stay in order:
// deliver = max(deliver, previous deliver on the link) — a WAN path reorders nothing, and a
// latency drop in the schedule must not let a later chunk overtake an earlier one.
// Thread safety: reserve/take/free_at are guarded by a mutex (an overlap scheduler may sync two
// experts from two threads). Copies (for predictions: simulate on a copy) take the state under it.
//
// simulate_path / simulate_flows: transfers split into chunks over paths of links (1 link =
// direct, 2 = one relay, ...), hop by hop pipelined: chunk i asks hop h+1 when it was delivered
// at the relay (store and forward per chunk) and consumes capacity on every hop it crosses.
// Times are run seconds, sizes bytes.
#pragma once
#include <cstdint>
#include <mutex>
#include <vector>

#include "config/config.hpp"
#include "scenario/schedule.hpp"

namespace strait {

struct Reservation {
  double start, end, deliver;  // transmission [start, end), arrival at the far end
  double queued_s;             // start - now: time spent waiting for the link
};

class Link {
 public:
  explicit Link(LinkSchedule s, double jitter_s = 0, uint64_t jitter_seed = 0);
  Link(const Link& other);
  Link& operator=(const Link& other);

  // Reserves the link for a chunk of `bytes` that is ready at run time `now`.
  Reservation reserve(double now, double bytes);
  const LinkSchedule& schedule() const { return sched_; }
  double jitter_s() const { return jitter_s_; }
  // End of the last reservation (-inf before the first): the link is busy until then.
  double free_at() const;

  // Since the last take(): payload bytes, busy seconds (sum of end - start), queueing seconds
  // (sum of start - now) and chunks.
  struct Counters {
    double bytes = 0, busy_s = 0, queued_s = 0;
    int chunks = 0;
  };
  Counters take();

  static constexpr uint64_t kJitterStream = 0x6a6974746572ull;  // "jitter"

 private:
  void copy_state(const Link& other);
  mutable std::mutex mu_;
  LinkSchedule sched_;
  double jitter_s_;
  uint64_t jitter_seed_;
  double free_at_;
  double last_deliver_;
  uint64_t reserved_ = 0;  // chunks ever reserved: the jitter draw index
  Counters counters_;
};

// The Link a [[link]] describes: its schedule and jitter, both scaled by network.time_scale.
Link make_link(const LinkConfig& link, double time_scale, uint64_t jitter_seed);

// One transfer: `bytes` from run time `start` over `hops` (the links of its path, in order), in
// chunks of chunk_bytes (<= 0: one chunk); the last chunk holds the remainder, and bytes <= 0
// is one empty chunk (it still pays the latencies).
struct PathFlow {
  std::vector<Link*> hops;
  double start = 0;
  double bytes = 0;
  double chunk_bytes = 0;
};

// Runs concurrent flows through their links as a discrete-event simulation and returns, per flow,
// the delivery time of every chunk at its final destination. Chunk i asks hop h at
// max(when it is available there: the flow's start for h = 0, its delivery at the relay
// otherwise; when chunk i-1 started on hop h); requests are served in time order, ties first
// come first served. The links keep the reservations (copy them first to only predict).
std::vector<std::vector<double>> simulate_flows(const std::vector<PathFlow>& flows);

// One flow: simulate_flows({{hops, now, bytes, chunk_bytes}})[0].
std::vector<double> simulate_path(std::vector<Link*> hops, double now, double bytes,
                                  double chunk_bytes);

}  // namespace strait
