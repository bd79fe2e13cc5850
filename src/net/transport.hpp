// transport.hpp — the transport point: every inter-datacenter byte passes through here.
// Gateways hand it a set of transfers (each with a path of DCs: direct, or relayed through other
// DCs; the paths come with the transfers, from the decision in force) over a channel (an MPI communicator whose rank == DC index; one per expert, so two
// experts' syncs never match each other's messages). Every DC named in a path runs execute() with
// the same transfer list and plays its roles: the first DC sends, middle DCs forward chunk by
// chunk (pipelined), the last receives.
//
// With network.shaper = "software" every chunk reserves its link (src/net/shaper.hpp: capacity
// over time, latency, jitter, FIFO sharing) and is handed to MPI only at its delivery time, so a
// transfer takes at least what the emulated WAN says. A directed link is reserved only by its
// source DC's gateway, so its state lives in one process. With "none" chunks go at once (under
// the tc launcher the kernel shapes them). Counters per link feed the trace.
// Thread-safe: an overlap scheduler may run two experts' transfers from two threads.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "config/config.hpp"
#include "net/courier.hpp"
#include "net/delivery.hpp"
#include "net/shaper.hpp"
#include "scenario/scenario.hpp"

namespace strait {

// What this rank measured on one directed link since the last take_counters(). The receiving
// gateway measures the wire, the sending one its own side; summed over ranks (each link has one
// of each) they are the link's figures. docs/trace.md (/links) says exactly what each one is.
struct LinkCounters {
  double bytes = 0;            // receiver: payload of the flows that completed over the link
  double control_bytes = 0;    // receiver: the part of it that was the controller's own traffic
  double wire_ms = 0;          // receiver: union over those flows of [first byte sent, last byte
                               // received], both on rank 0's clock (the sender's time travels
                               // with the flow)
  double latency_ms = 0;       // receiver: sum over small one-chunk messages of receive − send
  double latency_samples = 0;  // receiver: how many such messages (only those it was waiting
                               // for: one found already queued says when we looked, not arrival)
  double stream_bytes = 0;     // receiver: the union over multi-chunk flows of the times between
  double stream_ms = 0;        // the first chunk it saw arrive and the last, and the bytes of
                               // every chunk (of any flow or call, timed or not) that arrived in it
                               // after its start: the link's delivery rate while flows
                               // streamed, latency excluded, concurrent flows counted together
                               // (a link's rate, not one flow's share of it; delivery.hpp)
  double backed_bytes = 0;     // receiver: bytes of every chunk (of any flow) that arrived while
  double backed_ms = 0;        // a flow whose sender had all its bytes — the first hop of its
                               // path — streamed on the link, over the union of those flows'
                               // streaming intervals: the link's rate while its sender kept it
                               // busy. A flow relayed onto the link alongside arrives at the
                               // pace of the hops before it; it shares this figure's bytes and
                               // cannot stretch its time, as it stretches stream_ms's union
                               // (transport.cpp, Backed)
  double late_bytes = 0;       // receiver: the last of those backed intervals (merged and
  double late_ms = 0;          // kept, as backed_*: the one that ended last — a controller
                               // message's flow too, when it came last) and the bytes that arrived
                               // in it: the link's rate the latest time its sender kept it busy.
                               // A link whose rate changed within the step reads the new rate
                               // here while backed_* blends both (a recovery shows only in the
                               // bytes sent after it; docs/paths.md, "A change within the step")
  double late_stream_bytes = 0;  // receiver: the same for the streaming intervals (stream_*):
  double late_stream_ms = 0;     // the last of them and the bytes that arrived in it — what a
                                 // link that carried only relayed flows delivered last
  double held_bytes = 0;       // receiver, software shaper: the streaming intervals left out of
  double held_ms = 0;          // stream_* because a chunk came in a burst after a hold-up
                               // after a wait of most of the interval (delivery.hpp, paced_only),
                               // and the bytes that arrived in them: the host's pace, not the link's
  double queued_ms = 0;        // sender: time its chunks waited for the link behind other flows'
                               // chunks (software shaper; not observable under tc: 0)
  double shaper_busy_ms = 0;   // sender: the software shaper's own reservations of the link
  // Per ordered PAIR (this index read as src·n + dst of a pair, whether or not a link joins
  // them), for pairs whose bytes the decision gives routes (Transport::exchange): what their
  // sender put on the pair's first and second route, and how many of those bytes it moved off
  // the route the decision's shares put them on (adaptive routes, below). 0 for other pairs.
  double route0_bytes = 0, route1_bytes = 0, moved_bytes = 0;
};

struct Transfer {
  std::vector<int> path;     // DC indices, path.front() sends, path.back() receives
  const void* sbuf = nullptr;  // on path.front()
  void* rbuf = nullptr;        // on path.back()
  size_t bytes = 0;
  // A part of a pair's message whose extent only its sender knows when the transfer starts (an
  // adaptive route, Transport::exchange). The sender's part is [offset, offset + bytes) of the
  // message (sbuf points at its start) and travels in the flow's header; receivers and relays
  // learn it from there: on them `bytes` is the whole message's and rbuf its start. A part of
  // 0 bytes is a header alone. Unshaped transports never build such parts.
  bool sized_by_header = false;
  size_t offset = 0;
  // Adaptive pairs, the re-cut within a transfer (docs/paths.md, "The tail"): a pair's tail is
  // a third transfer, sized by its header, over the route of the decision's smaller share; it
  // carries the unsent end of the larger share's part (transfer `tail_of` of the same list) when
  // the sender sees that part's route degrade while it is sending, and nothing otherwise. Its
  // sender sends its header once that is settled, so its receivers and relays wait for it.
  int tail_of = -1;
  // Sender only. On a tail: the part beside it on its route (its bytes go first). On either
  // part of an adaptive pair: the rate the cut at the start took for its route (Gbit/s of the
  // run), and since when a sighting is fresh (run seconds).
  int beside = -1;
  double cut_gbps = 0, fresh_since = -1e300;
};

// A path per ordered pair of DCs (index src·n + dst; {src, ..., dst}; empty on the diagonal).
using Paths = std::vector<std::vector<int>>;

// One of the paths a flow takes, with its share of the flow's bytes (multi-path flows).
// With `gbps` > 0 on both routes of a two-route pair, the routes are adaptive (software shaper
// only): the pair's sender may move bytes off a route whose links it has just seen deliver — its
// first link by itself, the later ones by what their senders report in their headers — at under
// half the rate the decision expected (adapted_fractions); a route of fraction 0 is then
// a standby, kept ready at the cost of a header per transfer (docs/paths.md, "Reaction inside a
// sync").
struct Route {
  std::vector<int> path;  // DC indices, front sends, back receives
  double fraction = 1.0;  // of the flow's bytes
  double gbps = 0;        // the rate the decision expects this route's part at (Gbit/s of the
                          // run: its bottleneck's share); 0: none, the share is fixed
  bool operator==(const Route&) const = default;
};
// Routes per ordered pair (index src·n + dst); an empty entry means the pair's single path.
using Routes = std::vector<std::vector<Route>>;
// [lo, hi) of route r's part of a flow of `len` units: cut points floor(prefix fraction · len),
// the last route of positive fraction ends at len. Every rank cuts the same way.
std::pair<size_t, size_t> route_part(const std::vector<Route>& routes, size_t r, size_t len);
// Every pair direct.
Paths direct_paths(int num_dcs);

// Adaptive routes: the fractions a sender uses for a two-route pair whose routes carry their
// expected rates (Route::gbps), given what it has seen of each route lately (`seen_gbps`, Gbit/s
// of the run: the least fresh sighting of its links, Transport::route_seen; < 0: nothing fresh). A route seen below kAdaptBelow × its
// expected rate is degraded: its rate is taken as the one seen, and it keeps at most the share
// that would let both parts end together on those rates (the other route takes the rest); two
// degraded routes share in proportion to what was seen. Nothing degraded: the decision's
// fractions, unchanged. Only ever moves bytes off a degraded route: a standby (fraction 0) is
// used only when the route in use degrades, never because the standby looks fast.
std::vector<double> adapted_fractions(const std::vector<Route>& routes,
                                      const std::vector<double>& seen_gbps);
constexpr double kAdaptBelow = 0.5;

class Transport {
 public:
  // t0: the run's start (MPI_Wtime seconds); link schedules are functions of time since then.
  // The links follow `scenario` (shared with the trainer); the config gives shaper and chunks.
  // Wire timestamps are taken on rank 0's clock: set this rank's offset (topo/clock.hpp) first.
  Transport(const Config& cfg, std::shared_ptr<const Scenario> scenario, double t0);
  Transport(const Config& cfg, double t0);  // with its own Scenario(cfg)

