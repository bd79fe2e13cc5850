// blp.hpp — our reading of BLP (PGCS, IEEE TNSE 2025): the linear program that finds the
// fastest owner plan for a capacitated DC graph, and the lower bounds it is compared with.
// Pure: no MPI, no view; input is the graph the controller believes (capacities, latencies),
// output an owner plan (sync/plan.hpp) with its times. docs/sync.md states the LP exactly.
//
// The LP, in one paragraph: the gradient (S bytes) is cut into one slice per DC, α_j for owner
// j (Σ α_j = 1). Every DC s sends its part of slice j to j (reduce) and every owner j sends its
// reduced slice to every d (broadcast), each flow split over the allowed paths from its source
// to its destination — direct, or through one relay DC that only forwards (no reduction on the
// way: the owners strategy cannot reduce at relays). A link's load is the bytes of all flows
// that cross it; load ≤ capacity × time. Two readings of "time":
//   joint   one T for both phases (a pipelined executor that broadcasts a chunk as soon as it
//           is reduced could reach it) — the BLP optimum we report as a bound;
//   phased  T_reduce + T_broadcast, each phase's loads within its own interval: what
//           src/sync/owners.cpp executes (reduce, then broadcast, one after the other).
// Both minimise bandwidth time only; latency enters as a cap on the path latencies offered
// (max_path_latency_ms), and the blp planner weighs the two by trying several caps and
// predicting each plan's time with latency (planner_blp.cpp, sync_cost.hpp).
#pragma once
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "sync/plan.hpp"

namespace strait {

enum class BlpTime { joint, phased };

struct BlpGraph {
  int n = 0;                        // datacenters
  std::vector<double> gbps;         // [src·n + dst] capacity in Gbit/s; 0 = no link
  std::vector<double> latency_ms;   // [src·n + dst] one-way latency
  double bytes = 0;                 // S: the gradient, in bytes
};

// One solve's answer. Times are seconds at the graph's figures (multiply by network.time_scale
// for run time).
struct BlpSolution {
  bool feasible = false;
  std::string why;                                // when not
  std::vector<double> owner_fraction;             // α_j
  std::vector<std::vector<Route>> reduce, broadcast;  // as in SyncPlan, fractions of each flow
  double bandwidth_s = 0;   // the LP optimum: T (joint) or T_reduce + T_broadcast (phased)
  double reduce_s = 0, broadcast_s = 0;  // phased: each phase's part; joint: both = T
  double latency_s = 0;     // longest used reduce path + longest used broadcast path
  double max_path_latency_ms = std::numeric_limits<double>::infinity();  // the cap it ran with
};

// The LP of one graph, built once and solved for several latency caps (a cap only removes
// paths, so every solve starts from the last basis: a few pivots, not a fresh solve).
class BlpModel {
 public:
  // Throws std::invalid_argument for a graph no plan can serve: sizes that do not match n, a
  // negative figure, S <= 0, or a DC without an outgoing or an incoming link.
  // max_relays > 0 offers each pair only that many relays: the widest (docs/sync.md).
  BlpModel(const BlpGraph& g, BlpTime time, int max_relays = 0);
  ~BlpModel();
  BlpModel(const BlpModel&) = delete;
  BlpModel& operator=(const BlpModel&) = delete;

  // Optimum over the paths whose latency (sum over hops) is at most `max_path_latency_ms`.
  // Among plans within 1e-7 of the optimum it takes the one with the fewest byte-hops (no
  // gratuitous relays), then the lowest latency-weighted bytes.
  BlpSolution solve(double max_path_latency_ms = std::numeric_limits<double>::infinity());

  // Distinct latencies of the offered paths, ascending: the caps worth trying.
  const std::vector<double>& path_latencies_ms() const { return latencies_; }
  // The smallest cap with a feasible plan: some DC reaches, and is reached by, every other DC
  // over paths within it (it can then own everything); without such a DC no α can be served.
  double min_feasible_cap_ms() const;
  int rows() const;
  int cols() const;
  int nonzeros() const;
  int solves() const { return solves_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> m_;
  std::vector<double> latencies_;
  int solves_ = 0;
};

// The bandwidth lower bounds for any allreduce of S bytes over the graph (seconds):
//   cut      max over non-empty proper DC subsets A of S / c⁺(A), c⁺(A) = Σ capacity of the
//            links leaving A: every DC outside A needs each element's sum, which depends on
//            A's values, so at least S bytes leave A. Exact for n <= 20 (2^n subsets), else 0.
//   traffic  2(N−1)S / Σ c: an owner plan moves (N−1)·S in each phase (each DC sends
//            (1 − α_s)·S to the owners, each owner sends α_j·S to N−1 DCs), relays only add.
//   ring     2(N−1)S / (N·B), B = a DC's outgoing capacity, for a homogeneous graph only
//            (every DC the same outgoing capacity; 0 otherwise): the classic allreduce bound,
//            equal to the traffic bound there.
struct SyncBounds {
  double cut_s = 0;
  std::vector<int> cut_set;  // the A that attains it
  double traffic_s = 0;
  double ring_s = 0;
};
SyncBounds sync_bounds(const BlpGraph& g);

// Per-link load (bytes) of an owner plan's flows for S bytes: [reduce phase, broadcast phase],
// each n·n. For checks and predictions.
std::vector<std::vector<double>> owner_plan_loads(const SyncPlan& p, int n, double bytes);

}  // namespace strait
