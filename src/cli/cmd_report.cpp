// cmd_report.cpp — `strait report TRACE.h5`: a text summary of one trace (docs/trace.md).
// Works on a finished, a killed and a still-running trace (read-only, HDF5 file locking off).
// No MPI. Exit status 0, or 2 when the file is missing or not a strait trace.
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "trace/trace_reader.hpp"

namespace strait {

namespace {

__attribute__((format(printf, 1, 2))) std::string fmt(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (std::fabs(b) >= 1000.0 && u < 5) {
    b /= 1000.0;
    ++u;
  }
  return u == 0 ? fmt("%.0f B", b) : fmt("%.3f %s", b, units[u]);
}

std::string dc_name(const RunMeta& m, int dc) {
  if (dc >= 0 && static_cast<size_t>(dc) < m.dc_names.size()) return m.dc_names[dc];
  return "dc" + std::to_string(dc);
}

// "east: ranks 0-3, west: ranks 4-5" (ranges of consecutive ranks per DC).
std::string rank_map(const RunMeta& m) {
  if (m.rank_dc.empty()) return "(not recorded)";
  std::string out;
  size_t i = 0;
  while (i < m.rank_dc.size()) {
    size_t j = i;
    while (j + 1 < m.rank_dc.size() && m.rank_dc[j + 1] == m.rank_dc[i]) ++j;
    if (!out.empty()) out += ", ";
    out += dc_name(m, m.rank_dc[i]) + ": " +
           (i == j ? fmt("rank %zu", i) : fmt("ranks %zu-%zu", i, j));
    i = j + 1;
  }
  return out;
}

struct Mean {
  double sum = 0;
  long long n = 0;
  void add(double v) {
    sum += v;
    ++n;
  }
  double value() const { return n ? sum / static_cast<double>(n) : std::nan(""); }
};

void print_summary(const std::string& path, const TraceData& d) {
  const RunMeta& m = d.meta;
  std::printf("trace        %s\n", path.c_str());
  std::printf("run          %s\n", m.run_name.empty() ? "(unnamed)" : m.run_name.c_str());
  std::printf("status       %s%s\n", d.status.c_str(),
              d.status == "running" ? " (still running, or killed before it could close)" : "");
  if (!d.reason.empty()) std::printf("reason       %s\n", d.reason.c_str());
  if (d.segments.size() > 1) {  // resumed: one line per stretch of the run
    std::printf("segments     %zu (the run was resumed %zu time%s)\n", d.segments.size(),
                d.segments.size() - 1, d.segments.size() == 2 ? "" : "s");
    for (const std::string& s : d.segments) std::printf("             %s\n", s.c_str());
  }
  std::printf("version      %s (commit %s)\n", m.version.c_str(), m.commit.c_str());
  if (!m.start_time.empty()) std::printf("started      %s\n", m.start_time.c_str());
  if (!m.config_file.empty()) std::printf("config       %s\n", m.config_file.c_str());
  if (!m.backends.empty()) {  // traces before the attribute existed have none
    std::map<std::string, int> per;
    for (const auto& b : m.backends) ++per[b];
    std::printf("backend     ");
    for (const auto& [name, n] : per) std::printf(" %s (%d rank%s)", name.c_str(), n, n == 1 ? "" : "s");
    std::printf("\n");
  }
  std::printf("world        %d ranks, %zu datacenters: %s\n", m.world_size, m.dc_names.size(),
              rank_map(m).c_str());
  std::printf("seed         %llu\n", static_cast<unsigned long long>(m.seed));
  std::printf("experts      %d x %lld parameters\n", m.experts, m.params_per_expert);
  if (!m.resumed_from.empty()) std::printf("resumed from %s\n", m.resumed_from.c_str());
  if (d.steps.empty()) {
    std::printf("steps        0 recorded\n");
    return;
  }
  std::printf("steps        %zu recorded (steps %lld..%lld)\n", d.steps.size(),
              static_cast<long long>(d.steps.front().step),
              static_cast<long long>(d.steps.back().step));

  // Loss.
  const size_t n = d.steps.size();
  const size_t tail = std::min<size_t>(10, n);
  Mean last_mean;
  for (size_t i = n - tail; i < n; ++i) last_mean.add(d.steps[i].loss);
  double min_loss = std::numeric_limits<double>::infinity();
  long long min_step = -1, non_finite = 0;
  for (const StepRow& s : d.steps) {
    if (!std::isfinite(s.loss)) {
      ++non_finite;
    } else if (s.loss < min_loss) {
      min_loss = s.loss;
      min_step = s.step;
    }
  }
  std::printf("\nloss (nats per token)\n");
  std::printf("  first                 %.6f\n", d.steps.front().loss);
  std::printf("  last                  %.6f   (mean of last %zu: %.6f)\n", d.steps.back().loss,
              tail, last_mean.value());
  if (min_step >= 0) std::printf("  min                   %.6f   (step %lld)\n", min_loss, min_step);
  if (non_finite) std::printf("  non-finite            %lld steps\n", non_finite);
  std::printf("  corpus entropy        %.6f bits = %.6f nats (unigram, per byte)\n",
              m.corpus_entropy_bits, m.corpus_entropy_bits * std::log(2.0));

  // Time per step.
  Mean wall, compute, sync, wait, emulated;
  double tokens = 0, wall_sum = 0, controller = 0, trace = 0;
  long long overlapped = 0;
  for (const StepRow& s : d.steps) {
    overlapped += s.overlapped;
    wall.add(s.wall_ms);
    compute.add(s.compute_ms);
    sync.add(s.sync_ms);
    wait.add(s.wait_ms);
    emulated.add(s.emulated_ms);
    tokens += static_cast<double>(s.tokens);
    wall_sum += s.wall_ms;
    controller += s.controller_ms;
    trace += s.trace_ms;
  }
  const auto pct = [&](double v) { return wall_sum > 0 ? 100.0 * v / wall_sum : std::nan(""); };
  std::printf("\nper step (mean, max over ranks)\n");
  std::printf("  wall ms               %.3f\n", wall.value());
  std::printf("  compute ms            %.3f\n", compute.value());
  std::printf("  sync ms               %.3f\n", sync.value());
  std::printf("  wait ms               %.3f\n", wait.value());
  std::printf("  emulated ms           %.3f\n", emulated.value());
  std::printf("  overlapped syncs      %lld of %zu steps (sync ran while the next step computed)\n",
              overlapped, d.steps.size());
  std::printf("  tokens/s              %.1f   (all tokens / all wall time)\n",
              wall_sum > 0 ? tokens / (wall_sum / 1000.0) : std::nan(""));
  std::printf("  controller overhead   %.3f %% of wall\n", pct(controller));
  std::printf("  trace overhead        %.3f %% of wall\n", pct(trace));

  // Per datacenter, from /ranks.
  if (!d.ranks.empty()) {
    struct Dc {
      Mean compute, sync, wait, emulated;
      std::set<int> ranks;
    };
    std::map<int, Dc> dcs;
    for (const RankRow& r : d.ranks) {
      Dc& x = dcs[r.dc];
      x.compute.add(r.compute_ms);
      x.sync.add(r.sync_ms);
      x.wait.add(r.wait_ms);
      x.emulated.add(r.emulated_ms);
      x.ranks.insert(r.rank);
    }
    std::printf("\nper datacenter (mean per rank and step, from /ranks)\n");
    std::printf("  %-16s %5s %12s %12s %12s %12s\n", "datacenter", "ranks", "compute ms",
                "sync ms", "wait ms", "emulated ms");
    for (const auto& [dc, x] : dcs)
      std::printf("  %-16s %5zu %12.3f %12.3f %12.3f %12.3f\n", dc_name(m, dc).c_str(),
                  x.ranks.size(), x.compute.value(), x.sync.value(), x.wait.value(),
                  x.emulated.value());
  }

  // Per directed link, from /links: what the wire carried, against the configured capacity.
  if (!d.links.empty()) {
    struct Link {
      double bytes = 0, wire_ms = 0, latency_sum = 0;
      long long latency_n = 0;
      Mean capacity, latency_cfg;
    };
    std::map<std::pair<int, int>, Link> links;
    for (const LinkRow& l : d.links) {
      Link& x = links[{l.src, l.dst}];
      x.bytes += l.bytes, x.wire_ms += l.wire_ms;
      if (l.latency_samples > 0) {
        x.latency_sum += l.latency_ms * static_cast<double>(l.latency_samples);
        x.latency_n += l.latency_samples;
      }
      x.capacity.add(l.configured_gbps);
      x.latency_cfg.add(l.configured_latency_ms);
    }
    std::printf("\nper link (from /links: measured at the wire; goodput = all bytes / all wire time)\n");
    std::printf("  %-24s %14s %12s %12s %12s %12s\n", "link", "total bytes", "goodput Gb/s",
                "config Gb/s", "latency ms", "config ms");
    for (const auto& [key, x] : links) {
      const std::string name = dc_name(m, key.first) + " -> " + dc_name(m, key.second);
      const double goodput = x.wire_ms > 0 ? x.bytes * 8 / (x.wire_ms * 1e6) : 0.0;
      const double lat = x.latency_n > 0 ? x.latency_sum / static_cast<double>(x.latency_n) : std::nan("");
      std::printf("  %-24s %14s %12.4f %12.4f %12.3f %12.3f\n", name.c_str(),
                  human_bytes(x.bytes).c_str(), goodput, x.capacity.value(), lat,
                  x.latency_cfg.value());
    }
  }

  // Pairs with routes (splits, standbys): what their senders put where, and moved (schema 6).
  {
    struct Pair {
      double route0 = 0, route1 = 0, moved = 0;
      long long steps_moved = 0;
    };
    std::map<std::pair<int, int>, Pair> pairs;
    for (const LinkRow& l : d.links) {
      if (l.route0_bytes + l.route1_bytes <= 0) continue;
      Pair& x = pairs[{l.src, l.dst}];
      x.route0 += l.route0_bytes, x.route1 += l.route1_bytes, x.moved += l.moved_bytes;
      x.steps_moved += l.moved_bytes > 0;
    }
    if (!pairs.empty()) {
      std::printf("\npairs with routes (from /links: bytes their senders put on each route; moved: "
                  "against the decision's shares, adaptive routes)\n");
      std::printf("  %-24s %14s %14s %14s %12s\n", "pair", "first route", "second route", "moved",
                  "steps moved");
      for (const auto& [key, x] : pairs) {
        const std::string name = dc_name(m, key.first) + " -> " + dc_name(m, key.second);
        std::printf("  %-24s %14s %14s %14s %12lld\n", name.c_str(), human_bytes(x.route0).c_str(),
                    human_bytes(x.route1).c_str(), human_bytes(x.moved).c_str(), x.steps_moved);
      }
    }
  }

  // Controller decisions per slot.
  std::printf("\ndecisions\n");
  if (d.decisions.empty()) std::printf("  (none)\n");
  std::map<std::string, std::pair<long long, std::set<std::string>>> slots;
  for (const DecisionRow& r : d.decisions) {
    auto& s = slots[r.slot];
    ++s.first;
    s.second.insert(r.policy);
  }
  for (const auto& [slot, s] : slots) {
    std::string policies;
    for (const auto& p : s.second) policies += (policies.empty() ? "" : ", ") + p;
    std::printf("  %-16s %8lld   (%s)\n", slot.c_str(), s.first, policies.c_str());
  }
}

}  // namespace

int cmd_report(const std::string& trace_path) {
  TraceData d;
  try {
    d = read_trace(trace_path, /*with_offsets=*/false);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strait report: %s\n", e.what());
    return 2;
  }
  print_summary(trace_path, d);
  std::fflush(stdout);
  return 0;
}

}  // namespace strait
