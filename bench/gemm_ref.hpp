// gemm_ref.hpp — bench_compute's reference: the GEMM FLOP/s of a model's own GEMM shapes, measured
// through the backend the training step runs on (OpenBLAS on the CPU, cuBLAS on CUDA).
#pragma once
#include <vector>

#include "backend/backend.hpp"
#include "config/config.hpp"

namespace strait::bench {

// One Backend::gemm call: C(M,N) = op(A)·op(B) + beta·C, row-major, tight leading dimensions.
struct GemmCall {
  const char* what;  // the call site in src/model/transformer.cpp
  bool trans_a, trans_b;
  int M, N, K;
  float beta;
  double flops() const { return 2.0 * M * N * K; }
};

// Every Backend::gemm call one forward + backward of the model makes on one rank that holds the
// whole model (one rank, one datacenter), in the order transformer.cpp issues them, `tokens` =
// B·T rows. Not in the list: attention's batched GEMMs (Q·Kᵀ, P·V and their gradients), which
// run inside Backend::attention_fwd/bwd and are not Backend::gemm calls.
std::vector<GemmCall> model_gemm_calls(const ModelConfig& m, int tokens);

// 2·M·N·K summed over the list.
double total_flops(const std::vector<GemmCall>& calls);

struct GemmTiming {
  double gflops = 0;       // Σ 2·M·N·K · reps / time
  double ms_per_pass = 0;  // one pass over the whole list
  int reps = 0;            // passes timed
};

// Times the list through `be`: operands allocated once per distinct shape with be.alloc and
// filled with small random values (not zeros: tensor cores can run faster on zeros), each shape
// run once to warm up, then `reps` passes over the whole list between two be.synchronize()
// calls, reps chosen so that the timed part lasts about target_ms (at least 3 passes).
GemmTiming time_gemms(Backend<float>& be, const std::vector<GemmCall>& calls, double target_ms);

}  // namespace strait::bench
