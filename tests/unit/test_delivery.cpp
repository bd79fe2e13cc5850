// test_delivery.cpp — counting a link's delivered bytes inside its timed intervals
// (src/net/delivery.hpp): intervals merge per link, every chunk inside counts whichever flow it
// belongs to, the chunk that opens an interval does not, and links do not mix.
#include <gtest/gtest.h>

#include <vector>

#include "net/delivery.hpp"

using strait::Arrival;
using strait::bytes_inside;
using strait::LinkInterval;
using strait::merge_per_link;

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
