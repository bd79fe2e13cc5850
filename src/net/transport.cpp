// transport.cpp — an event loop per execute(): post every receive up front, reserve each
// outgoing chunk on its link when the previous chunk of the same flow has started (FIFO sharing,
// see shaper.hpp), post a copy to the courier, which hands it to MPI at its delivery time
// (courier.hpp), forward relayed chunks as they arrive.
// Measured at the wire, per hop of every transfer: the sender stamps when its first byte goes
// onto the link (the software shaper's transmission start, or the first MPI send under tc) in an
// 8-byte header that travels with the flow; the receiver, when the last byte has arrived, has
// the flow's wire interval on one clock (rank 0's). Small one-chunk messages give one-way
// latency samples. Queueing counts only waiting behind other flows' chunks.
#include "net/transport.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <climits>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/check.hpp"
#include "net/delivery.hpp"

namespace strait {

namespace {

// Open MPI's TCP eager limit (MCA parameter btl_tcp_eager_limit), read through the MPI tool
// interface; 0 when this MPI has no such variable. Read once per process.
// MPI_T_init_thread is asked for the thread level MPI already provides: Open MPI 4.1 takes the
// level it is asked for as the library's own (MPI_T_init_thread(MPI_THREAD_SINGLE) after
// MPI_Init_thread(MPI_THREAD_MULTIPLE) makes MPI_Query_thread answer SINGLE and drops the
// library's thread protection), while the watchdog and the control link go on calling MPI
// from their threads; an unshaped run crashed inside MPI_Allreduce that way.
size_t read_tcp_eager_limit() {
  int level = MPI_THREAD_SINGLE, provided = 0;
  MPI_CHECK(MPI_Query_thread(&level));
  if (MPI_T_init_thread(level, &provided) != MPI_SUCCESS) return 0;
  size_t out = 0;
  int num = 0;
  MPI_T_cvar_get_num(&num);
  for (int i = 0; i < num && out == 0; ++i) {
    char name[256];
    int name_len = sizeof name, verbosity = 0, bind = 0, scope = 0, desc_len = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum enumtype;
    if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &enumtype, nullptr, &desc_len,
                            &bind, &scope) != MPI_SUCCESS ||
        std::string(name) != "btl_tcp_eager_limit")
      continue;
    MPI_T_cvar_handle h;
    int count = 0;
    if (MPI_T_cvar_handle_alloc(i, nullptr, &h, &count) != MPI_SUCCESS || count != 1) continue;
    unsigned long long v = 0;  // large enough for every integer type the variable may have
    if (MPI_T_cvar_read(h, &v) == MPI_SUCCESS) {
      int size = 0;
      MPI_Type_size(type, &size);
      if (size == 4) v &= 0xffffffffull;
      out = static_cast<size_t>(v);
    }
    MPI_T_cvar_handle_free(&h);
  }
  MPI_T_finalize();
  return out;
}

size_t tcp_eager_limit() {
  static const size_t limit = read_tcp_eager_limit();
  return limit;
}

void sleep_until_run_time(const Transport& tr, double t) {
  const double dt = t - tr.now();
  if (dt > 0) std::this_thread::sleep_for(std::chrono::duration<double>(dt));
}

// One incoming flow of this DC: the final receive of a transfer, or the receive a relay
// forwards from. Receives are posted at most `window` chunks ahead of the first incomplete one.
// With the software shaper the senders pace the chunks and window covers them all; without it
// (tc) a sender hands MPI every chunk at once, MPI interleaves their fragments on the socket, and
// a relay would see no chunk complete before the last: a receive window (large chunks go by
// rendezvous, so unposted ones wait at the sender) keeps chunks arriving in order. It is sized
// from the hop's bandwidth-delay product so that it does not throttle the link.
struct InFlow {
  int prev_dc = 0, tag = 0;
  char* dst = nullptr;
  size_t bytes = 0, chunk = 0, nchunks = 0, window = 0;
  std::vector<MPI_Request> reqs;
  size_t posted = 0, done = 0;  // chunks posted / completed, both in order
  // The header: the sender's first-byte time (rank 0's clock), the part's offset and bytes, and
  // the sender's sightings of its links (Transport::header_doubles).
  std::vector<double> hdr;
  size_t xi = 0;                // its transfer
  bool sized = true;            // false until the header gives its size (sized_by_header)
  double header_miss_at = -1;   // unsized: the last test that found the header missing
  int out = -1;                 // a relay: the index of the flow it feeds
  // Chunks this receiver saw arrive ("live"): a test found the chunk missing although its
  // receive had been posted for at least kArrivalTolerance, and the next test, at most
  // kArrivalTolerance later, found it here. Any other completion says when we looked, not when
  // the chunk arrived: after a longer gap (this rank was busy or descheduled), or just after
  // the receive was posted (a late receiver: the data had been waiting, and MPI hands it over
  // at the next test) — chunks found so complete one after another, and a streaming rate or
  // latency sample taken from them is far too high (thousands of Gbit/s were seen on 0.5 Gbit/s
  // links). The streaming rate runs from the first live chunk to the last. npos: none yet.
  size_t watched = static_cast<size_t>(-1), last_live = static_cast<size_t>(-1);
  double watched_at = 0, watched_err = 0;  // when it completed (rank 0's clock), and ± how much
  double last_live_at = 0, last_live_err = 0;
  double miss_at = -1;                     // the last test that found chunk `done` missing
  std::vector<double> posted_at;           // per chunk: when its receive was posted
  std::vector<size_t> got;                 // per completed chunk: the bytes it brought (a part
                                           // re-cut while it went ends in chunks of none)
  MPI_Request header = MPI_REQUEST_NULL;
  bool header_done = false, recorded = false;
  bool first_hop = false;  // the hop from the transfer's sender, which had all its bytes
};

// One outgoing flow of this DC: its own transfer (from sbuf) or a relayed one (from the
// forward buffer, chunk by chunk as receives complete).
struct OutFlow {
  int xi = 0, next_dc = 0, tag = 0;
  const char* data = nullptr;
  size_t bytes = 0, chunk = 0, nchunks = 0;
  const InFlow* arrivals = nullptr;              // relays: the receive that feeds this flow
  bool sized = true;                             // false until the feeding header has come
  bool by_header = false;                        // its receiver sizes it from the header
  bool header_sent = false;                      // a part of 0 bytes: its header alone
  size_t reserved = 0;                           // chunks reserved so far
  double prev_start = -1e300;                    // start of the last reserved chunk
  double prev_end = -1e300;                      // end of its transmission
  std::vector<double> hdr;                       // first byte onto the link (rank 0's clock),
                                                 // offset and bytes of the part, sightings
  double last_deliver = -1e300;                  // the last chunk's delivery time (shaped)
  size_t sent = 0;
  size_t live = SIZE_MAX;                        // a sender's part re-cut at this chunk: the
                                                 // chunks from here on go empty (the tail has
                                                 // their bytes)
  bool tail = false;                             // a sender's tail: unsized until settled
  double tail_lead = 0;                          // a tail: its path's latency less its part's,
                                                 // plus kChunkSeconds (settled empty within it)
  MPI_Request header = MPI_REQUEST_NULL;         // carries hdr to the next DC (unshaped)
};


}  // namespace

