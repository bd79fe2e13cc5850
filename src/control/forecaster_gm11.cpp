// forecaster_gm11.cpp — forecaster "gm11": every rank's load from a rolling-window GM(1,1) of
// its own loads (grey.hpp), handing over to the [control.forecast] fallback baseline when a check
// fails — positivity, class ratio (shifted), development coefficient, and, unless
// checks = "textbook", a grade IV fit or no significant skill over the fallback on the rank's
// past forecasts (series_grey.cpp). The trace sees which model answered and why.
#include "control/policies.hpp"
#include "control/rank_series.hpp"

namespace strait {
namespace {
class Gm11 final : public Forecaster {
 public:
  explicit Gm11(const Config& cfg) : ranks_("gm11", series_params(cfg)) {}
  std::string name() const override { return "gm11"; }
  Forecast forecast(const ControllerView& v) override { return ranks_.forecast(v); }

 private:
  RankSeries ranks_;
};
}  // namespace

std::unique_ptr<Forecaster> make_gm11_forecaster(const Config& cfg) {
  return std::make_unique<Gm11>(cfg);
}

}  // namespace strait
