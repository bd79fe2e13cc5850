// balancer_proportional.cpp — balancer "proportional": from the forecaster's load of every rank,
// re-split each DC's heads and MLP columns and re-set the batch shares across DCs so that the
// predicted times are as equal as whole heads and sequences allow, when the predicted gain
// clears the hysteresis and the forecasts' noise and repays the measured re-split cost within
// [control.balance] gain_steps (the rule: balance.hpp, docs/balance.md).
#include "control/balance.hpp"
#include "control/policies.hpp"
#include "control/work.hpp"

namespace strait {
namespace {
class Proportional final : public Balancer {
 public:
  explicit Proportional(const Config& cfg) : rule_(cfg) {}
  std::string name() const override { return "proportional"; }
  BalanceDecision decide(const ControllerView& v, const Forecast& f) override {
    // The forecast is at the work of the record in force; the rule wants it at the reference.
    std::vector<double> ref = f.load_ms;
    if (!ref.empty()) {
      const std::vector<double> w = relative_work(v.world(), v.plan().splits, v.plan().shares);
      for (size_t r = 0; r < ref.size() && r < w.size(); ++r) ref[r] /= w[r];
    }
    return rule_.decide(v, ref, "forecast");
  }

 private:
  BalanceRule rule_;
};
}  // namespace

std::unique_ptr<Balancer> make_proportional_balancer(const Config& cfg) {
  return std::make_unique<Proportional>(cfg);
}

}  // namespace strait
