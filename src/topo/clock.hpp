// clock.hpp — the offset of each rank's clock (MPI_Wtime) from rank 0's, so that times taken on
// different ranks can be compared: when each rank finished a step's work (how far ahead of the
// slowest it was), and, for the WAN, when a byte left one DC and arrived in another.
// Estimated at start-up by ping-pong with rank 0 (Cristian's method: of kRounds round trips,
// the one with the smallest round-trip time gives the offset, within half that time). Offsets are
// not 0 even on one machine: MPI_Wtime may count from a per-process origin (Open MPI's does).
// Estimated once, so drift between hosts' clocks (tens of ppm) adds up over a long run — about
// 0.1 s per hour at 30 ppm; on one host there is none. Recorded in the trace.
#pragma once
#include <mpi.h>

#include <vector>

namespace strait {

struct ClockOffsets {
  double offset_s = 0;             // this rank: rank-0 time = MPI_Wtime() + offset_s
  double error_s = 0;              // this rank: half the best round trip (0 on rank 0)
  std::vector<double> all_offset_s, all_error_s;  // rank 0: every rank's, in rank order
};

// Collective over comm.
ClockOffsets estimate_clock_offsets(MPI_Comm comm, int rounds = 8);

}  // namespace strait
