// forecaster_gmc.cpp — forecaster "gmc" (Grey Markov Chain, the method of system.md): gm11's
// rolling GM(1,1) per rank, its forecast corrected by a Markov chain over the window's relative
// residuals ([control.forecast] states), with gm11's checks and fallback (series_grey.cpp).
#include "control/policies.hpp"
#include "control/rank_series.hpp"

namespace strait {
namespace {
class Gmc final : public Forecaster {
 public:
  explicit Gmc(const Config& cfg) : ranks_("gmc", series_params(cfg)) {}
  std::string name() const override { return "gmc"; }
  Forecast forecast(const ControllerView& v) override { return ranks_.forecast(v); }

 private:
  RankSeries ranks_;
};
}  // namespace

std::unique_ptr<Forecaster> make_gmc_forecaster(const Config& cfg) {
  return std::make_unique<Gmc>(cfg);
}

}  // namespace strait
