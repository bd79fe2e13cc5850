// schedule.cpp — LinkSchedule: segment lookup, integration of a transfer across capacity
// changes, and the Markov congestion process (its chain: markov_chain.hpp).
#include "scenario/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "scenario/markov_chain.hpp"

namespace strait {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string str(double x) {
  std::ostringstream ss;
  ss << x;
  return ss.str();
}

void check_link(const std::string& who, double cap, double lat) {
  if (!std::isfinite(cap) || cap <= 0)
    throw std::invalid_argument(who + ": capacity " + str(cap) + " bit/s; expected a number > 0");
  if (!std::isfinite(lat) || lat < 0)
    throw std::invalid_argument(who + ": latency " + str(lat) + " s; expected a number >= 0");
}

}  // namespace

struct LinkSchedule::Markov {
  double base_cap = 0, lat = 0, dwell = 0;
  std::vector<double> factors;
  MarkovChain chain;
  Markov(const std::vector<std::vector<double>>& transition, uint64_t seed)
      : chain(transition, seed, kMarkovStream, "LinkSchedule::markov") {}
};

LinkSchedule LinkSchedule::constant(double capacity_bps, double latency_s) {
  check_link("LinkSchedule::constant", capacity_bps, latency_s);
  LinkSchedule s;
  s.kind_ = "constant";
  s.t_ = {0.0};
  s.cap_ = {capacity_bps};
  s.lat_ = {latency_s};
  return s;
}

LinkSchedule LinkSchedule::piecewise(std::vector<std::array<double, 3>> rows) {
  if (rows.empty())
    throw std::invalid_argument("LinkSchedule::piecewise: no rows; expected at least one");
  LinkSchedule s;
  s.kind_ = "piecewise";
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& [t, cap, lat] = rows[i];
    const std::string who = "LinkSchedule::piecewise: row " + std::to_string(i);
    if (i == 0 && t != 0)
      throw std::invalid_argument(who + ": t = " + str(t) + "; expected 0 in the first row");
    if (i > 0 && !(t > rows[i - 1][0]))
      throw std::invalid_argument(who + ": t = " + str(t) + " after " + str(rows[i - 1][0]) +
                                  "; expected strictly ascending finite times");
    if (!std::isfinite(t))
      throw std::invalid_argument(who + ": t = " + str(t) + "; expected a finite time");
    check_link(who, cap, lat);
    s.t_.push_back(t);
    s.cap_.push_back(cap);
    s.lat_.push_back(lat);
  }
  return s;
}

LinkSchedule LinkSchedule::step(double cap0, double lat0, double at_s, double cap1, double lat1) {
  if (!std::isfinite(at_s) || at_s <= 0)
    throw std::invalid_argument("LinkSchedule::step: at_s = " + str(at_s) +
                                "; expected a number > 0");
  check_link("LinkSchedule::step (before)", cap0, lat0);
  check_link("LinkSchedule::step (after)", cap1, lat1);
  LinkSchedule s = piecewise({{0.0, cap0, lat0}, {at_s, cap1, lat1}});
  s.kind_ = "step";
  return s;
}

LinkSchedule LinkSchedule::markov(double base_cap, double lat, std::vector<double> factors,
                                  std::vector<std::vector<double>> transition, double dwell_s,
                                  uint64_t seed) {
  const std::string who = "LinkSchedule::markov";
  check_link(who, base_cap, lat);
  const size_t K = factors.size();
  if (K == 0 || K > 65535)
    throw std::invalid_argument(who + ": " + std::to_string(K) +
                                " factors; expected 1 to 65535 states");
  for (size_t k = 0; k < K; ++k)
    if (!std::isfinite(factors[k]) || factors[k] <= 0)
      throw std::invalid_argument(who + ": factor " + std::to_string(k) + " is " +
                                  str(factors[k]) + "; expected a number > 0");
  if (!std::isfinite(dwell_s) || dwell_s <= 0)
    throw std::invalid_argument(who + ": dwell_s = " + str(dwell_s) + "; expected a number > 0");
  if (transition.size() != K)
    throw std::invalid_argument(who + ": " + std::to_string(transition.size()) +
                                " transition rows for " + std::to_string(K) +
                                " factors; expected a square matrix, one row per factor");
  auto m = std::make_shared<Markov>(transition, seed);
  m->base_cap = base_cap;
  m->lat = lat;
  m->dwell = dwell_s;
  m->factors = std::move(factors);
  LinkSchedule s;
  s.kind_ = "markov";
  s.markov_ = std::move(m);
  return s;
}