  int num_dcs() const { return n_; }
  void set_clock_offset(double seconds) { clock_offset_s_ = seconds; }
  bool has_link(int src, int dst) const { return scenario_->link(src, dst) != nullptr; }
  // A path with the fewest hops from src to dst over the links that exist (ties: lower DC
  // indices first); empty when dst cannot be reached.
  std::vector<int> fewest_hops(int src, int dst) const;
  bool shaped() const { return shaped_; }
  double now() const;  // seconds since t0

  // Runs this DC's roles in `xs` (identical list on every DC in any path; at most kMaxTransfers).
  // tag_base < kMaxTagBases. `control`: the controller's own traffic (counted apart as well).
  // Returns once this DC's receives are complete and its chunks have left (their transmission on
  // the link has ended); with the software shaper the courier delivers them at their time (see
  // net/courier.hpp), so a gateway goes on as a TCP sender does. Without MPI_THREAD_MULTIPLE it
  // returns only once they are delivered.
  // `tail_bytes`, when given: per transfer, the bytes a tail this DC sent carried.
  void execute(MPI_Comm channel, int self_dc, const std::vector<Transfer>& xs, int tag_base,
               bool control = false, std::vector<size_t>* tail_bytes = nullptr);
  // Returns once every chunk this rank has sent is delivered and MPI is done with it. Call it
  // before freeing a channel (a chunk may still be waiting for its delivery time).
  void flush();

