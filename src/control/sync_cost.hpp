// sync_cost.hpp — what a sync plan is predicted to cost on the links the controller believes
// (beliefs.hpp): the planners' common model (docs/sync.md, "Predicted time"). Flows of one
// communication step run concurrently and share each link's capacity; chunks are pipelined
// along a path, so a relay adds its latency, not another transmission. A flow ends after its
// path's latency plus the time its most loaded link needs for all the bytes crossing it (fair
// sharing keeps a link busy until its last flow is through); a step ends with its last flow.
// A sender is done with a flow when its bytes have left (the transport's courier), so a DC goes
// on to the next step of a sync when its own bytes have left and its inputs have arrived.
// Seconds in scenario units (multiply by network.time_scale for run time).
#pragma once
#include <functional>
#include <utility>
#include <vector>

#include "control/beliefs.hpp"
#include "sync/plan.hpp"

namespace strait {

// Flows (path, bytes) of one step.
using Flows = std::vector<std::pair<const std::vector<int>*, double>>;
double step_seconds(const LinkBeliefs& b, const Flows& flows);

// An owner plan (strategy "owners"): each owner broadcasts when its parts have arrived and its
// own reduce bytes have left (the transport's courier), not when the whole reduce step is over.
double owner_plan_seconds(const LinkBeliefs& b, const SyncPlan& p, double bytes);

// The hierarchical ring over `order` (empty: 0, 1, ..., n−1), each hop on its path in `paths`
// or, where `routes` has an entry for the hop's pair, split over those routes (each part its
// fraction of the hop's bytes; the hop has arrived when its last part has):
// 2(N−1) steps moving about S/N bytes on every hop; each position starts its next step when its
// own bytes have left and its predecessor's have arrived (on a homogeneous ring: 2(N−1) × one
// hop; with one slow hop, far less than 2(N−1) × the slow hop), and a relay when what it relays
// has reached it (it forwards within its own step); a relayed part arrives no sooner than its
// relay's start of the step plus the rest of its path (the relay posts the step's relayed
// chunks in its own exchange of that step).
double ring_seconds(const LinkBeliefs& b, const std::vector<int>& order, const Paths& paths,
                    double bytes, const Routes* routes = nullptr);

// The ring's hops chosen jointly: coordinate descent from (paths, routes), each hop in turn set
// to the one path among candidates(src, dst) that lowers ring_seconds on `b` most (a split hop
// that moves becomes a single path), until a pass moves no hop (at most `passes`). A relay that
// shortens one hop can lengthen the chain of dependencies, so per-pair choices are not enough
// (path_oracle.cpp, path_mdp.cpp). Pairs off the ring keep their paths and routes.
using HopCandidates = std::function<std::vector<std::vector<int>>(int src, int dst)>;
struct RingChoice {
  double seconds = 0;
  Paths paths;
  Routes routes;  // empty, or one entry per ordered pair
};
RingChoice descend_ring(const LinkBeliefs& b, const std::vector<int>& order, Paths paths,
                        Routes routes, double bytes, const HopCandidates& candidates,
                        int passes = 4);

// The ring's hops refined jointly from two starts, the better end kept: (paths, routes) as
// given, and the same with every hop of `splittable` (pair → its two link-disjoint paths) that
// is not split yet split over them, its shares first set on the ring; descend_ring from each,
// then refine_ring_shares. Why the second start: the descent moves one hop at a time, and on a
// ring whose time is its slowest hop's chain no single hop's split shortens it while the others
// are unsplit (a clear ring of 3 ran with one or two of its three hops split).
using SplitCandidates = std::vector<std::pair<int, std::pair<std::vector<int>, std::vector<int>>>>;
RingChoice refine_ring(const LinkBeliefs& b, const std::vector<int>& order, const Paths& paths,
                       const Routes& routes, double bytes, const HopCandidates& candidates,
                       const SplitCandidates& splittable);

// The shares of the ring's split hops (two routes) refined on the whole ring: a relayed part
// crosses links that other hops' parts may cross too, which the pair alone does not see. Each
// share in turn on a grid of 1/50, keeping what lowers ring_seconds, until a pass moves none
// (at most `passes`); a hop's path becomes its larger part's. `c.seconds` must be the ring's
// time for `c` on `b`.
void refine_ring_shares(const LinkBeliefs& b, const std::vector<int>& order, RingChoice& c,
                        double bytes, int passes = 4);

// A hop's split kept for what it teaches (mdp: a part on a link whose level is not known now,
// path_mdp.cpp): `routes` for the hop `pair` (src·n + dst), and how much slower a sync of the
// ring may be to keep it, in seconds (what the measurement saves the decisions after it).
struct Probe {
  int pair = 0;
  std::vector<Route> routes;
  double worth_s = 0;
};
// Each probe of two parts, both carrying bytes, whose hop is not so split in `c` is put back with
// its shares refitted on the ring (refine_ring_shares) when the ring is then slower by less
// than its worth; `c.seconds` must be the ring's time for `c` on `b`. Why: the joint choice
// compares the ring's time alone, so a sliver that measures a stale link, within a fraction of
// a millisecond of the relay it sits beside, is dropped as readily as kept, and the link goes
// unmeasured (docs/paths.md, "A probe the joint step keeps"). Returns how many were put back.
int keep_probes(const LinkBeliefs& b, const std::vector<int>& order, RingChoice& c, double bytes,
                const std::vector<Probe>& probes);

// Link figures for one joint state of the links, and how likely it is.
struct WeightedLinks {
  double weight = 1;
  LinkBeliefs b;
};
// The ring's time expected over such states (their weights sum to 1): Σ weight · ring_seconds.
double expected_ring_seconds(const std::vector<WeightedLinks>& states, const std::vector<int>& order,
                             const Paths& paths, double bytes, const Routes* routes = nullptr);
// refine_ring_shares on the expected time over `states` (`c.seconds` must be that time), each
// share moved only to grid points that leave both parts at least `least` of the hop. Why not
// on one set of figures: a split ends with its slower part, so its time is a maximum, and the
// time at averaged rates is not the averaged time (docs/paths.md, "the shares on the links'
// likely states").
void refine_ring_shares(const std::vector<WeightedLinks>& states, const std::vector<int>& order,
                        RingChoice& c, double bytes, int passes = 4, double least = 0);

}  // namespace strait
