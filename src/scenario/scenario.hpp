// scenario.hpp — what the world does to a run, as pure functions of the config and seed: each
// rank's relative speed over the steps and each directed link's capacity and latency over time
// (schedule.hpp). The trainer emulates the ranks' speeds, the transport enforces the links; the
// controller's policies never read it directly — only oracle policies do, through the clearly
// marked clairvoyant part of their view (src/control/view.hpp). Every rank builds the same one.
//
// Times here are scenario times (before network.time_scale); link() hands out the unscaled
// schedule, and LinkSchedule::scaled(time_scale()) is what the software shaper enforces.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "config/config.hpp"
#include "scenario/load.hpp"
#include "scenario/schedule.hpp"

namespace strait {

class Scenario {
 public:
  explicit Scenario(const Config& cfg);

  int num_dcs() const { return n_; }
  int world_size() const { return static_cast<int>(speed_.size()); }
  double time_scale() const { return time_scale_; }

  // Relative speed of a world rank during `step`, in (0, 1]: the rank is emulated as that much
  // slower than its device by idling (1/speed − 1) × its own measured compute (load.hpp).
  double rank_speed(int rank, int64_t step) const;
  // Whether any rank is ever slower than its device (there is load to emulate).
  bool loaded() const;

  // The directed link src → dst in scenario time, or null when the graph has no such link.
  const LinkSchedule* link(int src, int dst) const { return links_[src * n_ + dst].get(); }
  // The link's configured jitter (scenario seconds) and the seed of its jitter draws.
  double jitter_s(int src, int dst) const { return jitter_s_[src * n_ + dst]; }
  uint64_t jitter_seed(int src, int dst) const;

 private:
  int n_ = 1;
  double time_scale_ = 1;
  uint64_t seed_ = 0;
  std::vector<SpeedSchedule> speed_;                  // per world rank
  std::vector<std::shared_ptr<const LinkSchedule>> links_;  // per ordered pair
  std::vector<double> jitter_s_;
};

}  // namespace strait
