// view.hpp — what a policy sees: the ControllerView. One object for every slot, so that a policy
// needs no private channel to the trainer:
//   world()        the configured world (DCs, ranks, links as configured, model and batch sizes);
//   history()      the completed steps: per-rank and per-link measurements, oldest first
//                  (the newest may be computed only, StepRecord::synced false);
//   plan()         the decision record in force;
//   links()        what the controller believes of each link, learned from the measurements;
//   effective_step() / run_time_s()  when a decision made now takes effect, and the clock;
//   sync_step()    the step whose sync first runs on it (one earlier with control.early_paths);
//   clairvoyant()  ORACLES ONLY: what the scenario will do (future loads and link capacities).
//                  A real policy must never call it; oracle policies are labelled as upper
//                  bounds wherever their results appear.
// Measurements are what the ranks measured (by their own clocks, in ms); configured figures are
// kept apart in World and in the per-link `configured_*` fields, clearly named.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "control/plan.hpp"
#include "control/link_state.hpp"
#include "scenario/scenario.hpp"

namespace strait {

// One rank in one completed step.
struct RankStep {
  double compute_ms = 0;    // forward + backward
  double emulated_ms = 0;   // idle time added by the emulated load (scenario speed < 1)
  double sync_ms = 0;       // its gradient sync (overlapped with the next step's compute when pipelined)
  double wait_ms = 0;       // the step loop blocked: for the controller's reply + for an overlapped sync
  double optimizer_ms = 0;  // Adam on its shard
  double split = 0;         // its split fraction within its DC
  double slack_ms = 0;      // how much earlier than the slowest rank it finished the step's work
  double speed = 1;         // the scenario's speed of the rank in the step (trace, ORACLES ONLY)
  double reduce_ms = 0;     // the part of compute_ms in its DC's reductions (waits included)
  double reshard_ms = 0;    // re-splitting its DC just before the step (0: no re-split)
  int batch = 0;            // sequences of its DC in the step
  double work = 0;          // its work relative to its configured shard and batch (work.hpp)
  // Its own load: its compute outside the DC's reductions plus its emulated load. The time it
  // waited in a reduction for a slower peer is that peer's load, not its own.
  double load_ms() const { return compute_ms - reduce_ms + emulated_ms; }
  // The load it would have had at its configured shard and batch: what forecasters forecast.
  double ref_load_ms() const { return work > 0 ? load_ms() / work : load_ms(); }
};

// One directed link during one step's iteration (the traffic running then: syncs and the
// controller's own messages), as measured at the wire; configured figures apart, named so.
struct LinkStep {
  double bytes = 0;            // payload of the flows completed over the link
  double control_bytes = 0;    // the part of it that was the controller's own traffic
  double wire_ms = 0;          // union of their [first byte sent, last byte received]
  double latency_ms = 0;       // mean one-way time of small one-chunk messages (0 without samples)
  double latency_samples = 0;
  double stream_bytes = 0, stream_ms = 0;  // every chunk while multi-chunk flows streamed
  double backed_bytes = 0, backed_ms = 0;  // every chunk while a first hop's flow streamed
  double late_bytes = 0, late_ms = 0;      // the last of those intervals (LinkCounters::late_*)
  double late_stream_bytes = 0, late_stream_ms = 0;  // the last streaming interval
  double held_bytes = 0, held_ms = 0;      // streaming held up on the way (software shaper)
  double queued_ms = 0;        // waiting behind other flows' chunks (software shaper only)
  double shaper_busy_ms = 0;   // the software shaper's reservations
  // Of the PAIR src→dst (not the link), when the decision gave it routes: the bytes its sender
  // put on its first and second route, and those it moved off the route the decision's shares
  // put them on (adaptive routes, net/transport.hpp). 0 otherwise.
  double route0_bytes = 0, route1_bytes = 0, moved_bytes = 0;
  double goodput_gbps() const { return wire_ms > 0 ? bytes * 8 / (wire_ms * 1e6) : 0.0; }
  // The link's delivery rate while flows streamed (latency excluded); 0 without such a flow.
  double stream_gbps() const { return stream_ms > 0 ? stream_bytes * 8 / (stream_ms * 1e6) : 0.0; }
  // The link's delivery rate while a flow from a sender that had all its bytes streamed on it
  // (net/transport.hpp, LinkCounters): its rate, not a relayed flow's pace; 0 without one.
  double backed_gbps() const { return backed_ms > 0 ? backed_bytes * 8 / (backed_ms * 1e6) : 0.0; }
  // Over the last backed interval (LinkCounters::late_*): the link the latest time its sender
  // kept it busy; 0 without one.
  double late_gbps() const { return late_ms > 0 ? late_bytes * 8 / (late_ms * 1e6) : 0.0; }
  // The same over the last streaming interval (LinkCounters::late_stream_*); 0 without one.
  double late_stream_gbps() const {
    return late_stream_ms > 0 ? late_stream_bytes * 8 / (late_stream_ms * 1e6) : 0.0;
  }
  // Over the streaming intervals left out as held up (net/transport.hpp, LinkCounters): the
  // host's pace, not the link's (mostly low; high when an interval's first chunks were held
  // too); 0 without one.
  double held_gbps() const { return held_ms > 0 ? held_bytes * 8 / (held_ms * 1e6) : 0.0; }
  // Configured figures at the end of the iteration (not measurements; for the trace).
  double configured_gbps = 0, configured_latency_ms = 0, enforced_gbps = 0;
};

// A step. Complete once its update has been applied on every rank; with control.report =
// after-compute the controller sees it first as computed only (`synced` false: the sync's
// fields and wall_ms are 0 until the complete record replaces it, one round later).
struct StepRecord {
  int64_t step = 0;
  int expert = 0;
  double loss = 0;           // global-batch loss (nats/token)
  int64_t tokens = 0;
  double wall_ms = 0;        // rank 0's time for the step's iteration
  bool overlapped = false;   // its sync ran while the next step computed (pipelined)
  bool early = false;        // reported before its own sync: `links` are the previous step's sync
  bool synced = true;        // its sync halves are in (false: the compute half only)
  double control_rtt_ms = 0; // the latest control round trip before the step (max over ranks)
  std::vector<RankStep> ranks;   // per world rank
  std::vector<LinkStep> links;   // per ordered DC pair (src·n + dst)
};

// The configured world: known to every rank before the run, never a measurement.
struct World {
  const Config* cfg = nullptr;  // every key, for policies with parameters of their own
  int num_dcs = 1, world_size = 1, experts = 1, global_batch = 1;
  std::vector<int> dc_of_rank, dc_first_rank, dc_ranks;
  std::vector<std::string> dc_names;
  double gradient_bytes = 0;    // one expert's full gradient in float32
  bool thread_multiple = true;  // MPI provides MPI_THREAD_MULTIPLE (needed to overlap)
  double time_scale = 1;        // network.time_scale: run time = scenario time × time_scale
  // Configured capacity (Gbit/s) and one-way latency (ms) of each directed link at the start,
  // in scenario units (before time scaling); 0 where the graph has no link.
  std::vector<double> link_gbps, link_latency_ms;
  bool has_link(int s, int d) const { return link_gbps[s * num_dcs + d] > 0; }
  int dc_index(const std::string& name) const;  // -1 when unknown
};

World make_world(const Config& cfg, const Scenario& scenario, bool thread_multiple);

// ORACLES ONLY (see the top of the file).
class Clairvoyant {
 public:
  explicit Clairvoyant(std::shared_ptr<const Scenario> s) : s_(std::move(s)) {}
  // The relative speed a rank will have during `step`.
  double rank_speed(int rank, int64_t step) const { return s_->rank_speed(rank, step); }
  // Capacity (Gbit/s) and one-way latency (ms) of a link at run time t (seconds since the
  // start), in scenario units; {0, 0} where there is no link.
  struct LinkTruth {
    double gbps = 0, latency_ms = 0;
  };
  LinkTruth link(int src, int dst, double run_time_s) const;

