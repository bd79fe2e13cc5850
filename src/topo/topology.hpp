// topology.hpp — which rank belongs to which datacenter, and the communicators that follow.
// Ranks are contiguous blocks in datacenter order. Each DC's gateway is its first rank
// (local rank 0): it sends and receives the DC's inter-DC traffic. gateway_comm holds the
// gateways only, with rank == datacenter index.
#pragma once
#include <mpi.h>

#include <vector>

#include "config/config.hpp"

namespace strait {

// Owns its communicators (freed when it goes, unless MPI is already finalised); move-only.
struct Topology {
  Topology() = default;
  ~Topology();
  Topology(Topology&& o) noexcept;
  Topology& operator=(Topology&& o) noexcept;
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  int world_rank = 0, world_size = 1;
  int num_dcs = 1;
  int dc = 0;                       // this rank's datacenter
  int local_rank = 0, dc_size = 1;  // position inside the DC
  bool is_gateway = true;
  std::vector<int> dc_first_rank;   // per DC
  std::vector<int> dc_ranks;        // per DC
  MPI_Comm world = MPI_COMM_NULL;        // dup of the job's communicator (controller traffic)
  MPI_Comm dc_comm = MPI_COMM_NULL;      // ranks of this DC (tensor parallel)
  MPI_Comm gateway_comm = MPI_COMM_NULL; // gateways of all DCs; MPI_COMM_NULL elsewhere

 private:
  void release();  // frees the communicators (unless MPI is finalised) and nulls them
};

// Collective over `comm`; its size must equal cfg.world_size() (checked by the caller).
Topology make_topology(const Config& cfg, MPI_Comm comm);

}  // namespace strait
