// balance_bound.cpp — how much of the oracle's gain any balancer that only reacts can reach: the
// reaction bound beside `make bench-balance` (scripts/bench-balance.sh).
// Usage: balance_bound [--header] CONFIG [--set key=value]...
// Prints one CSV row per config: scenario, steps, then the compute time (device clock: each rank
// FLOPs / speed, no sync, no re-split cost, no noise) of
//   static   the configured splits and batch shares all run long;
//   oracle   at every step the plan whole heads and sequences allow for that step's true speeds
//            (src/control/balance.hpp, tune_plan: the rule's own split math);
//   late_d   at every step s the plan for the true speeds of step s − d (d = 1..4; static before):
//            a balancer that knows every speed exactly the moment a step ends and re-plans for
//            free, but cannot foresee a change. With control.lag = 2 the loads of step s are
//            heard after step s and a decision applies at s + 2, so late_2 bounds every
//            forecaster that cannot predict a jump, and late_3 one that also confirms a change
//            once (control.balance.confirm = 2);
// as static_ms, oracle_ms, late1_ms..late4_ms (sums over the run), and each as a fraction of the
// oracle's throughput (oracle_ms / x_ms).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "control/balance.hpp"
#include "control/view.hpp"
#include "core/apportion.hpp"
#include "scenario/scenario.hpp"
#include "validate/validate.hpp"

using namespace strait;

int main(int argc, char** argv) {
  int i = 1;
  const bool header = argc > 1 && std::strcmp(argv[1], "--header") == 0;
  if (header) {
    std::printf("scenario,steps,static_ms,oracle_ms,late1_ms,late2_ms,late3_ms,late4_ms,"
                "static_of_oracle,late1_of_oracle,late2_of_oracle,late3_of_oracle,late4_of_oracle\n");
    ++i;
  }
  if (i >= argc) {
    std::fprintf(stderr, "usage: balance_bound [--header] CONFIG [--set key=value]...\n");
    return header ? 0 : 2;
  }
  const std::string path = argv[i++];
  std::vector<std::string> sets;
  for (; i < argc; ++i) {
    if (std::strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
      sets.push_back(argv[++i]);
    } else {
      std::fprintf(stderr, "balance_bound: unexpected argument '%s' (expected --set key=value)\n", argv[i]);
      return 2;
    }
  }
  Config cfg;
  try {
    cfg = load_valid_config(path, sets);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "balance_bound: %s\n", e.what());
    return 2;
  }
  const Scenario scenario(cfg);
  const World w = make_world(cfg, scenario, true);
  const std::vector<double> ref = reference_flops(w);
  const int64_t steps = cfg.train.steps;
  // Loads at reference work on a device of one FLOP per ms (only ratios matter here).
  auto loads = [&](int64_t s) {
    std::vector<double> l(w.world_size);
    for (int r = 0; r < w.world_size; ++r) l[r] = ref[r] / scenario.rank_speed(r, s);
    return l;
  };
  TunedPlan configured;
  for (const DatacenterConfig& dc : cfg.datacenters) configured.splits.push_back(dc.split);
  configured.seqs = apportion(cfg.train.batch_shares, w.global_batch, 1);
  double stat = 0, oracle = 0, late[5] = {0, 0, 0, 0, 0};
  for (int64_t s = 0; s < steps; ++s) {
    const std::vector<double> now = loads(s);
    stat += plan_compute_ms(w, now, configured);
    oracle += plan_compute_ms(w, now, tune_plan(w, now));
    for (int d = 1; d <= 4; ++d)
      late[d] += plan_compute_ms(w, now, s >= d ? tune_plan(w, loads(s - d)) : configured);
  }
  std::printf("%s,%lld,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.4f,%.4f,%.4f,%.4f,%.4f\n", cfg.run_name.c_str(),
              static_cast<long long>(steps), stat, oracle, late[1], late[2], late[3], late[4],
              oracle / stat, oracle / late[1], oracle / late[2], oracle / late[3], oracle / late[4]);
  return 0;
}
