// transport.cpp — MPI forwarding with per-link accounting.
#include "net/transport.hpp"

#include <climits>

#include "core/check.hpp"
#include "core/timer.hpp"

namespace strait {

Transport::Transport(const Config& cfg) : n_(static_cast<int>(cfg.datacenters.size())) {
  capacity_gbps_.assign(n_ * n_, 0.0);
  latency_ms_.assign(n_ * n_, 0.0);
  counters_.assign(n_ * n_, LinkCounters{});
  auto index = [&](const std::string& name) {
    for (int d = 0; d < n_; ++d)
      if (cfg.datacenters[d].name == name) return d;
    STRAIT_FATAL("link names unknown datacenter " + name);
  };
  for (const auto& l : cfg.links) {
    const int s = index(l.from), d = index(l.to);
    capacity_gbps_[s * n_ + d] = l.capacity_gbps;
    latency_ms_[s * n_ + d] = l.latency_ms;
  }
}

void Transport::exchange(MPI_Comm channel, int self_dc, const void* sbuf, size_t sbytes,
                         int dst_dc, void* rbuf, size_t rbytes, int src_dc, int tag) {
  STRAIT_CHECK(sbytes <= static_cast<size_t>(INT_MAX) && rbytes <= static_cast<size_t>(INT_MAX),
               "transfer above 2 GiB: chunk it");
  const double t0 = now_ms();
  MPI_Request req[2];
  int nreq = 0;
  if (src_dc >= 0)
    MPI_CHECK(MPI_Irecv(rbuf, static_cast<int>(rbytes), MPI_BYTE, src_dc, tag, channel, &req[nreq++]));
  if (dst_dc >= 0)
    MPI_CHECK(MPI_Isend(sbuf, static_cast<int>(sbytes), MPI_BYTE, dst_dc, tag, channel, &req[nreq++]));
  MPI_CHECK(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
  const double dt = now_ms() - t0;
  if (dst_dc >= 0) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& c = counters_[self_dc * n_ + dst_dc];
    c.bytes += static_cast<double>(sbytes);
    c.busy_ms += dt;
  }
}

std::vector<LinkCounters> Transport::take_counters() {
  std::lock_guard<std::mutex> lock(mu_);
  auto out = counters_;
  for (auto& c : counters_) c = LinkCounters{};
  return out;
}

}  // namespace strait
