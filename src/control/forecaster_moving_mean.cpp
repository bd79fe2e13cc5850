// forecaster_moving_mean.cpp — baseline forecaster "moving-mean": next load = mean of the last
// kWindow observations per rank (smooths noise, lags behind drifts).
#include <deque>

#include "control/policies.hpp"

namespace strait {
namespace {
class MovingMean final : public Forecaster {
 public:
  static constexpr size_t kWindow = 8;
  std::string name() const override { return "moving-mean"; }
  void observe(const std::vector<double>& load) override {
    hist_.push_back(load);
    if (hist_.size() > kWindow) hist_.pop_front();
  }
  std::vector<double> forecast() const override {
    if (hist_.empty()) return {};
    std::vector<double> m(hist_.front().size(), 0.0);
    for (const auto& h : hist_)
      for (size_t i = 0; i < m.size(); ++i) m[i] += h[i] / hist_.size();
    return m;
  }

 private:
  std::deque<std::vector<double>> hist_;
};
}  // namespace

std::unique_ptr<Forecaster> make_moving_mean_forecaster(const Config&) {
  return std::make_unique<MovingMean>();
}

}  // namespace strait
