// controller.hpp — the controller on rank 0 and the per-step exchange with every rank.
// After each step every rank sends its measurements (one fixed-size record) to rank 0, which
// feeds the policies and broadcasts a Decision (stop flag, splits and batch shares from the next
// step on, the global loss). The exchange is also where a SIGINT/SIGTERM on any rank becomes a
// stop at the same step boundary on every rank.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "control/policy.hpp"
#include "net/transport.hpp"
#include "topo/topology.hpp"
#include "trace/trace.hpp"

namespace strait {

struct RankMeasure {      // sent as kFields doubles
  double compute_ms = 0, emulated_ms = 0, sync_ms = 0, wait_ms = 0, optimizer_ms = 0;
  double loss = 0;        // this rank's DC mean loss
  double stop = 0;        // 1 when this rank received SIGINT/SIGTERM
  double split = 0;       // this rank's split fraction
  static constexpr int kFields = 8;
};
static_assert(sizeof(RankMeasure) == RankMeasure::kFields * sizeof(double));

struct Decision {
  bool stop = false;
  bool change = false;                        // splits/shares below differ from the current ones
  std::vector<std::vector<double>> splits;    // per DC, from the next step on
  std::vector<double> shares;                 // per DC
  double loss = 0;                            // global-batch loss of the step just done
};

class Controller {
 public:
  // Rank 0 only. Throws std::runtime_error when a configured policy name is unknown.
  Controller(const Config& cfg, const Topology& topo, std::vector<std::vector<double>> splits,
             std::vector<double> shares);
  // Runs the policies on the measurements of `step`; appends trace rows for what it decided.
  Decision on_step(int64_t step, const std::vector<RankMeasure>& m,
                   const std::vector<LinkCounters>& links, std::vector<DecisionRow>& rows);
  // The decision rows that describe the initial state of every slot (for the trace).
  std::vector<DecisionRow> initial_rows(int64_t step) const;
  std::string sync_strategy() const { return planner_->strategy(); }
  // The path selector's current path per ordered pair (index src·n + dst).
  std::vector<std::vector<int>> paths() const { return paths_->choose(topo_.num_dcs); }

 private:
  const Config& cfg_;
  const Topology& topo_;
  std::vector<std::vector<double>> splits_;
  std::vector<double> shares_;
  std::unique_ptr<Forecaster> forecaster_;
  std::unique_ptr<Balancer> balancer_;
  std::unique_ptr<PathSelector> paths_;
  std::unique_ptr<SyncPlanner> planner_;
  std::unique_ptr<OverlapScheduler> overlap_;
};

struct StepExchange {
  Decision decision;                 // on every rank
  std::vector<RankMeasure> ranks;    // rank 0 only: every rank's record
  std::vector<LinkCounters> links;   // rank 0 only: per directed link, summed over gateways
  std::vector<DecisionRow> rows;     // rank 0 only: trace rows of what was decided
  double controller_ms = 0;          // rank 0 only: time spent in the policies
};

// Collective over topo.world: gathers every rank's record and link counters to rank 0, where
// `ctl` decides (ctl is null on other ranks), and broadcasts the decision.
StepExchange exchange_step(const Topology& topo, Controller* ctl, int64_t step,
                           const RankMeasure& mine, const std::vector<LinkCounters>& my_links);

}  // namespace strait
