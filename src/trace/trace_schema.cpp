// trace_schema.cpp — compound types of the trace tables (see trace_schema.hpp).
#include "trace/trace_schema.hpp"

#include <cstddef>
#include <initializer_list>

#include "trace/trace.hpp"

namespace strait::trace_schema {

namespace {

struct Field {
  const char* name;
  size_t offset;  // in the C++ struct
  hid_t native;   // in memory
  hid_t stored;   // in the file
};

h5::Type compound(size_t struct_size, std::initializer_list<Field> fields, bool file) {
  size_t size = struct_size;
  if (file) {
    size = 0;
    for (const Field& f : fields) size += H5Tget_size(f.stored);
  }
  h5::Type t(h5::check(H5Tcreate(H5T_COMPOUND, size), "cannot create a compound type"));
  size_t off = 0;
  for (const Field& f : fields) {
    const size_t at = file ? off : f.offset;
    h5::check(H5Tinsert(t, f.name, at, file ? f.stored : f.native),
              std::string("cannot add field ") + f.name + " to a compound type");
    off += H5Tget_size(f.stored);
  }
  return t;
}

#define STRAIT_I64(S, m) Field{#m, offsetof(S, m), H5T_NATIVE_INT64, H5T_STD_I64LE}
#define STRAIT_I32(S, m) Field{#m, offsetof(S, m), H5T_NATIVE_INT32, H5T_STD_I32LE}
#define STRAIT_F64(S, m) Field{#m, offsetof(S, m), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE}

}  // namespace

h5::Type step_type(bool file) {
  return compound(sizeof(StepRow),
                  {STRAIT_I64(StepRow, step), STRAIT_I32(StepRow, expert),
                   STRAIT_F64(StepRow, loss), STRAIT_I64(StepRow, tokens),
                   STRAIT_F64(StepRow, wall_ms), STRAIT_F64(StepRow, compute_ms),
                   STRAIT_F64(StepRow, sync_ms), STRAIT_F64(StepRow, wait_ms),
                   STRAIT_F64(StepRow, emulated_ms), STRAIT_F64(StepRow, controller_ms),
                   STRAIT_F64(StepRow, trace_ms), STRAIT_I32(StepRow, overlapped),
                   STRAIT_F64(StepRow, control_rtt_ms)},
                  file);
}

h5::Type rank_type(bool file) {
  return compound(sizeof(RankRow),
                  {STRAIT_I64(RankRow, step), STRAIT_I32(RankRow, rank), STRAIT_I32(RankRow, dc),
                   STRAIT_F64(RankRow, compute_ms), STRAIT_F64(RankRow, sync_ms),
                   STRAIT_F64(RankRow, wait_ms), STRAIT_F64(RankRow, emulated_ms),
                   STRAIT_F64(RankRow, split), STRAIT_F64(RankRow, slack_ms),
                   STRAIT_F64(RankRow, speed), STRAIT_F64(RankRow, reduce_ms),
                   STRAIT_F64(RankRow, reshard_ms)},
                  file);
}

h5::Type link_type(bool file) {
  return compound(sizeof(LinkRow),
                  {STRAIT_I64(LinkRow, step), STRAIT_I32(LinkRow, src), STRAIT_I32(LinkRow, dst),
                   STRAIT_F64(LinkRow, bytes), STRAIT_F64(LinkRow, control_bytes),
                   STRAIT_F64(LinkRow, wire_ms),
                   STRAIT_F64(LinkRow, goodput_gbps), STRAIT_F64(LinkRow, stream_gbps),
                   STRAIT_F64(LinkRow, backed_gbps), STRAIT_F64(LinkRow, late_gbps),
                   STRAIT_F64(LinkRow, late_stream_gbps),
                   STRAIT_F64(LinkRow, held_gbps),
                   STRAIT_F64(LinkRow, latency_ms),
                   STRAIT_I64(LinkRow, latency_samples), STRAIT_F64(LinkRow, queued_ms),
                   STRAIT_F64(LinkRow, shaper_busy_ms), STRAIT_F64(LinkRow, configured_gbps),
                   STRAIT_F64(LinkRow, configured_latency_ms), STRAIT_F64(LinkRow, enforced_gbps),
                   STRAIT_F64(LinkRow, route0_bytes), STRAIT_F64(LinkRow, route1_bytes),
                   STRAIT_F64(LinkRow, moved_bytes)},
                  file);
}

h5::Type decision_type(bool file) {
  h5::Type str = h5::vlen_string();
  return compound(sizeof(DecisionRec),
                  {STRAIT_I64(DecisionRec, step), STRAIT_I64(DecisionRec, effective_step),
                   Field{"slot", offsetof(DecisionRec, slot), str, str},
                   Field{"policy", offsetof(DecisionRec, policy), str, str},
                   Field{"detail", offsetof(DecisionRec, detail), str, str}},
                  file);
}

h5::Type forecast_type(bool file) {
  h5::Type str = h5::vlen_string();
  return compound(sizeof(ForecastRec),
                  {STRAIT_I64(ForecastRec, step), STRAIT_I32(ForecastRec, rank),
                   STRAIT_I64(ForecastRec, made_after), STRAIT_F64(ForecastRec, forecast_ms),
                   STRAIT_F64(ForecastRec, load_ms),
                   Field{"model", offsetof(ForecastRec, model), str, str},
                   Field{"why", offsetof(ForecastRec, why), str, str},
                   STRAIT_F64(ForecastRec, c), STRAIT_F64(ForecastRec, p)},
                  file);
}

#undef STRAIT_I64
#undef STRAIT_I32
#undef STRAIT_F64

}  // namespace strait::trace_schema
