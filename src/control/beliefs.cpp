// beliefs.cpp — see beliefs.hpp.
#include "control/beliefs.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "control/link_state.hpp"

namespace strait {

LinkBeliefs believed_links(const ControllerView& v) {
  const World& w = v.world();
  const LinkStates& ls = v.links();
  const int n = w.num_dcs;
  LinkBeliefs b{n, w.link_gbps, w.link_latency_ms, ""};
  if (w.cfg && w.cfg->control.beliefs == "configured") {
    b.source = "configured links (control.beliefs = configured: the baseline)";
    return b;
  }
  int links = 0, rates = 0, latencies = 0;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      const int l = s * n + d;
      if (s == d || !(w.link_gbps[l] > 0)) continue;
      ++links;
      // The estimates are in run units (what the wire delivered); planners plan in scenario
      // units, as configured: capacity × time_scale, latency / time_scale.
      // The EWMA of the measured rate, not the rate the link's chain expects at the plan's
      // step (the levels' mean capacities weighed by the propagated belief, as mdp uses them):
      // on detour3 blp made 6101 tok/s on the EWMA, 5182 on the chain's harmonic expectation
      // and 3210 on its plain one (one run each) — the chain's levels are coarse, and a link
      // the plan leaves drifts back by its chain while the EWMA stays at what was measured.
      if (ls.n() == n && ls.measured(s, d) && ls.ewma_gbps(s, d) > 0) {
        b.gbps[l] = ls.ewma_gbps(s, d) * w.time_scale;
        ++rates;
      }
      if (ls.n() == n && ls.latency_sampled(s, d)) {
        b.latency_ms[l] = ls.latency_ms(s, d) / w.time_scale;
        ++latencies;
      }
    }
  std::ostringstream src;
  src << "measured links (rate: EWMA of the measured rate on " << rates << " of " << links
      << " links; latency: windowed minimum of small-message one-way times on " << latencies << " of "
      << links << "; configured figures elsewhere)";
  b.source = src.str();
  return b;
}

bool close_beliefs(const LinkBeliefs& now, const LinkBeliefs& before, double rel,
                   double latency_floor_ms) {
  if (now.n != before.n || now.gbps.size() != before.gbps.size()) return false;
  auto near = [rel](double a, double b, double floor) {
    return std::fabs(a - b) <= std::max(floor, rel * std::max(std::fabs(a), std::fabs(b)));
  };
  for (size_t l = 0; l < now.gbps.size(); ++l) {
    if ((now.gbps[l] > 0) != (before.gbps[l] > 0)) return false;
    if (!near(now.gbps[l], before.gbps[l], 0) ||
        !near(now.latency_ms[l], before.latency_ms[l], latency_floor_ms))
      return false;
  }
  return true;
}

}  // namespace strait
