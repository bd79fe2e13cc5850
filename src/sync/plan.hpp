// plan.hpp — a sync plan: what the controller's sync planner decides and a sync strategy
// executes. It names the strategy (registry.cpp) and, for owner plans, says how the gradient
// vector is cut and moved: the full vector (canonical layout) is cut into one contiguous slice
// per DC, slice j of fraction owner_fraction[j] is reduced at DC j (its owner) from every DC's
// copy, then broadcast back. reduce[s·n + j] lists the routes by which DC s sends its part of
// slice j to owner j, broadcast[j·n + d] those by which owner j sends the reduced slice to d;
// each route carries a fraction of those bytes over one path (multi-path when there are
// several). A star is one owner; the BLP planner fills fractions and routes from an LP.
// Strategies that do not use owners ignore those fields. The hierarchical ring follows `ring`,
// the DCs in ring order (empty: 0, 1, ..., n−1), which the ring-best planner chooses.
// The plan travels to every rank inside the decision record (src/control/plan.hpp).
#pragma once
#include <string>
#include <vector>

#include "core/wire.hpp"
#include "net/transport.hpp"

namespace strait {

struct SyncPlan {
  std::string strategy = "hierarchical";
  std::vector<double> owner_fraction;         // per DC, summing to 1 (owner plans)
  std::vector<std::vector<Route>> reduce;     // [src·n + owner]
  std::vector<std::vector<Route>> broadcast;  // [owner·n + dst]
  std::vector<int> ring;                      // ring order (hierarchical); empty = index order
  double predicted_ms = 0;                    // the planner's own prediction; 0 = none
  // The same plan: what would be executed (a prediction that moved changes nothing).
  bool operator==(const SyncPlan& o) const {
    return strategy == o.strategy && owner_fraction == o.owner_fraction && reduce == o.reduce &&
           broadcast == o.broadcast && ring == o.ring;
  }
};

// An owner plan that reduces everything at `hub`, over `paths` (a star; parameter server).
// Pairs with routes in `routes` (when given) send over them instead of their single path.
SyncPlan star_plan(int num_dcs, int hub, const Paths& paths, const Routes* routes = nullptr);

// Throws std::invalid_argument naming what is wrong: fractions that are negative or do not sum
// to 1, missing routes for an owner with a non-empty slice, route fractions that do not sum to
// 1, or a path that does not run from its source to its destination. (Whether each path's links
// exist is the transport's check: Transport::check_path.)
void check_owner_plan(const SyncPlan& p, int num_dcs);
// The ring's order: `ring`, or 0, 1, ..., n−1 when it is empty (the default order).
std::vector<int> ring_order(const std::vector<int>& ring, int n);
// Throws std::invalid_argument unless `ring` is empty or a permutation of 0..n−1.
void check_ring(const SyncPlan& p, int num_dcs);
// Every route path of an owner plan, for checks against the link graph.
std::vector<const std::vector<int>*> route_paths(const SyncPlan& p);

// [lo, hi) of owner j's slice of an n-element vector: floor(prefix · n), the last one ends at n.
// Every rank computes the same cut from the same plan.
std::pair<size_t, size_t> owner_slice(const SyncPlan& p, int owner, size_t n);
// (route_part, which cuts a flow among its routes the same way, is in net/transport.hpp.)

void encode(wire::Writer& w, const SyncPlan& p);
void decode(wire::Reader& r, SyncPlan& p);
std::string to_json(const SyncPlan& p);

}  // namespace strait
