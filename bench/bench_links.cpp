// bench_links.cpp — link fidelity: what the emulated WAN delivers against what it was told.
// Run with 3 ranks, one per datacenter (a, b, c), on a config whose links all have the capacity
// and latency under test (scripts/bench-links.sh writes them). Through the transport point
// (src/net/transport.hpp) it measures, on a→b:
//   latency    one-way time of a 1-byte message: half the median round trip of 15 ping-pongs;
//   throughput large messages of X and 2X bytes (X ≈ 0.5 s of link time): X·8 / (t(2X) − t(X)),
//              so fixed costs (latency, TCP slow start, rendezvous) cancel;
//   concurrent two transfers at once on a→b from two threads (two channels, like two experts'
//              syncs), X/2 and X bytes each: each flow's own rate, which should be half the
//              capacity;
//   relay      a→c→b, X and 2X bytes as for throughput, against the bottleneck capacity;
//   wire       the throughput transfers again, timed by the transport's own wire measurement
//              (the trace's /links: sender's first byte to receiver's last, on rank 0's clock):
//              X·8 / (wire(2X) − wire(X)), the figure to hold against iperf3.
// For --backend software the config says shaper = "software"; for tc (under scripts/netns-run)
// shaper = "none" and the kernel shapes. Appends CSV rows (backend, kind, src, dst,
// configured_gbps, achieved_gbps, configured_ms, achieved_ms, bytes, repeats) and prints them.
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "config/config.hpp"
#include "core/check.hpp"
#include "net/transport.hpp"
#include "topo/clock.hpp"

