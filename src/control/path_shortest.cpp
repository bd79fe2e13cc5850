// path_shortest.cpp — baseline path selector "shortest": every pair on a path with the fewest
// hops (ties: the smaller sum of believed latencies). On a full mesh that is the direct link;
// on a sparse graph the fewest relays. Static: it never looks at load.
#include "control/path_cost.hpp"
#include "control/policies.hpp"

namespace strait {
namespace {
class Shortest final : public PathSelector {
 public:
  std::string name() const override { return "shortest"; }
  PathDecision choose(const ControllerView& v) override {
    const LinkStates& ls = v.links();
    const int n = ls.n();
    PathDecision d{direct_paths(n), {}, "{}"};
    for (int s = 0; s < n; ++s)
      for (int t = 0; t < n; ++t)
        if (s != t) d.paths[s * n + t] = fewest_hop_path(ls, s, t);
    return d;
  }
};
}  // namespace

std::unique_ptr<PathSelector> make_shortest_path_selector(const Config&) {
  return std::make_unique<Shortest>();
}

}  // namespace strait