 private:
  std::shared_ptr<const Scenario> s_;
};

class ControllerView {
 public:
  static constexpr size_t kHistory = 4096;  // completed steps kept (oldest dropped first)

  ControllerView(World world, std::shared_ptr<const Scenario> scenario, Plan initial);

  const World& world() const { return world_; }
  const std::deque<StepRecord>& history() const { return history_; }
  const StepRecord* last() const { return history_.empty() ? nullptr : &history_.back(); }
  const Plan& plan() const { return plan_; }
  int64_t effective_step() const { return effective_; }
  // The step whose sync first runs on the record decided now: effective_step(), or the step
  // before it with control.early_paths (the record's paths, routes and sync plan take effect one
  // sync early). What path selectors and sync planners plan for.
  int64_t sync_step() const { return effective_ - sync_lead_; }
  double run_time_s() const { return now_s_; }
  const Clairvoyant& clairvoyant() const { return clairvoyant_; }
  // What the controller believes of each link, learned from the history's wire measurements
  // (link_state.hpp): the figures every real policy plans on.
  const LinkStates& links() const { return links_; }

  // The controller's side. computed(): a step's compute half, ahead of its sync (history gets
  // it at once, and its links, the previous step's sync, are learned then); record(): the
  // complete step, in place of its compute half if one came, in step order either way.
  void computed(StepRecord r);
  void record(StepRecord r);
  void set_plan(Plan p);
  void set_clock(int64_t effective_step, double run_time_s) {
    effective_ = effective_step, now_s_ = run_time_s;
  }

 private:
  void observe_links(const StepRecord& r);  // the wire measurements a record carries

  World world_;
  Clairvoyant clairvoyant_;
  LinkStates links_;
  std::deque<StepRecord> history_;
  Plan plan_;
  // The decisions not yet superseded at the last recorded step (front: the one in force then):
  // which flows crossed which links in a step (LinkStates::observe, Carriage).
  std::deque<Plan> in_force_;
  int64_t effective_ = 0;
  int sync_lead_ = 0;  // steps the record's sync half runs before its step (0, or 1: early_paths)
  double now_s_ = 0;
  // A real network's first sync is still to be seen, and left out (observe_links).
  bool opening_sync_ahead_ = false;
};

}  // namespace strait
