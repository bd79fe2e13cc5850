// planner_star.cpp — baseline sync planner "star": a parameter server at the best-connected DC.
// Every DC sends its weighted gradient to the hub over its chosen path, the hub sums them and
// sends the sum back (strategy "owners" with one owner, sync/owners.cpp). The hub minimises the
// predicted time of the two phases on the configured link figures (World): per phase, the most
// loaded link's bytes over its capacity plus the longest path latency — chunks are pipelined, so
// a relay adds its latency, not another transmission. Ties go to the lower DC index.
#include <algorithm>
#include <sstream>

#include "control/policies.hpp"

namespace strait {
namespace {

// Predicted seconds of one communication phase: flows (path, bytes) run concurrently and share
// each link's capacity.
double phase_seconds(const World& w, const std::vector<std::pair<const std::vector<int>*, double>>& flows) {
  const int n = w.num_dcs;
  std::vector<double> load(static_cast<size_t>(n) * n, 0.0);
  double latency = 0;
  for (const auto& [path, bytes] : flows) {
    double lat = 0;
    for (size_t h = 0; h + 1 < path->size(); ++h) {
      const int l = (*path)[h] * n + (*path)[h + 1];
      load[l] += bytes;
      lat += w.link_latency_ms[l] / 1e3;
    }
    latency = std::max(latency, lat);
  }
  double busy = 0;
  for (size_t l = 0; l < load.size(); ++l)
    if (load[l] > 0) busy = std::max(busy, load[l] * 8 / (w.link_gbps[l] * 1e9));
  return busy + latency;
}

class Star final : public SyncPlanner {
 public:
  std::string name() const override { return "star"; }
  SyncDecision plan(const ControllerView& v, const Paths& paths) override {
    const World& w = v.world();
    const int n = w.num_dcs;
    const double S = w.gradient_bytes;
    int best = 0;
    double best_s = 1e300;
    std::ostringstream js;
    js << "{\"predicted_ms\":[";
    for (int hub = 0; hub < n; ++hub) {
      std::vector<std::pair<const std::vector<int>*, double>> up, down;
      for (int d = 0; d < n; ++d)
        if (d != hub) up.push_back({&paths[d * n + hub], S}), down.push_back({&paths[hub * n + d], S});
      const double t = (phase_seconds(w, up) + phase_seconds(w, down)) * w.time_scale;
      js << (hub ? "," : "") << t * 1e3;
      if (t < best_s) best_s = t, best = hub;
    }
    js << "],\"hub\":\"" << w.dc_names[best] << "\",\"on\":\"configured links\"}";
    SyncDecision d;
    d.plan = star_plan(n, best, paths);
    d.plan.predicted_ms = n > 1 ? best_s * 1e3 : 0;
    d.detail = js.str();
    return d;
  }
};
}  // namespace

std::unique_ptr<SyncPlanner> make_star_planner(const Config&) { return std::make_unique<Star>(); }

}  // namespace strait
