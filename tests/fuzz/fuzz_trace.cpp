// fuzz_trace.cpp — libFuzzer target: read_trace (what `strait report` and the tools read) on
// traces that strait's TraceWriter wrote, with fuzz-chosen rows, then tampered with
// (h5edit.hpp). Every file must give a TraceData or a std::runtime_error: never a crash or a
// sanitizer report.
#include <cstdint>
#include <stdexcept>

#include "tests/fuzz/h5edit.hpp"
#include "trace/trace.hpp"
#include "trace/trace_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)quiet;
  FuzzedDataProvider in(data, size);
  const std::string path = strait::fuzz::scratch("trace");
  std::remove(path.c_str());
  {
    strait::RunMeta meta;
    meta.world_size = in.ConsumeIntegralInRange<int>(1, 3);
    meta.dc_names = {"a"};
    meta.rank_dc.assign(meta.world_size, 0);
    meta.hosts.assign(meta.world_size, "h");
    meta.backends.assign(meta.world_size, "cpu");
    meta.clock_offset_ms.assign(meta.world_size, 0.0);
    meta.clock_error_ms.assign(meta.world_size, 0.0);
    meta.config_text = in.ConsumeRandomLengthString(32);
    strait::TraceWriter w(path, true, meta);
    const int batch = in.ConsumeIntegralInRange<int>(1, 4);
    for (int s = in.ConsumeIntegralInRange<int>(0, 4), i = 0; i < s; ++i) {
      std::vector<strait::RankRow> ranks(meta.world_size);
      for (int r = 0; r < meta.world_size; ++r) ranks[r].step = i, ranks[r].rank = r;
      w.append_ranks(ranks);
      strait::DecisionRow d;
      d.step = i, d.effective_step = i + 1, d.slot = "plan", d.policy = "controller";
      d.detail = in.ConsumeRandomLengthString(16);
      w.append_decision(d);
      strait::StepRow row;
      row.step = i;
      row.loss = in.ConsumeFloatingPoint<double>();
      w.append_step(row, std::vector<int64_t>(batch, i));
    }
    if (in.ConsumeBool()) w.close(in.ConsumeBool() ? "complete" : "failed", "why");
  }
  {
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) __builtin_trap();
    for (int k = in.ConsumeIntegralInRange<int>(0, 4); k > 0; --k) strait::fuzz::tamper(f, in);
    H5Fclose(f);
  }
  try {
    const strait::TraceData d = strait::read_trace(path, in.ConsumeBool());
    (void)d;
  } catch (const std::runtime_error&) {
  }
  std::remove(path.c_str());
  return 0;
}
