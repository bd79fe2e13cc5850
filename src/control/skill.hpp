// skill.hpp — whether a model has earned its place over a baseline, judged on past forecasts
// only: the Diebold–Mariano test of equal accuracy (Diebold & Mariano 1995) on the loss
// differentials d(t) = |model error| − |baseline error| of the last m forecasts whose targets
// have come. The grey forecasters (series_grey.cpp) use the model only while it is significantly
// better than their fallback; on series where GM(1,1) has nothing to extrapolate this keeps the
// fallback's accuracy (docs/forecast.md).
#pragma once
#include <string>
#include <vector>

namespace strait {

struct SkillVerdict {
  // One-sided 5% critical value of the standard normal: the model must beat the baseline with
  // DM below −1.645.
  static constexpr double kCritical = -1.6448536269514722;
  bool skilled = false;
  int pairs = 0;
  double dm = 0;    // the DM statistic (negative: the model is more accurate)
  std::string why;  // why not skilled ("" when skilled)
};

// d: the loss differentials, oldest first; needed: the pairs the test wants (m; fewer: not
// skilled, "untested"); horizon: lead h of the forecasts, whose differentials are
// autocorrelated up to lag h − 1 (the long-run variance counts those lags).
SkillVerdict diebold_mariano(const std::vector<double>& d, int needed, int horizon);

}  // namespace strait
