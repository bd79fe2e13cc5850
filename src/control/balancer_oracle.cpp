// balancer_oracle.cpp — balancer "oracle", an UPPER BOUND, not a method: the rule of
// "proportional" (balance.hpp) on the scenario's true speeds at the step decided for
// (view.clairvoyant(), which real policies must never call) instead of a forecast. A rank's load
// is its load at full speed — the median over the last five completed steps of its load × the
// speed it had then (RankStep::speed, also for oracles only), at its reference work — divided
// by its true speed at the step decided for; it weighs a change on the true speeds of the next
// gain_steps steps. What it cannot know is the noise of the compute.
#include <algorithm>

#include "control/balance.hpp"
#include "control/policies.hpp"

namespace strait {
namespace {
class Oracle final : public Balancer {
 public:
  static constexpr size_t kSteps = 5;
  explicit Oracle(const Config& cfg) : rule_(cfg), steps_(cfg.control.balance.gain_steps) {}
  std::string name() const override { return "oracle"; }
  BalanceDecision decide(const ControllerView& v, const Forecast&) override {
    std::vector<double> ref, full;  // at the effective step, and at full speed
    const auto& h = v.history();
    if (!h.empty()) {
      const size_t from = h.size() > kSteps ? h.size() - kSteps : 0;
      for (size_t r = 0; r < h.back().ranks.size(); ++r) {
        std::vector<double> own;
        for (size_t j = from; j < h.size(); ++j) {
          const RankStep& m = h[j].ranks[r];
          own.push_back(m.ref_load_ms() * m.speed);
        }
        std::nth_element(own.begin(), own.begin() + own.size() / 2, own.end());
        full.push_back(own[own.size() / 2]);
        ref.push_back(full.back() /
                      v.clairvoyant().rank_speed(static_cast<int>(r), v.effective_step()));
      }
    }
    // The loads of the next gain_steps steps at their true speeds: the outcomes it is judged on.
    std::vector<std::vector<double>> futures;
    if (!ref.empty())
      for (int j = 0; j < steps_; ++j) {
        std::vector<double> at(ref.size());
        for (size_t r = 0; r < ref.size(); ++r)
          at[r] = full[r] / v.clairvoyant().rank_speed(static_cast<int>(r), v.effective_step() + j);
        futures.push_back(std::move(at));
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
