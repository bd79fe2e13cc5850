// beliefs.hpp — the link figures the controller believes: what the sync planners (star, blp,
// ring-best) plan on. One function, so that where the figures come from can change in one
// place: today the configured capacities and latencies at the start of the run (World); later
// the measured or forecast ones from view.history().
#pragma once
#include <string>
#include <vector>

#include "control/view.hpp"

namespace strait {

struct LinkBeliefs {
  int n = 0;
  std::vector<double> gbps, latency_ms;  // [src·n + dst], scenario units; 0 gbps = no link
  std::string source;                    // for the trace: where the figures come from
};

LinkBeliefs believed_links(const ControllerView& v);

// Whether every link's capacity and latency lie within `rel` (relative) of `before`'s, and the
// same links exist: a plan made on `before` still stands.
bool close_beliefs(const LinkBeliefs& now, const LinkBeliefs& before, double rel);

}  // namespace strait
