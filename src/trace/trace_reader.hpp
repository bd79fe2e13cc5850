// trace_reader.hpp — reads a strait trace (docs/trace.md) back into vectors, for
// `strait report`, tests and tools. Opens read-only with HDF5 file locking disabled, so it
// works on the trace of a run that is still going (best effort, see docs/trace.md) or that
// was killed. Only committed steps are returned: rows of /ranks, /links, /decisions and
// /forecasts whose step is later than the last /steps row belong to a step still in progress
// and are dropped.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace.hpp"

namespace strait {

struct TraceData {
  RunMeta meta;
  std::string status;                 // "running" (live or killed), "complete", "interrupted", ...
  std::string reason;                 // why it did not complete ("" when it did, or not recorded)
  std::vector<std::string> segments;  // JSON per start or resume of the run (empty in old traces)
  int schema = 0;                     // /meta "schema"
  std::vector<StepRow> steps;
  int64_t offsets_width = 0;          // global batch size (0 when not read or no steps)
  std::vector<int64_t> offsets;       // (steps.size(), offsets_width), row-major
  std::vector<RankRow> ranks;
  std::vector<LinkRow> links;
  std::vector<DecisionRow> decisions;
  std::vector<ForecastRow> forecasts;  // empty in traces before schema 4
};

// Throws std::runtime_error naming the path (and the missing item) when the file is missing,
// not HDF5, or not a strait trace. with_offsets=false skips /offsets (the largest table).
TraceData read_trace(const std::string& path, bool with_offsets = true);

}  // namespace strait
