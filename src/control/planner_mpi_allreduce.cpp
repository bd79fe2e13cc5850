// planner_mpi_allreduce.cpp — baseline sync planner "mpi-allreduce": the gateways call
// MPI_Allreduce on the weighted full gradient (strategy "mpi-allreduce", sync/mpi_allreduce.cpp),
// the MPI library's own algorithm over whatever network MPI sees. It bypasses the transport and
// so the software shaper: validation (src/validate/) offers it only with network.shaper =
// "none", i.e. under kernel shaping (scripts/netns-run), where it is the reference an MPI user
// would reach for. No prediction: the algorithm is the library's choice.
#include "control/policies.hpp"

namespace strait {
namespace {
class MpiAllreduce final : public SyncPlanner {
 public:
  std::string name() const override { return "mpi-allreduce"; }
  SyncDecision plan(const ControllerView&, const PathDecision&) override {
    SyncDecision d;
    d.plan.strategy = "mpi-allreduce";
    d.detail = "{\"note\":\"MPI_Allreduce among the gateways; no prediction\"}";
    return d;
  }
};
}  // namespace

std::unique_ptr<SyncPlanner> make_mpi_allreduce_planner(const Config&) {
  return std::make_unique<MpiAllreduce>();
}

}  // namespace strait