Paths direct_paths(int n) {
  Paths p(static_cast<size_t>(n) * n);
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (s != d) p[s * n + d] = {s, d};
  return p;
}

Transport::Transport(const Config& cfg, double t0)
    : Transport(cfg, std::make_shared<const Scenario>(cfg), t0) {}

Transport::Transport(const Config& cfg, std::shared_ptr<const Scenario> scenario, double t0)
    : n_(scenario->num_dcs()),
      shaped_(cfg.network.shaped()),
      t0_(t0),
      time_scale_(scenario->time_scale()),
      chunk_(static_cast<size_t>(std::max<long long>(1, cfg.network.chunk_bytes))),
      scenario_(std::move(scenario)) {
  if (!shaped_) {
    // Without the software shaper the chunks go straight to MPI, between namespaces over TCP. A
    // message above the TCP eager limit is sent by rendezvous: the sender waits a round trip for
    // the receiver's go-ahead, on a WAN the largest cost of a small sync (a 241 KB step at
    // 0.2 Gbit/s and 20 ms took 100 ms instead of 30). Chunks that fit the eager limit go at
    // once into receives posted ahead (the window below). Every rank reads the same limit.
    const size_t eager = tcp_eager_limit();
    const size_t fit = (eager > kEagerHeaderBytes ? eager : kDefaultEagerBytes) - kEagerHeaderBytes;
    chunk_ = std::min(chunk_, fit);
  }
  tails_ = shaped_ && cfg.control.paths.tail;
  if (shaped_) {
    int level = MPI_THREAD_SINGLE;
    MPI_CHECK(MPI_Query_thread(&level));
    courier_ = std::make_unique<Courier>(t0_, level >= MPI_THREAD_MULTIPLE);
  }
  int* ub = nullptr;
  int flag = 0;
  MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
  tag_ub_ = flag && ub ? *ub : 32767;  // the least the MPI standard promises
  links_.resize(n_ * n_);
  counters_.assign(n_ * n_, LinkCounters{});
  wire_.assign(n_ * n_, {});
  seen_.assign(n_ * n_, {});
  heard_.assign(n_ * n_, {-1.0, -1e300});
  for (int s = 0; s < n_; ++s)
    for (int d = 0; d < n_; ++d)
      if (const LinkSchedule* l = scenario_->link(s, d))
        links_[s * n_ + d] = std::make_unique<Link>(
            l->scaled(time_scale_), scenario_->jitter_s(s, d) * time_scale_,
            scenario_->jitter_seed(s, d));
}

double Transport::now() const { return MPI_Wtime() - t0_; }

size_t Transport::chunk_for(const std::vector<int>& path, size_t bytes) const {
  // About kChunkSeconds of the slowest hop's starting capacity, between 4 KiB and
  // network.chunk_kib: links are shared and reserved chunk by chunk, so a chunk that takes long
  // on a slow link would let one flow run a whole chunk ahead of another (unfair at coarse
  // grain); tiny chunks on fast links would only cost messages. Every rank derives the same size
  // from the same config, which receivers need to post matching receives.
  // A message is cut into at least kMinChunks chunks (of at least 4 KiB): relays then pipeline
  // it, and its receiver can measure the link's streaming rate from the chunks after the first.
  const double split = std::max(4096.0, static_cast<double>(bytes) / kMinChunks);
  if (!shaped_) return static_cast<size_t>(std::min(static_cast<double>(chunk_), split));
  double bps = 1e300;
  for (size_t h = 0; h + 1 < path.size(); ++h)
    bps = std::min(bps, links_[path[h] * n_ + path[h + 1]]->schedule().at(0).capacity_bps);
  const double want = std::min(bps / 8 * kChunkSeconds, split);
  const double hi = static_cast<double>(chunk_);
  return static_cast<size_t>(std::clamp(want, std::min(4096.0, hi), hi));
}

std::vector<int> Transport::fewest_hops(int src, int dst) const {
  std::vector<int> prev(n_, -1);
  std::vector<int> queue{src};
  prev[src] = src;
  for (size_t i = 0; i < queue.size(); ++i)
    for (int v = 0; v < n_; ++v)
      if (prev[v] < 0 && has_link(queue[i], v)) prev[v] = queue[i], queue.push_back(v);
  if (prev[dst] < 0) return {};
  std::vector<int> path{dst};
  while (path.back() != src) path.push_back(prev[path.back()]);
  return {path.rbegin(), path.rend()};
}

void Transport::check_paths(const Paths& paths) const {
  if (static_cast<int>(paths.size()) != n_ * n_)
    throw std::invalid_argument("paths: " + std::to_string(paths.size()) + " entries for " +
                                std::to_string(n_) + " datacenters; expected one per ordered pair");
  for (int s = 0; s < n_; ++s)
    for (int d = 0; d < n_; ++d) {
      if (s != d) check_path(paths[s * n_ + d], s, d);
      else if (!paths[s * n_ + d].empty())
        throw std::invalid_argument("paths: a path from DC " + std::to_string(s) + " to itself");
    }
}

void Transport::check_path(const std::vector<int>& p, int s, int d) const {
  const std::string pair = std::to_string(s) + "->" + std::to_string(d);
  if (p.size() < 2 || p.front() != s || p.back() != d)
    throw std::invalid_argument("the path of " + pair + " does not run from its source to its destination");
  std::vector<bool> seen(n_, false);
  for (size_t h = 0; h < p.size(); ++h) {
    if (p[h] < 0 || p[h] >= n_ || seen[p[h]])
      throw std::invalid_argument("the path of " + pair + " names a DC twice or out of range");
    seen[p[h]] = true;
    if (h + 1 < p.size() && !scenario_->link(p[h], p[h + 1]))
      throw std::invalid_argument("the path of " + pair + " uses the missing link " +
                                  std::to_string(p[h]) + "->" + std::to_string(p[h + 1]));
  }
}