  // One ring step: send to dst_dc and receive from src_dc, each over its path in `paths`.
  // Every gateway calls it with the same (paths, tag_base); `all_pairs` lists every (from, to)
  // of the step so that relays know their roles.
  // A pair with routes in `routes` (when given) splits its bytes among them.
  // A pair whose two routes are adaptive (Route::gbps) has its bytes cut by its sender at the
  // start of the transfer (adapted_fractions), on what it has seen of the routes since run time
  // `fresh_since` (seconds; route_seen): both parts go, the cut in their headers, and the
  // receivers and relays size them from there. With control.paths.tail the pair also gets a tail
  // (Transfer::tail_of), which may take the larger part's unsent end while it goes.
  void exchange(MPI_Comm channel, int self_dc, const void* sbuf, size_t sbytes, int dst_dc,
                void* rbuf, size_t rbytes, int src_dc, int tag_base,
                const std::vector<std::pair<int, int>>& all_pairs,
                const std::vector<size_t>& all_bytes, const Paths& paths,
                const Routes* routes = nullptr, double fresh_since = -1e300);
  // The rate this rank, as the sender on link src→dst, has seen the link deliver lately (Gbit/s
  // of the run): the transmission rate of its last chunk on it that has left (ended) since
  // `since`, or less, when a chunk on it now has already taken longer than that rate allows
  // (the sender sees its queue not draining); < 0 when it has seen nothing since then. Only
  // the software shaper gives this (the sender reserves its own links); unshaped: < 0. With
  // `at`: when it was seen (run seconds: the chunk's end, or now for one still leaving).
  double seen_gbps(int src, int dst, double since, double* at = nullptr) const;
  // What this rank has seen of a path lately (since run time `since`): the least of its first
  // link's rate as its sender (seen_gbps) and, for every later link, the rate its sender last
  // reported seeing in a header that reached this rank (every header carries its sender's
  // sightings of each of its links: a relay's of the hop after it reaches the sender of the
  // part whenever the relay sends to it); < 0 when none of them is fresh. Why: a route cut on
  // its first link alone went on feeding a relay whose next link had collapsed — on markov3 a
  // step of 740 ms against 225 with two thirds of a hop on c→b→a when b→a fell to a twentieth
  // (docs/paths.md, "A relay's next link").
  // `first`, `first_at`: the first link's figure and when (seen_gbps's `at`).
  double route_seen(const std::vector<int>& path, double since, double* first = nullptr,
                    double* first_at = nullptr) const;
  // Throws std::invalid_argument unless paths has one path per ordered pair, each running from
  // its source to its destination over links that exist, without repeating a DC.
  void check_paths(const Paths& paths) const;
  // The same for one path from src to dst.
  void check_path(const std::vector<int>& path, int src, int dst) const;

