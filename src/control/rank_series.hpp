// rank_series.hpp — the common body of the forecaster policies ewma, gm11 and gmc: one series
// forecaster (series.hpp) per rank, fed with the rank's load (compute + emulated ms) of every
// completed step in view.history() it has not seen yet, asked for the effective step and the
// `horizon` steps from it on. The lead is effective_step − the last completed step, so a
// controller that decides `control.lag` steps ahead forecasts that far.
#pragma once
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "control/policy.hpp"
#include "control/series.hpp"

namespace strait {

// [control.forecast] as series parameters.
SeriesParams series_params(const Config& cfg);

// The forecaster policy named after a series forecaster (ewma, gm11, gmc): a RankSeries of it
// with the config's [control.forecast].
std::unique_ptr<Forecaster> make_rank_series_forecaster(const std::string& name, const Config& cfg);

class RankSeries {
 public:
  // name: a series forecaster (series_forecaster_names()).
  RankSeries(std::string name, SeriesParams p) : name_(std::move(name)), p_(std::move(p)) {}
  Forecast forecast(const ControllerView& v);

 private:
  std::string name_;
  SeriesParams p_;
  std::vector<std::unique_ptr<SeriesForecaster>> ranks_;
  int64_t fed_ = std::numeric_limits<int64_t>::min();  // the last step observed
};

}  // namespace strait