void Transport::flush() {
  if (courier_) courier_->flush();
}

void Transport::execute(MPI_Comm channel, int self, const std::vector<Transfer>& xs,
                        int tag_base, bool control, std::vector<size_t>* tail_bytes) {
  // With the software shaper every chunk is posted to the courier, which hands it to MPI at its
  // delivery time. Without it (tc) chunks go to MPI at once and the kernel carries them.
  Courier* box = courier_.get();
  // Tags only tell apart the transfers of one call (a channel's calls follow each other on every
  // gateway, and MPI does not let one sender's messages overtake each other).
  STRAIT_CHECK(tag_base >= 0 && tag_base < kMaxTagBases && xs.size() <= kMaxTransfers,
               "tag space exceeded: " + std::to_string(xs.size()) + " transfers in one step (at most " +
                   std::to_string(kMaxTransfers) + ")");
  STRAIT_CHECK(tag_base * kTagStride + kTagStride - 1 <= tag_ub_,
               "MPI_TAG_UB " + std::to_string(tag_ub_) + " is below what the transport needs");
  // A transfer of 0 bytes is one empty chunk (it still pays the latencies); a part sized by its
  // header that carries nothing is its header alone.
  auto nchunks = [](size_t bytes, size_t ch, bool by_header) {
    return by_header && bytes == 0 ? size_t{0} : std::max<size_t>(1, (bytes + ch - 1) / ch);
  };
  auto chunk_len = [](size_t bytes, size_t ch, size_t c) {
    return std::min(ch, bytes - std::min(bytes, c * ch));
  };
  // What an outgoing flow's chunk c carries: a relay forwards what came, a sender's part re-cut
  // for its tail sends its chunks from OutFlow::live on empty.
  auto out_len = [&](const OutFlow& f, size_t c) -> size_t {
    if (f.arrivals) return f.arrivals->got[c];
    return c < f.live ? chunk_len(f.bytes, f.chunk, c) : 0;
  };
  std::vector<InFlow> ins;
  ins.reserve(xs.size());  // flows keep pointers into it
  std::vector<std::vector<char>> relay_buf(xs.size());
  std::vector<OutFlow> flows;
  flows.reserve(xs.size());  // MPI writes headers from them
  std::vector<int> flow_of(xs.size(), -1);  // a transfer's outgoing flow on this DC (-1: none)
  auto post_more = [&](InFlow& in) {
    while (in.posted < in.nchunks && in.posted < in.done + in.window) {
      MPI_CHECK(MPI_Irecv(in.dst + in.posted * in.chunk,
                          static_cast<int>(chunk_len(in.bytes, in.chunk, in.posted)), MPI_BYTE,
                          in.prev_dc, in.tag, channel, &in.reqs[in.posted]));
      in.posted_at[in.posted] = rank0_time();
      ++in.posted;
    }
  };
  // An incoming flow's size, buffers and receive window, once its size is known: at the start,
  // or for a part sized by its header when that has come (then also the flow it feeds, if any).
  auto size_in = [&](InFlow& in, size_t bytes) {
    const Transfer& x = xs[in.xi];
    const bool last = x.path.back() == self;
    in.bytes = bytes;
    in.chunk = chunk_for(x.path, bytes);
    in.nchunks = nchunks(bytes, in.chunk, x.sized_by_header);
    const size_t offset = x.sized_by_header ? static_cast<size_t>(in.hdr[1]) : 0;
    in.dst = last ? static_cast<char*>(x.rbuf) + offset
                  : (relay_buf[in.xi].resize(bytes), relay_buf[in.xi].data());
    in.window = in.nchunks;
    if (!shaped_) {
      const LinkSchedule* l = scenario_->link(in.prev_dc, self);
      const LinkSchedule* back = scenario_->link(self, in.prev_dc);
      const auto st = l->at(0);
      // Without a reverse link the go-ahead still crosses the WAN; take the forward latency.
      const double rtt = st.latency_s + (back ? back->at(0).latency_s : st.latency_s);
      // Chunks are eager (see the constructor), but should MPI fall back to rendezvous a
      // posted receive lets its chunk's data start one round trip later; two bandwidth-delay
      // products in flight keep the link full either way.
      in.window = std::min(in.nchunks,
                           4 + static_cast<size_t>(2 * st.capacity_bps / 8 * rtt / std::max<size_t>(1, in.chunk)));
    }
    in.reqs.assign(in.nchunks, MPI_REQUEST_NULL);
    in.posted_at.assign(in.nchunks, 0.0);
    in.got.assign(in.nchunks, 0);
    in.sized = true;
    if (in.out >= 0) {  // the relay forwards exactly this part
      OutFlow& f = flows[static_cast<size_t>(in.out)];
      f.bytes = in.bytes, f.chunk = in.chunk, f.nchunks = in.nchunks;
      f.data = in.dst;
      f.hdr[1] = in.hdr[1], f.hdr[2] = in.hdr[2];
      f.sized = true;
    }
    post_more(in);
  };
  const double began = now();  // the call's start: sightings since are news to its tails
  auto path_latency = [&](const std::vector<int>& p) {  // seconds, as scheduled now
    double sum = 0;
    for (size_t h = 0; h + 1 < p.size(); ++h)
      sum += links_[p[h] * n_ + p[h + 1]]->schedule().at(began).latency_s;
    return sum;
  };
  for (size_t xi = 0; xi < xs.size(); ++xi) {
    const Transfer& x = xs[xi];
    const auto pos = std::find(x.path.begin(), x.path.end(), self);
    if (pos == x.path.end()) continue;
    const size_t h = static_cast<size_t>(pos - x.path.begin());
    const int tag = tag_base * kTagStride + static_cast<int>(xi);
    STRAIT_CHECK(!x.sized_by_header || shaped_, "a part sized by its header on an unshaped transport");
    const size_t ch = chunk_for(x.path, x.bytes);
    STRAIT_CHECK(ch <= static_cast<size_t>(INT_MAX), "chunk above 2 GiB");
    InFlow* feed = nullptr;
    if (h > 0) {  // receive: final, or to forward
      InFlow in;
      in.prev_dc = x.path[h - 1];
      in.first_hop = h == 1;
      in.tag = tag;
      in.xi = xi;
      in.sized = !x.sized_by_header;
      // Until the header comes: the first three 0 (as ever), the sightings none (a rate of -1 is
      // never heard).
      in.hdr.assign(static_cast<size_t>(header_doubles()), -1.0);
      std::fill_n(in.hdr.begin(), kHeaderDoubles, 0.0);
      ins.push_back(std::move(in));
      InFlow& posted = ins.back();
      MPI_CHECK(MPI_Irecv(posted.hdr.data(), header_doubles(), MPI_DOUBLE, posted.prev_dc,
                          tag + kMaxTransfers, channel, &posted.header));
      feed = &posted;
    }
    if (h + 1 < x.path.size()) {  // send (own data or relayed)
      OutFlow f;
      f.xi = static_cast<int>(xi);
      f.next_dc = x.path[h + 1];
      f.tag = tag;
      f.tail = h == 0 && x.tail_of >= 0;
      if (f.tail)  // worked out once: the settling test runs every pass of the loop below
        f.tail_lead = path_latency(x.path) - path_latency(xs[static_cast<size_t>(x.tail_of)].path) +
                      kChunkSeconds;
      f.sized = (h == 0 && !f.tail) || !x.sized_by_header;
      f.by_header = x.sized_by_header;
      f.hdr.assign(static_cast<size_t>(header_doubles()), 0.0);
      if (f.sized) {
        f.bytes = x.bytes;
        f.chunk = ch;
        f.nchunks = nchunks(x.bytes, ch, x.sized_by_header);
        f.hdr[1] = static_cast<double>(x.offset), f.hdr[2] = static_cast<double>(x.bytes);
      }
      f.data = h == 0 ? static_cast<const char*>(x.sbuf) : nullptr;  // relays: set by size_in
      f.arrivals = feed;
      if (feed) feed->out = static_cast<int>(flows.size());
      flow_of[xi] = static_cast<int>(flows.size());
      flows.push_back(f);
    }
    if (feed && feed->sized) size_in(*feed, x.bytes);
  }

  // A tail (Transfer::tail_of) is settled by its sender while the part it may relieve goes:
  // when that part's route is seen under kAdaptBelow of the rate the cut at the start took, the
  // part's unsent end moves to the tail so that both routes end together on the rates as seen
  // (what the tail's route already has to send goes first); otherwise it is settled empty once
  // what is left of the part would end before the tail's header could reach the receiver. Only
  // sightings made during this call are news here (docs/paths.md, "The tail").
  if (tail_bytes) tail_bytes->assign(xs.size(), 0);
  auto settle_tails = [&](double t) {
    for (OutFlow& tf : flows) {
      if (!tf.tail || tf.sized) continue;
      const Transfer& tx = xs[static_cast<size_t>(tf.xi)];
      const Transfer& mx = xs[static_cast<size_t>(tx.tail_of)];
      const Transfer& ox = xs[static_cast<size_t>(tx.beside)];
      OutFlow& m = flows[static_cast<size_t>(flow_of[static_cast<size_t>(tx.tail_of)])];
      const OutFlow& o = flows[static_cast<size_t>(flow_of[static_cast<size_t>(tx.beside)])];
      auto unsent = [](const OutFlow& f) { return f.bytes - std::min(f.bytes, f.reserved * f.chunk); };
      const size_t left = m.live == SIZE_MAX ? unsent(m) : 0;
      size_t move = 0;
      bool settled = left == 0;
      double rate = mx.cut_gbps;  // what the rest of the part is taken to go at
      if (!settled) {
        double first = -1, at = -1;
        const double seen = route_seen(mx.path, began, &first, &at);
        if (seen >= 0 && seen < kAdaptBelow * mx.cut_gbps) {
          rate = seen;
          // A chunk still leaving bounds the rate from above only: the tail waits for its end
          // (the part's next chunk is reserved only then), unless even that bound leaves nothing
          // more to keep on the route.
          const bool bound = first == seen && at >= t;
          const double seen_o = route_seen(ox.path, began);
          const double g = seen_o >= 0 && seen_o < kAdaptBelow * ox.cut_gbps ? seen_o : ox.cut_gbps;
          // Both end together: keep k of what is left, k / seen = (unsent beside + left − k) / g.
          const double keep =
              seen * static_cast<double>(unsent(o) + left) / std::max(1e-12, seen + g);
          const size_t live =
              m.reserved + static_cast<size_t>(std::lround(keep / static_cast<double>(m.chunk)));
          if (live < m.nchunks && !(bound && live > m.reserved)) {
            m.live = live;
            move = m.bytes - live * m.chunk;
            settled = true;
          }
        }
      }
      // Settled empty when its header reaches the receiver no later than the part's last byte
      // would (on the rate it goes at): the receiver then never waits for the tail.
      if (!settled) settled = static_cast<double>(left) * 8 / (rate * 1e9) <= tf.tail_lead;
      if (!settled) continue;
      const size_t off = mx.offset + (m.bytes - move);
      tf.bytes = move;
      tf.chunk = chunk_for(tx.path, move);
      tf.nchunks = nchunks(move, tf.chunk, true);
      tf.data = static_cast<const char*>(tx.sbuf) + off;
      tf.hdr[1] = static_cast<double>(off), tf.hdr[2] = static_cast<double>(move);
      tf.sized = true;
      if (tail_bytes) (*tail_bytes)[static_cast<size_t>(tf.xi)] = move;
    }
  };

  std::vector<MPI_Request> sends;
  std::vector<LinkCounters> mine(n_ * n_);       // this call's counters, merged at the end
  std::vector<std::pair<int, std::pair<double, double>>> intervals;  // (link, wire interval)
  std::vector<LinkInterval> streams;                                 // per flow, its streaming interval
  // Backed: a flow on its path's first hop streams from a sender that had every byte, so while it
  // streams the link is never idle for want of bytes — the delivery rate then is the link's (as
  // BBR marks the delivery-rate samples of a sender that had data to send). Every chunk that
  // arrives over the link in such an interval counts, whichever flow it belongs to: a relayed
  // flow's chunks share the link's rate, while its own streaming interval (paced by the hops
  // before it, it may trickle through the whole exchange) would stretch stream_ms's union and
  // read a busy link as congested (markov3: clear links read at 0.08–0.27 of their capacity).
  std::vector<LinkInterval> backed;                                  // a first hop's streaming interval
  std::vector<Arrival> arrived;                                      // every chunk received
  for (;;) {
    bool all_done = true;
    double next_event = 1e300;
    for (auto& in : ins) {  // complete receives in order, keep the window posted
      if (!in.sized) {  // a part sized by its header: nothing to receive before that
        int done = 0;
        MPI_CHECK(MPI_Test(&in.header, &done, MPI_STATUS_IGNORE));
        const double at = rank0_time();
        if (!done) {
          in.header_miss_at = at;
          all_done = false;
          next_event = std::min(next_event, now() + 1e-4);
          continue;
        }
        in.header_done = true;
        hear(in.prev_dc, in.hdr.data());
        const double part = in.hdr[2];
        STRAIT_CHECK(part >= 0 && in.hdr[1] >= 0 &&
                         in.hdr[1] + part <= static_cast<double>(xs[in.xi].bytes),
                     "a header announces bytes beyond its message");
        size_in(in, static_cast<size_t>(part));
        // A receiver that saw the header arrive was waiting for it, and the part's chunks come
        // after it (the header travels with chunk 0's first bytes): none can have been waiting
        // before its receive was posted, so the late-receiver guard (kArrivalTolerance after
        // posting) would only drop live arrivals — on parts of 1 ms chunks, most of them.
        if (in.header_miss_at >= 0 && at - in.header_miss_at <= kArrivalTolerance)
          for (double& p : in.posted_at) p = std::min(p, at - kArrivalTolerance);
      }
      while (in.done < in.posted) {
        int done = 0;
        MPI_Status st;
        MPI_CHECK(MPI_Test(&in.reqs[in.done], &done, &st));
        const double at = rank0_time();
        if (!done) {
          in.miss_at = at;
          break;
        }
        int count = 0;
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &count));
        in.got[in.done] = static_cast<size_t>(count);
        // An empty chunk of a re-cut part says only that its bytes went by the tail.
        const bool live = count > 0 && in.miss_at >= 0 && at - in.miss_at <= kArrivalTolerance &&
                          in.miss_at - in.posted_at[in.done] >= kArrivalTolerance;
        if (live && in.watched == static_cast<size_t>(-1))
          in.watched = in.done, in.watched_at = at, in.watched_err = at - in.miss_at;
        else if (live)
          in.last_live = in.done, in.last_live_at = at, in.last_live_err = at - in.miss_at;
        in.miss_at = -1;
        if (count > 0) arrived.push_back({in.prev_dc * n_ + self, at, static_cast<double>(count)});
        ++in.done;
      }
      post_more(in);
      if (!in.header_done) {
        int done = 0;
        MPI_CHECK(MPI_Test(&in.header, &done, MPI_STATUS_IGNORE));
        in.header_done = done != 0;
        if (in.header_done) hear(in.prev_dc, in.hdr.data());
      }
      if (in.done == in.nchunks && in.header_done && !in.recorded && in.nchunks == 0) {
        in.recorded = true;  // a header alone: no bytes crossed
      } else if (in.done == in.nchunks && in.header_done && !in.recorded) {
        // The last byte is here: the flow's wire interval, on rank 0's clock.
        const double got = rank0_time();
        const int l = in.prev_dc * n_ + self;
        const double sent_at = in.hdr[0];
        intervals.push_back({l, {sent_at, got}});
        double carried = 0;
        for (size_t c : in.got) carried += static_cast<double>(c);
        mine[l].bytes += carried;
        if (control) mine[l].control_bytes += carried;
        if (in.nchunks == 1 && in.bytes <= kLatencyProbeBytes && in.watched == 0) {
          mine[l].latency_ms += std::max(0.0, got - sent_at) * 1e3;
          mine[l].latency_samples += 1;
        }
        // The time between its first live chunk and its last (when that is well above how well
        // we know them): the link streamed then. Its bytes are counted at the end, every chunk
        // that arrived in such a time (delivery.hpp).
        if (in.watched != static_cast<size_t>(-1) && in.last_live != static_cast<size_t>(-1) &&
            in.last_live_at - in.watched_at > 5 * (in.watched_err + in.last_live_err)) {
          streams.push_back({l, in.watched_at, in.last_live_at});
          if (in.first_hop) backed.push_back({l, in.watched_at, in.last_live_at});
        }
        in.recorded = true;
      }
      if (!in.recorded) {
        all_done = false;
        next_event = std::min(next_event, now() + 1e-4);
      }
    }
    const double t = now();
    settle_tails(t);
    for (auto& f : flows) {
      Link* link = links_[self * n_ + f.next_dc].get();
      const int l = self * n_ + f.next_dc;
      if (!f.sized) {  // a relay waiting for the header that sizes its part
        all_done = false;
        next_event = std::min(next_event, now() + 1e-4);
        continue;
      }
      if (f.nchunks == 0) {  // a part of 0 bytes: its header alone (it queues like a chunk)
        if (!f.header_sent && shaped_) {
          const Reservation r = link->reserve(t, 0);
          f.hdr[0] = t0_ + r.start + clock_offset_s_;
          put_sightings(self, f.hdr.data());
          f.prev_start = r.start, f.prev_end = r.end;
          const double at = std::max(r.deliver, f.last_deliver);
          f.last_deliver = at;
          Courier::Item h{at, channel, f.next_dc, f.tag + kMaxTransfers, MPI_DOUBLE,
                          std::vector<char>(f.hdr.size() * sizeof(double))};
          std::memcpy(h.data.data(), f.hdr.data(), h.data.size());
          box->post(std::move(h));
        } else if (!f.header_sent) {
          f.hdr[0] = rank0_time();
          put_sightings(self, f.hdr.data());
          MPI_CHECK(MPI_Isend(f.hdr.data(), header_doubles(), MPI_DOUBLE, f.next_dc, f.tag + kMaxTransfers,
                              channel, &f.header));
        }
        f.header_sent = true;
        continue;
      }
      // Reserve the next chunk once it is here (relays) and the previous one has started.
      while (f.reserved < f.nchunks) {
        if (f.arrivals && f.arrivals->done <= f.reserved) break;  // not here yet
        if (shaped_ && f.prev_start > t) {
          next_event = std::min(next_event, f.prev_start);
          break;
        }
        const double len = static_cast<double>(out_len(f, f.reserved));
        if (shaped_) {
          const Reservation r = link->reserve(std::max(t, f.prev_start), len);
          // Waiting behind this flow's own previous chunk is pipelining, not queueing.
          if (len > 0) mine[l].queued_ms += std::max(0.0, r.start - std::max(t, f.prev_end)) * 1e3;
          mine[l].shaper_busy_ms += (r.end - r.start) * 1e3;
          note_reserved(l, r, len);
          if (f.reserved == 0) f.hdr[0] = t0_ + r.start + clock_offset_s_;
          f.prev_start = r.start;
          f.prev_end = r.end;
          // The chunk leaves with its reservation: a copy goes to the courier, to be delivered at
          // its time (never before an earlier chunk of the flow: jitter must not reorder).
          const double at = std::max(r.deliver, f.last_deliver);
          f.last_deliver = at;
          if (f.reserved == 0) {
            // A part sized by its header: the header is the first bytes of chunk 0 and arrives
            // one latency after the chunk starts, so that the receiver, which cannot post its
            // receives before it knows the part, has them posted when the chunk arrives (posted
            // only after the whole chunk, a clear ring of 3 synced 8% slower).
            const double head_at =
                f.by_header ? std::min(at, r.start + link->schedule().at(r.start).latency_s) : at;
            put_sightings(self, f.hdr.data());
            Courier::Item h{head_at, channel, f.next_dc, f.tag + kMaxTransfers, MPI_DOUBLE,
                            std::vector<char>(f.hdr.size() * sizeof(double))};
            std::memcpy(h.data.data(), f.hdr.data(), h.data.size());
            box->post(std::move(h));
          }
          const char* from = f.data + f.reserved * f.chunk;
          box->post(Courier::Item{at, channel, f.next_dc, f.tag, MPI_BYTE,
                                  std::vector<char>(from, from + static_cast<size_t>(len))});
          ++f.sent;  // handed to the courier
        }
        ++f.reserved;
      }
      // Unshaped: hand the chunks to MPI at once; the header goes with the first.
      while (f.sent < f.reserved) {
        if (f.sent == 0) {
          f.hdr[0] = rank0_time();
          put_sightings(self, f.hdr.data());
          MPI_CHECK(MPI_Isend(f.hdr.data(), header_doubles(), MPI_DOUBLE, f.next_dc, f.tag + kMaxTransfers,
                              channel, &f.header));
        }
        MPI_Request r;
        MPI_CHECK(MPI_Isend(f.data + f.sent * f.chunk, static_cast<int>(out_len(f, f.sent)),
                            MPI_BYTE, f.next_dc, f.tag, channel, &r));
        sends.push_back(r);
        ++f.sent;
      }
      if (f.sent < f.nchunks) all_done = false;
      if (box && f.sent == f.nchunks && f.prev_end > now()) {  // the last chunk is still leaving
        all_done = false;
        next_event = std::min(next_event, f.prev_end);
      }
      if (f.arrivals && f.reserved < f.nchunks) next_event = std::min(next_event, now() + 1e-4);
    }
    if (box && !box->threaded()) next_event = std::min(next_event, box->pump());
    if (all_done) break;
    // Let MPI progress (rendezvous of earlier sends, relayed receives) while we wait.
    if (!sends.empty()) {
      int flag = 0;
      MPI_CHECK(MPI_Testall(static_cast<int>(sends.size()), sends.data(), &flag, MPI_STATUSES_IGNORE));
      if (flag) sends.clear();
    }
    if (next_event < 1e299) sleep_until_run_time(*this, std::min(next_event, now() + 1e-3));
  }
  if (box && !box->threaded()) box->flush();
  for (auto& f : flows) sends.push_back(f.header);
  MPI_CHECK(MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE));
  // The streaming and the backed intervals and every chunk that arrived: take_counters counts
  // the chunks inside the intervals, of this call and any other on the same link (delivery.hpp).
  std::lock_guard<std::mutex> lock(mu_);
  arrivals_.insert(arrivals_.end(), arrived.begin(), arrived.end());
  stream_.insert(stream_.end(), streams.begin(), streams.end());
  backed_.insert(backed_.end(), backed.begin(), backed.end());
  for (int l = 0; l < n_ * n_; ++l) {
    LinkCounters& c = counters_[l];
    c.bytes += mine[l].bytes, c.control_bytes += mine[l].control_bytes;
    c.latency_ms += mine[l].latency_ms;
    c.latency_samples += mine[l].latency_samples, c.queued_ms += mine[l].queued_ms;
    c.shaper_busy_ms += mine[l].shaper_busy_ms;
  }
  for (const auto& [l, iv] : intervals) wire_[l].push_back(iv);
}

