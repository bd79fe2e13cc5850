// beliefs.cpp — see beliefs.hpp.
#include "control/beliefs.hpp"

#include <algorithm>
#include <cmath>

namespace strait {

LinkBeliefs believed_links(const ControllerView& v) {
  const World& w = v.world();
  return LinkBeliefs{w.num_dcs, w.link_gbps, w.link_latency_ms, "configured links"};
}

bool close_beliefs(const LinkBeliefs& now, const LinkBeliefs& before, double rel) {
  if (now.n != before.n || now.gbps.size() != before.gbps.size()) return false;
  auto near = [rel](double a, double b) {
    return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b));
  };
  for (size_t l = 0; l < now.gbps.size(); ++l) {
    if ((now.gbps[l] > 0) != (before.gbps[l] > 0)) return false;
    if (!near(now.gbps[l], before.gbps[l]) || !near(now.latency_ms[l], before.latency_ms[l]))
      return false;
  }
  return true;
}

}  // namespace strait
