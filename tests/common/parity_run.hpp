// parity_run.hpp — the small training run that the CUDA parity test compares across backends
// (tests/unit/test_cuda_parity.cpp) and that bench/calib_rounding.cpp uses to set that test's
// tolerances: one definition, so the tolerances are measured on the run they bound.
// 2 layers, d_model 64, 4 heads, d_ff 256, T 32, 4 sequences of byte-level text per step, AdamW
// at lr 1e-3 (at 3e-3 this model has loss spikes that amplify a 1e-6 relative perturbation of
// the initial weights ~300-fold by step 20, measured on the CPU backend; at 1e-3 it stays below
// 1e-6, so a comparison measures the backend, not the chaos of training).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/dc_comm.hpp"
#include "core/rng.hpp"
#include "model/params.hpp"
#include "model/transformer.hpp"

namespace strait::parity {

inline ModelConfig model() {
  ModelConfig m;
  m.layers = 2;
  m.d_model = 64;
  m.heads = 4;
  m.d_ff = 256;
  m.seq_len = 32;
  m.vocab = 256;
  m.init_std = 0.02;
  return m;
}
constexpr int kBatch = 4;

// Byte-level text with structure, so that the loss falls visibly in 20 steps; data_seed picks
// other windows of it (0: the test's).
inline void text_batch(int step, int B, int T, std::vector<int32_t>& tok,
                       std::vector<int32_t>& tgt, int data_seed = 0) {
  static const std::string text =
      "It was the best of times, it was the worst of times, it was the age of wisdom, it was "
      "the age of foolishness, it was the epoch of belief, it was the epoch of incredulity, it "
      "was the season of Light, it was the season of Darkness, it was the spring of hope, it was "
      "the winter of despair. ";
  tok.resize(size_t(B) * T);
  tgt.resize(size_t(B) * T);
  for (int b = 0; b < B; ++b) {
    const size_t start =
        hash3(5, uint64_t(step) + uint64_t(data_seed) * 1000003ull, b) % text.size();
    for (int t = 0; t < T; ++t) {
      tok[size_t(b) * T + t] = static_cast<unsigned char>(text[(start + t) % text.size()]);
      tgt[size_t(b) * T + t] = static_cast<unsigned char>(text[(start + t + 1) % text.size()]);
    }
  }
}

// The model's parameters on `be`, initialised from seed 1234 (Adam state zero); perturb_stream
// != 0 multiplies each initial value by (1 + 1e-7·normal), a proxy for rounding differences.
inline void init_params(ParamSet<float>& ps, uint64_t perturb_stream = 0) {
  auto full = init_full<float>(ps.layout, 1234, 0);
  if (perturb_stream)
    for (size_t i = 0; i < full.size(); ++i)
      full[i] *= static_cast<float>(1.0 + 1e-7 * normal01(77, perturb_stream, i));
  const std::vector<float> zeros(full.size(), 0.0f);
  ps.load_full(full, zeros, zeros);
}

struct Run {
  std::vector<double> losses;      // per step
  std::vector<float> update;       // final − initial parameters (whole parameter vectors are
                                   // dominated by LayerNorm weights of 1)
  std::vector<float> final_params;
};

inline Run train(Backend<float>& be, DcComm<float>& dc, int steps, int data_seed = 0,
                 uint64_t perturb_stream = 0) {
  const ModelConfig m = model();
  const Layout l = make_layout(m, shard_specs(m, {1.0})[0]);
  ParamSet<float> ps(be, l);
  init_params(ps, perturb_stream);
  std::vector<float> p0, m0, v0;
  ps.shard_to_host(p0, m0, v0);
  Transformer<float> tr(be, dc);
  Run r;
  std::vector<int32_t> tok, tgt;
  for (int s = 0; s < steps; ++s) {
    text_batch(s, kBatch, m.seq_len, tok, tgt, data_seed);
    r.losses.push_back(tr.forward_backward(ps, tok.data(), tgt.data(), kBatch));
    be.adam(ps.params, ps.grads, ps.adam_m, ps.adam_v, l.shard_total, 1e-3f, 0.9f, 0.95f, 1e-8f,
            0.0f, ++ps.adam_t);
  }
  be.synchronize();
  std::vector<float> mm, vv;
  ps.shard_to_host(r.final_params, mm, vv);
  r.update = r.final_params;
  for (size_t i = 0; i < r.update.size(); ++i) r.update[i] -= p0[i];
  return r;
}

}  // namespace strait::parity