void Transport::exchange(MPI_Comm channel, int self, const void* sbuf, size_t sbytes, int dst,
                         void* rbuf, size_t rbytes, int src, int tag_base,
                         const std::vector<std::pair<int, int>>& all_pairs,
                         const std::vector<size_t>& all_bytes, const Paths& paths,
                         const Routes* routes, double fresh_since) {
  std::vector<Transfer> xs;
  struct Split {  // an adaptive pair this DC sends: where its parts and tail are in xs
    int pair, part[2], tail;
    size_t planned0, cut0;  // route 0's bytes in the decision's shares and in the cut at the start
  };
  std::vector<Split> splits;
  for (size_t i = 0; i < all_pairs.size(); ++i) {
    const auto [a, b] = all_pairs[i];
    const size_t bytes = all_bytes[i];
    if (a == self && b == dst) STRAIT_CHECK(bytes == sbytes, "send size differs from the step's plan");
    if (b == self && a == src) STRAIT_CHECK(bytes == rbytes, "receive size differs from the step's plan");
    const bool split = routes && static_cast<int>(routes->size()) == n_ * n_ &&
                       !(*routes)[a * n_ + b].empty();
    const std::vector<Route>* rs = split ? &(*routes)[a * n_ + b] : nullptr;
    const size_t parts = rs ? rs->size() : 1;
    // Adaptive (Route::gbps): every DC of the routes knows that, from the record; only the
    // sender knows the cut, from what it has seen of the routes (route_seen).
    const bool adaptive = shaped_ && rs && rs->size() == 2 && (*rs)[0].gbps > 0 && (*rs)[1].gbps > 0;
    std::vector<Route> cut;
    double cut_gbps[2] = {0, 0};
    if (adaptive && a == self) {
      cut = *rs;
      const std::vector<double> seen{route_seen(cut[0].path, fresh_since),
                                     route_seen(cut[1].path, fresh_since)};
      const std::vector<double> f = adapted_fractions(cut, seen);
      for (size_t r = 0; r < cut.size(); ++r) {
        cut[r].fraction = f[r];
        // The rate the cut took (adapted_fractions): the one seen on a degraded route.
        cut_gbps[r] = seen[r] >= 0 && seen[r] < kAdaptBelow * cut[r].gbps ? seen[r] : cut[r].gbps;
      }
    }
    const std::vector<Route>* use = adaptive && a == self ? &cut : rs;
    if (rs && a == self && parts == 2) {  // what the sender put where (LinkCounters, per pair)
      const auto [lo, cut_at] = route_part(*use, 0, bytes);
      const size_t planned = route_part(*rs, 0, bytes).second;
      if (adaptive && tails_) {  // counted once the tail is settled, below
        splits.push_back({static_cast<int>(a * n_ + b), {-1, -1}, -1, planned, cut_at - lo});
      } else {
        std::lock_guard<std::mutex> lock(mu_);
        LinkCounters& c = counters_[a * n_ + b];
        c.route0_bytes += static_cast<double>(cut_at - lo);
        c.route1_bytes += static_cast<double>(bytes - cut_at);
        c.moved_bytes += std::fabs(static_cast<double>(cut_at) - static_cast<double>(planned));
      }
    }
    const size_t first_part = xs.size();
    for (size_t r = 0; r < parts; ++r) {
      const auto [lo, hi] = use ? route_part(*use, r, bytes) : std::pair<size_t, size_t>{0, bytes};
      if (rs && hi == lo && !adaptive) continue;
      Transfer x;
      x.path = rs ? (*rs)[r].path : paths.at(a * n_ + b);
      x.sized_by_header = adaptive;
      // An adaptive part's receivers and relays know the whole message only; its sender the part.
      x.bytes = adaptive && a != self ? bytes : hi - lo;
      x.offset = adaptive && a == self ? lo : 0;
      if (a == self && b == dst) x.sbuf = static_cast<const char*>(sbuf) + lo;
      if (b == self && a == src) x.rbuf = static_cast<char*>(rbuf) + (adaptive ? 0 : lo);
      if (adaptive && a == self) x.cut_gbps = cut_gbps[r];
      xs.push_back(std::move(x));
    }
    if (adaptive && tails_) {
      // The tail rides the route of the decision's smaller share (a standby's, mostly) and may
      // take the end of the larger share's part (Transfer::tail_of). Every DC of the routes
      // builds it; its receivers and relays size it by its header.
      const size_t main = (*rs)[0].fraction >= (*rs)[1].fraction ? 0 : 1;
      Transfer x;
      x.path = (*rs)[1 - main].path;
      x.sized_by_header = true;
      x.tail_of = static_cast<int>(first_part + main);
      x.bytes = a == self ? 0 : bytes;
      if (a == self) {
        x.beside = static_cast<int>(first_part + 1 - main);
        x.sbuf = sbuf;  // the message's start: the header gives the offset
        splits.back().part[0] = static_cast<int>(first_part);
        splits.back().part[1] = static_cast<int>(first_part + 1);
        splits.back().tail = static_cast<int>(xs.size());
      }
      if (b == self && a == src) x.rbuf = rbuf;
      xs.push_back(std::move(x));
    }
  }
  std::vector<size_t> tail_bytes;
  execute(channel, self, xs, tag_base, false, &tail_bytes);
  // What the sender put where, the tail's bytes on its route (LinkCounters, per pair).
  std::lock_guard<std::mutex> lock(mu_);
  for (const Split& sp : splits) {
    const Transfer& tail = xs[static_cast<size_t>(sp.tail)];
    const size_t moved = tail_bytes[static_cast<size_t>(sp.tail)];
    const bool off_route0 = tail.tail_of == sp.part[0];
    const size_t bytes =
        xs[static_cast<size_t>(sp.part[0])].bytes + xs[static_cast<size_t>(sp.part[1])].bytes;
    const size_t on0 = off_route0 ? sp.cut0 - moved : sp.cut0 + moved;
    LinkCounters& c = counters_[static_cast<size_t>(sp.pair)];
    c.route0_bytes += static_cast<double>(on0);
    c.route1_bytes += static_cast<double>(bytes - on0);
    c.moved_bytes += std::fabs(static_cast<double>(on0) - static_cast<double>(sp.planned0));
  }
}

