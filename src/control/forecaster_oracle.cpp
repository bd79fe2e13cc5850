// forecaster_oracle.cpp — forecaster "oracle", an UPPER BOUND, not a method: it reads the
// scenario's rank speeds for the steps it forecasts (view.clairvoyant(), which real policies must
// never call). Emulation makes a rank at speed v take 1/v of its time at full speed (its own
// compute, or the emulated device's time), so its load at step s is its load in the last
// completed step × the speed it had then (RankStep::speed, for oracles only), at the work of the
// record in force (work.hpp), divided by its speed at s; what it cannot see is a change in the
// compute itself.
#include <limits>

#include "control/policies.hpp"
#include "control/work.hpp"

namespace strait {
namespace {
class Oracle final : public Forecaster {
 public:
  explicit Oracle(const Config& cfg) : horizon_(cfg.control.forecast.horizon) {}
  std::string name() const override { return "oracle"; }
  Forecast forecast(const ControllerView& v) override {
    Forecast f;
    const StepRecord* last = v.last();
    if (!last) return f;
    const int64_t at = v.effective_step();
    const std::vector<double> w = relative_work(v.world(), v.plan().splits, v.plan().shares);
    for (size_t r = 0; r < last->ranks.size(); ++r) {
      const RankStep& m = last->ranks[r];
      const double compute = m.ref_load_ms() * m.speed * w[r];
      std::vector<double> ahead;
      for (int j = 0; j < horizon_; ++j)
        ahead.push_back(compute / v.clairvoyant().rank_speed(static_cast<int>(r), at + j));
      f.load_ms.push_back(ahead[0]);
      f.ahead_ms.push_back(std::move(ahead));
      f.model.push_back("oracle");
      f.why.push_back("");
      f.c.push_back(nan()), f.p.push_back(nan());
    }
    f.detail = "{\"upper_bound\":true,\"from_step\":" + std::to_string(last->step) +
               ",\"at_step\":" + std::to_string(at) + "}";
    return f;
  }

 private:
  static double nan() { return std::numeric_limits<double>::quiet_NaN(); }
  int horizon_;
};
}  // namespace

std::unique_ptr<Forecaster> make_oracle_forecaster(const Config& cfg) {
  return std::make_unique<Oracle>(cfg);
}

}  // namespace strait
