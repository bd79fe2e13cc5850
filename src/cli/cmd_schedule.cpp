// cmd_schedule.cpp — `strait schedule --config FILE [--set k=v]... [--until S]`: every change
// of every directed link's capacity and latency, in run time (after network.time_scale), as the
// software shaper enforces them: the same LinkSchedule, the same seeded Markov sequence. It is
// how scripts/netns-run makes tc enforce a scenario's schedules (docs/netns.md), and how a user
// sees what a scenario does to the links. Jitter is not listed (tc does not apply it). No MPI.
// CSV on stdout: time_s,from,to,capacity_gbps,latency_ms — one row per link at time 0, then
// one per change, ordered by time (ties by link).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "cli/commands.hpp"
#include "config/config.hpp"
#include "scenario/scenario.hpp"
#include "validate/validate.hpp"

namespace strait {

int cmd_schedule(const std::string& config, const std::vector<std::string>& sets, double until_s) {
  if (!std::isfinite(until_s) || until_s <= 0 || until_s > 1e6) {
    std::fprintf(stderr, "strait: --until %g; expected seconds in (0, 1e6]\n", until_s);
    return 2;
  }
  try {
    const Config c = load_valid_config(config, sets);
    const Scenario sc(c);
    struct Row {
      double t;
      int src, dst;
      LinkState st;
    };
    std::vector<Row> rows;
    for (int a = 0; a < sc.num_dcs(); ++a)
      for (int b = 0; b < sc.num_dcs(); ++b) {
        const LinkSchedule* l = a == b ? nullptr : sc.link(a, b);
        if (!l) continue;
        for (const auto& ch : l->scaled(sc.time_scale()).changes(until_s))
          rows.push_back({ch.t_s, a, b, ch.state});
      }
    std::stable_sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) {
      return std::tie(x.t, x.src, x.dst) < std::tie(y.t, y.src, y.dst);
    });
    std::printf("time_s,from,to,capacity_gbps,latency_ms\n");
    for (const Row& r : rows)
      std::printf("%.9g,%s,%s,%.9g,%.9g\n", r.t, c.datacenters[r.src].name.c_str(),
                  c.datacenters[r.dst].name.c_str(), r.st.capacity_bps / 1e9, r.st.latency_s * 1e3);
    return std::fflush(stdout) == 0 ? 0 : 1;
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "strait: config error: %s\n", e.what());
    return 2;
  }
}

}  // namespace strait
