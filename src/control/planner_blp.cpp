// planner_blp.cpp — sync planner "blp": the owner plan of the BLP linear program (blp.hpp) on
// the links the controller believes (beliefs.hpp), executed by the "owners" strategy.
//
// The LP minimises bandwidth time only, yet on a WAN every phase also pays its longest path's
// latency (docs/sync.md, "Latency"). So the planner offers the LP only paths up to a latency
// cap λ and keeps the plan with the lowest predicted time (bandwidth + latency, sync_cost.hpp):
// λ runs up the distinct path latencies from the smallest feasible one (each at least
// kCapStep above the last one tried), each solve starting from the last basis, and stops once
// a longer path cannot pay for itself (λ plus the shortest path, or the bandwidth lower bound,
// already exceeds the best plan); the plan without a cap is tried last.
// The plan is recomputed only when a believed capacity or latency moves by more than
// kReplanChange (below), and the new plan replaces the one in force only when it is predicted
// faster on the figures now by kSwitchGain; otherwise the plan in force stands (no new record). The LP runs on
// rank 0 between steps, like every policy, so it is off every step's critical path.
// The path selector's paths are not used: the LP routes its flows itself (direct or one relay).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

#include "control/beliefs.hpp"
#include "control/blp.hpp"
#include "control/policies.hpp"
#include "control/sync_cost.hpp"
#include "core/check.hpp"

namespace strait {
namespace {

// Replan when a believed capacity or latency moves by more than 20%, or a latency by more than
// 1 ms of run time (a latency sample is known to within the receiver's 1 ms arrival tolerance,
// net/transport.hpp): measured figures move by a few percent from step to step, and an LP
// re-solved on that noise gave 10 owner plans in 40 steps on the 3-DC test world at a 5%
// threshold, for no gain.
constexpr double kReplanChange = 0.2;
constexpr double kReplanLatencyRunMs = 1.0;
constexpr double kSwitchGain = 0.05;
constexpr double kCapStep = 0.05;
// Relays offered per pair: the widest 6. On three random 16-DC meshes (test_blp's generator,
// seeds 7, 9 and 42) the optimum moved by at most 0.04% against all 14, at 2-4 times less
// solve time; graphs of up to 8 DCs have at most 6 relays per pair anyway.
constexpr int kRelays = 6;

class Blp final : public SyncPlanner {
 public:
  std::string name() const override { return "blp"; }
  SyncDecision plan(const ControllerView& v, const PathDecision&) override {
    LinkBeliefs b = believed_links(v);
    const World& w = v.world();
    if (made_on_ && close_beliefs(b, *made_on_, kReplanChange, kReplanLatencyRunMs / w.time_scale))
      return last_;
    SyncDecision next = decide(w, b);
    // A new plan only when it is predicted faster, on the figures now, than the plan in force
    // by kSwitchGain: taking a new owner plan costs a step about 40 ms on mesh6-c (the steps
    // a new plan took effect ran 256 ms against 216), and on measured figures the LP's optimum
    // moved by < 1% (178.7 → 177.4 ms) at each of 7 replans in 30 steps.
    if (made_on_ && !last_.plan.owner_fraction.empty()) {
      const double in_force_s = owner_plan_seconds(b, last_.plan, w.gradient_bytes);
      const double next_s = next.plan.predicted_ms / (w.time_scale * 1e3);
      if (!(next_s < in_force_s * (1 - kSwitchGain))) {
        made_on_ = std::move(b);
        return last_;
      }
    }
    last_ = std::move(next);
    made_on_ = std::move(b);
    return last_;
  }

 private:
  std::optional<LinkBeliefs> made_on_;
  SyncDecision last_;

