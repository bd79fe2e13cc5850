// forecaster_ewma.cpp — baseline forecaster "ewma": every rank's next load is the exponentially
// weighted mean of its loads, ℓ = α·load + (1 − α)·ℓ, α = [control.forecast] ewma_alpha
// (series_baselines.cpp). Smooths noise with less lag than moving-mean.
#include "control/policies.hpp"
#include "control/rank_series.hpp"

namespace strait {

std::unique_ptr<Forecaster> make_ewma_forecaster(const Config& cfg) {
  return make_rank_series_forecaster("ewma", cfg);
}

}  // namespace strait
