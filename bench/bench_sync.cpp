// bench_sync.cpp — one row of the sync benchmark (scripts/bench-sync.sh, make bench-sync): what
// a finished run's gradient syncs achieved against what the planners and the LP said.
// Usage: bench_sync CONFIG TRACE GRAPH [--set key=value]... (the same overrides as the run)
// Prints one CSV row (header with --header):
//   graph, dcs, gradient_bytes, planner, strategy, steps, achieved_ms (median of /steps sync_ms
//   over the steps after the first two: start-up effects), achieved_min_ms, achieved_max_ms,
//   lp_ms (the phased LP optimum: what the owners strategy can reach, bandwidth only),
//   joint_ms (the BLP optimum with reduce and broadcast in one interval: a pipelined
//   executor's bound), cut_ms, traffic_ms (lower bounds), predicted_ms (the planner's own
//   prediction with latency, sync_cost.hpp; for hierarchical the index-order ring's),
//   achieved/lp, achieved/predicted.
// Every figure from the configured links at the start (the believed links today), in run time
// (time-scaled), so comparable with the trace's sync_ms. Needs no MPI: the planners run here as
// they did on rank 0 at step 0.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "control/beliefs.hpp"
#include "control/blp.hpp"
#include "control/policy.hpp"
#include "control/sync_cost.hpp"
#include "trace/trace_reader.hpp"
#include "validate/validate.hpp"

using namespace strait;

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--header") {
    std::puts("graph,dcs,gradient_bytes,planner,strategy,steps,achieved_ms,achieved_min_ms,"
              "achieved_max_ms,lp_ms,joint_ms,cut_ms,traffic_ms,predicted_ms,achieved_over_lp,"
              "achieved_over_predicted");
    return 0;
  }
  if (argc < 4) {
    std::fprintf(stderr, "usage: bench_sync CONFIG TRACE GRAPH [--set key=value]...\n");
    return 2;
  }
  std::vector<std::string> sets;
  for (int i = 4; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--set") sets.push_back(argv[i + 1]);
  const Config cfg = load_valid_config(argv[1], sets);
  const TraceData trace = read_trace(argv[2], false);
  std::vector<double> sync;
  for (const auto& s : trace.steps)
    if (s.step >= 2) sync.push_back(s.sync_ms);
  if (sync.empty()) {
    std::fprintf(stderr, "bench_sync: %s has fewer than 3 steps\n", argv[2]);
    return 1;
  }
  std::sort(sync.begin(), sync.end());
  const size_t k = sync.size();
  const double median = k % 2 ? sync[k / 2] : (sync[k / 2 - 1] + sync[k / 2]) / 2;

  const auto scenario = std::make_shared<const Scenario>(cfg);
  const World w = make_world(cfg, *scenario, true);
  const ControllerView view(w, scenario, Plan{});
  const LinkBeliefs b = believed_links(view);
  const int n = w.num_dcs;
  const Paths paths = direct_paths(n);
  auto planner = make_sync_planner(cfg.control.sync_planner, cfg);
  const SyncDecision d = planner->plan(view, PathDecision{paths, {}, "{}"});
  double predicted = d.plan.predicted_ms;
  if (d.plan.strategy == "hierarchical" && predicted == 0)
    predicted = ring_seconds(b, {}, paths, w.gradient_bytes) * w.time_scale * 1e3;

  const BlpGraph g{n, b.gbps, b.latency_ms, w.gradient_bytes};
  const double run = w.time_scale * 1e3;
  const double lp = BlpModel(g, BlpTime::phased, 6).solve().bandwidth_s * run;
  const double joint = BlpModel(g, BlpTime::joint, 6).solve().bandwidth_s * run;
  const SyncBounds bounds = sync_bounds(g);
  std::printf("%s,%d,%.0f,%s,%s,%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", argv[3],
              n, w.gradient_bytes, cfg.control.sync_planner.c_str(), d.plan.strategy.c_str(), k,
              median, sync.front(), sync.back(), lp, joint, bounds.cut_s * run,
              bounds.traffic_s * run, predicted, median / lp, predicted > 0 ? median / predicted : 0.0);
  return 0;
}