  static SyncDecision decide(const World& w, const LinkBeliefs& b) {
    const auto t0 = std::chrono::steady_clock::now();
    const int n = w.num_dcs;
    SyncDecision d;
    d.plan.strategy = "owners";
    if (n == 1) {  // nothing to synchronise (the trainer skips the sync of a one-DC world)
      d.plan.owner_fraction = {1.0};
      d.plan.reduce.assign(1, {}), d.plan.broadcast.assign(1, {});
      d.detail = "{\"on\":\"" + b.source + "\",\"note\":\"one datacenter\"}";
      return d;
    }
    const BlpGraph g{n, b.gbps, b.latency_ms, w.gradient_bytes};
    std::optional<BlpModel> phased;
    try {
      phased.emplace(g, BlpTime::phased, kRelays);
    } catch (const std::invalid_argument& e) {
      STRAIT_FATAL(std::string("sync planner blp on the ") + b.source + ": " + e.what());
    }
    // Latency caps from the smallest feasible one up, each solve starting from the last basis
    // (a larger cap only frees columns), then no cap at all: the bandwidth optimum.
    const SyncBounds bounds = sync_bounds(g);
    const double floor_s = std::max(bounds.cut_s, bounds.traffic_s);  // no plan is faster
    const std::vector<double>& lat = phased->path_latencies_ms();
    std::optional<BlpSolution> best;
    double best_s = std::numeric_limits<double>::infinity(), last = 0;
    for (double cap : lat) {
      if (cap < phased->min_feasible_cap_ms() || (last > 0 && cap < last * (1 + kCapStep)))
        continue;
      // A plan that needs a path of latency `cap` pays it in one phase and at least the
      // shortest path in the other, and no plan beats the bandwidth bounds.
      if (std::max(floor_s, (cap + lat.front()) / 1e3) >= best_s) break;
      last = cap;
      BlpSolution s = phased->solve(cap);
      if (!s.feasible) continue;
      const double t = predicted(b, s, g.bytes);
      if (t < best_s) best = std::move(s), best_s = t;
    }
    const BlpSolution open = phased->solve();
    STRAIT_CHECK(open.feasible, "sync planner blp: " + open.why);
    const double open_s = predicted(b, open, g.bytes);
    if (!best || open_s < best_s) best = open, best_s = open_s;
    const int phased_solves = phased->solves();
    // The BLP optimum proper (both phases in one interval: a pipelined executor's bound).
    BlpModel joint_model(g, BlpTime::joint, kRelays);
    const BlpSolution joint = joint_model.solve();
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - t0;
    const double ms = took.count();

    d.plan.owner_fraction = best->owner_fraction;
    d.plan.reduce = best->reduce;
    d.plan.broadcast = best->broadcast;
    const double run = w.time_scale * 1e3;  // scenario seconds → run ms
    d.plan.predicted_ms = best_s * run;
    size_t routes[2] = {0, 0}, relayed = 0;
    for (int ph = 0; ph < 2; ++ph)
      for (const auto& rs : ph == 0 ? best->reduce : best->broadcast)
        for (const auto& r : rs) routes[ph] += 1, relayed += r.path.size() > 2;
    STRAIT_CHECK(routes[0] <= static_cast<size_t>(Transport::kMaxTransfers) &&
                     routes[1] <= static_cast<size_t>(Transport::kMaxTransfers),
                 "sync planner blp: a phase with more routes than the transport takes at once");

    std::ostringstream js;
    js.precision(6);
    js << "{\"on\":\"" << b.source << "\",\"lp\":{\"time\":\"phased\",\"rows\":" << phased->rows()
       << ",\"cols\":" << phased->cols() << ",\"nonzeros\":" << phased->nonzeros()
       << ",\"solves\":" << phased_solves << ",\"joint_rows\":" << joint_model.rows()
       << ",\"joint_cols\":" << joint_model.cols() << ",\"ms\":" << ms << "}"
       << ",\"lp_optimum_ms\":" << open.bandwidth_s * run
       << ",\"joint_optimum_ms\":" << joint.bandwidth_s * run
       << ",\"cut_bound_ms\":" << bounds.cut_s * run << ",\"cut\":[";
    for (size_t i = 0; i < bounds.cut_set.size(); ++i)
      js << (i ? "," : "") << "\"" << w.dc_names[bounds.cut_set[i]] << "\"";
    js << "],\"traffic_bound_ms\":" << bounds.traffic_s * run;
    if (bounds.ring_s > 0) js << ",\"ring_bound_ms\":" << bounds.ring_s * run;
    js << ",\"plan\":{\"max_path_latency_ms\":";
    if (std::isfinite(best->max_path_latency_ms)) js << best->max_path_latency_ms * w.time_scale;
    else js << "null";
    js
       << ",\"bandwidth_ms\":" << best->bandwidth_s * run << ",\"latency_ms\":" << best->latency_s * run
       << ",\"predicted_ms\":" << d.plan.predicted_ms << ",\"routes\":" << routes[0] + routes[1]
       << ",\"relayed\":" << relayed << ",\"owners\":{";
    bool first = true;
    for (int j = 0; j < n; ++j)
      if (best->owner_fraction[j] > 0)
        js << (first ? "" : ",") << "\"" << w.dc_names[j] << "\":" << best->owner_fraction[j],
            first = false;
    js << "}}}";
    d.detail = js.str();
    return d;
  }

  // The sync_cost model of the plan (the LP's own times plus the phases' longest paths).
  static double predicted(const LinkBeliefs& b, const BlpSolution& s, double bytes) {
    SyncPlan p;
    p.owner_fraction = s.owner_fraction, p.reduce = s.reduce, p.broadcast = s.broadcast;
    return owner_plan_seconds(b, p, bytes);
  }
};
}  // namespace

std::unique_ptr<SyncPlanner> make_blp_planner(const Config&) { return std::make_unique<Blp>(); }

}  // namespace strait
