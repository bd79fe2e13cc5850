// test_exchange.cpp — the controller's per-step exchange over real MPI (run with 4 ranks: DCs of
// 1, 2 and 1 ranks): every field of every rank's described record (its completions included)
// and its link counters arrive intact at rank 0 in one gather, counters summed per link; rank 0's
// reply and a decision record's bytes reach every rank; two estimates of the clock offsets
// agree within their error bounds.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "config/config.hpp"
#include "control/exchange.hpp"
#include "topo/clock.hpp"
#include "topo/topology.hpp"

using namespace strait;

namespace {

Config three_dcs() {
  int r = 0, pid = static_cast<int>(getpid());
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);  // one file, named by rank 0
  char path[64];
  std::snprintf(path, sizeof path, "/tmp/strait-ex-%d.toml", pid);
  if (r == 0)
    std::ofstream(path) << "[[datacenter]]\nname = \"a\"\nranks = 1\n"
                           "[[datacenter]]\nname = \"b\"\nranks = 2\n"
                           "[[datacenter]]\nname = \"c\"\nranks = 1\n"
                           "[model]\nlayers = 1\nd_model = 8\nheads = 1\nd_ff = 8\nseq_len = 4\n"
                           "[train]\nglobal_batch = 3\ncorpus = \"/usr/share/common-licenses\"\n";
  MPI_Barrier(MPI_COMM_WORLD);
  Config c = load_config(path);
  MPI_Barrier(MPI_COMM_WORLD);
  if (r == 0) std::remove(path);
  return c;
}

}  // namespace

TEST(Exchange, EveryFieldOfEveryRankArrivesAndTheReplyReachesAll) {
  const Config cfg = three_dcs();
  const Topology topo = make_topology(cfg, MPI_COMM_WORLD);
  Exchange ex(topo);
  const int r = topo.world_rank, n = topo.num_dcs;
  RankReport me;
  me.step = 41;
  me.stop = r == 2;
  me.n_done = r % 3 == 0 ? 2 : 1;
  me.compute_ms = 10.5 + r, me.emulated_ms = 0.25 * r, me.loss = 3.0 + r / 8.0;
  me.split = 1.0 / (1 + r), me.ready_ms = 1000.0 + r;
  for (int i = 0; i < me.n_done; ++i)
    me.done[i] = Completion{40 + i, 5.0 + r, 0.5 * i, 0.125 * r, i};
  std::vector<LinkCounters> links(n * n);
  for (int l = 0; l < n * n; ++l)
    links[l] = LinkCounters{100.0 * l + r, 1.0 * l, 2.0 * r, 1.0, 0.5 * r, 3.0 * l};

  bool decided = false;
  std::vector<char> bytes;
  const Reply reply = ex.run(me, links, [&](const Exchange::Gathered& g, std::vector<char>& out) {
    decided = true;
    EXPECT_EQ(g.ranks.size(), 4u);
    for (int k = 0; k < 4; ++k) {
      const RankReport& m = g.ranks[k];
      EXPECT_EQ(m.step, 41);
      EXPECT_EQ(m.stop, k == 2 ? 1 : 0);
      EXPECT_EQ(m.n_done, k % 3 == 0 ? 2 : 1);
      EXPECT_EQ(m.compute_ms, 10.5 + k);
      EXPECT_EQ(m.emulated_ms, 0.25 * k);
      EXPECT_EQ(m.loss, 3.0 + k / 8.0);
      EXPECT_EQ(m.split, 1.0 / (1 + k));
      EXPECT_EQ(m.ready_ms, 1000.0 + k);
      for (int i = 0; i < m.n_done; ++i) {
        EXPECT_EQ(m.done[i].step, 40 + i);
        EXPECT_EQ(m.done[i].sync_ms, 5.0 + k);
        EXPECT_EQ(m.done[i].wait_ms, 0.5 * i);
        EXPECT_EQ(m.done[i].optimizer_ms, 0.125 * k);
        EXPECT_EQ(m.done[i].overlapped, i);
      }
    }
    for (int l = 0; l < n * n; ++l) {  // summed over the four ranks
      EXPECT_EQ(g.links[l].bytes, 4 * 100.0 * l + (0 + 1 + 2 + 3));
      EXPECT_EQ(g.links[l].wire_ms, 4 * 1.0 * l);
      EXPECT_EQ(g.links[l].latency_ms, 2.0 * (0 + 1 + 2 + 3));
      EXPECT_EQ(g.links[l].latency_samples, 4.0);
      EXPECT_EQ(g.links[l].queued_ms, 0.5 * (0 + 1 + 2 + 3));
      EXPECT_EQ(g.links[l].shaper_busy_ms, 4 * 3.0 * l);
    }
    out = {'p', 'l', 'a', 'n', 0, 7};
    Reply rep;
    rep.stop = 1;
    rep.loss = 2.75;
    return rep;
  }, bytes);
  EXPECT_EQ(decided, r == 0);
  EXPECT_EQ(reply.stop, 1);
  EXPECT_EQ(reply.loss, 2.75);
  EXPECT_EQ(reply.has_plan, 1);
  EXPECT_EQ(bytes, (std::vector<char>{'p', 'l', 'a', 'n', 0, 7}));

  // No record: only the reply travels.
  const Reply quiet = ex.run(me, links, [](const Exchange::Gathered&, std::vector<char>&) {
    return Reply{};
  }, bytes);
  EXPECT_EQ(quiet.has_plan, 0);
  EXPECT_EQ(quiet.stop, 0);
}

TEST(Clock, TwoEstimatesAgreeWithinTheirBounds) {
  // MPI_Wtime may count from a per-process origin (Open MPI does), so even on one machine the
  // offsets need not be 0; what must hold is that the true offset lies within each estimate's
  // bound, so two estimates are within the sum of their bounds of each other.
  const ClockOffsets a = estimate_clock_offsets(MPI_COMM_WORLD);
  const ClockOffsets b = estimate_clock_offsets(MPI_COMM_WORLD);
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  EXPECT_LE(std::abs(a.offset_s - b.offset_s), a.error_s + b.error_s + 1e-6) << "rank " << r;
  EXPECT_GT(a.error_s + (r == 0 ? 1 : 0), 0.0);
  if (r == 0) {
    EXPECT_EQ(a.all_offset_s.size(), 4u);
    EXPECT_EQ(a.all_offset_s[0], 0.0);
  }
}
