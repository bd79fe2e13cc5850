// forecaster_gm11.cpp — forecaster "gm11": every rank's load from a rolling-window GM(1,1) of
// its own loads (grey.hpp), handing over to the [control.forecast] fallback when a check fails —
// positivity, class ratio (shifted), development coefficient, and, unless checks = "textbook",
// a grade IV fit or no significant skill over the fallback on the rank's past forecasts
// (series_grey.cpp). The trace sees which model answered and why.
#include "control/policies.hpp"
#include "control/rank_series.hpp"

namespace strait {

std::unique_ptr<Forecaster> make_gm11_forecaster(const Config& cfg) {
  return make_rank_series_forecaster("gm11", cfg);
}

}  // namespace strait
