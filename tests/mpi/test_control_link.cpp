// test_control_link.cpp — the controller's link over real MPI and the shaped transport (run with
// 4 ranks: DCs of 1, 2 and 1 ranks; links 0.1 Gbit/s, 5 ms). Every field of every rank's
// described record (its completions included) and its link counters arrive intact at rank 0,
// counters summed per link; rank 0's reply and a decision record's bytes reach every rank; rounds
// come back in post order when several are posted before the first is awaited (the lag); the
// controller's own traffic crosses the links (bytes and latency samples in the counters, a round
// trip of at least two one-way latencies); the same without the link's thread; and two estimates
// of the clock offsets agree within their error bounds.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "tests/common/checking_tree.hpp"
#include "config/config.hpp"
#include "control/control_link.hpp"
#include "topo/clock.hpp"
#include "topo/topology.hpp"

using namespace strait;

namespace {

int my_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

Config three_dcs() {
  int pid = static_cast<int>(getpid());
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);  // one file, named by rank 0
  char path[64];
  std::snprintf(path, sizeof path, "/tmp/strait-cl-%d.toml", pid);
  if (my_rank() == 0)
    std::ofstream(path) << "[[datacenter]]\nname = \"a\"\nranks = 1\n"
                           "[[datacenter]]\nname = \"b\"\nranks = 2\n"
                           "[[datacenter]]\nname = \"c\"\nranks = 1\n"
                           "[network]\ndefault_capacity_gbps = 0.1\ndefault_latency_ms = 5\n"
                           "[model]\nlayers = 1\nd_model = 8\nheads = 1\nd_ff = 8\nseq_len = 4\n"
                           "[train]\nglobal_batch = 3\ncorpus = \"/usr/share/common-licenses\"\n";
  MPI_Barrier(MPI_COMM_WORLD);
  Config c = load_config(path);
  MPI_Barrier(MPI_COMM_WORLD);
  if (my_rank() == 0) std::remove(path);
  return c;
}

RankReport report_of(int r, int64_t step) {
  RankReport me;
  me.step = step;
  me.stop = r == 2;
  me.n_done = r % 3 == 0 ? 2 : 1;
  me.batch = 1 + r;
  me.compute_ms = 10.5 + r, me.emulated_ms = 0.25 * r, me.loss = 3.0 + r / 8.0;
  me.split = 1.0 / (1 + r), me.ready_ms = 1000.0 + r;
  me.control_wait_ms = 0.5 + r, me.control_rtt_ms = 20.0 + r, me.iteration_ms = 100.0 + r;
  for (int i = 0; i < me.n_done; ++i)
    me.done[i] = Completion{step - 1 + i, 5.0 + r, 0.5 * i, 0.125 * r, i};
  return me;
}

// Rank 0's checks on a round; returns a reply with a small record for step 0's round.
Reply check_round(const ControlLink::Gathered& g, std::vector<char>& out, int n) {
  EXPECT_EQ(g.ranks.size(), 4u);
  for (int k = 0; k < 4; ++k) {
    const RankReport& m = g.ranks[k];
    const RankReport want = report_of(k, g.seq);
    EXPECT_EQ(m.step, want.step);
    EXPECT_EQ(m.stop, want.stop);
    EXPECT_EQ(m.n_done, want.n_done);
    EXPECT_EQ(m.batch, want.batch);
    EXPECT_EQ(m.compute_ms, want.compute_ms);
    EXPECT_EQ(m.emulated_ms, want.emulated_ms);
    EXPECT_EQ(m.loss, want.loss);
    EXPECT_EQ(m.split, want.split);
    EXPECT_EQ(m.ready_ms, want.ready_ms);
    EXPECT_EQ(m.control_wait_ms, want.control_wait_ms);
    EXPECT_EQ(m.control_rtt_ms, want.control_rtt_ms);
    EXPECT_EQ(m.iteration_ms, want.iteration_ms);
    for (int i = 0; i < m.n_done; ++i) {
      EXPECT_EQ(m.done[i].step, want.done[i].step);
      EXPECT_EQ(m.done[i].sync_ms, want.done[i].sync_ms);
      EXPECT_EQ(m.done[i].wait_ms, want.done[i].wait_ms);
      EXPECT_EQ(m.done[i].optimizer_ms, want.done[i].optimizer_ms);
      EXPECT_EQ(m.done[i].overlapped, want.done[i].overlapped);
    }
  }
  for (int l = 0; l < n * n; ++l) {  // summed over the four ranks
    EXPECT_EQ(g.links[l].bytes, 4 * 100.0 * l + (0 + 1 + 2 + 3));
    EXPECT_EQ(g.links[l].control_bytes, 7.0 * (0 + 1 + 2 + 3));
    EXPECT_EQ(g.links[l].wire_ms, 4 * 1.0 * l);
    EXPECT_EQ(g.links[l].latency_ms, 2.0 * (0 + 1 + 2 + 3));
    EXPECT_EQ(g.links[l].latency_samples, 4.0);
    EXPECT_EQ(g.links[l].stream_bytes, 4 * 9.0 * l);
    EXPECT_EQ(g.links[l].stream_ms, 0.25 * (0 + 1 + 2 + 3));
    EXPECT_EQ(g.links[l].queued_ms, 0.5 * (0 + 1 + 2 + 3));
    EXPECT_EQ(g.links[l].shaper_busy_ms, 4 * 3.0 * l);
  }
  Reply rep;
  rep.stop = g.seq == 1;
  rep.loss = 2.75 + static_cast<double>(g.seq);
  if (g.seq == 0) out = {'p', 'l', 'a', 'n', 0, 7};
  return rep;
}