std::vector<double> adapted_fractions(const std::vector<Route>& rs, const std::vector<double>& seen) {
  std::vector<double> f(rs.size());
  for (size_t r = 0; r < rs.size(); ++r) f[r] = rs[r].fraction;
  if (rs.size() != 2 || seen.size() != 2 || !(rs[0].gbps > 0) || !(rs[1].gbps > 0)) return f;
  bool degraded[2];
  double rate[2];
  for (int r = 0; r < 2; ++r) {
    degraded[r] = seen[r] >= 0 && seen[r] < kAdaptBelow * rs[r].gbps;
    rate[r] = degraded[r] ? seen[r] : rs[r].gbps;
  }
  if (!degraded[0] && !degraded[1]) return f;
  const double sum = rate[0] + rate[1];
  if (!(sum > 0)) return f;
  // Both parts end together when part r carries rate[r] / sum of the bytes (latency aside).
  const double even0 = rate[0] / sum;
  const double f0 = degraded[0] && degraded[1] ? even0
                    : degraded[0]              ? std::min(f[0], even0)
                                               : std::max(f[0], even0);
  return {f0, 1 - f0};
}

void Transport::note_reserved(int link, const Reservation& r, double bytes) {
  if (bytes < kSeenMinBytes) return;
  std::lock_guard<std::mutex> lock(seen_mu_);
  auto& v = seen_[static_cast<size_t>(link)];
  if (v.size() == kSeenKept) v.erase(v.begin());
  v.push_back({r.start, r.end, bytes});
}

