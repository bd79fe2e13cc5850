// planner_hierarchical.cpp — baseline sync planner "hierarchical": always the hierarchical
// strategy (gather in the DC, ring among gateways, scatter), whatever the link graph.
#include "control/policies.hpp"

namespace strait {
namespace {
class Hierarchical final : public SyncPlanner {
 public:
  std::string name() const override { return "hierarchical"; }
  SyncDecision plan(const ControllerView&, const PathDecision&) override {
    SyncDecision d;
    d.plan.strategy = "hierarchical";
    return d;
  }
};
}  // namespace

std::unique_ptr<SyncPlanner> make_hierarchical_planner(const Config&) {
  return std::make_unique<Hierarchical>();
}

}  // namespace strait