void two_rounds(bool threaded) {
  const Config cfg = three_dcs();
  const Topology topo = make_topology(cfg, MPI_COMM_WORLD);
  Transport tr(cfg, MPI_Wtime());
  tr.set_clock_offset(estimate_clock_offsets(MPI_COMM_WORLD).offset_s);  // as a run does
  const int r = topo.world_rank, n = topo.num_dcs;
  int decided = 0;
  std::vector<LinkCounters> links(n * n);
  for (int l = 0; l < n * n; ++l)
    links[l] = LinkCounters{.bytes = 100.0 * l + r, .control_bytes = 7.0 * r, .wire_ms = 1.0 * l,
                            .latency_ms = 2.0 * r, .latency_samples = 1.0, .stream_bytes = 9.0 * l,
                            .stream_ms = 0.25 * r, .queued_ms = 0.5 * r, .shaper_busy_ms = 3.0 * l};
  {
    ControlLink link(topo, tr, threaded,
                     [&](const ControlLink::Gathered& g, std::vector<char>& out) {
                       ++decided;
                       return check_round(g, out, n);
                     });
    // Two posts before the first wait: the link answers them in order.
    EXPECT_EQ(link.post(report_of(r, 0), links), 0);
    EXPECT_EQ(link.post(report_of(r, 1), links), 1);
    std::vector<char> bytes;
    double blocked = 0, rtt = 0;
    const Reply a = link.wait(0, bytes, blocked, rtt);
    EXPECT_EQ(a.stop, 0);
    EXPECT_EQ(a.loss, 2.75);
    EXPECT_EQ(a.has_plan, 1);
    EXPECT_EQ(bytes, (std::vector<char>{'p', 'l', 'a', 'n', 0, 7}));
    // A round trip crosses two 5 ms links at least; rank 0 (the controller) has the reply when
    // the others' reports have crossed one (its own replies' delivery is the courier's).
    EXPECT_GE(rtt, (r == 0 ? 1 : 2) * 5.0 * 0.99) << "rank " << r;
    const Reply b = link.wait(1, bytes, blocked, rtt);
    EXPECT_EQ(b.stop, 1);
    EXPECT_EQ(b.loss, 3.75);
    EXPECT_EQ(b.has_plan, 0);
  }
  EXPECT_EQ(decided, r == 0 ? 2 : 0);
  // The controller's traffic crossed the links: the bundles up, the replies (and the record)
  // down, each a small one-chunk message with a latency sample of about 5 ms.
  std::vector<LinkCounters> mine = tr.take_counters(), all(mine.size());
  MPI_Allreduce(mine.data(), all.data(), static_cast<int>(sizeof(LinkCounters) / sizeof(double) * mine.size()), MPI_DOUBLE, MPI_SUM,
                MPI_COMM_WORLD);
  const double rec = sizeof(RankReport) + n * n * sizeof(LinkCounters);
  EXPECT_EQ(all[1 * n + 0].bytes, 2 * 2 * rec);  // two rounds of DC b's two records
  EXPECT_EQ(all[1 * n + 0].control_bytes, all[1 * n + 0].bytes);  // all of it the controller's
  EXPECT_EQ(all[2 * n + 0].bytes, 2 * 1 * rec);
  EXPECT_EQ(all[0 * n + 1].bytes, 2 * sizeof(Reply) + 6);
  EXPECT_EQ(all[0 * n + 2].bytes, 2 * sizeof(Reply) + 6);
  // Three small messages went a → b; each gives a sample when b saw it arrive (a message found
  // already waiting — b busy, as on a loaded machine — says when b looked, and gives none).
  // A sample is never below the link's latency; in a checking tree (slow, TSan's threads) b can
  // be busy for all three, so there the count and the upper bound are not checked.
  const double samples = all[0 * n + 1].latency_samples;
  EXPECT_LE(samples, 3.0);
  if (samples > 0) {
    EXPECT_GE(all[0 * n + 1].latency_ms / samples, 5.0 * 0.99);
  }
  if (strait::testing::timing_checked()) {
    EXPECT_GE(samples, 1.0);
    EXPECT_LE(all[0 * n + 1].latency_ms / samples, 5.0 + 5.0);
  }
  EXPECT_EQ(all[1 * n + 2].bytes, 0.0);  // nothing between b and c
}

}  // namespace

TEST(ControlLink, RoundsCarryEveryFieldOverTheShapedLinksInOrder) { two_rounds(true); }

TEST(ControlLink, WithoutItsThreadTheRoundsRunInline) { two_rounds(false); }

TEST(Clock, TwoEstimatesAgreeWithinTheirBounds) {
  // MPI_Wtime may count from a per-process origin (Open MPI does), so even on one machine the
  // offsets need not be 0; what must hold is that the true offset lies within each estimate's
  // bound, so two estimates are within the sum of their bounds of each other.
  const ClockOffsets a = estimate_clock_offsets(MPI_COMM_WORLD);
  const ClockOffsets b = estimate_clock_offsets(MPI_COMM_WORLD);
  const int r = my_rank();
  EXPECT_LE(std::abs(a.offset_s - b.offset_s), a.error_s + b.error_s + 1e-6) << "rank " << r;
  if (r == 0) {
    EXPECT_EQ(a.all_offset_s.size(), 4u);
    EXPECT_EQ(a.all_offset_s[0], 0.0);
  }
}