double Transport::seen_gbps(int src, int dst, double since, double* at) const {
  if (!shaped_ || !links_[src * n_ + dst]) return -1;
  const double t = now();
  std::lock_guard<std::mutex> lock(seen_mu_);
  double last_end = -1e300, gbps = -1, bound = -1;
  for (const Reserved& c : seen_[static_cast<size_t>(src * n_ + dst)]) {
    if (c.end <= t && c.end >= since && c.end > last_end && c.end > c.start)
      last_end = c.end, gbps = c.bytes * 8 / (c.end - c.start) / 1e9;
    // Still leaving: it has taken longer than a rate above this allows.
    if (c.start < t && c.end > t) {
      const double b = c.bytes * 8 / (t - c.start) / 1e9;
      bound = bound < 0 ? b : std::min(bound, b);
    }
  }
  if (bound >= 0 && (gbps < 0 || bound < gbps)) {
    if (at) *at = t;
    return bound;
  }
  if (at) *at = last_end;
  return gbps;
}

double Transport::route_seen(const std::vector<int>& path, double since, double* first,
                             double* first_at) const {
  if (path.size() < 2) return -1;
  double seen = seen_gbps(path[0], path[1], since, first_at);
  if (first) *first = seen;
  // Sightings reported by the later links' senders, fresh on rank 0's clock.
  const double fresh = t0_ + since + clock_offset_s_;
  std::lock_guard<std::mutex> lock(seen_mu_);
  for (size_t h = 1; h + 1 < path.size(); ++h) {
    const auto& [gbps, when] = heard_[static_cast<size_t>(path[h] * n_ + path[h + 1])];
    if (gbps >= 0 && when >= fresh) seen = seen < 0 ? gbps : std::min(seen, gbps);
  }
  return seen;
}

