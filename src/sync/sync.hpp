// sync.hpp — inter-datacenter gradient synchronisation strategies.
// A strategy turns every rank's local shard gradient (gradient of its DC's mean loss) into the
// shard of the global-batch gradient: Σ_d w_d·g_d with w_d = the DC's share of the global batch.
// DCs may shard differently, so strategies work in the canonical full layout (model/layout.hpp).
// All inter-DC bytes go through the Transport. Strategies are registered by name in
// registry.cpp; the controller's sync-planner slot picks one.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "backend/host_buffer.hpp"
#include "model/params.hpp"
#include "net/transport.hpp"
#include "topo/topology.hpp"

namespace strait {

// Per-expert synchronisation state: its own communicators (so two experts' syncs can be in
// flight at once without matching each other's messages) and reusable staging buffers.
// shard is the backend's staging memory (page-locked on a GPU): stage_out / stage_in move the
// rank's gradient shard between it and the device.
struct SyncChannel {
  MPI_Comm dc = MPI_COMM_NULL;        // dup of the DC communicator
  MPI_Comm gateways = MPI_COMM_NULL;  // dup of the gateway communicator (gateways only)
  HostBuffer<float> shard;
  std::vector<float> full, gathered, ring;
  static SyncChannel open(const Topology& t, Backend<float>& be);
  void close();
};

struct SyncInput {
  const Topology* topo = nullptr;
  const std::vector<Layout>* dc_layouts = nullptr;  // the layout of every rank of this DC
  double weight = 1.0;                               // this DC's share of the global batch
};

class SyncStrategy {
 public:
  virtual ~SyncStrategy() = default;
  virtual std::string name() const = 0;
  // Replaces ps.grads with this rank's shard of the global weighted gradient.
  virtual void sync(ParamSet<float>& ps, SyncChannel& ch, const SyncInput& in, Transport& tr) = 0;
};

std::unique_ptr<SyncStrategy> make_sync_strategy(const std::string& name);  // nullptr if unknown
std::vector<std::string> sync_strategy_names();

// Shared pieces for strategies.
// Gathers the DC's shards to its gateway and assembles the full vector there (ch.full).
void gather_full_to_gateway(const float* shard_host, SyncChannel& ch, const SyncInput& in);
// Splits ch.full on the gateway back into shards; every rank receives its own into ch.shard.
void scatter_full_from_gateway(SyncChannel& ch, const SyncInput& in);
// Sum-allreduce of buf among gateways by a ring (reduce-scatter, allgather) over the transport.
void ring_allreduce(float* buf, size_t n, SyncChannel& ch, const Topology& t, Transport& tr);

}  // namespace strait
