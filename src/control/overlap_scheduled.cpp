// overlap_scheduled.cpp — overlap scheduler "scheduled": "sequential" until the first
// [[control.switch]] of slot overlap, then the scheduler each switch names (switching.hpp).
#include "control/policies.hpp"
#include "control/switching.hpp"

namespace strait {
namespace {
class Scheduled final : public OverlapScheduler {
 public:
  explicit Scheduled(const Config& cfg) : sw_(cfg, "overlap", "sequential", make_overlap_scheduler) {}
  std::string name() const override { return "scheduled"; }
  OverlapDecision decide(const ControllerView& v) override {
    std::string who;
    OverlapDecision d = sw_.at(v.effective_step(), who).decide(v);
    d.detail = "{\"policy\":\"" + who + "\",\"detail\":" + d.detail + "}";
    return d;
  }

 private:
  Switching<OverlapScheduler> sw_;
};
}  // namespace

std::unique_ptr<OverlapScheduler> make_scheduled_overlap(const Config& cfg) {
  return std::make_unique<Scheduled>(cfg);
}

}  // namespace strait
