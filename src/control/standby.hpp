// standby.hpp — adaptive routes for the ring's hops, as a path selector hands them over: the
// rate each route's part is expected at (Route::gbps) and, for a hop on one path, a standby route
// of share 0 (net/transport.hpp, adapted_fractions). With them the hop's sender moves bytes off
// a route whose first link it sees delivering under half that rate, from the next transfer of
// the same sync on — a reaction inside a sync, where a decision takes effect control.lag steps
// after what it was made on (docs/paths.md, "Reaction inside a sync").
#pragma once
#include <functional>
#include <vector>

#include "control/beliefs.hpp"
#include "control/path_cost.hpp"
#include "control/policy.hpp"

namespace strait {

// Routes as decided, without what arm_standbys added: standby routes (share 0) dropped, a pair
// left with one route back on its path alone, rates cleared. The path selectors compare their
// choices with the plan in force through this.
void strip_standbys(Routes& routes, int num_dcs);

// For each ring hop (`order` as SyncPlan::ring; `bytes` the gradient; pairs the plan sends
// nothing on are left alone), on the figures `b` the decision was made on: every route gets the
// rate its part is expected at — the least over its links of the link's rate shared among the
// flows the decision puts on it — on a grid of quarter-octaves (a record is not rewritten for
// every small drift of an estimate); a hop on one path gets as standby the candidate
// (`candidates`) that shares no link with that path and is expected fastest (its links shared
// with one more flow), unless its header would slow the ring: every ring step the standby's
// receiver and relays wait for it, and a relay forwards it only in its own ring step, so the
// ring's predicted time (ring_seconds, the standby as a part of no bytes) must not grow by more
// than kStandbyMargin. On the measured mesh6 matrix a standby through a DC two positions on cost
// ~100 ms a step of 680 where its latency alone looked in time.
void arm_standbys(PathDecision& d, const LinkBeliefs& b, const std::vector<int>& order,
                  double bytes, const std::vector<PairTraffic>& traffic,
                  const std::function<std::vector<std::vector<int>>(int, int)>& candidates);
constexpr double kStandbyMargin = 0.002;

// The quarter-octave grid point nearest x (> 0).
double quantised_gbps(double x);

}  // namespace strait
