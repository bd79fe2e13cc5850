// trace_schema.hpp — the HDF5 compound types of the trace tables (/steps, /ranks, /links,
// /decisions, /forecasts), shared by TraceWriter and the trace reader so both agree on field
// names. Field names are the C++ member names (docs/trace.md). The in-file types are packed and
// little-endian; the in-memory types mirror the structs in trace.hpp, and HDF5 converts
// between them by field name (a reader ignores fields it does not ask for).
#pragma once
#include <cstdint>

#include "trace/h5util.hpp"

namespace strait::trace_schema {

// Bumped when a table or attribute changes meaning; stored as /meta attribute "schema".
// 2: /decisions rows of slot "plan" (the whole decision record), /meta clock offsets, wait_ms
// measured against the slowest rank's arrival, rows of a step written once its sync completed.
// 3: /links measured at the wire (wire_ms, goodput_gbps, latency samples, queueing behind other
// flows) beside configured and enforced figures; the controller's traffic crosses the links.
// 4: /ranks.speed, reduce_ms (the DC's reductions inside compute_ms) and reshard_ms; /forecasts
// (each rank's forecast load against the load that came).
// 5: /links.backed_gbps (the delivery rate while a first hop's flow streamed).
// 6: /links.route0_bytes, route1_bytes, moved_bytes (per pair: what its sender put on each of
// the decision's routes, and moved between them: adaptive routes); decision records' routes
// carry the rate they were expected at ("gbps").
// 7: /links.held_gbps (streaming held up on the way under the software shaper, left out of
// stream_gbps and backed_gbps).
// 8: /links.late_gbps and late_stream_gbps (the backed and the streaming rate over the link's
// last such interval of the step).
constexpr int32_t kSchemaVersion = 8;

// DecisionRow as HDF5 sees it: variable-length strings are char pointers.
struct DecisionRec {
  int64_t step;
  int64_t effective_step;
  const char* slot;
  const char* policy;
  const char* detail;
};

// ForecastRow as HDF5 sees it.
struct ForecastRec {
  int64_t step;
  int32_t rank;
  int64_t made_after;
  double forecast_ms, load_ms;
  const char* model;
  const char* why;
  double c, p;
};

// file=true: packed little-endian type stored in the file; false: native layout of the struct.
h5::Type step_type(bool file);      // StepRow
h5::Type rank_type(bool file);      // RankRow
h5::Type link_type(bool file);      // LinkRow
h5::Type decision_type(bool file);  // DecisionRec
h5::Type forecast_type(bool file);  // ForecastRec

}  // namespace strait::trace_schema