  // Counters since the last call, per directed link (index src·n + dst), then reset.
  std::vector<LinkCounters> take_counters();
  // A message this small, in one chunk, gives a latency sample.
  static constexpr size_t kLatencyProbeBytes = 4096;
  // A chunk's arrival counts as seen (for latency and streaming rate) when the test that found it
  // came at most this long after one that found it missing (the poll loop tests every 0.1 ms).
  static constexpr double kArrivalTolerance = 0.001;
  // Under the software shaper a streaming interval in which some chunk came sooner after the one
  // before it than this share of the interval's mean time per byte is no sample (paced_only) ...
  static constexpr double kHeldUpBurst = 0.5;
  // ... when also some chunk waited at least this share of the interval (the hold-up is most of it).
  static constexpr double kHeldUpPause = 0.25;
  // Configured (scenario) capacity and latency of a link now, before time scaling, and the
  // emulated capacity the shaper enforces (after it).
  double capacity_gbps(int src, int dst) const;
  double latency_ms(int src, int dst) const;
  double emulated_gbps(int src, int dst) const;
  // Chunk size of transfers over `path` (see transport.cpp).
  size_t chunk_for(const std::vector<int>& path, size_t bytes) const;
  static constexpr double kChunkSeconds = 0.002;
  static constexpr double kMinChunks = 4;
  // shaper = "none": chunks fit the TCP eager limit (read from MPI, else 64 KiB) less this much
  // room for MPI's own message header.
  static constexpr size_t kEagerHeaderBytes = 256, kDefaultEagerBytes = 65536;
  // Tags: tag_base · kTagStride + transfer index for data, + kMaxTransfers for the transfer's
  // timestamp header (the sender's first-byte time, which the receiver needs for the wire time).
  static constexpr int kMaxTransfers = 512, kTagStride = 2 * kMaxTransfers, kMaxTagBases = 256;
  // The header of a flow on each hop: the sender's first-byte time (rank 0's clock), then the
  // part's offset in its message and its bytes (Transfer::sized_by_header), then per DC k the
  // sender's latest sighting of its link to k (seen_gbps: Gbit/s, < 0 none; and when, on rank 0's
  // clock), as doubles: header_doubles() in all. Unshaped (tc) no sender sees its links, and the
  // header is the first three alone.
  static constexpr int kHeaderDoubles = 3;
  int header_doubles() const { return kHeaderDoubles + (shaped_ ? 2 * n_ : 0); }
  // Chunks smaller than this say little of a link's rate (a header, a control message's tail).
  static constexpr double kSeenMinBytes = 1024;

 private:
  int n_ = 1;
  bool shaped_ = true;
  bool tails_ = false;  // adaptive pairs get a tail (Transfer::tail_of)
  double t0_ = 0, time_scale_ = 1;
  int tag_ub_ = 32767;
  size_t chunk_ = 256 * 1024;
  std::shared_ptr<const Scenario> scenario_;        // configured figures (unscaled)
  std::vector<std::unique_ptr<Link>> links_;        // per ordered pair (null on the diagonal)
  double clock_offset_s_ = 0;                       // rank-0 time = MPI_Wtime() + offset
  double rank0_time() const { return MPI_Wtime() + clock_offset_s_; }
  std::unique_ptr<Courier> courier_;  // software shaper: delivers chunks at their time
  // Counters and the wire intervals of completed flows, per link; execute() may run on several
  // threads at once (an overlapped sync, the controller's traffic).
  std::mutex mu_;
  std::vector<LinkCounters> counters_;
  std::vector<std::vector<std::pair<double, double>>> wire_;
  std::vector<LinkInterval> stream_;  // every call's flows' streaming intervals, unmerged
  std::vector<LinkInterval> backed_;  // the same for first hops (backed)
  std::vector<Arrival> arrivals_;  // every chunk every call received, for take_counters
  // Per link this rank sends on: its last few reservations (start, end, bytes), newest last,
  // for seen_gbps. Guarded by seen_mu_ (execute() runs on several threads).
  struct Reserved {
    double start, end, bytes;
  };
  static constexpr size_t kSeenKept = 16;
  mutable std::mutex seen_mu_;
  std::vector<std::vector<Reserved>> seen_;
  // Per link: the latest sighting its sender reported in a header that reached this rank (Gbit/s,
  // < 0 none; when, on rank 0's clock). Guarded by seen_mu_.
  std::vector<std::pair<double, double>> heard_;
  void note_reserved(int link, const Reservation& r, double bytes);
  // This rank's sightings of its links into a header (from kHeaderDoubles on), and a header's
  // sightings of its sender's links into heard_.
  void put_sightings(int self, double* hdr) const;
  void hear(int from, const double* hdr);
};

}  // namespace strait
