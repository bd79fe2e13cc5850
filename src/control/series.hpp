// series.hpp — series forecasters: one scalar series in, a forecast h steps ahead out, with the
// model that produced it and why. The controller's forecaster policies keep one per rank, fed
// with its load each step (rank_series.hpp); `strait forecast` runs every one of them over a
// CSV column. No MPI. Baselines: last-value, moving-mean (the window), ewma (α). Grey models:
// gm11 and gmc (GM(1,1), + Markov correction; grey.hpp), each answering with a named fallback
// baseline when a check fails; the "-textbook" variants act only on the checks that leave the
// model undefined, as system.md's measured figures did, while gm11 and gmc also fall back on a
// grade IV fit and while the model shows no significant skill over the fallback (skill.hpp).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "control/grey.hpp"

namespace strait {

// What [control.forecast] sets (config/config.hpp ForecastConfig), for one series.
struct SeriesParams {
  int window = 6;                 // values a GM(1,1) fit (and moving-mean) uses, >= 4
  int states = 3;                 // Markov states of gmc, >= 2
  int horizon = 1;                // lead at which the skill test scores forecasts, >= 1
  std::string fallback = "auto";  // a baseline name, or "auto" (fallback_names())
  double ewma_alpha = 0.5;        // in (0, 1]
  int skill_window = 20;          // past forecasts the skill test weighs; 0: no test
  bool textbook = false;          // act only on the checks that leave GM(1,1) undefined
};

struct Prediction {
  double value = grey::kNaN;              // NaN while nothing has been observed
  std::string model;                      // what produced value: "gm11", "gmc", "ewma", ..., or
                                          // "fallback:<baseline>" when a grey model handed over
  std::string why;                        // why the fallback answered ("" when the model did)
  grey::Check check = grey::Check::none;  // the check behind `why`
  // Of the GM(1,1) fit, when one was made: posterior variance ratio C, small-error probability
  // P, development coefficient a, and the class-ratio shift (0: the window passed as it was).
  double c = grey::kNaN, p = grey::kNaN, a = grey::kNaN, shift = grey::kNaN;
};

class SeriesForecaster {
 public:
  virtual ~SeriesForecaster() = default;
  virtual std::string name() const = 0;
  virtual void observe(double x) = 0;           // the next value of the series
  virtual Prediction predict(int h) const = 0;  // the value h >= 1 steps after the last one
};

// nullptr for an unknown name, or a grey model whose p.fallback is not in fallback_names().
std::unique_ptr<SeriesForecaster> make_series_forecaster(const std::string& name,
                                                         const SeriesParams& p);
// Every series forecaster, baselines first (what `strait forecast` evaluates).
const std::vector<std::string>& series_forecaster_names();
// The baselines: what a grey model may fall back to.
const std::vector<std::string>& baseline_names();
// What [control.forecast] fallback may name: "auto" (the baseline with the lowest mean absolute
// error on all past forecasts of the series, at the horizon), then the baselines.
const std::vector<std::string>& fallback_names();

// The baselines themselves (series_baselines.cpp); nullptr when name is not one of them.
std::unique_ptr<SeriesForecaster> make_baseline(const std::string& name, const SeriesParams& p);
// The grey models (series_grey.cpp): GM(1,1), with the Markov correction when `markov`;
// nullptr when p.fallback is not in fallback_names().
std::unique_ptr<SeriesForecaster> make_grey(bool markov, const SeriesParams& p);

}  // namespace strait
