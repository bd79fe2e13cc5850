// test_delivery.cpp — counting a link's delivered bytes inside its timed intervals
// (src/net/delivery.hpp): intervals merge per link, every chunk inside counts whichever flow it
// belongs to, the chunk that opens an interval does not, and links do not mix; an interval whose
// chunks came in a burst after a hold-up is no sample of the link's rate (paced_only), only a
// lower bound, kept apart.
#include <gtest/gtest.h>

#include <vector>

#include "net/delivery.hpp"

using strait::Arrival;
using strait::bytes_inside;
using strait::last_per_link;
using strait::LinkInterval;
using strait::merge_per_link;
using strait::paced_only;

TEST(Delivery, OverlappingIntervalsOfALinkMergeOthersStayApart) {
  const std::vector<LinkInterval> m = merge_per_link(
      {{1, 0.30, 0.40}, {1, 0.10, 0.20}, {1, 0.15, 0.25}, {2, 0.12, 0.22}, {1, 0.25, 0.28}});
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].link, 1);
  EXPECT_DOUBLE_EQ(m[0].from, 0.10);
  EXPECT_DOUBLE_EQ(m[0].to, 0.28);  // 0.10-0.20, 0.15-0.25 and the touching 0.25-0.28
  EXPECT_DOUBLE_EQ(m[1].from, 0.30);
  EXPECT_DOUBLE_EQ(m[1].to, 0.40);
  EXPECT_EQ(m[2].link, 2);
  EXPECT_DOUBLE_EQ(m[2].from, 0.12);
}

// Each link's latest interval (the one that ended last), and the chunks inside it alone: what
// the link did in its last transfer of the step (a change within the step shows there).
TEST(Delivery, TheLastIntervalOfEachLinkIsItsLatest) {
  const std::vector<LinkInterval> m =
      merge_per_link({{1, 0.10, 0.20}, {2, 0.05, 0.30}, {1, 0.40, 0.45}, {1, 0.25, 0.30}});
  const std::vector<LinkInterval> last = last_per_link(m);
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[0].link, 1);
  EXPECT_DOUBLE_EQ(last[0].from, 0.40);
  EXPECT_DOUBLE_EQ(last[0].to, 0.45);
  EXPECT_EQ(last[1].link, 2);
  EXPECT_DOUBLE_EQ(last[1].to, 0.30);
  const std::vector<Arrival> arrived{{1, 0.15, 100}, {1, 0.42, 10}, {1, 0.45, 20}, {2, 0.20, 5}};
  const std::vector<double> b = bytes_inside(last, arrived, 3);
  EXPECT_DOUBLE_EQ(b[1], 30.0);  // the two chunks of the last interval, not the first's
  EXPECT_DOUBLE_EQ(b[2], 5.0);
  EXPECT_TRUE(last_per_link({}).empty());
}

// The case that made a clear link look congested: a relayed flow streams on link 5 (its chunks
// timed from 0.100 to 0.140) while a first hop's flow crosses it too, its chunks found waiting
// (not timed, so no interval of its own). The link delivered both flows' chunks in that time.
TEST(Delivery, EveryChunkInsideCountsNotOnlyTheTimedFlows) {
  std::vector<Arrival> arrived;
  for (int i = 0; i <= 4; ++i) arrived.push_back({5, 0.100 + 0.010 * i, 4096});  // relayed, timed
  for (int i = 0; i < 8; ++i) arrived.push_back({5, 0.105 + 0.004 * i, 16384});  // first hop's
  arrived.push_back({5, 0.200, 16384});   // after the interval
  arrived.push_back({7, 0.120, 65536});   // another link
  const std::vector<LinkInterval> m = merge_per_link({{5, 0.100, 0.140}});
  const std::vector<double> b = bytes_inside(m, arrived, 9);
  // The relayed flow's chunks after the first (4 × 4096) and all 8 of the first hop's.
  EXPECT_DOUBLE_EQ(b[5], 4 * 4096.0 + 8 * 16384.0);
  EXPECT_DOUBLE_EQ(b[7], 0.0);
  // A second interval on the link, and a chunk in the gap between the two: the gap's chunk does
  // not count, the second interval's opening chunk does not either, its others do.
  arrived.push_back({5, 0.150, 16384});   // in the gap
  arrived.push_back({5, 0.160, 4096});    // opens the second interval
  arrived.push_back({5, 0.170, 4096});
  const std::vector<double> two =
      bytes_inside(merge_per_link({{5, 0.100, 0.140}, {5, 0.160, 0.180}}), arrived, 9);
  EXPECT_DOUBLE_EQ(two[5], b[5] + 4096.0);
  // Its rate over the 40 ms: 29.5 Mbit/s, where the relayed flow's own bytes gave 3.3.
  EXPECT_NEAR(b[5] * 8 / 0.040 / 1e6, 29.5, 0.1);
}

