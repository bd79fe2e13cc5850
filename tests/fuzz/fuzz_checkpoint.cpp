// fuzz_checkpoint.cpp — libFuzzer target: read_checkpoint on checkpoints that strait wrote (their
// contents chosen by the fuzzer) and then tampered with (h5edit.hpp). The reader must answer
// every file with a checkpoint or a std::runtime_error naming what is wrong: never a crash, a
// sanitizer report, an endless allocation, or a checkpoint that breaks the rules it checks.
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "tests/fuzz/h5edit.hpp"
#include "trace/checkpoint.hpp"
#include "trace/h5util.hpp"

using strait::Checkpoint;

namespace {

strait::NamedTensor tensor(FuzzedDataProvider& in, const std::string& name) {
  strait::NamedTensor t;
  t.name = name;
  const int rank = in.ConsumeIntegralInRange<int>(0, 2);
  size_t n = 1;
  for (int i = 0; i < rank; ++i) n *= t.shape.emplace_back(in.ConsumeIntegralInRange<int>(0, 4));
  for (size_t i = 0; i < n; ++i) t.data.push_back(in.ConsumeIntegralInRange<int>(-1000, 1000) / 256.0f);
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)quiet;
  FuzzedDataProvider in(data, size);
  Checkpoint ck;
  ck.next_step = in.ConsumeIntegralInRange<int64_t>(0, 100);
  ck.seed = in.ConsumeIntegral<uint64_t>();
  ck.config_text = in.ConsumeRandomLengthString(32);
  const int dcs = in.ConsumeIntegralInRange<int>(1, 3);
  for (int d = 0; d < dcs; ++d) ck.splits.push_back({1.0});
  ck.batch_shares.assign(dcs, 1.0 / dcs);
  const int experts = in.ConsumeIntegralInRange<int>(0, 2), tensors = in.ConsumeIntegralInRange<int>(1, 3);
  for (int e = 0; e < experts; ++e) {
    strait::CheckpointExpert x;
    x.adam_t = in.ConsumeIntegralInRange<int64_t>(0, 100);
    for (int k = 0; k < tensors; ++k) {
      x.params.push_back(tensor(in, "t" + std::to_string(k)));
      x.adam_m.push_back(x.params.back());
      x.adam_v.push_back(x.params.back());
    }
    ck.experts.push_back(std::move(x));
  }
  const std::string path = strait::fuzz::scratch("ckpt");
  strait::write_checkpoint(path, ck);  // a valid checkpoint: this must not fail
  {
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) __builtin_trap();
    for (int k = in.ConsumeIntegralInRange<int>(0, 4); k > 0; --k) strait::fuzz::tamper(f, in);
    H5Fclose(f);
  }
  try {
    const Checkpoint r = strait::read_checkpoint(path);
    // What it returns keeps the promises of read_checkpoint: finite values, shapes that hold them.
    for (const auto& x : r.experts)
      for (const auto* g : {&x.params, &x.adam_m, &x.adam_v})
        for (const auto& t : *g) {
          size_t n = 1;
          for (int64_t d : t.shape) n *= static_cast<size_t>(d);
          if (n != t.data.size()) __builtin_trap();
          for (float v : t.data)
            if (!std::isfinite(v)) __builtin_trap();
        }
    if (r.next_step < 0) __builtin_trap();
  } catch (const std::runtime_error&) {
    // refused, with a reason: what the reader is for
  }
  std::remove(path.c_str());
  return 0;
}
