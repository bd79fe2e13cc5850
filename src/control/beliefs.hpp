// beliefs.hpp — the link figures the controller believes: what the sync planners (star, blp,
// ring-best) plan on. One function, so that where the figures come from is decided in one
// place: the wire's measurements as the controller has learned them (view.links(),
// link_state.hpp) — per link the EWMA of its measured streaming rate and the windowed minimum of
// its small-message one-way latency — and, for a link or a figure not measured yet, the configured one (a prior,
// counted in the source string). Never the scenario's truth (only oracles read that).
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

// Whether a plan made on `before` still stands on `now`: the same links exist, every capacity
// lies within `rel` (relative) of its figure then, and every latency within `rel` or
// `latency_floor_ms` (absolute, scenario units), whichever is larger — a measured latency
// moves by a fraction of a millisecond from step to step (when the receiver looked), which is
// no reason to plan again.
bool close_beliefs(const LinkBeliefs& now, const LinkBeliefs& before, double rel,
                   double latency_floor_ms = 0);

}  // namespace strait
