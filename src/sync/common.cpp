// common.cpp — the pieces every sync strategy shares: per-expert channels, gather/scatter
// between a DC's shards and its gateway's full vector, and a deterministic ring allreduce
// (in index order, or in the order a plan gives).
#include <algorithm>

#include "core/check.hpp"
#include "sync/sync.hpp"

namespace strait {

SyncChannel SyncChannel::open(const Topology& t, Backend<float>& be) {
  SyncChannel ch;
  ch.shard = HostBuffer<float>(&be);
  MPI_CHECK(MPI_Comm_dup(t.dc_comm, &ch.dc));
  if (t.gateway_comm != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_dup(t.gateway_comm, &ch.gateways));
  return ch;
}

void SyncChannel::close() {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin && dc != MPI_COMM_NULL) MPI_Comm_free(&dc);
  if (!fin && gateways != MPI_COMM_NULL) MPI_Comm_free(&gateways);
  dc = gateways = MPI_COMM_NULL;
}

SyncChannel& SyncChannel::operator=(SyncChannel&& o) noexcept {
  if (this == &o) return *this;
  close();
  dc = o.dc, gateways = o.gateways;
  o.dc = o.gateways = MPI_COMM_NULL;
  shard = std::move(o.shard);
  full = std::move(o.full), gathered = std::move(o.gathered), ring = std::move(o.ring);
  owned = std::move(o.owned);
  last_sync_start = o.last_sync_start;
  return *this;
}

namespace {
void counts_displs(const std::vector<Layout>& ls, std::vector<int>& counts,
                   std::vector<int>& displs) {
  counts.resize(ls.size());
  displs.resize(ls.size());
  int off = 0;
  for (size_t i = 0; i < ls.size(); ++i) {
    counts[i] = static_cast<int>(ls[i].shard_total);
    displs[i] = off;
    off += counts[i];
  }
}
}  // namespace

void gather_full_to_gateway(const float* shard_host, SyncChannel& ch, const SyncInput& in) {
  const auto& t = *in.topo;
  const auto& ls = *in.dc_layouts;
  const Layout& mine = ls[t.local_rank];
  std::vector<int> counts, displs;
  counts_displs(ls, counts, displs);
  if (t.is_gateway) ch.gathered.resize(displs.back() + counts.back());
  if (t.dc_size > 1) {
    MPI_CHECK(MPI_Gatherv(shard_host, static_cast<int>(mine.shard_total), MPI_FLOAT,
                          ch.gathered.data(), counts.data(), displs.data(), MPI_FLOAT, 0, ch.dc));
  } else {
    std::copy_n(shard_host, mine.shard_total, ch.gathered.data());
  }
  if (!t.is_gateway) return;
  ch.full.assign(mine.full_total, 0.0f);
  for (size_t i = 0; i < ls.size(); ++i)
    insert_shard(ls[i], ch.gathered.data() + displs[i], ch.full.data());
}

void scatter_full_from_gateway(SyncChannel& ch, const SyncInput& in) {
  const auto& t = *in.topo;
  const auto& ls = *in.dc_layouts;
  std::vector<int> counts, displs;
  counts_displs(ls, counts, displs);
  ch.shard.resize(ls[t.local_rank].shard_total);
  if (t.is_gateway)
    for (size_t i = 0; i < ls.size(); ++i)
      extract_shard(ls[i], ch.full.data(), ch.gathered.data() + displs[i]);
  if (t.dc_size > 1) {
    MPI_CHECK(MPI_Scatterv(ch.gathered.data(), counts.data(), displs.data(), MPI_FLOAT,
                           ch.shard.data(), static_cast<int>(ch.shard.size()), MPI_FLOAT, 0,
                           ch.dc));
  } else {
    std::copy_n(ch.gathered.data(), ch.shard.size(), ch.shard.data());
  }
}

void sync_through_gateways(ParamSet<float>& ps, SyncChannel& ch, const SyncInput& in,
                           Transport& tr, GatewayAllreduce allreduce) {
  const auto& t = *in.topo;
  ch.shard.resize(ps.layout.shard_total);
  ps.be->stage_out(ch.shard.data(), ps.grads, ch.shard.size());
  gather_full_to_gateway(ch.shard.data(), ch, in);
  if (t.is_gateway) {
    const float w = static_cast<float>(in.weight);
    if (t.num_dcs > 1)
      for (float& x : ch.full) x *= w;
    allreduce(ch.full.data(), ch.full.size(), ch, in, tr);
  }
  scatter_full_from_gateway(ch, in);
  ps.be->stage_in(ps.grads, ch.shard.data(), ch.shard.size());
}

void ring_allreduce(float* buf, size_t n, SyncChannel& ch, const Topology& t, Transport& tr,
                    const Paths& paths, const std::vector<int>& order, const Routes* routes) {
  const int N = t.num_dcs;
  if (N <= 1) return;
  // Positions on the ring: DC at(p) sits at position p; with no order, position = DC index.
  STRAIT_CHECK(order.empty() || static_cast<int>(order.size()) == N, "ring order of another DC count");
  auto at = [&](int p) {
    const int q = ((p % N) + N) % N;
    return order.empty() ? q : order[q];
  };
  int r = 0;
  while (at(r) != t.dc) STRAIT_CHECK(++r < N, "this DC is not on the ring");
  auto lo = [&](int c) { return n * static_cast<size_t>(c) / N; };
  auto len = [&](int c) { return lo(c + 1) - lo(c); };
  const int next = at(r + 1), prev = at(r + N - 1);
  ch.ring.resize(n / N + 1);
  // Every gateway knows every pair of the step, so relays (paths through other DCs) can forward.
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < N; ++i) pairs.emplace_back(at(i), at(i + 1));
  std::vector<size_t> bytes(N);
  // Adaptive routes cut on what their senders saw since the previous sync on this channel began:
  // a decision takes effect control.lag steps after the measurements it was made on, so that is
  // news to it (and older sightings may be stale).
  const double fresh_since = ch.last_sync_start;
  ch.last_sync_start = tr.now();
  // A gateway goes on to its next step as soon as its own bytes have left and its input has
  // arrived, not when its output has arrived (the transport's courier delivers it).
  // Reduce-scatter: after N−1 steps position r holds the full sum of chunk (r+1) mod N.
  for (int k = 0; k < N - 1; ++k) {
    const int sc = ((r - k) % N + N) % N, rc = ((r - k - 1) % N + N) % N;
    for (int i = 0; i < N; ++i) bytes[i] = len(((i - k) % N + N) % N) * sizeof(float);
    tr.exchange(ch.gateways, t.dc, buf + lo(sc), len(sc) * sizeof(float), next, ch.ring.data(),
                len(rc) * sizeof(float), prev, 2 * k, pairs, bytes, paths, routes, fresh_since);
    float* dst = buf + lo(rc);
    for (size_t i = 0; i < len(rc); ++i) dst[i] += ch.ring[i];
  }
  // Allgather: pass the finished chunks around the ring.
  for (int k = 0; k < N - 1; ++k) {
    const int sc = ((r + 1 - k) % N + N) % N, rc = ((r - k) % N + N) % N;
    for (int i = 0; i < N; ++i) bytes[i] = len(((i + 1 - k) % N + N) % N) * sizeof(float);
    tr.exchange(ch.gateways, t.dc, buf + lo(sc), len(sc) * sizeof(float), next, buf + lo(rc),
                len(rc) * sizeof(float), prev, 2 * k + 1, pairs, bytes, paths, routes, fresh_since);
  }
}

}  // namespace strait