using namespace strait;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// Time of one transfer list, from a common start (barrier) to the receiver's completion.
double timed(Transport& tr, MPI_Comm ch, const std::vector<Transfer>& xs, int tag) {
  MPI_CHECK(MPI_Barrier(ch));
  const double t0 = MPI_Wtime();
  tr.execute(ch, rank(), xs, tag);
  double dt = MPI_Wtime() - t0, worst = 0;
  MPI_CHECK(MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, ch));
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (argc < 4) {
    if (rank() == 0) std::fprintf(stderr, "usage: bench_links CONFIG BACKEND CSV\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const std::string backend = argv[2], csv_path = argv[3];
  Config cfg;
  try {
    cfg = load_config(argv[1]);
  } catch (const ConfigError& e) {
    if (rank() == 0) std::fprintf(stderr, "bench_links: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  STRAIT_CHECK(cfg.world_size() == 3 && cfg.datacenters.size() == 3, "needs 3 DCs of 1 rank");
  const LinkConfig& ab = cfg.links[0];  // a→b (links are ordered by (from, to))
  const double cap = ab.capacity_gbps, lat = ab.latency_ms;
  MPI_Comm ch1, ch2;
  MPI_Comm_dup(MPI_COMM_WORLD, &ch1);
  MPI_Comm_dup(MPI_COMM_WORLD, &ch2);
  Transport tr(cfg, MPI_Wtime());
  tr.set_clock_offset(estimate_clock_offsets(MPI_COMM_WORLD).offset_s);  // wire times, as in a run

  struct Row {
    std::string kind;
    int src, dst;
    double conf_gbps, got_gbps, conf_ms, got_ms, bytes;
    int repeats;
  };
  std::vector<Row> rows;

  // Latency: ping-pong of 1 byte a→b→a.
  char one = 1, back = 0;
  std::vector<double> rtt;
  for (int i = 0; i < 16; ++i) {
    MPI_CHECK(MPI_Barrier(ch1));
    const double t0 = MPI_Wtime();
    tr.execute(ch1, rank(), {Transfer{{0, 1}, &one, &back, 1}}, 2);
    tr.execute(ch1, rank(), {Transfer{{1, 0}, &back, &one, 1}}, 3);
    double dt = MPI_Wtime() - t0, w = 0;
    MPI_CHECK(MPI_Allreduce(&dt, &w, 1, MPI_DOUBLE, MPI_MAX, ch1));
    if (i > 0) rtt.push_back(w);  // the first round warms up connections
  }
  const double one_way = median(rtt) / 2;
  rows.push_back({"latency", 0, 1, cap, 0, lat, one_way * 1e3, 1, static_cast<int>(rtt.size())});

  // Throughput: X and 2X bytes, X worth about 0.5 s of link time (at least 1 MiB).
  const size_t big = std::max<size_t>(1 << 20, static_cast<size_t>(cap * 1e9 / 8 * 0.5));
  std::vector<char> sbuf(2 * big, 7), rbuf(2 * big), sbuf2(2 * big, 9), rbuf2(2 * big);
  auto rate_of = [&](const std::vector<int>& path, int tag) {
    std::vector<double> t1, t2;
    for (int i = 0; i < 3; ++i) {
      t1.push_back(timed(tr, ch1, {Transfer{path, sbuf.data(), rbuf.data(), big}}, tag));
      t2.push_back(timed(tr, ch1, {Transfer{path, sbuf.data(), rbuf.data(), 2 * big}}, tag));
    }
    if (std::getenv("STRAIT_BENCH_VERBOSE") && rank() == 0)
      std::printf("  path of %zu DCs: t(X) %.1f ms, t(2X) %.1f ms, X = %zu bytes\n", path.size(),
                  median(t1) * 1e3, median(t2) * 1e3, big);
    return big * 8.0 / std::max(1e-9, median(t2) - median(t1)) / 1e9;
  };
  rows.push_back({"throughput", 0, 1, cap, rate_of({0, 1}, 4), lat, 0, static_cast<double>(big), 3});

  // The same transfers as the wire measurement sees them (what /links reports).
  auto wire_ms = [&](size_t bytes) {
    tr.take_counters();
    timed(tr, ch1, {Transfer{{0, 1}, sbuf.data(), rbuf.data(), bytes}}, 4);
    const auto c = tr.take_counters();
    double w = c[0 * 3 + 1].wire_ms, all = 0;  // measured by the receiver (rank 1)
    MPI_CHECK(MPI_Allreduce(&w, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    return all;
  };
  {
    std::vector<double> w1, w2;
    for (int i = 0; i < 3; ++i) w1.push_back(wire_ms(big)), w2.push_back(wire_ms(2 * big));
    rows.push_back({"wire", 0, 1, cap, big * 8.0 / std::max(1e-9, (median(w2) - median(w1)) / 1e3) / 1e9,
                    lat, median(w1) - big * 8.0 / (cap * 1e9) * 1e3, static_cast<double>(big), 3});
  }

  // Two concurrent flows on a→b from two threads (each its own channel), X/2 and then X bytes
  // each; a flow's rate is (X/2)·8 / (t(X) − t(X/2)), so fixed costs cancel as above.
  auto concurrent = [&](size_t bytes, double t_flow[2]) {
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    auto flow = [&](int k, MPI_Comm ch, const char* s, char* r) {
      const double t0 = MPI_Wtime();
      tr.execute(ch, rank(), {Transfer{{0, 1}, s, r, bytes}}, 5 + k);
      t_flow[k] = MPI_Wtime() - t0;
    };
    std::thread th(flow, 1, ch2, sbuf2.data(), rbuf2.data());
    flow(0, ch1, sbuf.data(), rbuf.data());
    th.join();
    for (int k = 0; k < 2; ++k) {
      double w = 0;
      MPI_CHECK(MPI_Allreduce(&t_flow[k], &w, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
      t_flow[k] = w;
    }
  };
  const size_t half = big / 2;
  double t_half[2], t_full[2];
  concurrent(half, t_half);
  concurrent(big, t_full);
  for (int k = 0; k < 2; ++k)
    rows.push_back({"concurrent", 0, 1, cap / 2,
                    half * 8.0 / std::max(1e-9, t_full[k] - t_half[k]) / 1e9, lat, 0,
                    static_cast<double>(big), 1});

  // Relay a→c→b: capacity of the bottleneck hop, both latencies.
  const LinkConfig* ac = nullptr;
  const LinkConfig* cb = nullptr;
  for (const auto& l : cfg.links) {
    if (l.from == cfg.datacenters[0].name && l.to == cfg.datacenters[2].name) ac = &l;
    if (l.from == cfg.datacenters[2].name && l.to == cfg.datacenters[1].name) cb = &l;
  }
  const double relay_cap = std::min(ac->capacity_gbps, cb->capacity_gbps);
  const double relay_lat = ac->latency_ms + cb->latency_ms;
  rows.push_back({"relay", 0, 1, relay_cap, rate_of({0, 2, 1}, 7), relay_lat, 0,
                  static_cast<double>(big), 3});

  if (rank() == 0) {
    std::FILE* f = std::fopen(csv_path.c_str(), "a");
    STRAIT_CHECK(f != nullptr, "cannot append to " + csv_path);
    for (const auto& r : rows) {
      std::fprintf(f, "%s,%s,%d,%d,%.6g,%.6g,%.6g,%.6g,%.0f,%d\n", backend.c_str(), r.kind.c_str(),
                   r.src, r.dst, r.conf_gbps, r.got_gbps, r.conf_ms, r.got_ms, r.bytes, r.repeats);
      std::printf("%-9s %-10s %d->%d  configured %8.4f Gbit/s %7.2f ms   achieved %8.4f Gbit/s %7.2f ms\n",
                  backend.c_str(), r.kind.c_str(), r.src, r.dst, r.conf_gbps, r.conf_ms, r.got_gbps,
                  r.got_ms);
    }
    std::fclose(f);
  }
  tr.flush();
  MPI_Comm_free(&ch1);
  MPI_Comm_free(&ch2);
  MPI_Finalize();
  return 0;
}
