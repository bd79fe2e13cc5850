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
// bench_sync --plan-scale N [SEED]: how long the blp planner takes on a full mesh of N DCs with
// random links (0.2–5 Gbit/s, 5–120 ms; the graph of tests/unit/test_blp.cpp for N = 16, seed
// 42) — one CSV row: dcs, seed, lp_rows, lp_cols, lp_nonzeros (the phased LP with the planner's
// 6 relays per pair), plan_s_min, plan_s_median over 5 plans (wall clock of this process).
// Every figure from the configured links at the start (the believed links today), in run time
// (time-scaled), so comparable with the trace's sync_ms. Needs no MPI: the planners run here as
// they did on rank 0 at step 0.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "control/beliefs.hpp"
#include "control/blp.hpp"
#include "control/policy.hpp"
#include "control/sync_cost.hpp"
#include "core/rng.hpp"
#include "trace/trace_reader.hpp"
#include "validate/validate.hpp"

using namespace strait;

namespace {
int plan_scale(int n, uint64_t seed) {
  World w;
  w.num_dcs = n;
  for (int d = 0; d < n; ++d) w.dc_names.push_back("dc" + std::to_string(d));
  w.gradient_bytes = 4e6;
  w.link_gbps.assign(static_cast<size_t>(n) * n, 0.0);
  w.link_latency_ms.assign(static_cast<size_t>(n) * n, 0.0);
  for (int l = 0; l < n * n; ++l)
    if (l / n != l % n) {
      w.link_gbps[l] = 0.2 + 4.8 * uniform01(seed, 0, 2 * l);
      w.link_latency_ms[l] = 5 + 115 * uniform01(seed, 0, 2 * l + 1);
    }
  const BlpModel m(BlpGraph{n, w.link_gbps, w.link_latency_ms, w.gradient_bytes}, BlpTime::phased, 6);
  const ControllerView view(w, nullptr, Plan{});
  std::vector<double> secs;
  for (int rep = 0; rep < 5; ++rep) {
    auto planner = make_sync_planner("blp", Config{});  // a fresh one: no cached plan
    const auto t0 = std::chrono::steady_clock::now();
    const SyncDecision d = planner->plan(view, PathDecision{direct_paths(n), {}, "{}"});
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (d.plan.strategy != "owners") {
      std::fprintf(stderr, "bench_sync: blp gave no owner plan for %d DCs\n", n);
      return 1;
    }
  }
  std::sort(secs.begin(), secs.end());
  std::printf("%d,%llu,%d,%d,%d,%.4f,%.4f\n", n, static_cast<unsigned long long>(seed), m.rows(),
              m.cols(), m.nonzeros(), secs.front(), secs[secs.size() / 2]);
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "--plan-scale")
    return plan_scale(std::atoi(argv[2]), argc >= 4 ? std::strtoull(argv[3], nullptr, 10) : 42);
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
