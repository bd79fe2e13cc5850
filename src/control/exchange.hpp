// exchange.hpp — the controller's link to every rank, once per step: every rank's report (one
// described MPI record: its measurements of this iteration, the syncs it completed, its link
// counters) goes to rank 0 in ONE gather; rank 0 answers with one broadcast (stop flag, global
// loss) and, only when the controller changed something, a second with the new decision record.
// A SIGINT/SIGTERM on any rank becomes a stop at the same step boundary on every rank here.
//
// `ready_ms` is when the rank entered the exchange, on rank 0's clock (the offsets between
// clocks are estimated at start-up, topo/clock.hpp), so rank 0 can tell how long each rank
// waited for the slowest one without a second collective.
#pragma once
#include <mpi.h>

#include <functional>
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
};

struct RankReport {
  static constexpr int kMaxDone = 2;  // a drained overlapped sync plus the current one
  int64_t step = 0;                   // the step computed in this iteration
  int32_t stop = 0;                   // SIGINT/SIGTERM seen on this rank
  int32_t n_done = 0;                 // valid entries of done[]
  double compute_ms = 0, emulated_ms = 0;
  double loss = 0;                    // mean loss of this rank's DC batch
  double split = 0;                   // this rank's split fraction
  double ready_ms = 0;                // entered the exchange: MPI_Wtime + offset, on rank 0's clock (ms)
  Completion done[kMaxDone];
};

struct Reply {
  int32_t stop = 0;         // every rank stops after this step
  int32_t has_plan = 0;     // a new decision record follows (plan_bytes bytes)
  double loss = 0;          // global-batch loss of the step computed in this iteration
  int64_t plan_bytes = 0;
};

class Exchange {
 public:
  explicit Exchange(const Topology& t);
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  struct Gathered {
    std::vector<RankReport> ranks;    // per world rank
    std::vector<LinkCounters> links;  // per ordered DC pair, summed over the ranks
  };
  // Rank 0's side: from everything gathered, the reply and (when reply.has_plan) its bytes.
  using Decide = std::function<Reply(const Gathered&, std::vector<char>& plan_bytes)>;

  // Collective over topo.world. `decide` runs on rank 0 only. On return, every rank holds the
  // reply and, when reply.has_plan, the decision record's bytes in `plan_bytes`.
  Reply run(const RankReport& mine, const std::vector<LinkCounters>& my_links,
            const Decide& decide, std::vector<char>& plan_bytes);

  // Rank 0's bytes to every rank (the initial decision record).
  void broadcast(std::vector<char>& bytes);

 private:
  const Topology& t_;
  int links_ = 0;       // n·n
  MpiType completion_, report_, counters_, record_, reply_;
  size_t record_bytes_ = 0, links_offset_ = 0;
  std::vector<char> send_, recv_;
};

}  // namespace strait
