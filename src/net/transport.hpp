// transport.hpp — the transport point: every inter-datacenter byte passes through here.
// Gateways call exchange() to send to one DC and receive from another over a channel (an MPI
// communicator whose rank == datacenter index, one per expert so concurrent syncs never match
// each other's messages). Link shaping (capacity, latency, schedules) plugs in at this point;
// today it forwards over MPI and accounts bytes and busy time per directed link for the trace.
// Thread-safe: the counters are guarded, so an overlap scheduler may sync from a second thread.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <mutex>
#include <vector>

#include "config/config.hpp"

namespace strait {

struct LinkCounters {
  double bytes = 0;     // payload bytes sent on the link
  double busy_ms = 0;   // wall time of the transfers that used it
};

class Transport {
 public:
  explicit Transport(const Config& cfg);

  int num_dcs() const { return n_; }
  // Sends sbytes to dst_dc and receives rbytes from src_dc on `channel` (both may be -1 for
  // none). Blocking; returns when both are done.
  void exchange(MPI_Comm channel, int self_dc, const void* sbuf, size_t sbytes, int dst_dc,
                void* rbuf, size_t rbytes, int src_dc, int tag);

  // Counters since the last call, per directed link (index src·n + dst), then reset.
  std::vector<LinkCounters> take_counters();
  double capacity_gbps(int src, int dst) const { return capacity_gbps_[src * n_ + dst]; }

 private:
  int n_ = 1;
  std::vector<double> capacity_gbps_, latency_ms_;
  std::mutex mu_;
  std::vector<LinkCounters> counters_;
};

}  // namespace strait
