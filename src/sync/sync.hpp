// sync.hpp — inter-datacenter gradient synchronisation strategies.
// A strategy turns every rank's local shard gradient (gradient of its DC's mean loss) into the
// shard of the global-batch gradient: Σ_d w_d·g_d with w_d = the DC's share of the global batch.
// DCs may shard differently, so strategies work in the canonical full layout (model/layout.hpp).
// All inter-DC bytes go through the Transport. Strategies are registered by name in
// registry.cpp; the controller's sync planner picks one in its plan (plan.hpp), which travels
// to every rank in the decision record and reaches the strategy through SyncInput.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "backend/host_buffer.hpp"
#include "model/params.hpp"
#include "net/transport.hpp"
#include "sync/plan.hpp"
#include "topo/topology.hpp"

namespace strait {

// Per-expert synchronisation state: its own communicators (so two experts' syncs can be in
// flight at once without matching each other's messages) and reusable staging buffers.
// shard is the backend's staging memory (page-locked on a GPU): stage_out / stage_in move the
// rank's gradient shard between it and the device.
// Owns its communicators (freed when it goes); move-only.
struct SyncChannel {
  MPI_Comm dc = MPI_COMM_NULL;        // dup of the DC communicator
  MPI_Comm gateways = MPI_COMM_NULL;  // dup of the gateway communicator (gateways only)
  HostBuffer<float> shard;
  std::vector<float> full, gathered, ring, owned;
  // When this channel's last ring sync began (run seconds): what a sender has seen of its links
  // since the sync before the current one is fresher than the decision it syncs under
  // (adaptive routes, Transport::exchange).
  double last_sync_start = -1e300;
  static SyncChannel open(const Topology& t, Backend<float>& be);

  SyncChannel() = default;
  ~SyncChannel() { close(); }
  SyncChannel(SyncChannel&& o) noexcept { *this = std::move(o); }
  SyncChannel& operator=(SyncChannel&& o) noexcept;
  SyncChannel(const SyncChannel&) = delete;
  SyncChannel& operator=(const SyncChannel&) = delete;

 private:
  void close();
};

// What one sync needs besides the gradients. The pointers stay valid for the whole sync: the
// trainer keeps the decision they come from alive until the sync has finished, even when a new
// decision takes effect meanwhile (an overlapped sync).
struct SyncInput {
  const Topology* topo = nullptr;
  const std::vector<Layout>* dc_layouts = nullptr;  // the layout of every rank of this DC
  double weight = 1.0;                               // this DC's share of the global batch
  const Paths* paths = nullptr;                      // inter-DC path per ordered pair
  const Routes* routes = nullptr;                    // multi-path pairs (null or empty: none)
  const SyncPlan* plan = nullptr;                    // the planner's plan
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
// The frame of every gateway strategy: stage the rank's shard out, gather the DC's full
// gradient on its gateway, weight it by the DC's batch share, run `allreduce` among the
// gateways, scatter the shards back and stage them in.
using GatewayAllreduce = void (*)(float* buf, size_t n, SyncChannel& ch, const SyncInput& in,
                                  Transport& tr);
void sync_through_gateways(ParamSet<float>& ps, SyncChannel& ch, const SyncInput& in,
                           Transport& tr, GatewayAllreduce allreduce);
// Gathers the DC's shards to its gateway and assembles the full vector there (ch.full).
void gather_full_to_gateway(const float* shard_host, SyncChannel& ch, const SyncInput& in);
// Splits ch.full on the gateway back into shards; every rank receives its own into ch.shard.
void scatter_full_from_gateway(SyncChannel& ch, const SyncInput& in);
// Sum-allreduce of buf among gateways by a ring (reduce-scatter, allgather) over the transport;
// each ring hop takes its path in `paths`. `order` lists the DCs in ring order (plan.hpp's
// SyncPlan::ring); empty = 0, 1, ..., n−1.
void ring_allreduce(float* buf, size_t n, SyncChannel& ch, const Topology& t, Transport& tr,
                    const Paths& paths, const std::vector<int>& order = {},
                    const Routes* routes = nullptr);
// Sum-allreduce of buf among gateways by an owner plan (plan.hpp): every DC sends its part of
// slice j to owner j, which sums the DCs' parts in DC order and sends the sum back.
void owner_allreduce(float* buf, size_t n, SyncChannel& ch, const Topology& t, Transport& tr,
                     const SyncPlan& plan);

}  // namespace strait