int LinkSchedule::markov_state(uint64_t k) const {
  if (!markov_) throw std::logic_error("LinkSchedule::markov_state on a " + kind_ + " schedule");
  return markov_->chain.state(k);
}

LinkSchedule::Segment LinkSchedule::segment(uint64_t index) const {
  if (markov_) {
    const Markov& m = *markov_;
    return {index, m.base_cap * m.factors[m.chain.state(index)], m.lat,
            static_cast<double>(index + 1) * m.dwell};
  }
  const size_t i = static_cast<size_t>(index);
  return {index, cap_[i], lat_[i], i + 1 < t_.size() ? t_[i + 1] : kInf};
}

LinkSchedule::Segment LinkSchedule::segment_at(double u) const {
  if (!(u > 0)) u = 0;
  if (markov_) return segment(static_cast<uint64_t>(std::floor(u / markov_->dwell)));
  const size_t i = static_cast<size_t>(std::upper_bound(t_.begin(), t_.end(), u) - t_.begin());
  return segment(i == 0 ? 0 : i - 1);
}

LinkState LinkSchedule::at(double t) const {
  const Segment s = segment_at(t / scale_);
  return {s.capacity_bps / scale_, s.latency_s * scale_};
}

double LinkSchedule::transmit_time(double t0, double bytes) const {
  if (!(bytes > 0)) return 0.0;
  // Integrate in scenario time: capacity C over scenario time du carries C·du bits, the same as
  // run capacity C/s over run time s·du.
  const double u0 = t0 / scale_;
  double u = u0;
  double bits = bytes * 8.0;
  Segment s = segment_at(u);
  for (;;) {
    const double avail = s.capacity_bps * std::max(0.0, s.end - u);
    if (bits <= avail) {
      u += bits / s.capacity_bps;
      break;
    }
    bits -= avail;
    u = std::max(u, s.end);
    s = segment(s.index + 1);
  }
  return (u - u0) * scale_;
}

std::vector<LinkSchedule::Change> LinkSchedule::changes(double until_s) const {
  const double until_u = until_s / scale_;
  Segment s = segment_at(0);
  std::vector<Change> out{{0.0, {s.capacity_bps / scale_, s.latency_s * scale_}}};
  while (s.end < until_u) {
    const Segment next = segment(s.index + 1);
    if (next.capacity_bps != s.capacity_bps || next.latency_s != s.latency_s)
      out.push_back({s.end * scale_, {next.capacity_bps / scale_, next.latency_s * scale_}});
    s = next;
  }
  return out;
}

LinkSchedule LinkSchedule::scaled(double time_scale) const {
  if (!std::isfinite(time_scale) || time_scale <= 0)
    throw std::invalid_argument("LinkSchedule::scaled: time_scale " + str(time_scale) +
                                "; expected a number > 0");
  LinkSchedule s = *this;
  s.scale_ *= time_scale;
  return s;
}

LinkSchedule load_schedule_csv(const std::string& path) {
  std::vector<std::array<double, 3>> rows;
  for (const ScheduleRow& r : read_schedule_csv(path, "schedule"))
    rows.push_back({r.t_s, r.capacity_gbps * 1e9, r.latency_ms * 1e-3});
  return LinkSchedule::piecewise(std::move(rows));
}

LinkSchedule make_link_schedule(const LinkConfig& link, double time_scale) {
  const double cap = link.capacity_gbps * 1e9, lat = link.latency_ms * 1e-3;
  if (!link.schedule.empty()) {
    std::vector<std::array<double, 3>> rows;
    for (const ScheduleRow& r : link.schedule)
      rows.push_back({r.t_s, r.capacity_gbps * 1e9, r.latency_ms * 1e-3});
    return LinkSchedule::piecewise(std::move(rows)).scaled(time_scale);
  }
  if (link.has_step)
    return LinkSchedule::step(cap, lat, link.step_at_s, link.step_capacity_gbps * 1e9,
                              link.step_latency_ms * 1e-3)
        .scaled(time_scale);
  if (!link.markov_factors.empty())
    return LinkSchedule::markov(cap, lat, link.markov_factors, link.markov_transition,
                                link.markov_dwell_s, link.markov_seed)
        .scaled(time_scale);
  return LinkSchedule::constant(cap, lat).scaled(time_scale);
}

}  // namespace strait
