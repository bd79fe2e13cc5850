// load.hpp — the relative speed of one rank over the steps: what the world does to its device
// (background load, a straggler, a replayed trace). A SpeedSchedule is a pure function of the
// step, not of wall time, so every rank, every rerun and every policy of a comparison sees the
// same speed at the same step (docs/balance.md, "Load scenarios"):
//   piecewise  points (t, speed) along a source axis (steps, seconds or trace iterations),
//              read at t = start + step·stride (the first point holds before it, the last
//              after it); constant, step change, CSV and trace replay are all of this kind;
//   markov     a chain over speeds that moves every dwell_steps steps (markov_chain.hpp).
// The trainer emulates a speed v < 1 by idling (1/v − 1) × the rank's own compute, inside the
// compute (src/train/pacer.hpp), and the oracle policies read it through view.clairvoyant().
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "scenario/markov_chain.hpp"

namespace strait {

class SpeedSchedule {
 public:
  // Speeds in (0, 1]; points with strictly ascending finite t, at least one; stride > 0.
  // std::invalid_argument otherwise (the config loader reports these with file and line first).
  static SpeedSchedule constant(double speed);
  static SpeedSchedule piecewise(std::vector<SpeedPoint> points, double start, double stride);
  // The chain starts in state 0 (speeds[0]) and moves every dwell_steps >= 1 steps by
  // `transition` (square, one row per speed), drawing from the stream of (seed, stream).
  static SpeedSchedule markov(std::vector<double> speeds,
                              const std::vector<std::vector<double>>& transition, int dwell_steps,
                              uint64_t seed, uint64_t stream);

  double at(int64_t step) const;                     // steps < 0 read as step 0
  const std::string& kind() const { return kind_; }  // "piecewise" | "markov"
  bool always_full_speed() const;                    // never below 1 (nothing to emulate)

  static constexpr uint64_t kStream = 0x7370656564ull;  // "speed": the Markov loads' stream

 private:
  SpeedSchedule() = default;
  std::string kind_;
  std::vector<double> t_, v_;  // piecewise points
  double start_ = 0, stride_ = 1;
  std::vector<double> speeds_;              // markov
  int dwell_ = 1;
  std::shared_ptr<const MarkovChain> chain_;
};

// The schedule of every world rank: its [[load]] entry, else its [[datacenter]] speed. A Markov
// entry gives each of its ranks a chain of its own (stream kStream mixed with the world rank),
// so the ranks of one entry are loaded independently, and identically on every rerun.
std::vector<SpeedSchedule> make_speed_schedules(const Config& cfg);

}  // namespace strait
