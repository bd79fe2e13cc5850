// path_cost.hpp — what the path selectors share: the traffic the sync plan in force puts on
// each ordered DC pair, the candidate paths of a pair, and the predicted time of that traffic
// on a path. The model: a pair's `messages` messages cross the path one after another (ring
// rounds), each paying the path's latency once (chunks pipeline through relays), and its bytes
// are carried at the path's bottleneck rate.
#pragma once
#include <functional>
#include <vector>

#include "control/link_state.hpp"
#include "control/plan.hpp"
#include "control/view.hpp"

namespace strait {

struct PairTraffic {
  double bytes = 0;  // per step
  int messages = 0;  // sequential messages (rounds) per step
};

// Per ordered pair (src·n + dst): the traffic of the current plan's sync strategy — the ring's
// neighbours (in its order) for hierarchical, owners' reduce and broadcast flows for owner
// plans, nothing for strategies that do not use the transport's paths (mpi-allreduce).
std::vector<PairTraffic> pair_traffic(const Plan& plan, const World& w);

// Every path the plan in force sends sync bytes over, once per flow (a pair's routes with a
// share, else its path; owners' reduce and broadcast routes of a non-empty slice): which links
// carried whose bytes in a step (link_state.hpp, Carriage). With the step's `measured` links,
// a pair's routes are those its sender reports having used (LinkStep::route0_bytes: adaptive
// routes move bytes between them, and a standby of share 0 may have carried the lot).
std::vector<std::vector<int>> flow_paths(const Plan& plan, const World& w,
                                         const std::vector<LinkStep>* measured = nullptr);

// Simple paths from s to d over existing links with at most `max_relays` relays (direct first,
// then by hops, then DC order).
std::vector<std::vector<int>> simple_paths(const LinkStates& ls, int s, int d, int max_relays);
// A path with the fewest hops (ties: the smaller sum of believed latencies); empty when none.
std::vector<int> fewest_hop_path(const LinkStates& ls, int s, int d);

// Predicted milliseconds of `t` on `path`, with per-link capacity (Gbit/s) and latency (ms).
using LinkFigure = std::function<double(int src, int dst)>;
double path_ms(const std::vector<int>& path, const PairTraffic& t, const LinkFigure& gbps,
               const LinkFigure& latency_ms);
// A split of a pair's traffic over two paths: the share f on the first that makes its expected
// time least over the paths' possible states,
//   E(f) = Σ_x w_x max(m·l0 + f·B/c0_x, m·l1 + (1 − f)·B/c1_x),
// with (w_x, c0_x, c1_x) a state's weight and the two paths' bottleneck rates in it, m the
// messages, B the bytes and l0, l1 the paths' latencies. With one state this is the share at
// which both parts end together (in proportion to the rates where the latencies are equal).
struct SplitState {
  double weight, gbps0, gbps1;
};
double least_time_share(const PairTraffic& t, double latency0_ms, double latency1_ms,
                        const std::vector<SplitState>& states);
// The split's time in one state, ms: max(m·l0 + f·B/c0, m·l1 + (1 − f)·B/c1) (rates in Gbit/s,
// latencies in ms) — the term least_time_share's E(f) sums.
double split_time_ms(const PairTraffic& t, double latency0_ms, double latency1_ms, double f,
                     double gbps0, double gbps1);
// Whether two paths both cross some directed link (their parts would share its rate).
bool shares_a_link(const std::vector<int>& p, const std::vector<int>& q);
// The bottleneck capacity of a path.
double bottleneck_gbps(const std::vector<int>& path, const LinkFigure& gbps);

}  // namespace strait
