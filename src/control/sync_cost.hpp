// sync_cost.hpp — what a sync plan is predicted to cost on the links the controller believes
// (beliefs.hpp): the planners' common model (docs/sync.md, "Predicted time"). Flows of one
// communication step run concurrently and share each link's capacity; chunks are pipelined
// along a path, so a relay adds its latency, not another transmission. A flow ends after its
// path's latency plus the time its most loaded link needs for all the bytes crossing it (fair
// sharing keeps a link busy until its last flow is through); a step ends with its last flow,
// and steps that depend on each other add up. Seconds in scenario units (multiply by
// network.time_scale for run time).
#pragma once
#include <utility>
#include <vector>

#include "control/beliefs.hpp"
#include "sync/plan.hpp"

namespace strait {

// Flows (path, bytes) of one step.
using Flows = std::vector<std::pair<const std::vector<int>*, double>>;
double step_seconds(const LinkBeliefs& b, const Flows& flows);

// An owner plan (strategy "owners"): the reduce step, then the broadcast step.
double owner_plan_seconds(const LinkBeliefs& b, const SyncPlan& p, double bytes);

// The hierarchical ring over `order` (empty: 0, 1, ..., n−1), each hop on its path in `paths`:
// 2(N−1) steps, each moving about S/N bytes on every hop at once.
double ring_seconds(const LinkBeliefs& b, const std::vector<int>& order, const Paths& paths,
                    double bytes);

}  // namespace strait
