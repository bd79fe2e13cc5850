// cmd_validate.cpp — `strait validate --config FILE [--set k=v]...`: load and check a config
// without MPI (load_valid_config, the same checks as `strait train`), then print what it
// resolves to (datacenters, links, model, training, policies), the rank → datacenter map with
// each rank's shard, the parameter count and the per-rank memory estimate — the shard and batch
// numbers from model/ and core/apportion.hpp, the ones the run uses. Also the machine checks of
// `strait train` (validate/host.hpp: outputs writable, room for a checkpoint, a CUDA device).
// Exit status 0 when valid, 2 on a config error.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "config/config.hpp"
#include "core/apportion.hpp"
#include "model/layout.hpp"
#include "model/memory.hpp"
#include "config/limits.hpp"
#include "validate/host.hpp"
#include "validate/validate.hpp"

namespace strait {
namespace {

std::string fmt(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

std::string fmt_list(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + fmt(v[i]);
  return s + "]";
}

void print_config(const Config& c) {
  const double MiB = 1048576.0;
  std::printf("config %s: valid\n\n", c.source_file.c_str());
  if (c.backend == "cpu")
    std::printf("run          %s (backend cpu)\n", c.run_name.c_str());
  else  // the GEMM compute type matters only where CUDA may run
    std::printf("run          %s (backend %s, GPU matmul math %s)\n", c.run_name.c_str(),
                c.backend.c_str(), c.gpu_math.c_str());
  std::printf("trace        %s\n", c.trace.path.c_str());
  std::printf("checkpoint   %s (%s)\n", c.checkpoint.path.c_str(),
              c.checkpoint.every > 0 ? ("every " + std::to_string(c.checkpoint.every) + " steps").c_str()
                                     : "at the end and on a signal");
  const double limit = memory_limit_bytes(c);
  std::printf("memory limit %s\n\n",
              limit > 0 ? (fmt(limit / 1073741824.0) + " GiB per rank" +
                           (c.memory_limit_gb > 0 ? "" : " (MemTotal)")).c_str()
                        : "unknown (MemTotal unreadable; not checked)");

  std::printf("datacenters: %zu, %d ranks in all\n", c.datacenters.size(), c.world_size());
  std::printf("  %-12s %5s %6s %11s  %-26s %s\n", "name", "ranks", "first", "batch share",
              "split", "speed");
  // The sequences each DC gets, rounded as the run rounds them.
  const std::vector<int> seqs = apportion(c.train.batch_shares, c.train.global_batch, 1);
  for (size_t d = 0; d < c.datacenters.size(); ++d) {
    const DatacenterConfig& dc = c.datacenters[d];
    std::printf("  %-12s %5d %6d %11s  %-26s %s\n", dc.name.c_str(), dc.ranks,
                c.first_rank_of_dc(static_cast<int>(d)),
                (fmt(c.train.batch_shares[d]) + " (" + std::to_string(seqs[d]) + " seq)").c_str(),
                ((dc.split_even ? "even " : "") + fmt_list(dc.split)).c_str(),
                fmt_list(dc.speed).c_str());
  }
  const NetworkConfig& nw = c.network;
  std::printf("\nnetwork      shaper %s, time_scale %s, chunk %lld KiB%s\n", nw.shaper.c_str(),
              fmt(nw.time_scale).c_str(), nw.chunk_bytes / 1024,
              nw.time_scale != 1.0 ? " (links run at capacity / time_scale, latency × time_scale)" : "");
  std::printf("links: %zu\n", c.links.size());
  std::printf("  %-12s %-12s %14s %11s %10s  %s\n", "from", "to", "capacity Gb/s", "latency ms",
              "jitter ms", "schedule");
  for (const LinkConfig& l : c.links)
    std::printf("  %-12s %-12s %14s %11s %10s  %s%s%s\n", l.from.c_str(), l.to.c_str(),
                fmt(l.capacity_gbps).c_str(), fmt(l.latency_ms).c_str(), fmt(l.jitter_ms).c_str(),
                l.schedule_kind(), l.schedule_path.empty() ? "" : " ", l.schedule_path.c_str());

  const ModelConfig& m = c.model;
  std::printf("\nmodel        layers %d, d_model %d, heads %d (head dim %d), d_ff %d, seq_len %d, "
              "vocab %d, experts %d, init_std %s\n",
              m.layers, m.d_model, m.heads, m.d_model / m.heads, m.d_ff, m.seq_len, m.vocab,
              m.experts, fmt(m.init_std).c_str());
  const TrainConfig& t = c.train;
  std::printf("train        global_batch %d, steps %d, lr %s, betas (%s, %s), eps %s, "
              "weight_decay %s, seed %llu, log_every %d\n",
              t.global_batch, t.steps, fmt(t.lr).c_str(), fmt(t.beta1).c_str(),
              fmt(t.beta2).c_str(), fmt(t.eps).c_str(), fmt(t.weight_decay).c_str(),
              static_cast<unsigned long long>(t.seed), t.log_every);
  std::printf("corpus       %s\n", t.corpus.c_str());
  const ControlConfig& k = c.control;
  std::printf("control      forecaster %s, balancer %s, path_selector %s, sync_planner %s, "
              "overlap %s\n",
              k.forecaster.c_str(), k.balancer.c_str(), k.path_selector.c_str(),
              k.sync_planner.c_str(), k.overlap.c_str());
  for (const ResplitEvent& r : k.resplits)
    std::printf("  resplit at step %d: %s -> %s\n", r.step, r.datacenter.c_str(),
                fmt_list(r.split).c_str());
  for (const RerouteEvent& r : k.reroutes) {
    std::string path = r.from;
    for (const std::string& v : r.via) path += " -> " + v;
    std::printf("  reroute at step %d: %s -> %s%s\n", r.step, path.c_str(), r.to.c_str(),
                r.via.empty() ? " (direct)" : "");
  }
  for (const SwitchEvent& s : k.switches)
    std::printf("  switch at step %d: %s -> %s\n", s.step, s.slot.c_str(), s.policy.c_str());

  // The shards as the run makes them (shard_specs), not as the fractions alone would suggest.
  std::printf("\nrank map (split fraction, heads and MLP columns of each rank's shard)\n");
  std::printf("  %4s  %-12s %5s %8s %5s %8s\n", "rank", "datacenter", "local", "split", "heads",
              "d_ff cols");
  for (size_t d = 0; d < c.datacenters.size(); ++d) {
    const DatacenterConfig& dc = c.datacenters[d];
    const std::vector<ShardSpec> specs = shard_specs(m, dc.split);
    for (int i = 0; i < dc.ranks; ++i)
      std::printf("  %4d  %-12s %5d %8s %5d %8d\n", c.first_rank_of_dc(static_cast<int>(d)) + i,
                  dc.name.c_str(), i, fmt(dc.split[i]).c_str(), specs[i].heads, specs[i].cols);
  }

  const long long p = parameter_count(m);
  std::printf("\nparameters   %lld per expert, %lld in total (%d expert%s)\n", p,
              p * m.experts, m.experts, m.experts == 1 ? "" : "s");

  std::printf("\nmemory estimate per rank (MiB)\n");
  std::printf("  %4s %10s %10s %10s %12s %10s\n", "rank", "params", "grads", "adam",
              "activations", "total");
  for (int r = 0; r < c.world_size(); ++r) {
    const MemoryEstimate e = estimate_memory(c, r);
    std::printf("  %4d %10.2f %10.2f %10.2f %12.2f %10.2f\n", r, e.params_bytes / MiB,
                e.grads_bytes / MiB, e.adam_bytes / MiB, e.activations_bytes / MiB,
                e.total_bytes / MiB);
  }
}

}  // namespace

int cmd_validate(const std::string& config, const std::vector<std::string>& sets) {
  try {
    const Config c = load_valid_config(config, sets);
    // What `strait train` checks on the machine before it creates anything, here too.
    const std::vector<std::string> host = host_problems(c, c.trace.path, c.checkpoint.path, "");
    if (!host.empty()) {
      std::fprintf(stderr, "strait: %s\n", limits::join_errors(host).c_str());
      return 2;
    }
    print_config(c);
    return 0;
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "strait: config error: %s\n", e.what());
    return 2;
  }
}

}  // namespace strait
