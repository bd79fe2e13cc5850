// shaper.cpp — Link reservations and the chunk-level discrete-event simulation of flows over
// paths (see shaper.hpp for the model).
#include "net/shaper.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>
#include <tuple>

#include "core/rng.hpp"

namespace strait {

namespace {
constexpr double kNever = -std::numeric_limits<double>::infinity();
}

Link::Link(LinkSchedule s, double jitter_s, uint64_t jitter_seed)
    : sched_(std::move(s)),
      jitter_s_(jitter_s),
      jitter_seed_(jitter_seed),
      free_at_(kNever),
      last_deliver_(kNever) {
  if (!std::isfinite(jitter_s) || jitter_s < 0)
    throw std::invalid_argument("Link: jitter " + std::to_string(jitter_s) +
                                " s; expected a number >= 0");
}

// Copies the state of `other`; the caller holds both locks (or owns *this alone).
void Link::copy_state(const Link& other) {
  jitter_s_ = other.jitter_s_;
  jitter_seed_ = other.jitter_seed_;
  free_at_ = other.free_at_;
  last_deliver_ = other.last_deliver_;
  reserved_ = other.reserved_;
  counters_ = other.counters_;
}

Link::Link(const Link& other) : sched_(other.sched_) {
  std::lock_guard<std::mutex> lock(other.mu_);
  copy_state(other);
}

Link& Link::operator=(const Link& other) {
  if (this == &other) return *this;
  std::scoped_lock lock(mu_, other.mu_);
  sched_ = other.sched_;
  copy_state(other);
  return *this;
}

Reservation Link::reserve(double now, double bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  Reservation r;
  r.start = std::max(now, free_at_);
  r.end = r.start + sched_.transmit_time(r.start, bytes);
  const double jitter =
      jitter_s_ > 0 ? jitter_s_ * uniform01(jitter_seed_, kJitterStream, reserved_) : 0.0;
  ++reserved_;
  r.deliver = std::max(r.end + sched_.at(r.end).latency_s + jitter, last_deliver_);
  r.queued_s = r.start - now;
  free_at_ = r.end;
  last_deliver_ = r.deliver;
  counters_.bytes += std::max(0.0, bytes);
  counters_.busy_s += r.end - r.start;
  counters_.queued_s += r.queued_s;
  ++counters_.chunks;
  return r;
}

double Link::free_at() const {
  std::lock_guard<std::mutex> lock(mu_);
  return free_at_;
}

Link::Counters Link::take() {
  std::lock_guard<std::mutex> lock(mu_);
  const Counters c = counters_;
  counters_ = Counters{};
  return c;
}

Link make_link(const LinkConfig& link, double time_scale, uint64_t jitter_seed) {
  return Link(make_link_schedule(link, time_scale), link.jitter_ms * 1e-3 * time_scale,
              jitter_seed);
}

std::vector<std::vector<double>> simulate_flows(const std::vector<PathFlow>& flows) {
  struct State {
    size_t n = 0;                              // chunks
    std::vector<size_t> next;                  // per hop: chunks reserved so far
    std::vector<std::vector<double>> start;    // [hop][chunk]
    std::vector<std::vector<double>> deliver;  // [hop][chunk], NaN until reserved
  };
  std::vector<State> st(flows.size());
  for (size_t f = 0; f < flows.size(); ++f) {
    const PathFlow& fl = flows[f];
    if (fl.hops.empty()) throw std::invalid_argument("simulate_flows: a flow with no hops");
    for (const Link* l : fl.hops)
      if (!l) throw std::invalid_argument("simulate_flows: a null hop");
    State& s = st[f];
    s.n = (fl.bytes > 0 && fl.chunk_bytes > 0)
              ? static_cast<size_t>(std::ceil(fl.bytes / fl.chunk_bytes))
              : 1;
    const size_t H = fl.hops.size();
    s.next.assign(H, 0);
    s.start.assign(H, std::vector<double>(s.n, NAN));
    s.deliver.assign(H, std::vector<double>(s.n, NAN));
  }
  auto chunk_size = [&](size_t f, size_t i) {
    const PathFlow& fl = flows[f];
    if (!(fl.bytes > 0)) return 0.0;
    if (!(fl.chunk_bytes > 0)) return fl.bytes;
    return std::min(fl.chunk_bytes, fl.bytes - static_cast<double>(i) * fl.chunk_bytes);
  };

  // (time, sequence, flow, hop, chunk); the sequence number makes ties first come first served.
  using Event = std::tuple<double, uint64_t, size_t, size_t, size_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue;
  uint64_t seq = 0;
  auto try_enqueue = [&](size_t f, size_t h, size_t i) {
    State& s = st[f];
    if (h >= flows[f].hops.size() || i >= s.n || s.next[h] != i) return;
    double ready = flows[f].start;
    if (h > 0) {
      ready = s.deliver[h - 1][i];
      if (std::isnan(ready)) return;
    }
    const double t = i > 0 ? std::max(ready, s.start[h][i - 1]) : ready;
    queue.emplace(t, seq++, f, h, i);
  };
  for (size_t f = 0; f < flows.size(); ++f) try_enqueue(f, 0, 0);
  while (!queue.empty()) {
    const auto [t, order, f, h, i] = queue.top();
    (void)order;
    queue.pop();
    const Reservation r = flows[f].hops[h]->reserve(t, chunk_size(f, i));
    State& s = st[f];
    s.start[h][i] = r.start;
    s.deliver[h][i] = r.deliver;
    ++s.next[h];
    try_enqueue(f, h, i + 1);
    try_enqueue(f, h + 1, i);
  }
  std::vector<std::vector<double>> out(flows.size());
  for (size_t f = 0; f < flows.size(); ++f) out[f] = st[f].deliver.back();
  return out;
}

std::vector<double> simulate_path(std::vector<Link*> hops, double now, double bytes,
                                  double chunk_bytes) {
  PathFlow f;
  f.hops = std::move(hops);
  f.start = now;
  f.bytes = bytes;
  f.chunk_bytes = chunk_bytes;
  return simulate_flows({f})[0];
}

}  // namespace strait
