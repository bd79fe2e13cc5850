// link_state.hpp — what the controller believes about each directed link, learned online from
// the wire measurements of completed steps (view.history() links: docs/trace.md /links). Per link:
//   capacity   the rate measured at the wire, last value and an EWMA: where a flow from a
//              sender that had all its bytes (its path's first hop) streamed on the link, the
//              backed rate (backed_gbps: every chunk that arrived meanwhile, whichever flow, over
//              that flow's first-to-last arrival — the link kept busy by its sender, so its own
//              rate, exact whatever was relayed beside it) — over the link's last backed
//              interval alone (late_gbps) when that read over twice the step's figure or
//              under half of it: the link changed within the step, and a recovery shows only
//              in the bytes sent after it (the streaming rate likewise, late_stream_gbps);
//              else the streaming rate (stream_gbps:
//              every chunk, of any flow, that arrived inside the union of the streamed flows'
//              first-to-last arrivals, over that union: net/delivery.hpp), read through the
//              pacing test below; before the first measurement, the
//              configured capacity, but no more than the median of the measured links'
//              references — with the median held-up rate of each link not yet measured among
//              them, which is no bound on that link (the prior, named so: prior_gbps);
//   latency    one-way latency from small messages (controller replies and reports): the least
//              of the last 16 steps' samples (a windowed minimum, as TCP BBR's min-RTT filter),
//              since a message that queued behind sync bytes measured the queue too, and the
//              cost model counts a link's bytes at its rate already; the configured latency
//              before the first sample;
//   reference  what the link delivers at its best, as measured: the 90th percentile of its
//              measured capacities (the configured capacity before the first). Not the configured
//              figure: on this project's 2-core machine under load six ranks' transports
//              delivered 0.1-0.3 Gbit/s on mesh6's 4.3 Gbit/s links, so against the configured
//              figure every link sat in the most congested level and a congested link (0.01)
//              looked like the rest (docs/paths.md);
//   state      the congestion level: the last measured capacity over the reference, cut into
//              `states` equal bins of (0, 1] — bin 0 the most congested, the last bin for "at or
//              above the reference". With hysteresis: an exact sample one level from the
//              link's last one, within half a bin of the edge between them, keeps the last
//              level (link_state.cpp, chain_level) — rates that vary ±20% from sync to sync on
//              a clear link under tc crossed the edge at 0.8 of the reference step after step,
//              and the chain learned that levels last two steps. When the reference moves by
//              more than 5% the levels, the chain and the levels' capacities are rebuilt from
//              the kept measurements;
//   chain      transition counts between the states of consecutive exactly measured steps
//              (bounds, below, are not counted — except a relayed-only link's that leaves only
//              the top level, which names it — and one above a gap's first level breaks it),
//              and across a gap of up to 64 unmeasured steps the expected counts of the
//              transitions in it
//              given both ends (link_state.cpp, expect_gap), smoothed by 2·`states`
//              pseudo-counts a row spread as the other links' rows say, over a
//              persistence-heavy base (with no counts anywhere: one a cell and `states` more on
//              the diagonal; link_state.cpp, smoothed),
//              and each state's mean measured capacity;
//   belief     the state distribution now: the last measured state propagated by the chain over
//              the steps since, so an unused link's recovery is predicted rather than assumed. A
//              lower bound (below) is a censored sample: it removes the levels below its own
//              from the belief and teaches the chain nothing (a relayed-only link's that
//              leaves only the top level names it: see_level);
//   pacing     a relay forwards chunks as they arrive, so a flow on a relayed hop streams at the
//              pace of the hops before it, not at its link's: 1→0 carrying 2→1→0 while 2→1 ran at
//              0.005 Gbit/s measured 0.003 on a 0.1 link, became that link's "best", and every
//              relay through it looked hopeless. Given which flows the step's plan sent where
//              (Carriage), a link that carried only relayed flows gives a capacity sample only
//              when it streamed well below the pace its upstream allowed (it was the bottleneck:
//              under kPaced × the sum over its flows of each one's slowest upstream link's rate
//              over that link's flows); otherwise the measurement says only "at least this",
//              taken when it is above what the link is believed to deliver (its last level's
//              mean, or its best so far: a recovery seen through a relay) as a floor on the
//              link's level and a candidate for its reference, not as a level's capacity; when
//              not, it only rules out the levels below its own; ignored on a link never
//              measured before. A link with a backed rate is not paced (its own flow kept it
//              busy) and the upstream links' rates in the test are their backed rates where
//              they have one. A link that carried flows of its own too, but none of them timed
//              (no backed rate), is read the same way as a relayed-only one
//              when one of its relayed flows was let through under kPaced × its part of the
//              link (the believed rate over the link's flows) and the link still carried at
//              least kPaced × that pace for every flow (its streaming lasted as long as that
//              flow trickled); slower, it was a bottleneck itself. A link that carried sync bytes too
//              fast to time (no streaming rate) gives its goodput as such a lower bound.
// Units: Gbit/s and ms of the run (what the wire delivers: with network.time_scale s, the
// configured priors enter as capacity / s and latency · s). Nothing here reads the scenario.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace strait {

