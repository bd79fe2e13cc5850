// path_scheduled.cpp — path selector "scheduled": replays the [[control.reroute]] events of the
// config. At step t the path from A to B is that of the latest event for (A, B) with step <= t
// (A, its `via` DCs in order, B), else the direct link — or, on a sparse graph where there is
// none, the shortest path. For scripted scenarios and for testing that relays change nothing but
// time.
#include <sstream>

#include "control/path_cost.hpp"
#include "control/policies.hpp"

namespace strait {
namespace {
class Scheduled final : public PathSelector {
 public:
  explicit Scheduled(const Config& cfg) : cfg_(cfg) {}
  std::string name() const override { return "scheduled"; }
  PathDecision choose(const ControllerView& v) override {
    const World& w = v.world();
    const int n = w.num_dcs;
    PathDecision d{direct_paths(n), {}, ""};
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        if (a != b && !v.links().has_link(a, b)) d.paths[a * n + b] = fewest_hop_path(v.links(), a, b);
    std::ostringstream js;
    js << "{\"events\":[";
    bool first = true;
    for (const auto& ev : cfg_.control.reroutes) {  // sorted by step: the latest wins
      if (ev.step > v.sync_step()) break;
      const int a = w.dc_index(ev.from), b = w.dc_index(ev.to);
      std::vector<int> path{a};
      for (const auto& x : ev.via) path.push_back(w.dc_index(x));
      path.push_back(b);
      d.paths[a * n + b] = path;
      js << (first ? "" : ",") << "{\"step\":" << ev.step << ",\"from\":\"" << ev.from
         << "\",\"to\":\"" << ev.to << "\",\"hops\":" << path.size() - 1 << "}";
      first = false;
    }
    js << "]}";
    d.detail = js.str();
    return d;
  }

 private:
  const Config& cfg_;
};
}  // namespace

std::unique_ptr<PathSelector> make_scheduled_path_selector(const Config& cfg) {
  return std::make_unique<Scheduled>(cfg);
}

}  // namespace strait
