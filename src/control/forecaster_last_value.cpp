// forecaster_last_value.cpp — baseline forecaster "last-value": next load = last observed load.
// On real per-worker batch-time traces this is a strong baseline that smarter models must beat.
#include "control/policies.hpp"

namespace strait {
namespace {
class LastValue final : public Forecaster {
 public:
  std::string name() const override { return "last-value"; }
  void observe(const std::vector<double>& load) override { last_ = load; }
  std::vector<double> forecast() const override { return last_; }

 private:
  std::vector<double> last_;
};
}  // namespace

std::unique_ptr<Forecaster> make_last_value_forecaster(const Config&) {
  return std::make_unique<LastValue>();
}

}  // namespace strait