void Transport::put_sightings(int self, double* hdr) const {
  if (!shaped_) return;  // no sightings, and no room for them (header_doubles)
  for (int k = 0; k < n_; ++k) {
    double at = -1e300;
    const double g = k == self ? -1 : seen_gbps(self, k, -1e300, &at);
    hdr[kHeaderDoubles + 2 * k] = g;
    hdr[kHeaderDoubles + 2 * k + 1] = g >= 0 ? t0_ + at + clock_offset_s_ : -1e300;
  }
}

void Transport::hear(int from, const double* hdr) {
  if (!shaped_) return;
  std::lock_guard<std::mutex> lock(seen_mu_);
  for (int k = 0; k < n_; ++k) {
    const double g = hdr[kHeaderDoubles + 2 * k], when = hdr[kHeaderDoubles + 2 * k + 1];
    auto& h = heard_[static_cast<size_t>(from * n_ + k)];
    if (k != from && g >= 0 && when > h.second) h = {g, when};
  }
}

std::pair<size_t, size_t> route_part(const std::vector<Route>& routes, size_t r, size_t len) {
  double before = 0;
  for (size_t k = 0; k < r; ++k) before += std::max(0.0, routes[k].fraction);
  auto at = [&](double f) {
    return std::min(len, static_cast<size_t>(std::floor(f * static_cast<double>(len) + 1e-9)));
  };
  const size_t lo = r == 0 ? 0 : at(before);
  if (!(routes[r].fraction > 0)) return {lo, lo};
  bool last = true;
  for (size_t k = r + 1; k < routes.size(); ++k) last = last && !(routes[k].fraction > 0);
  const size_t hi = last ? len : at(before + routes[r].fraction);
  return {lo, std::max(lo, hi)};
}

