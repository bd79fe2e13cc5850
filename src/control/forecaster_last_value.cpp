// forecaster_last_value.cpp — baseline forecaster "last-value": every rank's next load is its
// load in the last completed step. On real per-worker batch-time traces this is a strong
// baseline that smarter models must beat.
#include "control/policies.hpp"

namespace strait {
namespace {
class LastValue final : public Forecaster {
 public:
  std::string name() const override { return "last-value"; }
  Forecast forecast(const ControllerView& v) override {
    Forecast f;
    const StepRecord* last = v.last();
    if (!last) return f;
    for (const auto& r : last->ranks) f.load_ms.push_back(r.load_ms());
    f.detail = "{\"from_step\":" + std::to_string(last->step) + "}";
    return f;
  }
};
}  // namespace

std::unique_ptr<Forecaster> make_last_value_forecaster(const Config&) {
  return std::make_unique<LastValue>();
}

}  // namespace strait
