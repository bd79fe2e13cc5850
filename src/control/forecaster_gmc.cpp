// forecaster_gmc.cpp — forecaster "gmc" (Grey Markov Chain, the method of system.md): gm11's
// rolling GM(1,1) per rank, its forecast corrected by a Markov chain over the window's relative
// residuals ([control.forecast] states), with gm11's checks and fallback (series_grey.cpp).
#include "control/policies.hpp"
#include "control/rank_series.hpp"

namespace strait {

std::unique_ptr<Forecaster> make_gmc_forecaster(const Config& cfg) {
  return make_rank_series_forecaster("gmc", cfg);
}

}  // namespace strait
