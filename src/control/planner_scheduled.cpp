// planner_scheduled.cpp — sync planner "scheduled": "hierarchical" until the first
// [[control.switch]] of slot sync_planner, then the planner each switch names (switching.hpp).
#include "control/policies.hpp"
#include "control/switching.hpp"

namespace strait {
namespace {
class Scheduled final : public SyncPlanner {
 public:
  explicit Scheduled(const Config& cfg) : sw_(cfg, "sync_planner", "hierarchical", make_sync_planner) {}
  std::string name() const override { return "scheduled"; }
  SyncDecision plan(const ControllerView& v, const PathDecision& chosen) override {
    std::string who;
    SyncDecision d = sw_.at(v.sync_step(), who).plan(v, chosen);
    d.detail = "{\"policy\":\"" + who + "\",\"detail\":" + d.detail + "}";
    return d;
  }

 private:
  Switching<SyncPlanner> sw_;
};
}  // namespace

std::unique_ptr<SyncPlanner> make_scheduled_planner(const Config& cfg) {
  return std::make_unique<Scheduled>(cfg);
}

}  // namespace strait
