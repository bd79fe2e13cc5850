// path_widest.cpp — baseline path selectors "widest" and "ewma-widest": every pair on the path
// (direct, or through up to two relays) whose bottleneck capacity is largest on what the
// controller believes of the links (view.links(): the wire measurements) — the last
// measurement for "widest", its exponentially weighted mean for "ewma-widest". Ties go to fewer
// hops, then to lower believed latency. Greedy: no model of where congestion goes next, no cost
// of switching.
#include <sstream>

#include "control/path_cost.hpp"
#include "control/policies.hpp"

namespace strait {
namespace {
class Widest final : public PathSelector {
 public:
  explicit Widest(bool ewma) : ewma_(ewma) {}
  std::string name() const override { return ewma_ ? "ewma-widest" : "widest"; }
  PathDecision choose(const ControllerView& v) override {
    const LinkStates& ls = v.links();
    const int n = ls.n();
    const LinkFigure gbps = [&](int a, int b) { return ewma_ ? ls.ewma_gbps(a, b) : ls.last_gbps(a, b); };
    PathDecision d{direct_paths(n), {}, ""};
    std::ostringstream js;
    js << "{\"bottleneck_gbps\":[";
    bool first = true;
    for (int s = 0; s < n; ++s)
      for (int t = 0; t < n; ++t) {
        if (s == t) continue;
        std::vector<int> best;
        double best_cap = -1, best_lat = 1e300;
        for (const auto& p : simple_paths(ls, s, t, 2)) {
          const double cap = bottleneck_gbps(p, gbps);
          double lat = 0;
          for (size_t h = 0; h + 1 < p.size(); ++h) lat += ls.latency_ms(p[h], p[h + 1]);
          const bool wider = cap > best_cap * (1 + 1e-9);
          const bool same = !wider && cap >= best_cap * (1 - 1e-9);
          if (wider || (same && (p.size() < best.size() || (p.size() == best.size() && lat < best_lat))))
            best = p, best_cap = cap, best_lat = lat;
        }
        if (best.empty()) best = fewest_hop_path(ls, s, t);  // more than two relays needed
        d.paths[s * n + t] = best;
        js << (first ? "" : ",") << best_cap;
        first = false;
      }
    js << "]}";
    d.detail = js.str();
    return d;
  }

 private:
  bool ewma_;
};
}  // namespace

std::unique_ptr<PathSelector> make_widest_path_selector(const Config&) {
  return std::make_unique<Widest>(false);
}
std::unique_ptr<PathSelector> make_ewma_widest_path_selector(const Config&) {
  return std::make_unique<Widest>(true);
}

}  // namespace strait
