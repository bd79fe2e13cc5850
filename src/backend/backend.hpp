// backend.hpp — the backend edge: every numeric operation of a transformer shard.
// The model (src/model) calls only this interface; the CPU implementation (cpu_backend.cpp)
// uses OpenBLAS, the CUDA implementation (cuda/) uses cuBLAS and kernels of ours. Nothing
// above this edge knows which one runs. All tensors are row-major; a matmul weight W is stored
// (in, out) so that y = x·W. Shapes are given in the comments as (rows, cols).
// Buffers are backend memory (host for CPU, device for CUDA) obtained from alloc().
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace strait {

template <typename T>
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

  // ---- memory ----
  virtual T* alloc(size_t n) = 0;                 // n elements, zeroed
  virtual void free(T* p) = 0;
  virtual void zero(T* p, size_t n) = 0;
  virtual void to_host(T* host, const T* dev, size_t n) = 0;
  virtual void from_host(T* dev, const T* host, size_t n) = 0;
  virtual void copy(T* dst, const T* src, size_t n) = 0;
  virtual int32_t* alloc_tokens(size_t n) = 0;    // token ids live on the device too
  virtual void free_tokens(int32_t* p) = 0;
  virtual void tokens_from_host(int32_t* dev, const int32_t* host, size_t n) = 0;
  virtual void synchronize() {}                    // wait for queued work (timing boundaries)

  // ---- inter-datacenter staging ----
  // Gradients cross datacenters through host memory (the transport is MPI over host buffers).
  // CUDA runs these copies on a sync stream of their own, ordered with the compute stream by
  // events, so that kernels queued after a stage_out keep running while the bytes move.
  // Host memory for staging: page-locked on CUDA (DMA, no bounce), plain memory on the CPU.
  virtual T* alloc_host(size_t n) = 0;             // n elements, zeroed
  virtual void free_host(T* p) = 0;
  // host ← dev once everything queued so far on the compute stream is done; returns when host
  // holds the data.
  virtual void stage_out(T* host, const T* dev, size_t n) = 0;
  // dev ← host; work queued on the compute stream after this call sees the data. The host
  // thread does not wait: host must stay unchanged until the next stage_out or synchronize().
  virtual void stage_in(T* dev, const T* host, size_t n) = 0;

  // ---- dense ----
  // C(M,N) = alpha · op(A) · op(B) + beta · C, row-major with leading dimensions.
  virtual void gemm(bool trans_a, bool trans_b, int M, int N, int K, T alpha, const T* A, int lda,
                    const T* B, int ldb, T beta, T* C, int ldc) = 0;

  // ---- elementwise / reductions ----
  // out(N,C) = wte[tok] + wpe[t]; tokens (B,T), N = B·T.
  virtual void embedding_fwd(T* out, const int32_t* tokens, const T* wte, const T* wpe, int B,
                             int Tn, int C) = 0;
  // dwte[tok] += dout, dwpe[t] += dout.
  virtual void embedding_bwd(T* dwte, T* dwpe, const T* dout, const int32_t* tokens, int B,
                             int Tn, int C) = 0;
  // out(N,C) = (inp − mean)·rstd·w + b; saves mean(N), rstd(N).
  virtual void layernorm_fwd(T* out, T* mean, T* rstd, const T* inp, const T* w, const T* b,
                             int N, int C) = 0;
  // dinp += ..., dw += ..., db += ...
  virtual void layernorm_bwd(T* dinp, T* dw, T* db, const T* dout, const T* inp, const T* w,
                             const T* mean, const T* rstd, int N, int C) = 0;
  // y(N,C) += bias(C) broadcast over rows.
  virtual void add_bias(T* y, const T* bias, int N, int C) = 0;
  // dbias(C) += column sums of dy(N,C).
  virtual void bias_grad(T* dbias, const T* dy, int N, int C) = 0;
  // out = a + b (n elements; out may alias a).
  virtual void add(T* out, const T* a, const T* b, size_t n) = 0;
  // y += x
  virtual void accumulate(T* y, const T* x, size_t n) = 0;
  // tanh-approximation GELU.
  virtual void gelu_fwd(T* out, const T* inp, size_t n) = 0;
  virtual void gelu_bwd(T* dinp, const T* inp, const T* dout, size_t n) = 0;
  // Fused passes (one read and write of the activations instead of two; same arithmetic as the
  // separate ops):
  // pre(N,C) += bias(C), then out(N,C) = gelu(pre) — the MLP's first layer; pre is kept for
  // the backward pass.
  virtual void bias_gelu_fwd(T* out, T* pre, const T* bias, int N, int C) = 0;
  // out(N,C) = x + (y + bias) — a row-parallel layer's bias and the residual add; y is left as
  // it is, out may alias x.
  virtual void bias_residual(T* out, const T* x, const T* y, const T* bias, int N, int C) = 0;

  // ---- attention over a shard of H heads of size hd ----
  // qkv (B·T, 3·H·hd) laid out [Q heads | K heads | V heads]; out (B·T, H·hd);
  // att (B, H, T, T) saves the causal softmax probabilities for backward.
  virtual void attention_fwd(T* out, T* att, const T* qkv, int B, int Tn, int H, int hd) = 0;
  // dqkv (B·T, 3·H·hd) is overwritten; scratch has B·H·T·T elements.
  virtual void attention_bwd(T* dqkv, T* scratch, const T* dout, const T* qkv, const T* att, int B,
                             int Tn, int H, int hd) = 0;

  // ---- loss ----
  // logits (N,V) are replaced by dloss/dlogits · grad_scale; losses(N) get −log p[target].
  // The sum of the N losses stays with the backend until loss_sum() reads it, so that the host
  // need not wait for the forward pass before it queues the backward one.
  virtual void softmax_xent(T* logits, T* losses, const int32_t* targets, int N, int V,
                            T grad_scale) = 0;
  // The sum of the last softmax_xent's losses, in double. Waits for that work (CUDA).
  virtual double loss_sum() = 0;

  // ---- optimizer ----
  // AdamW with bias correction for step t (1-based) over n elements.
  virtual void adam(T* p, const T* g, T* m, T* v, size_t n, T lr, T beta1, T beta2, T eps,
                    T weight_decay, int64_t t) = 0;
};

// The CPU backend over OpenBLAS (float and double; double is for gradient checks).
template <typename T>
std::unique_ptr<Backend<T>> make_cpu_backend();

}  // namespace strait
