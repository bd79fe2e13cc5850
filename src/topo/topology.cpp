// topology.cpp — builds the per-DC and gateway communicators with MPI_Comm_split.
#include "topo/topology.hpp"

#include "core/check.hpp"

#include <utility>

namespace strait {

Topology make_topology(const Config& cfg, MPI_Comm comm) {
  Topology t;
  MPI_CHECK(MPI_Comm_dup(comm, &t.world));
  MPI_CHECK(MPI_Comm_rank(t.world, &t.world_rank));
  MPI_CHECK(MPI_Comm_size(t.world, &t.world_size));
  STRAIT_CHECK(t.world_size == cfg.world_size(), "world size does not match the datacenters");
  t.num_dcs = static_cast<int>(cfg.datacenters.size());
  for (int d = 0; d < t.num_dcs; ++d) {
    t.dc_first_rank.push_back(cfg.first_rank_of_dc(d));
    t.dc_ranks.push_back(cfg.datacenters[d].ranks);
  }
  t.dc = cfg.dc_of_rank(t.world_rank);
  t.local_rank = t.world_rank - t.dc_first_rank[t.dc];
  t.dc_size = t.dc_ranks[t.dc];
  t.is_gateway = t.local_rank == 0;
  MPI_CHECK(MPI_Comm_split(t.world, t.dc, t.local_rank, &t.dc_comm));
  MPI_CHECK(MPI_Comm_split(t.world, t.is_gateway ? 0 : MPI_UNDEFINED, t.dc, &t.gateway_comm));
  return t;
}

Topology::~Topology() { release(); }

void Topology::release() {
  int fin = 0;
  MPI_Finalized(&fin);
  for (MPI_Comm* c : {&gateway_comm, &dc_comm, &world}) {
    if (*c != MPI_COMM_NULL && !fin) MPI_Comm_free(c);
    *c = MPI_COMM_NULL;
  }
}

Topology::Topology(Topology&& o) noexcept { *this = std::move(o); }

Topology& Topology::operator=(Topology&& o) noexcept {
  if (this == &o) return *this;
  release();
  world_rank = o.world_rank, world_size = o.world_size, num_dcs = o.num_dcs, dc = o.dc;
  local_rank = o.local_rank, dc_size = o.dc_size, is_gateway = o.is_gateway;
  dc_first_rank = std::move(o.dc_first_rank);
  dc_ranks = std::move(o.dc_ranks);
  std::swap(world, o.world);
  std::swap(dc_comm, o.dc_comm);
  std::swap(gateway_comm, o.gateway_comm);
  return *this;
}

}  // namespace strait
