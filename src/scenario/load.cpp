// load.cpp — see load.hpp.
#include "scenario/load.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/rng.hpp"

namespace strait {

namespace {

std::string str(double x) {
  std::ostringstream ss;
  ss << x;
  return ss.str();
}

void check_speed(const std::string& who, double v) {
  if (!std::isfinite(v) || v <= 0 || v > 1)
    throw std::invalid_argument(who + ": speed " + str(v) + "; expected a number in (0, 1]");
}

}  // namespace

SpeedSchedule SpeedSchedule::constant(double speed) {
  return piecewise({SpeedPoint{0.0, speed}}, 0.0, 1.0);
}

SpeedSchedule SpeedSchedule::piecewise(std::vector<SpeedPoint> points, double start,
                                       double stride) {
  const std::string who = "SpeedSchedule::piecewise";
  if (points.empty()) throw std::invalid_argument(who + ": no points; expected at least one");
  if (!std::isfinite(start))
    throw std::invalid_argument(who + ": start " + str(start) + "; expected a finite number");
  if (!std::isfinite(stride) || stride <= 0)
    throw std::invalid_argument(who + ": stride " + str(stride) + "; expected a number > 0");
  SpeedSchedule s;
  s.kind_ = "piecewise";
  s.start_ = start, s.stride_ = stride;
  for (size_t i = 0; i < points.size(); ++i) {
    const SpeedPoint& p = points[i];
    if (!std::isfinite(p.t) || (i > 0 && !(p.t > points[i - 1].t)))
      throw std::invalid_argument(who + ": point " + std::to_string(i) + " at t = " + str(p.t) +
                                  "; expected strictly ascending finite times");
    check_speed(who + ": point " + std::to_string(i), p.speed);
    s.t_.push_back(p.t);
    s.v_.push_back(p.speed);
  }
  return s;
}

SpeedSchedule SpeedSchedule::markov(std::vector<double> speeds,
                                    const std::vector<std::vector<double>>& transition,
                                    int dwell_steps, uint64_t seed, uint64_t stream) {
  const std::string who = "SpeedSchedule::markov";
  if (speeds.empty()) throw std::invalid_argument(who + ": no speeds; expected at least one");
  for (size_t k = 0; k < speeds.size(); ++k)
    check_speed(who + ": state " + std::to_string(k), speeds[k]);
  if (transition.size() != speeds.size())
    throw std::invalid_argument(who + ": " + std::to_string(transition.size()) +
                                " transition rows for " + std::to_string(speeds.size()) +
                                " speeds; expected one row per speed");
  if (dwell_steps < 1)
    throw std::invalid_argument(who + ": dwell_steps " + std::to_string(dwell_steps) +
                                "; expected an integer >= 1");
  SpeedSchedule s;
  s.kind_ = "markov";
  s.speeds_ = std::move(speeds);
  s.dwell_ = dwell_steps;
  s.chain_ = std::make_shared<const MarkovChain>(transition, seed, stream, who);
  return s;
}

double SpeedSchedule::at(int64_t step) const {
  if (step < 0) step = 0;
  if (chain_) return speeds_[chain_->state(static_cast<uint64_t>(step / dwell_))];
  // The point in force at axis position u: the last one with t <= u (the first before it).
  const double u = start_ + static_cast<double>(step) * stride_;
  const size_t i = static_cast<size_t>(std::upper_bound(t_.begin(), t_.end(), u) - t_.begin());
  return v_[i == 0 ? 0 : i - 1];
}

bool SpeedSchedule::always_full_speed() const {
  const std::vector<double>& v = chain_ ? speeds_ : v_;
  return std::all_of(v.begin(), v.end(), [](double x) { return x >= 1.0; });
}

std::vector<SpeedSchedule> make_speed_schedules(const Config& cfg) {
  std::vector<SpeedSchedule> out;
  for (const auto& dc : cfg.datacenters)
    for (int i = 0; i < dc.ranks; ++i) out.push_back(SpeedSchedule::constant(dc.speed.at(i)));
  for (const LoadConfig& l : cfg.loads)
    for (size_t k = 0; k < l.ranks.size(); ++k) {
      const int r = l.ranks[k];
      const uint64_t stream = mix64(SpeedSchedule::kStream ^ static_cast<uint64_t>(r));
      out.at(r) = l.kind == "markov"
                      ? SpeedSchedule::markov(l.markov_speeds, l.markov_transition, l.dwell_steps,
                                              l.seed, stream)
                      : SpeedSchedule::piecewise(l.points.at(k), l.start, l.stride);
    }
  return out;
}

}  // namespace strait
