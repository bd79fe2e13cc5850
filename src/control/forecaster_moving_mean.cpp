// forecaster_moving_mean.cpp — baseline forecaster "moving-mean": every rank's next load is the
// mean of its loads over the last kWindow completed steps (smooths noise, lags behind drifts).
#include "control/policies.hpp"
#include "control/work.hpp"

namespace strait {
namespace {
class MovingMean final : public Forecaster {
 public:
  static constexpr size_t kWindow = 8;
  std::string name() const override { return "moving-mean"; }
  Forecast forecast(const ControllerView& v) override {
    Forecast f;
    const auto& h = v.history();
    if (h.empty()) return f;
    const size_t k = std::min(kWindow, h.size());
    f.load_ms.assign(h.back().ranks.size(), 0.0);
    for (size_t j = h.size() - k; j < h.size(); ++j)
      for (size_t r = 0; r < f.load_ms.size(); ++r)
        f.load_ms[r] += h[j].ranks[r].ref_load_ms() / k;
    // At the reference work, then at the work of the record in force (work.hpp).
    const std::vector<double> w = relative_work(v.world(), v.plan().splits, v.plan().shares);
    for (size_t r = 0; r < f.load_ms.size(); ++r) f.load_ms[r] *= w[r];
    f.detail = "{\"window\":" + std::to_string(k) + ",\"to_step\":" + std::to_string(h.back().step) + "}";
    return f;
  }
};
}  // namespace

std::unique_ptr<Forecaster> make_moving_mean_forecaster(const Config&) {
  return std::make_unique<MovingMean>();
}

}  // namespace strait
