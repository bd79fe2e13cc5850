// test_gradcheck.cpp — the backward pass against central finite differences, in double
// precision, on a tiny model: every parameter tensor, worst relative error printed. Also checks
// causality (a token never influences earlier logits) and the loss at initialisation (≈ ln 256).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "backend/backend.hpp"
#include "backend/dc_comm.hpp"
#include "core/rng.hpp"
#include "model/transformer.hpp"

using namespace strait;

namespace {

ModelConfig tiny() {
  ModelConfig m;
  m.layers = 2;
  m.d_model = 8;
  m.heads = 2;
  m.d_ff = 12;
  m.seq_len = 5;
  m.vocab = 256;
  m.init_std = 0.3;  // large enough that every path carries signal
  return m;
}

void make_batch(int B, int T, std::vector<int32_t>& tok, std::vector<int32_t>& tgt) {
  tok.resize(B * T);
  tgt.resize(B * T);
  for (int i = 0; i < B * T; ++i) {
    tok[i] = static_cast<int32_t>(hash3(7, 1, i) % 256);
    tgt[i] = static_cast<int32_t>(hash3(7, 2, i) % 256);
  }
}

}  // namespace

TEST(GradCheck, EveryTensorMatchesCentralDifferences) {
  auto be = make_cpu_backend<double>();
  auto dc = make_mpi_dc_comm<double>(MPI_COMM_NULL);
  const ModelConfig m = tiny();
  const Layout l = make_layout(m, shard_specs(m, {1.0})[0]);
  ParamSet<double> ps(*be, l);
  auto full = init_full<double>(l, 42, 0);
  // Non-trivial LayerNorm weights and biases, so their gradients are exercised too.
  for (size_t i = 0; i < full.size(); ++i)
    if (full[i] == 1.0 || full[i] == 0.0) full[i] += 0.2 * normal01(3, 3, i);
  std::vector<double> zeros(full.size(), 0.0);
  ps.load_full(full, zeros, zeros);

  const int B = 2;
  std::vector<int32_t> tok, tgt;
  make_batch(B, m.seq_len, tok, tgt);
  Transformer<double> model(*be, *dc);
  model.forward_backward(ps, tok.data(), tgt.data(), B);
  std::vector<double> grad(l.shard_total);
  be->to_host(grad.data(), ps.grads, grad.size());

  const double h = 1e-5;
  double worst_all = 0;
  for (const auto& t : l.tensors) {
    double worst = 0, gnorm = 0;
    for (size_t i = 0; i < t.shard_size; ++i) gnorm = std::max(gnorm, std::abs(grad[t.offset + i]));
    // Up to 24 elements per tensor, spread over it.
    const size_t stride = std::max<size_t>(1, t.shard_size / 24);
    for (size_t i = 0; i < t.shard_size; i += stride) {
      double* p = ps.params + t.offset + i;
      const double keep = *p;
      *p = keep + h;
      const double lp = model.forward(ps, tok.data(), tgt.data(), B);
      *p = keep - h;
      const double lm = model.forward(ps, tok.data(), tgt.data(), B);
      *p = keep;
      const double fd = (lp - lm) / (2 * h);
      const double an = grad[t.offset + i];
      // Relative to the tensor's largest gradient: elements whose true gradient is ~0 would
      // otherwise divide round-off by round-off.
      const double rel = std::abs(fd - an) / std::max(1e-8, std::max(std::abs(fd), gnorm));
      worst = std::max(worst, rel);
    }
    std::printf("  %-12s worst rel err %.3e\n", t.name.c_str(), worst);
    EXPECT_LT(worst, 1e-6) << t.name;
    worst_all = std::max(worst_all, worst);
  }
  std::printf("gradcheck: worst relative error over all tensors %.3e\n", worst_all);
}

TEST(GradCheck, CausalAndLossAtInit) {
  auto be = make_cpu_backend<double>();
  auto dc = make_mpi_dc_comm<double>(MPI_COMM_NULL);
  ModelConfig m = tiny();
  m.init_std = 0.02;
  const Layout l = make_layout(m, shard_specs(m, {1.0})[0]);
  ParamSet<double> ps(*be, l);
  auto full = init_full<double>(l, 1, 0);
  std::vector<double> zeros(full.size(), 0.0);
  ps.load_full(full, zeros, zeros);
  std::vector<int32_t> tok, tgt;
  make_batch(1, m.seq_len, tok, tgt);
  Transformer<double> model(*be, *dc);
  const double loss = model.forward(ps, tok.data(), tgt.data(), 1);
  EXPECT_NEAR(loss, std::log(256.0), 0.05);
  const auto before = model.logits_to_host();
  tok[3] = (tok[3] + 17) % 256;  // change position 3: logits of positions 0..2 must not move
  model.forward(ps, tok.data(), tgt.data(), 1);
  const auto after = model.logits_to_host();
  for (int t = 0; t < 3; ++t)
    for (int v = 0; v < 256; ++v) ASSERT_EQ(before[t * 256 + v], after[t * 256 + v]) << t;
  double moved = 0;
  for (int v = 0; v < 256; ++v) moved += std::abs(before[3 * 256 + v] - after[3 * 256 + v]);
  EXPECT_GT(moved, 0.0);
}
