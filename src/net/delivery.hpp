// delivery.hpp — a link's delivery rate from what its receiver saw arrive: the chunks (of any
// flow) that arrived inside the link's timed intervals, merged per link. No MPI, no clock: the
// transport (transport.cpp) records the arrivals and the intervals, this file only counts, so the
// counting is unit-testable (tests/unit/test_delivery.cpp).
//
// Why every chunk and not the timed flow's own: an interval is timed from one flow's chunks, but
// the link delivered every chunk that arrived in it, whichever flow it belonged to and whether
// or not that flow's own arrivals could be timed. Counting only the timed flows' bytes read a
// flow's SHARE as the link's rate: under tc detour3's clear c→b (0.1 Gbit/s) carried a relayed
// part that streamed beside a first hop's part whose chunks were found already waiting (not
// timed); the relayed part's bytes over its streaming time read 0.009-0.06 Gbit/s — below the
// link's goodput over the whole step in 133 of 133 such readings in 31 runs — and the
// controller believed the detour congested (docs/paths.md, "A share is not the link's rate").
// The cost: a chunk counts at the time its receiver found it, and one found already waiting (its
// flow untimed) may have crossed before the interval began, so the count can exceed what the
// link delivered in it. Under tc detour3 stream readings above 1.2x the configured rate went from
// 12 of 4251 to 20 of 3602 (five runs each); a link's reference, the 90th percentile of its
// readings, keeps such outliers from becoming its best.
#pragma once
#include <vector>

namespace strait {

struct Arrival {
  int link;      // directed link index (src·n + dst)
  double at;     // when the receiver found the chunk complete (rank 0's clock, seconds)
  double bytes;  // the chunk's payload
};

struct LinkInterval {
  int link;
  double from, to;  // seconds, from < to: a flow's first timed arrival to its last (or, merged,
                    // a union of such)
};

// The intervals sorted by link and start, overlapping ones of a link merged into one.
std::vector<LinkInterval> merge_per_link(std::vector<LinkInterval> v);

// Of each link's intervals in `merged` (merge_per_link's order, as paced_only keeps it), the one
// that ended last: what the link did latest in the
// counted time. A link whose rate changed within a step reads its new rate over that interval
// while the whole step's figure blends both (LinkCounters::late_*, docs/paths.md "A change
// within the step").
std::vector<LinkInterval> last_per_link(const std::vector<LinkInterval>& merged);

// Per link (`links` of them), the bytes of the chunks that arrived inside one of `merged`'s
// intervals: after its start (the first timed chunk itself, whose time opens the interval, does
// not count: its bytes crossed before it) up to its end.
std::vector<double> bytes_inside(const std::vector<LinkInterval>& merged,
                                 const std::vector<Arrival>& arrived, int links);

// The intervals of `merged` whose chunks came paced: none (of more than 0 bytes) sooner after
// the one before it — or after the interval's start — than `burst` times the interval's mean
// time per byte, or, if one did, no wait for a chunk as long as `pause` times the interval.
// Under the software shaper a link's chunks leave at its rate, one after the other, so a chunk
// that comes hard on the heels of the last after a pause was held up on the way (the two ranks'
// hand-over of a chunk moves only while both run MPI; six ranks on two cores); when that pause
// is a large part of the interval (the transport's share: a quarter, kHeldUpPause), the interval
// times the host more than the link: on mesh6-c's 3–6 Gbit/s
// links such intervals read 0.1–0.5 Gbit/s and made a clear link look slower than relays never
// measured (docs/paths.md, "Held-up chunks"). On a 0.1 Gbit/s link a hold-up of a few ms is a
// small part of an interval of tens of chunks, and the interval still reads the link: without
// the pause test 1–8% of such intervals went, and `mdp` lost ~1% on markov3 and sparse-ring4.
// Not for tc: the kernel hands TCP's segments over in bursts.
// The intervals left out go to `held` (when given): the controller keeps their rate for what it
// believes of links it has no sample of (link_state.hpp, prior_gbps).
std::vector<LinkInterval> paced_only(const std::vector<LinkInterval>& merged,
                                     const std::vector<Arrival>& arrived, double burst,
                                     double pause, std::vector<LinkInterval>* held = nullptr);

}  // namespace strait
