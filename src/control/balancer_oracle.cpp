// balancer_oracle.cpp — balancer "oracle", an UPPER BOUND, not a method: the rule of
// "proportional" (balance.hpp) on the scenario's true speeds at the step decided for
// (view.clairvoyant(), which real policies must never call) instead of a forecast. A rank's load
// is its own compute at full speed — the median over the last five completed steps of its
// compute outside the DC's reductions, at its reference work — divided by its true speed. What
// it cannot know is the noise of the compute itself.
#include <algorithm>

#include "control/balance.hpp"
#include "control/policies.hpp"

namespace strait {
namespace {
class Oracle final : public Balancer {
 public:
  static constexpr size_t kSteps = 5;
  explicit Oracle(const Config& cfg) : rule_(cfg) {}
  std::string name() const override { return "oracle"; }
  BalanceDecision decide(const ControllerView& v, const Forecast&) override {
    std::vector<double> ref;
    const auto& h = v.history();
    if (!h.empty()) {
      const size_t from = h.size() > kSteps ? h.size() - kSteps : 0;
      for (size_t r = 0; r < h.back().ranks.size(); ++r) {
        std::vector<double> own;
        for (size_t j = from; j < h.size(); ++j) {
          const RankStep& m = h[j].ranks[r];
          own.push_back((m.compute_ms - m.reduce_ms) / (m.work > 0 ? m.work : 1.0));
        }
        std::nth_element(own.begin(), own.begin() + own.size() / 2, own.end());
        ref.push_back(own[own.size() / 2] /
                      v.clairvoyant().rank_speed(static_cast<int>(r), v.effective_step()));
      }
    }
    BalanceDecision d = rule_.decide(v, ref, "true speeds");
    d.detail.insert(1, "\"upper_bound\":true,");
    return d;
  }

 private:
  BalanceRule rule_;
};
}  // namespace

std::unique_ptr<Balancer> make_oracle_balancer(const Config& cfg) {
  return std::make_unique<Oracle>(cfg);
}

}  // namespace strait
