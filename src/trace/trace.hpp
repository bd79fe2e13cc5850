// trace.hpp — the HDF5 trace of one run (written by rank 0 only).
// Schema: docs/trace.md. Rows are appended to chunked, extendable datasets and the file is
// flushed after every step, so a reader sees every completed step while the run goes on
// (HDF5_USE_FILE_LOCKING=FALSE) and after the run is killed.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace strait {

// The trace cannot be written any more (a full disk, the file removed or replaced under the run,
// an HDF5 error): the message says what failed and why. The run stops cleanly on it.
struct TraceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RunMeta {
  std::string config_text, config_file, version, commit, start_time, run_name;
  std::vector<std::string> hosts;    // one per world rank
  std::vector<std::string> backends; // one per world rank: Backend::name() ("cpu", "cuda-tf32", ...)
  std::vector<int> rank_dc;          // datacenter index of each world rank
  std::vector<std::string> dc_names;
  int world_size = 0;
  uint64_t seed = 0;
  int experts = 1;
  long long params_per_expert = 0;
  double corpus_entropy_bits = 0;    // unigram byte entropy of the corpus
  long long corpus_bytes = 0;
  std::string resumed_from;          // checkpoint path or empty
  int mpi_thread_level = 0;
  // Per world rank: rank-0 time = rank time + offset, estimated at start-up within ± error
  // (topo/clock.hpp); empty when not estimated.
  std::vector<double> clock_offset_ms, clock_error_ms;
};

// One row of /steps: timings are max over ranks.
struct StepRow {
  int64_t step = 0;
  int32_t expert = 0;
  double loss = 0;
  int64_t tokens = 0;
  double wall_ms = 0, compute_ms = 0, sync_ms = 0, wait_ms = 0, emulated_ms = 0;
  double controller_ms = 0, trace_ms = 0;  // rank-0 overheads of the previous iteration
  int32_t overlapped = 0;  // 1: the step's sync ran while the next step computed (pipelined)
  double control_rtt_ms = 0;  // the latest control round trip before the step (max over ranks)
};

// One row of /ranks per (step, rank).
struct RankRow {
  int64_t step = 0;
  int32_t rank = 0, dc = 0;
  double compute_ms = 0, sync_ms = 0, wait_ms = 0, emulated_ms = 0;
  double split = 0;          // this rank's current tensor-split fraction
  double slack_ms = 0;       // how much earlier than the slowest rank it finished the step's work
  double speed = 1;          // the scenario's relative speed of the rank in the step
  double reduce_ms = 0;      // the part of compute_ms in its DC's reductions (waits included)
  double reshard_ms = 0;     // re-splitting its DC just before the step (0: none)
};

// One row of /links per (step, directed link): what was measured at the wire during the step's
// iteration, beside the configured and enforced figures (docs/trace.md says exactly how).
struct LinkRow {
  int64_t step = 0;
  int32_t src = 0, dst = 0;    // datacenter indices
  double bytes = 0;            // payload of the flows completed over the link
  double control_bytes = 0;    // the part of it that was the controller's own traffic
  double wire_ms = 0;          // union of their [first byte sent, last byte received] (rank 0's clock)
  double goodput_gbps = 0;     // bytes·8 / wire_ms
  double stream_gbps = 0;      // delivery rate while multi-chunk flows streamed (latency excluded); NaN without one
  double backed_gbps = 0;      // delivery rate while a first hop's flow streamed (its sender had the bytes); NaN without one
  double late_gbps = 0;        // the same over the last such interval (the link's latest rate); NaN without one
  double late_stream_gbps = 0;  // stream_gbps over the last streaming interval; NaN without one
  double held_gbps = 0;        // over streaming held up on the way (software shaper): the host's pace; NaN without one
  double latency_ms = 0;       // mean one-way time of small one-chunk messages; NaN without any
  int64_t latency_samples = 0;
  double queued_ms = 0;        // chunks waiting behind other flows' chunks; NaN under tc
  double shaper_busy_ms = 0;   // the software shaper's reservations (its own claim); NaN under tc
  double configured_gbps = 0;  // the scenario's capacity at the end of the iteration
  double configured_latency_ms = 0;  // the scenario's one-way latency then
  double enforced_gbps = 0;    // what the software shaper enforced (configured / time_scale); NaN under tc
  // Of the PAIR src→dst, when the decision gave it routes (a split, or a route with a standby):
  // the bytes its sender put on the first and second route in the step, and how many it moved
  // off the route the decision's shares put them on (adaptive routes); 0 for other pairs.
  double route0_bytes = 0, route1_bytes = 0, moved_bytes = 0;
};

