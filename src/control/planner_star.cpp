// planner_star.cpp — baseline sync planner "star": a parameter server at the best-connected DC.
// Every DC sends its weighted gradient to the hub over its chosen path, the hub sums them and
// sends the sum back (strategy "owners" with one owner, sync/owners.cpp). The hub minimises the
// predicted time of the two phases on the believed links (sync_cost.hpp: per phase, the
// slowest flow's path latency plus its most loaded link's bytes over capacity — chunks are
// pipelined, so a relay adds its latency, not another transmission). Ties go to the lower DC
// index.
#include <sstream>

#include "control/beliefs.hpp"
#include "control/policies.hpp"
#include "control/sync_cost.hpp"

namespace strait {
namespace {

class Star final : public SyncPlanner {
 public:
  std::string name() const override { return "star"; }
  SyncDecision plan(const ControllerView& v, const PathDecision& chosen) override {
    const Paths& paths = chosen.paths;
    const Routes* routes = chosen.routes.empty() ? nullptr : &chosen.routes;
    const World& w = v.world();
    const LinkBeliefs b = believed_links(v);
    const int n = w.num_dcs;
    int best = 0;
    double best_s = 1e300;
    std::ostringstream js;
    js << "{\"predicted_ms\":[";
    for (int hub = 0; hub < n; ++hub) {
      const double t = owner_plan_seconds(b, star_plan(n, hub, paths, routes), w.gradient_bytes) * w.time_scale;
      js << (hub ? "," : "") << t * 1e3;
      if (t < best_s) best_s = t, best = hub;
    }
    js << "],\"hub\":\"" << w.dc_names[best] << "\",\"on\":\"" << b.source << "\"}";
    SyncDecision d;
    d.plan = star_plan(n, best, paths, routes);
    d.plan.predicted_ms = n > 1 ? best_s * 1e3 : 0;
    d.detail = js.str();
    return d;
  }
};
}  // namespace

std::unique_ptr<SyncPlanner> make_star_planner(const Config&) { return std::make_unique<Star>(); }

}  // namespace strait
