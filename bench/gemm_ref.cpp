// gemm_ref.cpp — see gemm_ref.hpp.
#include "gemm_ref.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <tuple>

#include "core/timer.hpp"

namespace strait::bench {

std::vector<GemmCall> model_gemm_calls(const ModelConfig& m, int tokens) {
  // Mirrors Transformer<T>::forward_impl / forward_backward (src/model/transformer.cpp) for one
  // rank holding every head (H·hd = d_model) and every MLP column (F = d_ff). bench_compute
  // checks Σ 2·M·N·K against model_flops_per_token's matmul part, so a GEMM added to or
  // removed from the model without a change here shows up as a failed check.
  const int N = tokens, C = m.d_model, Hh = m.d_model, F = m.d_ff, V = m.vocab;
  std::vector<GemmCall> v;
  for (int i = 0; i < m.layers; ++i) {  // forward
    v.push_back({"qkv fwd", false, false, N, 3 * Hh, C, 0.f});
    v.push_back({"proj fwd", false, false, N, C, Hh, 0.f});
    v.push_back({"fc fwd", false, false, N, F, C, 0.f});
    v.push_back({"fcproj fwd", false, false, N, C, F, 0.f});
  }
  v.push_back({"head fwd", false, true, N, V, C, 0.f});  // tied: logits = lnf · wteᵀ
  v.push_back({"head dx", false, false, N, C, V, 0.f});
  v.push_back({"head dw", true, false, V, C, N, 1.f});
  for (int i = m.layers - 1; i >= 0; --i) {  // backward
    v.push_back({"fcproj dx", false, true, N, F, C, 0.f});
    v.push_back({"fcproj dw", true, false, F, C, N, 1.f});
    v.push_back({"fc dw", true, false, C, F, N, 1.f});
    v.push_back({"fc dx", false, true, N, C, F, 0.f});
    v.push_back({"proj dx", false, true, N, Hh, C, 0.f});
    v.push_back({"proj dw", true, false, Hh, C, N, 1.f});
    v.push_back({"qkv dw", true, false, C, 3 * Hh, N, 1.f});
    v.push_back({"qkv dx", false, true, N, C, 3 * Hh, 0.f});
  }
  return v;
}

double total_flops(const std::vector<GemmCall>& calls) {
  double f = 0;
  for (const auto& c : calls) f += c.flops();
  return f;
}

namespace {

struct Operands {
  float *A = nullptr, *B = nullptr, *C = nullptr;
};

// Fills n backend elements from a fixed pool of small random values (tiled: the pattern does
// not matter to the arithmetic units, only that the values are not zero).
void fill_random(Backend<float>& be, float* dev, size_t n, const std::vector<float>& pool) {
  for (size_t off = 0; off < n; off += pool.size())
    be.from_host(dev + off, pool.data(), std::min(pool.size(), n - off));
}

void run(Backend<float>& be, const GemmCall& c, const Operands& o) {
  const int lda = c.trans_a ? c.M : c.K, ldb = c.trans_b ? c.K : c.N, ldc = c.N;
  be.gemm(c.trans_a, c.trans_b, c.M, c.N, c.K, 1.f, o.A, lda, o.B, ldb, c.beta, o.C, ldc);
}

}  // namespace

GemmTiming time_gemms(Backend<float>& be, const std::vector<GemmCall>& calls, double target_ms) {
  std::vector<float> pool(size_t(1) << 22);
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> u(-0.05f, 0.05f);
  for (float& x : pool) x = u(rng);

  // One operand set per distinct (trans_a, trans_b, M, N, K): the layers share them.
  using Key = std::tuple<bool, bool, int, int, int>;
  std::map<Key, Operands> ops;
  std::vector<const Operands*> of(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    const GemmCall& c = calls[i];
    const Key k{c.trans_a, c.trans_b, c.M, c.N, c.K};
    auto it = ops.find(k);
    if (it == ops.end()) {
      const size_t a = size_t(c.M) * c.K, b = size_t(c.K) * c.N, cc = size_t(c.M) * c.N;
      Operands o{be.alloc(a), be.alloc(b), be.alloc(cc)};
      fill_random(be, o.A, a, pool);
      fill_random(be, o.B, b, pool);
      fill_random(be, o.C, cc, pool);
      it = ops.emplace(k, o).first;
      run(be, c, o);  // warm-up: first use of this shape (library heuristics, page faults)
    }
    of[i] = &it->second;
  }
  auto pass = [&] {
    for (size_t i = 0; i < calls.size(); ++i) run(be, calls[i], *of[i]);
  };
  be.synchronize();
  double t0 = now_ms();
  pass();  // calibration: how many passes fill target_ms
  be.synchronize();
  const double one = std::max(now_ms() - t0, 1e-6);
  GemmTiming t;
  t.reps = static_cast<int>(std::clamp(std::ceil(target_ms / one), 3.0, 1e5));
  be.synchronize();
  t0 = now_ms();
  for (int r = 0; r < t.reps; ++r) pass();
  be.synchronize();
  const double ms = now_ms() - t0;
  t.ms_per_pass = ms / t.reps;
  t.gflops = total_flops(calls) * t.reps / (ms * 1e6);
  for (auto& [k, o] : ops) be.free(o.A), be.free(o.B), be.free(o.C);
  return t;
}

}  // namespace strait::bench