// mesh6-c's fast links as their receivers saw them (one `direct` run; the interval opens with a
// 72 KB chunk at 0): a 3.5 Gbit/s link whose chunks came at 0.00, 0.47 and 5.13 ms — the second
// in the same poll as the first, the third after a 4.7 ms pause — reads 0.34 Gbit/s, the host's
// pace; a 1 Gbit/s link's chunks every ~0.6 ms, and a congested link's every ~16.5 ms, are the
// links' own and stay. A pause that no burst follows (chunks every 1.7–2.2 ms on a 3.5 Gbit/s
// link) cannot be told from a slow link, and stays too.
TEST(Delivery, AChunkInABurstAfterAHoldUpMakesTheIntervalNoSample) {
  const double c = 72000;
  std::vector<Arrival> arrived;
  auto flow = [&](int link, double from, std::vector<double> at) {
    arrived.push_back({link, from, c});
    for (double t : at) arrived.push_back({link, from + t * 1e-3, c});
    return LinkInterval{link, from, from + at.back() * 1e-3};
  };
  const LinkInterval held_up = flow(1, 2.035, {0.00, 0.47, 5.13});
  const LinkInterval paced = flow(2, 0.261, {0.60, 1.18, 1.90});
  const LinkInterval congested = flow(3, 8.157, {16.47, 33.27, 50.05});
  const LinkInterval slow_host = flow(4, 4.448, {1.68, 3.83});
  // Two chunks 0.22 ms apart, a 3.45 ms pause, then one 0.15 ms after the last.
  const LinkInterval late_pair = flow(5, 4.568, {0.22, 3.67, 3.82});
  // A 0.1 Gbit/s link, 72 KB every 5.76 ms, one chunk held 9 ms and the next 0.2 ms after it:
  // a burst, but the hold-up is a sixth of the interval, which still reads the link (0.09).
  const LinkInterval slow_link =
      flow(6, 1.0, {5.76, 11.52, 17.28, 23.04, 28.80, 34.56, 43.56, 43.76, 49.52, 55.28});
  arrived.push_back({2, 0.2615, 0});  // a header of 0 bytes in the same poll: not a chunk
  const std::vector<LinkInterval> all =
      merge_per_link({held_up, paced, congested, slow_host, late_pair, slow_link});
  std::vector<LinkInterval> held;
  const std::vector<LinkInterval> kept = paced_only(all, arrived, 0.5, 0.5, &held);
  std::vector<int> links, held_links;
  for (const LinkInterval& iv : kept) links.push_back(iv.link);
  for (const LinkInterval& iv : held) held_links.push_back(iv.link);
  EXPECT_EQ(links, (std::vector<int>{2, 3, 4, 6}));
  // The ones left out are kept apart (their rate, a lower bound: /links.held_gbps).
  EXPECT_EQ(held_links, (std::vector<int>{1, 5}));
  EXPECT_NEAR(bytes_inside(held, arrived, 7)[1], 2 * c, 1e-9);  // those after its start
  // The held interval's rate as read: three chunks in 5.13 ms.
  EXPECT_NEAR(3 * c * 8 / 5.13e-3 / 1e9, 0.34, 0.01);
  // With no burst test (a share of 0) every interval stays.
  EXPECT_EQ(paced_only(all, arrived, 0.0, 0.5).size(), all.size());
  // With no pause test (a share of 0) the burst alone leaves the slow link's interval out too.
  EXPECT_EQ(paced_only(all, arrived, 0.5, 0.0).size(), 3u);
}