std::vector<LinkCounters> Transport::take_counters() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LinkCounters> out = counters_;
  // The union of intervals (seconds): concurrent flows on a link count once.
  auto union_s = [](std::vector<std::pair<double, double>>& iv) {
    std::sort(iv.begin(), iv.end());
    double total = 0, lo = 0, hi = -1e300;
    for (const auto& [a, b] : iv) {
      if (a > hi) {
        if (hi > lo) total += hi - lo;
        lo = a, hi = b;
      } else {
        hi = std::max(hi, b);
      }
    }
    if (!iv.empty() && hi > lo) total += hi - lo;
    iv.clear();
    return total;
  };
  // The bytes of every chunk that arrived inside a link's streaming (backed) intervals, of every
  // call since the last take: two calls on one link at once (two experts' overlapped syncs, a
  // control message beside a sync) deliver over the same time, and a call with no timed flow on
  // the link still had its chunks carried while another's streamed (delivery.hpp). A call
  // leaves its arrivals and intervals when it ends: one still running now is counted with the
  // next take, and its chunks meet only the intervals of calls that end before that take.
  // Two flows streaming at once on a link each get about half of it: the merged intervals' time
  // (their union), not the sum of their times, makes stream_gbps the link's rate rather than a
  // flow's share of it.
  // Under the software shaper an interval in which a chunk came in a burst after a hold-up that
  // was a quarter of it or more timed the host's hand-over more than the link (delivery.hpp,
  // paced_only): it is no sample of the link's rate; reported apart (held_*).
  std::vector<LinkInterval> streamed = merge_per_link(std::move(stream_));
  std::vector<LinkInterval> merged = merge_per_link(std::move(backed_));
  std::vector<LinkInterval> held;
  if (shaped_) {
    streamed = paced_only(streamed, arrivals_, kHeldUpBurst, kHeldUpPause, &held);
    merged = paced_only(merged, arrivals_, kHeldUpBurst, kHeldUpPause);
  }
  const std::vector<double> stream_bytes = bytes_inside(streamed, arrivals_, n_ * n_);
  const std::vector<double> backed_bytes = bytes_inside(merged, arrivals_, n_ * n_);
  const std::vector<double> held_bytes = bytes_inside(held, arrivals_, n_ * n_);
  const std::vector<LinkInterval> late = last_per_link(merged);
  const std::vector<double> late_bytes = bytes_inside(late, arrivals_, n_ * n_);
  const std::vector<LinkInterval> late_stream = last_per_link(streamed);
  const std::vector<double> late_stream_bytes = bytes_inside(late_stream, arrivals_, n_ * n_);
  stream_.clear(), backed_.clear(), arrivals_.clear();
  for (int l = 0; l < n_ * n_; ++l) {
    out[l].wire_ms = union_s(wire_[l]) * 1e3;
    out[l].stream_bytes = stream_bytes[l], out[l].backed_bytes = backed_bytes[l];
    out[l].held_bytes = held_bytes[l], out[l].late_bytes = late_bytes[l];
    out[l].late_stream_bytes = late_stream_bytes[l];
    counters_[l] = LinkCounters{};
  }
  for (const LinkInterval& iv : streamed) out[iv.link].stream_ms += (iv.to - iv.from) * 1e3;
  for (const LinkInterval& iv : merged) out[iv.link].backed_ms += (iv.to - iv.from) * 1e3;
  for (const LinkInterval& iv : held) out[iv.link].held_ms += (iv.to - iv.from) * 1e3;
  for (const LinkInterval& iv : late) out[iv.link].late_ms = (iv.to - iv.from) * 1e3;
  for (const LinkInterval& iv : late_stream) out[iv.link].late_stream_ms = (iv.to - iv.from) * 1e3;
  return out;
}

double Transport::capacity_gbps(int s, int d) const {
  const LinkSchedule* l = scenario_->link(s, d);
  return l ? l->at(now() / time_scale_).capacity_bps / 1e9 : 0.0;
}
double Transport::latency_ms(int s, int d) const {
  const LinkSchedule* l = scenario_->link(s, d);
  return l ? l->at(now() / time_scale_).latency_s * 1e3 : 0.0;
}
double Transport::emulated_gbps(int s, int d) const {
  const auto& l = links_[s * n_ + d];
  return l ? l->schedule().at(now()).capacity_bps / 1e9 : 0.0;
}

}  // namespace strait
