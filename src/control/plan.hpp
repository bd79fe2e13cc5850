// plan.hpp — the decision record: everything the controller decides, as one value that is
// broadcast to every rank and traced as a whole. A Plan is in force from `effective` on, until
// the next one; every rank applies it at the same step boundary:
//   splits, shares  (balancer)        → re-split inside DCs, batch apportioned across DCs
//   paths, routes   (path selector)   → the DC path of every inter-DC transfer, or for some pairs
//                                       several paths sharing its bytes
//   sync            (sync planner)    → the strategy and its plan (sync/plan.hpp)
//   overlap         (overlap scheduler) → whether a step's sync overlaps the next step's compute
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "net/transport.hpp"
#include "sync/plan.hpp"

namespace strait {

// How a step's gradient sync is ordered with computation.
//   sequential: step s syncs and updates before step s+1 computes.
//   pipelined (PGCS): step s's sync runs while step s+1 computes the next expert; expert e is
//   updated before it computes again (needs E >= 2 experts: with one there is nothing to
//   overlap with, and MPI_THREAD_MULTIPLE).
enum class Overlap : int32_t { sequential = 0, pipelined = 1 };
const char* to_string(Overlap o);

struct Plan {
  int64_t made_after = -1;  // the last step whose measurements it saw; -1: before the run
  int64_t effective = 0;    // the first step it applies to
  std::vector<std::vector<double>> splits;  // per DC: split fractions of its ranks
  std::vector<double> shares;               // per DC: share of the global batch
  Paths paths;                              // per ordered DC pair
  Routes routes;                            // per ordered pair: multi-path splits (empty: none)
  SyncPlan sync;
  Overlap overlap = Overlap::sequential;

  // The same decisions (ignores when it was made and from when it applies).
  bool same_decisions(const Plan& o) const {
    return splits == o.splits && shares == o.shares && paths == o.paths && routes == o.routes &&
           sync == o.sync && overlap == o.overlap;
  }
};

std::vector<char> encode(const Plan& p);
Plan decode_plan(const std::vector<char>& bytes);  // throws std::runtime_error when corrupt
// The whole record as one JSON object (the trace's /decisions row of slot "plan").
std::string to_json(const Plan& p);

}  // namespace strait
