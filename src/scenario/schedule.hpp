// schedule.hpp — the capacity and one-way latency of one directed link over time.
// A LinkSchedule is a pure function of time: constant, piecewise constant (rows, or a CSV), one
// step change, or a Markov-modulated congestion process whose state sequence is drawn from the
// counter-based RNG (src/core/rng.hpp), so every rank that builds the same schedule sees the
// same capacities. The shaper (shaper.hpp) integrates it to time transfers; nothing here sleeps
// or touches MPI.
//
// Times. Schedules are defined in scenario time (the world being emulated: CSV time_s,
// step_at_s, markov dwell). `scaled(s)` stretches the whole world by s: run capacity is
// capacity / s, run latency is latency · s, and a change at scenario time T happens at run time
// s·T (a Markov state lasts s·dwell). That keeps the emulation consistent: a small CPU model
// that computes s times slower than the large GPU model it stands for sees the same
// compute/communication ratio *and* the same number of steps between two link changes.
// at() and transmit_time() take and return run time (seconds since the run started); the
// scenario figures are the run figures with the scale undone (capacity · s, latency / s).
//
// Units: capacity in bit/s, latency in seconds, transfer sizes in bytes.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace strait {

struct LinkState {
  double capacity_bps;  // run capacity (after time scaling), bit/s
  double latency_s;     // run one-way latency (after time scaling), seconds
};

class LinkSchedule {
 public:
  // capacity > 0, latency >= 0 (std::invalid_argument otherwise, as for every factory).
  static LinkSchedule constant(double capacity_bps, double latency_s);
  // Piecewise constant from rows (t_s, capacity_bps, latency_s): t strictly ascending, first
  // t == 0; row i holds from its t until the next row's t, the last one forever.
  static LinkSchedule piecewise(std::vector<std::array<double, 3>> rows);
  // (cap0, lat0) before at_s > 0, (cap1, lat1) from at_s on.
  static LinkSchedule step(double cap0, double lat0, double at_s, double cap1, double lat1);
  // Markov-modulated congestion: in state k the capacity is base_cap · factors[k] (factors > 0)
  // and the latency is `lat`. The chain starts in state 0; at the end of every dwell_s interval
  // it moves by the row-stochastic `transition` matrix (square, size == factors, rows summing
  // to 1 within 1e-6), using draw k of uniform01(seed, kMarkovStream, k) for the move out of
  // interval k. The state sequence is computed once and cached (shared by copies).
  static LinkSchedule markov(double base_cap, double lat, std::vector<double> factors,
                             std::vector<std::vector<double>> transition, double dwell_s,
                             uint64_t seed);

  // Capacity and latency in force at run time t (t < 0 is read as 0).
  LinkState at(double t) const;
  // Run seconds to push `bytes` through the link starting at run time t0, integrating across
  // capacity changes (the latency is not included).
  double transmit_time(double t0, double bytes) const;
  // The same schedule with the world stretched by time_scale (> 0); scales compose.
  LinkSchedule scaled(double time_scale) const;
  // Every moment in run time [0, until_s) at which the capacity or latency takes a new value,
  // with the new values (run figures), the first at t = 0; what an external shaper (tc under
  // scripts/netns-run, `strait schedule`) must apply, and when, to enforce this schedule.
  struct Change {
    double t_s;
    LinkState state;
  };
  std::vector<Change> changes(double until_s) const;

  double time_scale() const { return scale_; }
  const std::string& kind() const { return kind_; }  // constant | piecewise | step | markov
  // Markov only: the congestion state in interval k (scenario interval [k·dwell, (k+1)·dwell)).
  int markov_state(uint64_t k) const;

  static constexpr uint64_t kMarkovStream = 0x6d61726b6f76ull;  // "markov"

 private:
  struct Markov;  // parameters and the cached state sequence
  LinkSchedule() = default;
  // The constant segment holding scenario time u: its index (piecewise row or Markov interval),
  // capacity, latency and end (scenario time; +inf for the last piecewise row).
  struct Segment {
    uint64_t index;
    double capacity_bps, latency_s, end;
  };
  Segment segment_at(double u) const;
  Segment segment(uint64_t index) const;

  std::string kind_;
  double scale_ = 1.0;
  std::vector<double> t_, cap_, lat_;  // piecewise rows (constant and step are piecewise)
  std::shared_ptr<const Markov> markov_;
};

// Reads a CSV with the header time_s,capacity_gbps,latency_ms (read_schedule_csv in
// config/config.hpp checks it) into a piecewise schedule in scenario time. Throws ConfigError
// "<csv>:<line>: schedule: <what>; expected <what>".
LinkSchedule load_schedule_csv(const std::string& path);

// The schedule a [[link]] asks for (constant, its CSV rows, its step or its Markov process),
// scaled by network.time_scale.
LinkSchedule make_link_schedule(const LinkConfig& link, double time_scale);

}  // namespace strait
