// balancer_scheduled.cpp — balancer "scheduled": replays the [[control.resplit]] events of the
// config. At step t a DC's split is that of its latest event with step <= t, else the split the
// run started with; batch shares stay. For scripted scenarios and for testing that a re-split in
// the middle of a run leaves the loss trajectory unchanged.
#include <sstream>

#include "control/policies.hpp"

namespace strait {
namespace {
class Scheduled final : public Balancer {
 public:
  explicit Scheduled(const Config& cfg) : cfg_(cfg) {}
  std::string name() const override { return "scheduled"; }
  BalanceDecision decide(const ControllerView& v, const Forecast&) override {
    if (start_.empty()) start_ = v.plan().splits;  // the first call sees the start state
    BalanceDecision d{start_, v.plan().shares, ""};
    std::ostringstream js;
    js << "{\"events\":[";
    bool first = true;
    for (const auto& ev : cfg_.control.resplits) {  // sorted by step: the latest wins
      if (ev.step > v.effective_step()) break;
      const int k = v.world().dc_index(ev.datacenter);
      d.splits[k] = ev.split;
      js << (first ? "" : ",") << "{\"step\":" << ev.step << ",\"datacenter\":\"" << ev.datacenter << "\"}";
      first = false;
    }
    js << "]}";
    d.detail = js.str();
    return d;
  }

 private:
  const Config& cfg_;
  std::vector<std::vector<double>> start_;
};
}  // namespace

std::unique_ptr<Balancer> make_scheduled_balancer(const Config& cfg) {
  return std::make_unique<Scheduled>(cfg);
}

}  // namespace strait
