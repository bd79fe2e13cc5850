// balancer_scheduled.cpp — balancer "scheduled": replays the [[control.resplit]] events of the
// config (a split for one DC from a given step on). For scripted scenarios and for testing that a
// re-split in the middle of a run leaves the loss trajectory unchanged.
#include <sstream>

#include "control/policies.hpp"

namespace strait {
namespace {
class Scheduled final : public Balancer {
 public:
  explicit Scheduled(const Config& cfg) : cfg_(cfg) {}
  std::string name() const override { return "scheduled"; }
  BalanceDecision decide(const BalanceState& s) override {
    BalanceDecision d;
    d.splits = *s.splits;
    d.shares = *s.shares;
    std::ostringstream js;
    js << "{\"events\":[";
    for (const auto& ev : cfg_.control.resplits) {
      if (ev.step != s.step + 1) continue;
      for (size_t k = 0; k < cfg_.datacenters.size(); ++k)
        if (cfg_.datacenters[k].name == ev.datacenter) {
          d.splits[k] = ev.split;
          if (d.change) js << ",";
          js << "{\"datacenter\":\"" << ev.datacenter << "\",\"split\":[";
          for (size_t i = 0; i < ev.split.size(); ++i) js << (i ? "," : "") << ev.split[i];
          js << "]}";
          d.change = true;
        }
    }
    js << "]}";
    d.detail = js.str();
    return d;
  }

 private:
  const Config& cfg_;
};
}  // namespace

std::unique_ptr<Balancer> make_scheduled_balancer(const Config& cfg) {
  return std::make_unique<Scheduled>(cfg);
}

}  // namespace strait
