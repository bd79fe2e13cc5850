// path_oracle.cpp — path selector "oracle": an UPPER BOUND, not a method. It reads the scenario
// (view.clairvoyant()): for every pair, among the direct path and those through up to two relays,
// the one whose predicted time (path_cost.hpp) on the links' TRUE capacity and latency at the time
// the decision takes effect is least — that time estimated as now + control.lag × the mean wall
// time of the last completed steps. Pairs the sync plan sends nothing on are ranked for one
// gradient-sized message.
#include <numeric>
#include <sstream>

#include "control/path_cost.hpp"
#include "control/policies.hpp"

namespace strait {
namespace {
class Oracle final : public PathSelector {
 public:
  explicit Oracle(const Config& cfg) : lag_(cfg.control.lag) {}
  std::string name() const override { return "oracle"; }
  PathDecision choose(const ControllerView& v) override {
    const World& w = v.world();
    const LinkStates& ls = v.links();
    const int n = w.num_dcs;
    double step_s = 0;
    const auto& h = v.history();
    const size_t k = std::min<size_t>(5, h.size());
    for (size_t i = h.size() - k; i < h.size(); ++i) step_s += h[i].wall_ms / 1e3 / k;
    const double at = v.run_time_s() + lag_ * step_s;
    const auto& truth = v.clairvoyant();
    const LinkFigure gbps = [&](int a, int b) { return truth.link(a, b, at).gbps / w.time_scale; };
    const LinkFigure lat = [&](int a, int b) { return truth.link(a, b, at).latency_ms * w.time_scale; };
    const auto traffic = pair_traffic(v.plan(), w);
    PathDecision d{direct_paths(n), {}, ""};
    for (int s = 0; s < n; ++s)
      for (int t = 0; t < n; ++t) {
        if (s == t) continue;
        PairTraffic tr = traffic[s * n + t];
        if (tr.messages == 0) tr = PairTraffic{w.gradient_bytes, 1};
        double best = 1e300;
        for (const auto& p : simple_paths(ls, s, t, 2)) {
          const double ms = path_ms(p, tr, gbps, lat);
          if (ms < best * (1 - 1e-9)) best = ms, d.paths[s * n + t] = p;
        }
        if (best >= 1e300) d.paths[s * n + t] = fewest_hop_path(ls, s, t);
      }
    std::ostringstream js;
    js << "{\"upper_bound\":true,\"truth_at_s\":" << at << "}";
    d.detail = js.str();
    return d;
  }

 private:
  int lag_;
};
}  // namespace

std::unique_ptr<PathSelector> make_oracle_path_selector(const Config& cfg) {
  return std::make_unique<Oracle>(cfg);
}

}  // namespace strait
