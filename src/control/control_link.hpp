// control_link.hpp — the controller's link to every rank. After each step every rank posts its
// report (its measurements, the syncs it completed, its link counters); rank 0's controller
// answers each step's reports with a reply (stop flag, global loss) and, when it changed
// something, the new decision record. The round travels like any inter-DC traffic: a DC's
// reports are gathered on its gateway (one described MPI record per rank, MPI_Gather in the DC),
// the gateway sends the bundle to rank 0 through the Transport — shaped in software mode, over
// the real WAN under tc — and the reply comes back the same way and is broadcast in the DC.
//
// Off the critical path: rounds run on a thread of their own on every rank, in step order, while
// the step loop goes on. The reply to step s is needed only before step s + lag (control.lag,
// 2 by default): a WAN round trip to rank 0 then stalls nothing unless it takes longer than
// lag − 1 steps, and the step loop measures how long it waited (the trace shows it). A stop
// request (SIGINT/SIGTERM on any rank) in step s's report stops every rank before step s + lag.
// Without MPI_THREAD_MULTIPLE the rounds run inline when posted (the reply is then ready at once).
#pragma once
#include <mpi.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "core/mpi_struct.hpp"
#include "net/transport.hpp"
#include "topo/topology.hpp"

namespace strait {

// A step whose sync and update this rank finished during the iteration.
struct Completion {
  int64_t step = -1;
  double sync_ms = 0;       // the sync's own duration (on its thread when overlapped)
  double wait_ms = 0;       // how long the step loop blocked for it (overlapped syncs)
  double optimizer_ms = 0;  // Adam on the rank's shard
  int32_t overlapped = 0;   // 1: the sync ran on the sync thread (pipelined), 0: in the loop
  // A step whose report went before its sync (control.report = after-compute): its iteration,
  // from its start to the end of its update (the report could not carry it); 0 otherwise.
  double iteration_ms = 0;
};

struct RankReport {
  static constexpr int kMaxDone = 2;  // a drained overlapped sync plus the current one
  int64_t step = 0;                   // the step computed in this iteration; -1: none (the last post)
  int32_t stop = 0;                   // SIGINT/SIGTERM seen on this rank
  int32_t n_done = 0;                 // valid entries of done[]
  int32_t batch = 0;                  // sequences of this rank's DC in the step
  int32_t early = 0;                  // 1: posted after the compute, before the step's own sync
  double compute_ms = 0, emulated_ms = 0;
  double speed = 1;                   // the scenario's relative speed of this rank in the step
  double reduce_ms = 0;               // the part of compute_ms spent in the DC's reductions
  double reshard_ms = 0;              // re-splitting this DC before the step (0: none)
  double loss = 0;                    // mean loss of this rank's DC batch
  double split = 0;                   // this rank's split fraction
  double ready_ms = 0;                // done with the step's local work: MPI_Wtime + offset, on rank 0's clock (ms)
  double control_wait_ms = 0;         // the step loop blocked for the controller's reply in this step
                                      // (before it; with control.early_paths, before its sync)
  double control_rtt_ms = 0;          // post → reply of the latest round that completed before this step
  double iteration_ms = 0;            // this rank's time from the step's start to its post
                                      // (posted before the sync: the step's whole time comes
                                      // later, in its Completion)
  Completion done[kMaxDone];
};

struct Reply {
  int32_t stop = 0;         // every rank stops before step s + lag
  int32_t has_plan = 0;     // a new decision record follows (plan_bytes bytes)
  double loss = 0;          // global-batch loss of step s
  int64_t plan_bytes = 0;
};

class ControlLink {
 public:
  struct Gathered {
    int64_t seq = 0;                  // which post (0, 1, ...) this is the round of
    std::vector<RankReport> ranks;    // per world rank
    std::vector<LinkCounters> links;  // per ordered DC pair, summed over the ranks
  };
  // Rank 0's side: from everything gathered, the reply and (when reply.has_plan) its bytes.
  // Runs on the link's thread (or inline without MPI_THREAD_MULTIPLE).
  using Decide = std::function<Reply(const Gathered&, std::vector<char>& plan_bytes)>;

  // Collective over topo.world. `decide` matters on rank 0 only.
  ControlLink(const Topology& t, Transport& tr, bool threaded, Decide decide);
  ~ControlLink();  // every posted round must have been waited for
  ControlLink(const ControlLink&) = delete;
  ControlLink& operator=(const ControlLink&) = delete;

  // This rank's report and link counters; returns the post's sequence number (0, 1, ...).
  int64_t post(const RankReport& mine, const std::vector<LinkCounters>& my_links);
  // Blocks until round `seq` has come back; its reply and, when it has one, the record's bytes.
  // `blocked_ms`: how long this call waited; `rtt_ms`: post → reply of that round here.
  Reply wait(int64_t seq, std::vector<char>& plan_bytes, double& blocked_ms, double& rtt_ms);

  // Start-up, before the run's clock: rank 0's bytes to every rank (plain MPI).
  void broadcast(std::vector<char>& bytes);

 private:
  struct Posted {
    int64_t seq = 0;
    std::vector<char> record;  // RankReport + n·n LinkCounters, this rank's
    double posted_at = 0;      // MPI_Wtime
  };
  struct Returned {
    Reply reply;
    std::vector<char> plan;
    double rtt_ms = 0;
  };
  void loop();
  void round(const Posted& p);

  const Topology& t_;
  Transport& tr_;
  Decide decide_;
  int links_ = 0;
  size_t record_bytes_ = 0, links_offset_ = 0;
  MpiType completion_, report_, counters_, record_, reply_;
  MPI_Comm dc_ = MPI_COMM_NULL, gw_ = MPI_COMM_NULL;  // the link's own communicators
  Paths to_root_, from_root_;                         // fewest-hop paths to and from DC 0
  std::vector<char> dc_bundle_, all_bundles_;         // gateway / rank 0 buffers

  bool threaded_ = false;
  std::thread th_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Posted> todo_;
  std::map<int64_t, Returned> done_;
  int64_t next_seq_ = 0;
  bool quit_ = false;
};

}  // namespace strait
