// model_state.hpp — moving a run's model state between layouts, ranks and files: the full
// (unsharded) parameters and Adam moments of an expert assembled on a DC's gateway, a re-split
// inside a DC, the checkpoint of a run and the state a resumed run starts from. All collective
// calls here are over one DC (or the whole job for resume), never across the WAN.
#pragma once
#include <memory>
#include <vector>

#include "backend/backend.hpp"
#include "config/config.hpp"
#include "model/params.hpp"
#include "sync/sync.hpp"
#include "topo/topology.hpp"
#include "trace/checkpoint.hpp"

namespace strait {

// The layouts of every rank of a DC under `split`.
std::vector<Layout> dc_layouts(const ModelConfig& m, const std::vector<double>& split);

// Full parameters and Adam moments of one expert, assembled on the DC's gateway (collective
// over the DC). Returns true on the gateway, whose p, m, v are then filled.
bool gather_expert(const ParamSet<float>& ps, SyncChannel& ch, const SyncInput& in,
                   std::vector<float>& p, std::vector<float>& m, std::vector<float>& v);

// Re-split: every expert's slices move to their owners under the new layouts (collective over
// the DC): gathered on the gateway, broadcast in the DC, each rank keeps its new shard. Adam
// step counts are kept; nothing is re-initialised.
void reshard(std::vector<std::unique_ptr<ParamSet<float>>>& experts, std::vector<Layout>& layouts,
             std::vector<Layout> next, std::vector<SyncChannel>& channels, const Topology& topo,
             Backend<float>& be);

// The checkpoint of the run (collective over DC 0; filled on world rank 0, DC 0's gateway —
// every DC holds the same model after a step).
Checkpoint assemble_checkpoint(const Config& cfg, int64_t next_step,
                               const std::vector<std::vector<double>>& splits,
                               const std::vector<double>& shares,
                               const std::vector<std::unique_ptr<ParamSet<float>>>& experts,
                               const std::vector<Layout>& layouts,
                               std::vector<SyncChannel>& channels, const Topology& topo);

// Where a run starts: step, splits, batch shares, and every expert's full state (canonical
// layout) and Adam step count. Fresh runs initialise from the seed; resumed runs take the
// checkpoint `ck` that world rank 0 read (collective over the job: rank 0 broadcasts it).
// A resumed run holds the checkpoint's splits and shares (the layout of its state). When the
// config's differ: with control.balancer = "static" the config is what the user asks for now, so
// the first decision record carries the config's (a re-split at the first step); any other
// balancer set the checkpoint's during the run, and they hold. `notice` says which happened.
struct StartState {
  int64_t step = 0;
  std::vector<std::vector<double>> splits;
  std::vector<double> shares;
  std::vector<std::vector<double>> first_splits;  // the controller's record in force at start
  std::vector<double> first_shares;
  std::string notice;                             // rank 0: what a resume did with the config's
  struct Expert {
    std::vector<float> p, m, v;
    int64_t adam_t = 0;
  };
  std::vector<Expert> experts;
};
StartState start_state(const Config& cfg, const Topology& topo, bool resume, Checkpoint&& ck);

}  // namespace strait
