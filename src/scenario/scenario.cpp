// scenario.cpp — builds the scenario from the config (see scenario.hpp).
#include "scenario/scenario.hpp"

#include <algorithm>

#include "core/check.hpp"

namespace strait {

Scenario::Scenario(const Config& cfg)
    : n_(static_cast<int>(cfg.datacenters.size())),
      time_scale_(cfg.network.time_scale),
      seed_(cfg.train.seed) {
  speed_ = make_speed_schedules(cfg);
  links_.resize(static_cast<size_t>(n_) * n_);
  jitter_s_.assign(static_cast<size_t>(n_) * n_, 0.0);
  auto index = [&](const std::string& name) {
    for (int d = 0; d < n_; ++d)
      if (cfg.datacenters[d].name == name) return d;
    STRAIT_FATAL("link names unknown datacenter " + name);
  };
  for (const auto& l : cfg.links) {
    const int s = index(l.from), d = index(l.to);
    links_[s * n_ + d] = std::make_shared<const LinkSchedule>(make_link_schedule(l, 1.0));
    jitter_s_[s * n_ + d] = l.jitter_ms * 1e-3;
  }
}

double Scenario::rank_speed(int rank, int64_t step) const { return speed_.at(rank).at(step); }

bool Scenario::loaded() const {
  return std::any_of(speed_.begin(), speed_.end(),
                     [](const SpeedSchedule& s) { return !s.always_full_speed(); });
}

uint64_t Scenario::jitter_seed(int src, int dst) const {
  return seed_ ^ (0x11ull * static_cast<uint64_t>(src * n_ + dst + 1));
}

}  // namespace strait