struct StepRecord;

// Which flows the step's plan sent over each directed link (index src·n + dst), from the
// plan's flow paths (path_cost.hpp, flow_paths).
struct Carriage {
  std::vector<bool> first;                // some flow starts on the link (its sender had the bytes)
  std::vector<int> flows;                 // how many flows crossed it
  // Per link, per flow relayed onto it: the links before it on that flow's path.
  std::vector<std::vector<std::vector<int>>> upstream;
  Carriage(int n, const std::vector<std::vector<int>>& paths);
};

class LinkStates {
 public:
  // What a shaper's burst can lend a small flow above its link's rate, as a multiple of that
  // rate: a lower bound rules out a level only when it is at least this many times the level's
  // measured mean, and an untimed part's goodput counts for this share of itself (bound_level,
  // level_gbps). Under tc, htb's bucket lends slivers up to 2.6 times a congested link's rate
  // (link_state.cpp). The software shaper's bucket holds one chunk (net/shaper.hpp): a flow's
  // goodput there never exceeds its link's rate, and streaming readings, which can (chunks found
  // waiting count when found), came to at most 1.17 times it in 28771 readings (docs/paths.md,
  // "A recovery read through a late receiver").
  static constexpr double kBurstOverTc = 3.0, kBurstOverSoftware = 1.5;
  struct Params {
    int states = 5;          // congestion levels
    double ewma_alpha = 0.3; // weight of the newest measurement
    double burst_over = kBurstOverTc;  // the shaper's (above); the larger, when not known
    // How far a flow's goodput (bytes over its wire time) can run above its link's rate: under
    // tc htb's burst (as burst_over); under the software shaper not at all (kGoodputOverSoftware:
    // at most 1.00 times the configured rate over 9 runs of markov3 and sparse-ring4). A rate
    // read under the goodput over this misreads the link (link_state.cpp, observe).
    double goodput_over = kBurstOverTc;
  };
  static constexpr double kGoodputOverSoftware = 1.0;
  LinkStates() = default;
  // n DCs; configured capacity (0 = no link) and latency per ordered pair.
  LinkStates(int n, std::vector<double> configured_gbps, std::vector<double> configured_latency_ms,
             Params p);

  // A completed step's link measurements (record.links). Links that carried no multi-chunk flow
  // keep their estimates; their belief drifts by the chain. With `carried` (what the plan in
  // force sent where), relayed-only links' measurements are read as paced (see the top);
  // without it every measurement is the link's.
  void observe(const StepRecord& r, const Carriage* carried = nullptr);

  int n() const { return n_; }
  const Params& params() const { return p_; }
  int states() const { return p_.states; }
  bool has_link(int s, int d) const { return nominal_[s * n_ + d] > 0; }
  bool measured(int s, int d) const { return last_step_[s * n_ + d] >= 0; }
  double nominal_gbps(int s, int d) const { return nominal_[s * n_ + d]; }
  // The capacity the levels are cut from (see the top): measured, or the configured prior.
  double reference_gbps(int s, int d) const { return ref_[s * n_ + d]; }
  double last_gbps(int s, int d) const;     // last measurement (the prior before one)
  double ewma_gbps(int s, int d) const;     // smoothed (the prior before a measurement)
  double latency_ms(int s, int d) const;    // one-way latency: windowed minimum (the prior before a sample)
  bool latency_sampled(int s, int d) const { return lat_seen_[s * n_ + d]; }
  // The most likely state of the belief as of the last sample (exact: its level; after bounds:
  // of the levels at or above theirs, the one the chain made likeliest); the top state before
  // any sample.
  int last_state(int s, int d) const;
  int64_t last_measured_step(int s, int d) const { return last_step_[s * n_ + d]; }
  // The state bin of a capacity on this link.
  int state_of(int s, int d, double gbps) const;
  // Smoothed transition matrix, row-major states × states: P[i·K + j] = P(next j | now i).
  std::vector<double> transition(int s, int d) const;
  // Mean measured capacity in each state; where never seen the bin's midpoint of the reference
  // (the top bin: the reference itself).
  std::vector<double> state_gbps(int s, int d) const;
  // The state distribution at step `at`: the belief as of the last sample — one-hot at an exact
  // one, truncated by each bound since, taken or not — propagated by the chain to `at`.
  std::vector<double> belief(int s, int d, int64_t at) const;
  // The rate that gives the expected transfer time at step `at` (link_state.cpp).
  double expected_gbps(int s, int d, int64_t at) const;
  // What a link never measured is believed to carry: its configured capacity, but no more than
  // the median of the measured links' references (what this world's links deliver at their best,
  // as measured). Where the machine delivers a fraction of the configured figures (mesh6-c: six
  // ranks on two cores, 0.3–1 Gbit/s on links configured at 1–6), an idle link believed at its
  // configuration made every relay over it look several times wider than the ring's own links,
  // and mdp tried them, one after another, at a loss (docs/paths.md, "mesh6-c").
  // The median counts what every link delivers at its best, as far as it was seen: a measured
  // link its reference; a link never measured whose streaming was all held up on the way
  // (/links.held_gbps, under the software shaper) the median of those held-up rates. Without
  // them, when the one link measured was a congested one (us-eu-asia-c in a trial where
  // held-up streaming was no sample and not kept either: docs/paths.md, "Held-up chunks"), the
  // prior of every other link became that link's 0.031 Gbit/s and every relay looked as slow.
  double prior_gbps(int s, int d) const;
  // The median of a link's held-up rates, 0 without one.
  double held_gbps(int s, int d) const { return held_ref_[s * n_ + d]; }
  // The capacity of each level as expected_gbps weighs it: state_gbps, except that the level
  // last measured in holds the last measurement (a bound: at least the level's mean; the goodput
  // of parts too small to time counts 1 / Params::burst_over of itself). Only for a measured
  // link.
  std::vector<double> level_gbps(int s, int d) const;
  // How many transitions between consecutive steps whose level was seen (an exact sample, or a
  // relayed-only link's bound leaving only the top level) the chain has counted (the expected
  // ones across gaps not included).
  int64_t transitions_seen(int s, int d) const { return seen_[s * n_ + d]; }

