// skill.cpp — the Diebold–Mariano statistic (see skill.hpp).
#include "control/skill.hpp"

#include <cmath>
#include <limits>

#include "config/messages.hpp"

namespace strait {

SkillVerdict diebold_mariano(const std::vector<double>& d, int needed, int horizon) {
  SkillVerdict v;
  v.pairs = static_cast<int>(d.size());
  if (v.pairs < needed || v.pairs == 0) {
    v.why = "untested: " + std::to_string(v.pairs) + " of the " + std::to_string(needed) +
            " scored forecasts the skill test needs";
    return v;
  }
  const double m = v.pairs;
  double mean = 0;
  for (double x : d) mean += x / m;
  // Long-run variance: autocovariances up to lag h − 1 (uniform weights, as DM 1995); when that
  // sum is not positive, the lag-0 variance alone.
  auto autocov = [&](int lag) {
    double s = 0;
    for (int t = lag; t < v.pairs; ++t) s += (d[t] - mean) * (d[t - lag] - mean);
    return s / m;
  };
  const double g0 = autocov(0);
  double var = g0;
  for (int lag = 1; lag < horizon && lag < v.pairs; ++lag) var += 2 * autocov(lag);
  if (!(var > 0)) var = g0;
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (var > 0)
    v.dm = mean / std::sqrt(var / m);
  else
    v.dm = mean < 0 ? -inf : mean > 0 ? inf : 0;  // identical differentials
  v.skilled = v.dm < SkillVerdict::kCritical;
  if (!v.skilled)
    v.why = "no skill: DM = " + msg::num(v.dm) + " on the last " + std::to_string(v.pairs) +
            " forecasts (the model needs < " + msg::num(SkillVerdict::kCritical) + ")";
  return v;
}

}  // namespace strait
