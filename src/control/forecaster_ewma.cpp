// forecaster_ewma.cpp — baseline forecaster "ewma": every rank's next load is the exponentially
// weighted mean of its loads, ℓ = α·load + (1 − α)·ℓ, α = [control.forecast] ewma_alpha
// (series_baselines.cpp). Smooths noise with less lag than moving-mean.
#include "control/policies.hpp"
#include "control/rank_series.hpp"

namespace strait {
namespace {
class Ewma final : public Forecaster {
 public:
  explicit Ewma(const Config& cfg) : ranks_("ewma", series_params(cfg)) {}
  std::string name() const override { return "ewma"; }
  Forecast forecast(const ControllerView& v) override { return ranks_.forecast(v); }

 private:
  RankSeries ranks_;
};
}  // namespace

std::unique_ptr<Forecaster> make_ewma_forecaster(const Config& cfg) {
  return std::make_unique<Ewma>(cfg);
}

}  // namespace strait
