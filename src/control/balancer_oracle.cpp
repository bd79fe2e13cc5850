// balancer_oracle.cpp — balancer "oracle", an UPPER BOUND, not a method: the rule of
// "proportional" (balance.hpp) on the scenario's true speeds (view.clairvoyant(), which real
// policies must never call) instead of a forecast.
//
// Every rank is the same kind of device; what makes one slower than another is the scenario's
// speed, which the oracle knows. So it measures one thing only: the time a device at full speed
// takes per FLOP, pooled over every rank — the median over ranks and the last five completed
// steps of load at reference work × the speed the rank had / its reference FLOPs. A rank's load
// for the step decided for is then that time × its reference FLOPs / its true speed there, and
// a change is weighed on the true speeds of the next gain_steps steps. Pooled, the estimate
// carries no rank's measurement noise into the split: in a world of equal speeds the oracle sees
// equal loads and never re-splits (an earlier version took each rank's own median of load ×
// speed, which carried the first step's warm-up and the machine's noise into the splits and made
// the "upper bound" re-split a stable world). What it cannot know is the noise of the compute.
#include <algorithm>

#include "control/balance.hpp"
#include "control/policies.hpp"
#include "control/work.hpp"

namespace strait {
namespace {
class Oracle final : public Balancer {
 public:
  static constexpr size_t kSteps = 5;
  explicit Oracle(const Config& cfg) : rule_(cfg), steps_(cfg.control.balance.gain_steps) {}
  std::string name() const override { return "oracle"; }
  BalanceDecision decide(const ControllerView& v, const Forecast&) override {
    const World& w = v.world();
    std::vector<std::vector<double>> splits;
    for (const DatacenterConfig& dc : w.cfg->datacenters) splits.push_back(dc.split);
    const std::vector<double> ref_flops = rank_flops(w, splits, w.cfg->train.batch_shares);
    // The full-speed time per FLOP, pooled over the ranks and the last kSteps steps.
    std::vector<double> per_flop;
    const auto& h = v.history();
    for (size_t j = h.size() > kSteps ? h.size() - kSteps : 0; j < h.size(); ++j)
      for (size_t r = 0; r < h[j].ranks.size() && r < ref_flops.size(); ++r) {
        const RankStep& m = h[j].ranks[r];
        if (ref_flops[r] > 0 && m.speed > 0 && m.ref_load_ms() > 0)
          per_flop.push_back(m.ref_load_ms() * m.speed / ref_flops[r]);
      }
    std::vector<double> ref;  // at the effective step
    std::vector<std::vector<double>> futures;  // the next gain_steps steps: the outcomes
    if (!per_flop.empty()) {
      std::nth_element(per_flop.begin(), per_flop.begin() + per_flop.size() / 2, per_flop.end());
      const double k = per_flop[per_flop.size() / 2];
      auto at = [&](int64_t step) {
        std::vector<double> loads(ref_flops.size());
        for (size_t r = 0; r < loads.size(); ++r)
          loads[r] = k * ref_flops[r] / v.clairvoyant().rank_speed(static_cast<int>(r), step);
        return loads;
      };
      ref = at(v.effective_step());
      for (int j = 0; j < steps_; ++j) futures.push_back(at(v.effective_step() + j));
    }
    BalanceDecision d = rule_.decide(v, ref, "true speeds", futures);
    d.detail.insert(1, "\"upper_bound\":true,");
    return d;
  }

 private:
  BalanceRule rule_;
  int steps_;
};
}  // namespace

std::unique_ptr<Balancer> make_oracle_balancer(const Config& cfg) {
  return std::make_unique<Oracle>(cfg);
}

}  // namespace strait