 private:
  int n_ = 0;
  Params p_;
  std::vector<double> nominal_, latency_prior_;
  std::vector<double> last_, ewma_, lat_;
  std::vector<bool> lat_seen_;
  std::vector<std::deque<double>> lat_window_;  // per link: the last kLatencyWindow steps' latencies
  std::vector<int64_t> last_step_, seen_;  // last sample taken (exact or bound); transitions
  std::vector<bool> last_bound_;            // whether that sample was a bound
  std::vector<bool> last_untimed_;          // and an untimed part's goodput (level_gbps)
  std::vector<int64_t> chain_step_;         // last exact sample (the chain's), and its level
  std::vector<int> chain_state_;
  std::vector<std::vector<double>> bel_;    // per link: the state distribution at bel_step_
  std::vector<int64_t> bel_step_;           // (one-hot at an exact sample; bounds truncate it)
  std::vector<std::vector<double>> counts_;      // per link: K×K transition counts
  std::vector<std::vector<double>> sum_, num_;   // per link and state: sum and count of gbps
  std::vector<double> ref_, binned_ref_;         // per link: reference; the one levels use
  struct Sample {
    int64_t step;
    double gbps;
    bool bound;    // a lower bound (a paced relayed hop's), not the link's rate
    bool untimed;  // that bound is the goodput of parts over before they could be timed
    bool may_name; // a streamed, paced bound of a link that carried only relayed flows: it may
                   // name the top level (take_bound)
  };
  std::vector<std::deque<Sample>> series_;       // per link: its measurements (the last kKept)
  std::vector<std::deque<double>> held_;         // per link: its held-up rates (the last kKept)
  std::vector<double> held_ref_;                 // and their median (0: none)

  struct Gap {
    int from, to;  // levels at both ends
    int64_t g;     // steps between them
  };
  std::vector<std::vector<double>> direct_;      // per link: counts of consecutive measurements
  std::vector<std::vector<Gap>> gaps_;           // per link: gaps of up to kMaxGap steps
  std::vector<size_t> fitted_;                   // per link: gaps when last refitted

  static constexpr size_t kKept = 4096;
  static constexpr size_t kLatencyWindow = 16;  // sampled steps the latency is the least of
  int level(double gbps, double ref) const;
  // The level an exact sample of link l takes in the chain: level(), with hysteresis against
  // the last exact level (the top).
  int chain_level(int l, double gbps) const;
  // An exact sample into the chain, the levels' means and the belief; a bound into the belief
  // only (truncate). Replayed by rebin from series_, which keeps the bounds that were taken
  // (a bound not taken truncates the belief once and is not replayed).
  void add(int l, int64_t step, double gbps, bool bound, bool untimed, bool may_name);
  // A bound into the belief (truncate), or, `may_name` and leaving only the top level, into the
  // chain as that level (see_level).
  void take_bound(int l, int64_t step, double gbps, bool may_name);
  // Link l seen in level k at `step` (an exact sample, or a relayed-only link's bound leaving
  // only the top level):
  // the chain counts the transition or gap from the last level seen; the belief is k.
  void see_level(int l, int64_t step, int k);
  // Link l's chain from its counts, under a prior from the other links' (link_state.cpp).
  std::vector<double> smoothed(const std::vector<double>& counts, int l) const;
  void expect_gap(const std::vector<double>& P, const Gap& gap, std::vector<double>& counts) const;
  void refit(int l);                             // every gap counted again (EM)
  void truncate(int l, int64_t step, int k);     // a bound in level k at `step`: belief ≥ k
  // The least level a lower bound of `gbps` leaves link l: its own, or above it while a level's
  // measured mean is below gbps / Params::burst_over (link_state.cpp).
  int bound_level(int l, double gbps) const;
  void rebin(int l);                             // rebuild those from series_[l]
};

}  // namespace strait