// One row of /decisions: what the controller decided and when it takes effect.
struct DecisionRow {
  int64_t step = 0;          // step at which it was made
  int64_t effective_step = 0;
  std::string slot;          // "forecaster" | "balancer" | "path_selector" | "sync_planner" |
                             // "overlap", or "plan": the whole decision record
  std::string policy;        // registered name ("controller" for slot "plan")
  std::string detail;        // JSON text: predictions, new splits, paths, ...
};

// One row of /forecasts per (step, rank): the controller's forecast of the rank's load for that
// step, and the load that came.
struct ForecastRow {
  int64_t step = 0;          // the step forecast
  int32_t rank = 0;
  int64_t made_after = 0;    // the last step the forecast saw (its compute half alone, with
                             // control.report = after-compute; docs/trace.md)
  double forecast_ms = 0;    // the rank's load forecast for the step, under the record it ran with
  double load_ms = 0;        // the load that came: compute outside the DC's reductions + emulated
  std::string model;         // "gm11", "gmc", "ewma", "last-value", "oracle", "fallback:<name>"
  std::string why;           // why a fallback answered ("" when the model did)
  double c = 0, p = 0;       // GM(1,1) posterior variance ratio, small-error probability; NaN: no fit
};

// A resumed run that continues the trace of the run it resumes (docs/trace.md, "Resume").
struct TraceContinue {
  int64_t from_step = 0;     // the checkpoint's next step: rows of this step and later are dropped
  std::string resumed_from;  // the checkpoint
};

class TraceWriter {
 public:
  // Creates the file: written as "<path>.tmp.<pid>" and renamed onto path once its metadata is
  // on disk, so nothing at path is truncated, and a failed start leaves whatever was there.
  // Throws std::runtime_error naming the path when it exists and !force, or cannot be created.
  // Parent folders are created. The caller holds the path's OutputLock.
  TraceWriter(const std::string& path, bool force, const RunMeta& meta);
  // Continues an existing trace of the same run (same seed, datacenters and world; same schema):
  // drops the rows of steps >= c.from_step (they are computed again), appends a segment to /meta
  // "segments" and takes meta's per-run attributes. Throws std::runtime_error saying why the
  // trace cannot be continued.
  TraceWriter(const std::string& path, const RunMeta& meta, const TraceContinue& c);
  // Empty when the trace at path can be continued by a run of this seed, datacenters and world,
  // else why not (read-only; it does not lock the file).
  static std::string why_not_continue(const std::string& path, uint64_t seed,
                                      const std::vector<std::string>& dc_names, int world_size);
  ~TraceWriter();  // closes handles; /meta "status" stays "running" unless close() was called
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Also records the batch's corpus offsets (global batch, in order) for auditing/replay.
  // The commit point of a step: call append_ranks/links/decision for the step first; this
  // writes the offsets, flushes the file, then writes the step row and flushes again, so a
  // killed run keeps every committed step with all its rows (docs/trace.md).
  void append_step(const StepRow& row, const std::vector<int64_t>& offsets);
  void append_ranks(const std::vector<RankRow>& rows);
  void append_links(const std::vector<LinkRow>& rows);
  void append_decision(const DecisionRow& row);
  void append_forecasts(const std::vector<ForecastRow>& rows);
  void flush();
  // status: "complete", "interrupted" (signal), "failed", "stalled" — /meta attribute "status";
  // reason (why it did not complete; "" when it did) — /meta attribute "reason". A trace that
  // cannot be written any more throws TraceError from the appends and flush, and close() then
  // does what it can.
  void close(const std::string& status, const std::string& reason = "");
  // The last step whose row the trace holds (-1: none); for a continued trace, the one before
  // c.from_step at most.
  int64_t last_step() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strait
