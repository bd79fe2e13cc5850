// forecaster_last_value.cpp — baseline forecaster "last-value": every rank's next load is its
// load in the last completed step. On real per-worker batch-time traces this is a strong
// baseline that smarter models must beat.
#include "control/policies.hpp"
#include "control/work.hpp"

namespace strait {
namespace {
class LastValue final : public Forecaster {
 public:
  std::string name() const override { return "last-value"; }
  Forecast forecast(const ControllerView& v) override {
    Forecast f;
    const StepRecord* last = v.last();
    if (!last) return f;
    // At the reference work, then at the work of the record in force (work.hpp).
    const std::vector<double> w = relative_work(v.world(), v.plan().splits, v.plan().shares);
    for (size_t r = 0; r < last->ranks.size(); ++r)
      f.load_ms.push_back(last->ranks[r].ref_load_ms() * w[r]);
    f.detail = "{\"from_step\":" + std::to_string(last->step) + "}";
    return f;
  }
};
}  // namespace

std::unique_ptr<Forecaster> make_last_value_forecaster(const Config&) {
  return std::make_unique<LastValue>();
}

}  // namespace strait
