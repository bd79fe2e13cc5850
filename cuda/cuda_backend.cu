// cuda_backend.cu — Backend<float> on one CUDA device (see src/backend/backend.hpp for every op's
// contract and src/backend/cpu_backend.cpp for the reference semantics this file matches).
// - Matmuls: cuBLAS on row-major data through the operand swap (a row-major (M,N) matrix is a
//   column-major (N,M) one, so C = A·B becomes Cᵀ = Bᵀ·Aᵀ with no copies). FP32 storage
//   everywhere (master weights, activations, gradients); the GEMM compute type is the run's
//   choice (run.gpu_math): TF32 tensor cores (default), BF16 tensor cores (cuBLAS rounds the
//   FP32 operands to BF16 inside the GEMM and accumulates in FP32), or plain FP32.
// - Attention: one batched GEMM over every (sequence, head) per product, on views of the QKV
//   buffer (pointer arrays written by a kernel), plus fused causal softmax kernels.
// - Everything else: small kernels of ours. Column reductions (bias and LayerNorm weight
//   gradients) and the embedding gradients are deterministic (fixed-order sums, no float
//   atomics), except the token-embedding gradient of vocabularies above 1024 (atomics).
// - Streams: every op goes to the compute stream; the inter-datacenter staging copies
//   (stage_out / stage_in) go to a sync stream, ordered with the compute stream by events, into
//   page-locked host memory. In a step the host waits only in loss_sum() (after the whole
//   forward and backward are queued) and in stage_out (the gradients must be on the host to
//   cross datacenters). to_host / from_host are synchronous and used outside the step loop.
// - Ops never allocate, except grow-only workspaces the first time a larger shape needs one
//   (the first step, or the first after a re-split changes this rank's shard).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include "check.cuh"
#include "cuda_backend.hpp"
#include "op_profile.cuh"

namespace strait {

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver / no device is an answer here, not an error
    return 0;
  }
  return n;
}

namespace {

constexpr float kLnEps = 1e-5f;
constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2/pi)
constexpr int kThreads = 256;

// Grid for a grid-stride loop over n elements.
unsigned grid_for(size_t n, int threads = kThreads) {
  const size_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(b, 65536)));
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// Whole-block reductions (blockDim.x a multiple of 32, <= 1024); every thread gets the result.
__device__ float block_sum(float v, float* shm /* [32] */) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nw = blockDim.x / 32;
  v = warp_sum(v);
  __syncthreads();  // shm may still be read by a previous reduction
  if (lane == 0) shm[warp] = v;
  __syncthreads();
  v = lane < nw ? shm[lane] : 0.0f;
  return warp_sum(v);
}
__device__ float block_max(float v, float* shm /* [32] */) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nw = blockDim.x / 32;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) shm[warp] = v;
  __syncthreads();
  v = lane < nw ? shm[lane] : -INFINITY;
  return warp_max(v);
}

// ---------------------------------------------------------------- elementwise

__global__ void k_add(float* out, const float* a, const float* b, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = a[i] + b[i];
}

__global__ void k_accumulate(float* y, const float* x, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    y[i] += x[i];
}

// Row kernels (below) put rows on blocks and columns on threads: no 64-bit division per
// element, which would make these memory-bound kernels ALU-bound.

// y (N,C) += bias (C)
__global__ void k_add_bias(float* y, const float* __restrict__ bias, int N, int C) {
  for (int r = blockIdx.x; r < N; r += gridDim.x) {
    float* row = y + static_cast<size_t>(r) * C;
    for (int c = threadIdx.x; c < C; c += blockDim.x) row[c] += bias[c];
  }
}

__device__ __forceinline__ float gelu(float x) {
  return 0.5f * x * (1.0f + tanhf(kGeluC * (x + 0.044715f * x * x * x)));
}

__global__ void k_gelu_fwd(float* out, const float* inp, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = gelu(inp[i]);
}

// pre (N,C) += bias, out = gelu(pre): one read of pre instead of add_bias's and gelu's two.
__global__ void k_bias_gelu_fwd(float* __restrict__ out, float* __restrict__ pre,
                                const float* __restrict__ bias, int N, int C) {
  for (int r = blockIdx.x; r < N; r += gridDim.x) {
    const size_t o = static_cast<size_t>(r) * C;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
      const float x = pre[o + c] + bias[c];
      pre[o + c] = x;
      out[o + c] = gelu(x);
    }
  }
}

// out (N,C) = x + (y + bias), the order of add_bias then add; out may alias x.
__global__ void k_bias_residual(float* out, const float* x, const float* __restrict__ y,
                                const float* __restrict__ bias, int N, int C) {
  for (int r = blockIdx.x; r < N; r += gridDim.x) {
    const size_t o = static_cast<size_t>(r) * C;
    for (int c = threadIdx.x; c < C; c += blockDim.x) out[o + c] = x[o + c] + (y[o + c] + bias[c]);
  }
}

// dinp may alias dout (the model passes the same buffer).
__global__ void k_gelu_bwd(float* dinp, const float* inp, const float* dout, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    const float x = inp[i];
    const float th = tanhf(kGeluC * (x + 0.044715f * x * x * x));
    const float sech2 = 1.0f - th * th;
    const float du = kGeluC * (1.0f + 3.0f * 0.044715f * x * x);
    dinp[i] = dout[i] * (0.5f * (1.0f + th) + 0.5f * x * sech2 * du);
  }
}

__global__ void k_adam(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m,
                       float* __restrict__ v, size_t n, float lr, float b1, float b2, float eps,
                       float wd, float c1, float c2) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    const float gi = g[i];
    const float mi = b1 * m[i] + (1.0f - b1) * gi;
    const float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    const float mh = mi * c1, vh = vi * c2;
    p[i] -= lr * (mh / (sqrtf(vh) + eps) + wd * p[i]);
  }
}

// ---------------------------------------------------------------- embedding

// out (N,C) = wte[tok] + wpe[t], N = B·T; a row kernel.
__global__ void k_embedding_fwd(float* __restrict__ out, const int32_t* __restrict__ tok,
                                const float* __restrict__ wte, const float* __restrict__ wpe,
                                int N, int Tn, int C) {
  for (int r = blockIdx.x; r < N; r += gridDim.x) {
    const float* e = wte + static_cast<size_t>(tok[r]) * C;
    const float* p = wpe + static_cast<size_t>(r % Tn) * C;
    float* o = out + static_cast<size_t>(r) * C;
    for (int c = threadIdx.x; c < C; c += blockDim.x) o[c] = e[c] + p[c];
  }
}

// dwpe (T,C) += Σ_b dout[b,t]: one thread per (t,c), b in order (as the CPU does).
__global__ void k_wpe_grad(float* __restrict__ dwpe, const float* __restrict__ dout, int B, int Tn,
                           int C) {
  const size_t n = static_cast<size_t>(Tn) * C;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    float acc = dwpe[i];
    for (int b = 0; b < B; ++b) acc += dout[static_cast<size_t>(b) * n + i];
    dwpe[i] = acc;
  }
}

// dwte (V,C) += rows of dout whose token is v, summed in token order (deterministic), in two
// kernels: k_token_lists sorts the row indices by token id — one block, thread v counts and then
// lists the rows holding v in increasing order (O(V·N) compares, once per step) — and
// k_wte_grad_lists sums each id's rows, one block per (column chunk, id): O(N·C) reads.
constexpr int kTokTile = 1024;
constexpr int kMaxListVocab = 1024;  // ids of one k_token_lists block: larger vocabularies use atomics

// Stages the tokens in shared-memory tiles and calls fn(first, len) for each; every thread of
// the block must call it (it holds the barriers).
template <class Fn>
__device__ void for_token_tiles(int32_t* tile, const int32_t* __restrict__ tok, int N, Fn fn) {
  for (int s = 0; s < N; s += kTokTile) {
    const int len = min(kTokTile, N - s);
    __syncthreads();  // the previous tile is no longer read
    for (int j = threadIdx.x; j < len; j += blockDim.x) tile[j] = tok[s + j];
    __syncthreads();
    fn(s, len);
  }
}
__global__ void __launch_bounds__(kMaxListVocab)
k_token_lists(int32_t* __restrict__ offsets /* V+1 */,
                              int32_t* __restrict__ list /* N */,
                              const int32_t* __restrict__ tok, int N, int V) {
  __shared__ int32_t tile[kTokTile];
  __shared__ int32_t start[kMaxListVocab];
  const int v = threadIdx.x;  // blockDim.x >= V
  int count = 0;
  for_token_tiles(tile, tok, N, [&](int, int len) {
    if (v < V)
      for (int j = 0; j < len; ++j) count += tile[j] == v;
  });
  if (v < V) start[v] = count;
  __syncthreads();
  if (threadIdx.x == 0) {  // exclusive scan of at most 1024 counts
    int acc = 0;
    for (int u = 0; u < V; ++u) {
      const int c = start[u];
      offsets[u] = acc;
      start[u] = acc;
      acc += c;
    }
    offsets[V] = acc;
  }
  __syncthreads();
  int pos = v < V ? start[v] : 0;
  for_token_tiles(tile, tok, N, [&](int s, int len) {
    if (v < V)
      for (int j = 0; j < len; ++j)
        if (tile[j] == v) list[pos++] = s + j;
  });
}

__global__ void k_wte_grad_lists(float* __restrict__ dwte, const float* __restrict__ dout,
                                 const int32_t* __restrict__ offsets,
                                 const int32_t* __restrict__ list, int C) {
  const int v = blockIdx.y;
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int begin = offsets[v], end = offsets[v + 1];
  if (c >= C || begin == end) return;
  // Frequent ids (a space is ~15% of bytes) make long lists: load 8 rows ahead, then add them in
  // list order, so the loads overlap and the sum is the same.
  float acc = 0.0f;
  int i = begin;
  for (; i + 8 <= end; i += 8) {
    float d[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) d[u] = dout[static_cast<size_t>(list[i + u]) * C + c];
#pragma unroll
    for (int u = 0; u < 8; ++u) acc += d[u];
  }
  for (; i < end; ++i) acc += dout[static_cast<size_t>(list[i]) * C + c];
  dwte[static_cast<size_t>(v) * C + c] += acc;
}

// Tokens >= min_tok (all of them for large vocabularies, ids beyond the scanned range
// otherwise): a row kernel, float atomics (order not fixed).
__global__ void k_wte_grad_atomic(float* dwte, const float* __restrict__ dout,
                                  const int32_t* __restrict__ tok, int N, int C, int min_tok) {
  for (int r = blockIdx.x; r < N; r += gridDim.x) {
    const int32_t t = tok[r];
    if (t < min_tok) continue;
    const float* d = dout + static_cast<size_t>(r) * C;
    float* w = dwte + static_cast<size_t>(t) * C;
    for (int c = threadIdx.x; c < C; c += blockDim.x) atomicAdd(&w[c], d[c]);
  }
}

// ---------------------------------------------------------------- layernorm

// One warp per row. Two-pass mean / variance, as the CPU does.
__global__ void k_layernorm_fwd(float* __restrict__ out, float* __restrict__ mean,
                                float* __restrict__ rstd, const float* __restrict__ inp,
                                const float* __restrict__ w, const float* __restrict__ b, int N,
                                int C) {
  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= N) return;
  const float* x = inp + static_cast<size_t>(row) * C;
  float s = 0.0f;
  for (int c = lane; c < C; c += 32) s += x[c];
  const float m = warp_sum(s) / C;
  float var = 0.0f;
  for (int c = lane; c < C; c += 32) {
    const float d = x[c] - m;
    var += d * d;
  }
  var = warp_sum(var) / C;
  const float r = 1.0f / sqrtf(var + kLnEps);
  float* o = out + static_cast<size_t>(row) * C;
  for (int c = lane; c < C; c += 32) o[c] = (x[c] - m) * r * w[c] + b[c];
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = r;
  }
}

// dinp (N,C) += input gradient; one warp per row. (dw, db come from the column reduction.)
__global__ void k_layernorm_bwd_dx(float* __restrict__ dinp, const float* __restrict__ dout,
                                   const float* __restrict__ inp, const float* __restrict__ w,
                                   const float* __restrict__ mean, const float* __restrict__ rstd,
                                   int N, int C) {
  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= N) return;
  const size_t off = static_cast<size_t>(row) * C;
  const float* x = inp + off;
  const float* dy = dout + off;
  float* dx = dinp + off;
  const float m = mean[row], s = rstd[row];
  float dn_mean = 0.0f, dn_xhat_mean = 0.0f;
  for (int c = lane; c < C; c += 32) {
    const float dn = w[c] * dy[c];
    dn_mean += dn;
    dn_xhat_mean += dn * ((x[c] - m) * s);
  }
  dn_mean = warp_sum(dn_mean) / C;
  dn_xhat_mean = warp_sum(dn_xhat_mean) / C;
  for (int c = lane; c < C; c += 32) {
    const float xhat = (x[c] - m) * s;
    dx[c] += (w[c] * dy[c] - dn_mean - xhat * dn_xhat_mean) * s;
  }
}

// Register-resident versions for C <= 32·K: the row is read once into registers (element
// c = lane + 32·k) instead of once per pass; the formulas, and the order of the sums, are the
// kernels' above (results may still differ in the last bit where nvcc contracts a multiply-add
// differently). The backward holds two rows (x and dy), so it is used up to C = 1024.
template <int K>
__global__ void k_layernorm_fwd_reg(float* __restrict__ out, float* __restrict__ mean,
                                    float* __restrict__ rstd, const float* __restrict__ inp,
                                    const float* __restrict__ w, const float* __restrict__ b,
                                    int N, int C) {
  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= N) return;
  const float* x = inp + static_cast<size_t>(row) * C;
  float v[K];
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int c = lane + 32 * k;
    v[k] = c < C ? x[c] : 0.0f;
    s += v[k];
  }
  const float m = warp_sum(s) / C;
  float var = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int c = lane + 32 * k;
    if (c < C) {
      const float d = v[k] - m;
      var += d * d;
    }
  }
  var = warp_sum(var) / C;
  const float r = 1.0f / sqrtf(var + kLnEps);
  float* o = out + static_cast<size_t>(row) * C;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int c = lane + 32 * k;
    if (c < C) o[c] = (v[k] - m) * r * w[c] + b[c];
  }
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = r;
  }
}

template <int K>
__global__ void k_layernorm_bwd_dx_reg(float* __restrict__ dinp, const float* __restrict__ dout,
                                       const float* __restrict__ inp, const float* __restrict__ w,
                                       const float* __restrict__ mean,
                                       const float* __restrict__ rstd, int N, int C) {
  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= N) return;
  const size_t off = static_cast<size_t>(row) * C;
  const float m = mean[row], s = rstd[row];
  float dn[K], xh[K];  // w·dy and x̂ per element
  float dn_mean = 0.0f, dn_xhat_mean = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int c = lane + 32 * k;
    dn[k] = c < C ? w[c] * dout[off + c] : 0.0f;
    xh[k] = c < C ? (inp[off + c] - m) * s : 0.0f;
    dn_mean += dn[k];
    dn_xhat_mean += dn[k] * xh[k];
  }
  dn_mean = warp_sum(dn_mean) / C;
  dn_xhat_mean = warp_sum(dn_xhat_mean) / C;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int c = lane + 32 * k;
    if (c < C) dinp[off + c] += (dn[k] - dn_mean - xh[k] * dn_xhat_mean) * s;
  }
}

// ---------------------------------------------------------------- column reductions
// out_k(C) += Σ_rows term_k(row, c) for K <= 2 terms, in two deterministic passes: blocks of
// (32 columns × 16 row lanes) over row chunks write partial sums to a workspace (K, chunks, C),
// then one thread per column adds the chunks in order.

struct BiasTerm {  // dbias += dy
  const float* dy;
  int C;
  __device__ float2 operator()(int r, int c) const {
    return make_float2(dy[static_cast<size_t>(r) * C + c], 0.0f);
  }
};
struct LnTerm {  // dw += xhat·dy, db += dy
  const float *dy, *x, *mean, *rstd;
  int C;
  __device__ float2 operator()(int r, int c) const {
    const size_t i = static_cast<size_t>(r) * C + c;
    const float d = dy[i];
    return make_float2((x[i] - mean[r]) * rstd[r] * d, d);
  }
};

constexpr int kColTile = 32, kRowLanes = 16;

template <int K, class Term>
__global__ void k_colsum_partial(float* __restrict__ partial, int N, int C, int rows_per_chunk,
                                 Term term) {
  __shared__ float sm[K][kRowLanes][kColTile + 1];
  const int c = blockIdx.x * kColTile + threadIdx.x;
  const int chunk = blockIdx.y, chunks = gridDim.y;
  const int r0 = chunk * rows_per_chunk, r1 = min(N, r0 + rows_per_chunk);
  float2 acc = make_float2(0.0f, 0.0f);
  if (c < C)
    for (int r = r0 + threadIdx.y; r < r1; r += kRowLanes) {
      const float2 t = term(r, c);
      acc.x += t.x;
      acc.y += t.y;
    }
  sm[0][threadIdx.y][threadIdx.x] = acc.x;
  if (K > 1) sm[K - 1][threadIdx.y][threadIdx.x] = acc.y;
  __syncthreads();
  if (threadIdx.y < K && c < C) {
    float s = 0.0f;
    for (int j = 0; j < kRowLanes; ++j) s += sm[threadIdx.y][j][threadIdx.x];
    partial[(static_cast<size_t>(threadIdx.y) * chunks + chunk) * C + c] = s;
  }
}

__global__ void k_colsum_finish(float* out0, float* out1, const float* __restrict__ partial,
                                int chunks, int C) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= C) return;
  float a = 0.0f;
  for (int j = 0; j < chunks; ++j) a += partial[static_cast<size_t>(j) * C + c];
  out0[c] += a;
  if (out1) {
    float b = 0.0f;
    for (int j = 0; j < chunks; ++j) b += partial[(static_cast<size_t>(chunks) + j) * C + c];
    out1[c] += b;
  }
}

// ---------------------------------------------------------------- attention GEMM operands

// Where problem (sequence b, head h) of an attention GEMM finds one operand: base + b·per_seq +
// h·per_head (elements). The Q/K/V columns of the QKV buffer, the attention matrices and the
// (B·T, H·hd) outputs all have this form, but not with one stride per problem, so the GEMMs
// take arrays of pointers.
struct BhView {
  const float* base;
  long long per_seq, per_head;
};

// pa/pb/pc[i] for problem i = b·H + h.
__global__ void k_bh_pointers(const float** pa, const float** pb, float** pc, BhView a, BhView b,
                              BhView c, int H, int count) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    const long long seq = i / H, head = i % H;
    pa[i] = a.base + seq * a.per_seq + head * a.per_head;
    pb[i] = b.base + seq * b.per_seq + head * b.per_head;
    pc[i] = const_cast<float*>(c.base + seq * c.per_seq + head * c.per_head);
  }
}

// ---------------------------------------------------------------- attention softmax

// att rows (B·H·T, T): row i of each (b,h) block is the causal softmax over columns 0..i of the
// already-scaled scores; columns above the diagonal become 0. One warp per row.
__global__ void k_causal_softmax_fwd(float* att, int rows, int Tn) {
  const int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;
  const int i = r % Tn;
  float* row = att + static_cast<size_t>(r) * Tn;
  float mx = -INFINITY;
  for (int j = lane; j <= i; j += 32) mx = fmaxf(mx, row[j]);
  mx = warp_max(mx);
  float sum = 0.0f;
  for (int j = lane; j <= i; j += 32) {
    const float e = expf(row[j] - mx);
    row[j] = e;
    sum += e;
  }
  const float inv = 1.0f / warp_sum(sum);
  for (int j = lane; j <= i; j += 32) row[j] *= inv;
  for (int j = i + 1 + lane; j < Tn; j += 32) row[j] = 0.0f;
}

// dS = P ⊙ (dP − rowsum(P ⊙ dP)) in place of dP, zero above the diagonal. One warp per row.
__global__ void k_causal_softmax_bwd(float* dP, const float* __restrict__ P, int rows, int Tn) {
  const int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;
  const int i = r % Tn;
  const size_t off = static_cast<size_t>(r) * Tn;
  const float* p = P + off;
  float* d = dP + off;
  float dot = 0.0f;
  for (int j = lane; j <= i; j += 32) dot += p[j] * d[j];
  dot = warp_sum(dot);
  for (int j = lane; j <= i; j += 32) d[j] = p[j] * (d[j] - dot);
  for (int j = i + 1 + lane; j < Tn; j += 32) d[j] = 0.0f;
}

// Register-resident versions for T <= 32·K: each lane holds its K elements of the row (column
// j = lane + 32·k, so a warp's loads are coalesced), reads only the causal part (j <= i) once
// and writes the whole row once, instead of the 3 reads + 2 writes of the kernels above; the
// arithmetic, and its order, are theirs. Attention's (B, H, T, T) buffers are the largest
// memory traffic of a step at long sequences.
template <int K>
__global__ void k_causal_softmax_fwd_reg(float* att, int rows, int Tn) {
  const int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;
  const int i = r % Tn;
  float* row = att + static_cast<size_t>(r) * Tn;
  float v[K];
  float mx = -INFINITY;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int j = lane + 32 * k;
    v[k] = j <= i ? row[j] : -INFINITY;
    mx = fmaxf(mx, v[k]);
  }
  mx = warp_max(mx);
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int j = lane + 32 * k;
    v[k] = j <= i ? expf(v[k] - mx) : 0.0f;
    sum += v[k];
  }
  const float inv = 1.0f / warp_sum(sum);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int j = lane + 32 * k;
    if (j < Tn) row[j] = v[k] * inv;  // 0 above the diagonal
  }
}

template <int K>
__global__ void k_causal_softmax_bwd_reg(float* dP, const float* __restrict__ P, int rows,
                                         int Tn) {
  const int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;
  const int i = r % Tn;
  const size_t off = static_cast<size_t>(r) * Tn;
  float p[K], d[K];
  float dot = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int j = lane + 32 * k;
    p[k] = j <= i ? P[off + j] : 0.0f;
    d[k] = j <= i ? dP[off + j] : 0.0f;
    dot += p[k] * d[k];
  }
  dot = warp_sum(dot);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int j = lane + 32 * k;
    if (j < Tn) dP[off + j] = j <= i ? p[k] * (d[k] - dot) : 0.0f;
  }
}

// ---------------------------------------------------------------- loss

// One block per row of logits (N,V): losses[i] = −log p[target], logits ← grad_scale·(p − onehot).
__global__ void k_softmax_xent(float* logits, float* losses, const int32_t* __restrict__ targets,
                               int V, float grad_scale) {
  __shared__ float shm[32];
  const int i = blockIdx.x;
  float* z = logits + static_cast<size_t>(i) * V;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < V; j += blockDim.x) mx = fmaxf(mx, z[j]);
  mx = block_max(mx, shm);
  float sum = 0.0f;
  for (int j = threadIdx.x; j < V; j += blockDim.x) {
    const float e = expf(z[j] - mx);
    z[j] = e;
    sum += e;
  }
  const float inv = 1.0f / block_sum(sum, shm);  // block_sum's barriers also publish z[]
  const int y = targets[i];
  const bool valid = y >= 0 && y < V;
  if (threadIdx.x == 0) {
    // Clamped at FLT_MIN as the CPU does, but not with fmaxf: that would turn a NaN probability
    // into FLT_MIN and hide a diverged run behind a finite loss.
    const float p = valid ? z[y] * inv : NAN, tiny = 1.17549435e-38f;
    losses[i] = -logf(p < tiny ? tiny : p);
  }
  __syncthreads();  // z[y] is read above before it is overwritten below
  for (int j = threadIdx.x; j < V; j += blockDim.x) {
    float g = z[j] * inv * grad_scale;
    if (j == y) g -= grad_scale;
    z[j] = g;
  }
}

// *out = Σ losses in double, fixed order (one block).
__global__ void k_sum_to_double(double* out, const float* __restrict__ x, int n) {
  __shared__ double shm[1024];
  double s = 0.0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += static_cast<double>(x[i]);
  shm[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) shm[threadIdx.x] += shm[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = shm[0];
}

// ---------------------------------------------------------------- the backend

// A grow-only device buffer: sized the first time a shape needs it, then kept.
struct Workspace {
  void* p = nullptr;
  size_t bytes = 0;
  void* get(size_t need) {
    if (need > bytes) {
      if (p) {
        CUDA_CHECK(cudaDeviceSynchronize());  // queued kernels may still use the old buffer
        CUDA_CHECK(cudaFree(p));
      }
      CUDA_CHECK(cudaMalloc(&p, need));
      bytes = need;
    }
    return p;
  }
  ~Workspace() {
    if (p) (void)cudaFree(p);
  }
};

// run.gpu_math → cuBLAS compute type (all operands stay CUDA_R_32F).
cublasComputeType_t compute_type_for(const std::string& math) {
  if (math == "tf32") return CUBLAS_COMPUTE_32F_FAST_TF32;
  if (math == "bf16") return CUBLAS_COMPUTE_32F_FAST_16BF;
  if (math == "fp32") return CUBLAS_COMPUTE_32F;
  STRAIT_FATAL("run.gpu_math: unknown GPU matmul math \"" + math + "\"; expected tf32, bf16 or fp32");
}

class CudaBackend final : public Backend<float> {
 public:
  CudaBackend(int device, const std::string& math)
      : device_(device), math_(math), compute_(compute_type_for(math)) {
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaStreamCreate(&stream_));  // blocking: ordered with the legacy default stream
    // The sync stream never waits on the legacy default stream; the events order it.
    CUDA_CHECK(cudaStreamCreateWithFlags(&sync_stream_, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&ev_compute_, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&ev_staged_in_, cudaEventDisableTiming));
    for (TokenSlot& t : tok_) CUDA_CHECK(cudaEventCreateWithFlags(&t.ev, cudaEventDisableTiming));
    CUBLAS_CHECK(cublasCreate(&blas_));
    CUBLAS_CHECK(cublasSetStream(blas_, stream_));  // resets the workspace: set it afterwards
    CUDA_CHECK(cudaMalloc(&blas_ws_, kBlasWorkspace));
    CUBLAS_CHECK(cublasSetWorkspace(blas_, blas_ws_, kBlasWorkspace));
    CUDA_CHECK(cudaMalloc(&loss_dev_, sizeof(double)));
    CUDA_CHECK(cudaMemset(loss_dev_, 0, sizeof(double)));  // loss_sum() before any softmax_xent
    CUDA_CHECK(cudaMallocHost(&loss_host_, sizeof(double)));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device_));
    prof_ = std::make_unique<OpProfile>(stream_, "device " + std::to_string(device_) + ", " +
                                                     name());
  }

  // Teardown ignores errors: it also runs while the job is being aborted.
  ~CudaBackend() override {
    (void)cudaSetDevice(device_);
    prof_.reset();  // prints its table (STRAIT_CUDA_PROFILE=1) while the stream still exists
    (void)cudaStreamSynchronize(stream_);
    (void)cudaStreamSynchronize(sync_stream_);
    (void)cublasDestroy(blas_);
    (void)cudaFree(blas_ws_);
    (void)cudaFree(loss_dev_);
    (void)cudaFreeHost(loss_host_);
    for (TokenSlot& t : tok_)
      if (t.host) (void)cudaFreeHost(t.host);
    (void)cudaEventDestroy(ev_compute_);
    (void)cudaEventDestroy(ev_staged_in_);
    for (TokenSlot& t : tok_) (void)cudaEventDestroy(t.ev);
    (void)cudaStreamDestroy(sync_stream_);
    (void)cudaStreamDestroy(stream_);
  }

  std::string name() const override { return "cuda-" + math_; }
  cudaStream_t compute_stream() const { return stream_; }
  CudaCopyCounts copy_counts() const {
    CudaCopyCounts c;
    c.h2d_calls = h2d_calls_.load(), c.h2d_bytes = h2d_bytes_.load();
    c.d2h_calls = d2h_calls_.load(), c.d2h_bytes = d2h_bytes_.load();
    return c;
  }
  int device() const { return device_; }

  // ---- memory ----
  float* alloc(size_t n) override { return static_cast<float*>(dev_alloc(n * sizeof(float))); }
  void free(float* p) override { dev_free(p); }
  void zero(float* p, size_t n) override {
    const auto timed = prof_->time("zero");
    if (n) CUDA_CHECK(cudaMemsetAsync(p, 0, n * sizeof(float), stream_));
  }
  void to_host(float* host, const float* dev, size_t n) override {
    if (!n) return;
    CUDA_CHECK(cudaMemcpyAsync(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
    count_d2h(n * sizeof(float));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void from_host(float* dev, const float* host, size_t n) override {
    if (!n) return;
    CUDA_CHECK(cudaMemcpyAsync(dev, host, n * sizeof(float), cudaMemcpyHostToDevice, stream_));
    count_h2d(n * sizeof(float));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  // memmove semantics: overlapping ranges go through a workspace.
  void copy(float* dst, const float* src, size_t n) override {
    if (!n || dst == src) return;
    const auto timed = prof_->time("copy (device)");
    const size_t bytes = n * sizeof(float);
    if (dst < src + n && src < dst + n) {
      void* tmp = copy_ws_.get(bytes);
      CUDA_CHECK(cudaMemcpyAsync(tmp, src, bytes, cudaMemcpyDeviceToDevice, stream_));
      CUDA_CHECK(cudaMemcpyAsync(dst, tmp, bytes, cudaMemcpyDeviceToDevice, stream_));
    } else {
      CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
    }
  }
  int32_t* alloc_tokens(size_t n) override {
    return static_cast<int32_t*>(dev_alloc(n * sizeof(int32_t)));
  }
  void free_tokens(int32_t* p) override { dev_free(p); }
  // Through page-locked bounce buffers, so the copy is queued and the host does not wait for
  // it. Two slots used in turn (a step uploads tokens and targets): the host waits only for the
  // copy out of the same slot two calls ago, which is long done.
  void tokens_from_host(int32_t* dev, const int32_t* host, size_t n) override {
    if (!n) return;
    TokenSlot& slot = tok_[tok_next_];
    tok_next_ ^= 1;
    CUDA_CHECK(cudaEventSynchronize(slot.ev));  // the slot is free again
    if (n > slot.cap) {
      if (slot.host) CUDA_CHECK(cudaFreeHost(slot.host));
      slot.host = nullptr;
      CUDA_CHECK(cudaMallocHost(&slot.host, n * sizeof(int32_t)));
      slot.cap = n;
    }
    std::memcpy(slot.host, host, n * sizeof(int32_t));
    CUDA_CHECK(cudaMemcpyAsync(dev, slot.host, n * sizeof(int32_t), cudaMemcpyHostToDevice,
                               stream_));
    count_h2d(n * sizeof(int32_t));
    CUDA_CHECK(cudaEventRecord(slot.ev, stream_));
  }
  void synchronize() override { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  // ---- inter-datacenter staging (sync stream) ----
  // These may be called from a thread other than the one that made the backend (an overlap
  // scheduler's), so they select the device first; one thread at a time stages. The events
  // order them against whatever the compute stream holds when they are called, so that thread
  // must call stage_out after the work producing `dev` is queued, and the compute thread must
  // not queue work touching `dev` between stage_out and the matching stage_in.
  float* alloc_host(size_t n) override {
    CUDA_CHECK(cudaSetDevice(device_));
    void* p = nullptr;
    const size_t bytes = std::max<size_t>(n * sizeof(float), 4);
    CUDA_CHECK(cudaMallocHost(&p, bytes));
    std::memset(p, 0, bytes);
    return static_cast<float*>(p);
  }
  void free_host(float* p) override {
    if (!p) return;
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaStreamSynchronize(sync_stream_));  // no copy may still read or write it
    CUDA_CHECK(cudaFreeHost(p));
  }
  void stage_out(float* host, const float* dev, size_t n) override {
    if (!n) return;
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaEventRecord(ev_compute_, stream_));  // everything queued so far
    CUDA_CHECK(cudaStreamWaitEvent(sync_stream_, ev_compute_, 0));
    CUDA_CHECK(cudaMemcpyAsync(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost,
                               sync_stream_));
    count_d2h(n * sizeof(float));
    CUDA_CHECK(cudaStreamSynchronize(sync_stream_));
  }
  void stage_in(float* dev, const float* host, size_t n) override {
    if (!n) return;
    CUDA_CHECK(cudaSetDevice(device_));
    // dev may still be read or written by compute work queued earlier: wait for it on the GPU.
    CUDA_CHECK(cudaEventRecord(ev_compute_, stream_));
    CUDA_CHECK(cudaStreamWaitEvent(sync_stream_, ev_compute_, 0));
    CUDA_CHECK(cudaMemcpyAsync(dev, host, n * sizeof(float), cudaMemcpyHostToDevice,
                               sync_stream_));
    count_h2d(n * sizeof(float));
    CUDA_CHECK(cudaEventRecord(ev_staged_in_, sync_stream_));
    CUDA_CHECK(cudaStreamWaitEvent(stream_, ev_staged_in_, 0));  // later compute sees dev
  }

  // ---- dense ----
  void gemm(bool ta, bool tb, int M, int N, int K, float alpha, const float* A, int lda,
            const float* B, int ldb, float beta, float* C, int ldc) override {
    gemm_rm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  }

  // ---- elementwise / reductions ----
  void embedding_fwd(float* out, const int32_t* tokens, const float* wte, const float* wpe, int B,
                     int Tn, int C) override {
    const auto timed = prof_->time("embedding_fwd");
    const int N = B * Tn;
    if (!N || !C) return;
    k_embedding_fwd<<<row_blocks(N), row_threads(C), 0, stream_>>>(out, tokens, wte, wpe, N, Tn,
                                                                   C);
    CUDA_CHECK_LAUNCH();
  }
  void embedding_bwd(float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B,
                     int Tn, int C) override {
    const auto timed = prof_->time("embedding_bwd");
    const int N = B * Tn;
    if (!N || !C) return;
    k_wpe_grad<<<grid_for(static_cast<size_t>(Tn) * C), kThreads, 0, stream_>>>(dwpe, dout, B,
                                                                               Tn, C);
    CUDA_CHECK_LAUNCH();
    // The interface does not pass V. Rows 0..vocab_hint_-1 (the largest V softmax_xent has
    // seen, 256 before that: byte-level tokens) are summed deterministically by the scan
    // kernel; every row of a large vocabulary by atomics, and so are ids beyond the hint until
    // softmax_xent has told the vocabulary (model steps always have: tokens are then < V).
    int scanned = 0;
    if (vocab_hint_ <= kMaxListVocab) {
      scanned = vocab_hint_;
      auto* lists = static_cast<int32_t*>(
          token_ws_.get((static_cast<size_t>(scanned) + 1 + N) * sizeof(int32_t)));
      int32_t* offsets = lists;
      int32_t* rows = lists + scanned + 1;
      const unsigned threads = static_cast<unsigned>((scanned + 31) / 32 * 32);
      k_token_lists<<<1, threads, 0, stream_>>>(offsets, rows, tokens, N, scanned);
      CUDA_CHECK_LAUNCH();
      const dim3 grid((C + 127) / 128, scanned);
      k_wte_grad_lists<<<grid, 128, 0, stream_>>>(dwte, dout, offsets, rows, C);
      CUDA_CHECK_LAUNCH();
    }
    if (scanned == 0 || !vocab_known_) {
      k_wte_grad_atomic<<<row_blocks(N), row_threads(C), 0, stream_>>>(dwte, dout, tokens, N, C,
                                                                       scanned);
      CUDA_CHECK_LAUNCH();
    }
  }
  void layernorm_fwd(float* out, float* mean, float* rstd, const float* inp, const float* w,
                     const float* b, int N, int C) override {
    const auto timed = prof_->time("layernorm_fwd");
    if (!N) return;
    const unsigned grid = rows_grid(N);
    const bool in_registers = with_row_chunks<64>(C, [&](auto k) {
      k_layernorm_fwd_reg<decltype(k)::value><<<grid, kThreads, 0, stream_>>>(out, mean, rstd, inp,
                                                                             w, b, N, C);
    });
    if (!in_registers)
      k_layernorm_fwd<<<grid, kThreads, 0, stream_>>>(out, mean, rstd, inp, w, b, N, C);
    CUDA_CHECK_LAUNCH();
  }
  void layernorm_bwd(float* dinp, float* dw, float* db, const float* dout, const float* inp,
                     const float* w, const float* mean, const float* rstd, int N,
                     int C) override {
    const auto timed = prof_->time("layernorm_bwd");
    if (!N || !C) return;
    const unsigned grid = rows_grid(N);
    const bool in_registers = with_row_chunks<32>(C, [&](auto k) {
      k_layernorm_bwd_dx_reg<decltype(k)::value><<<grid, kThreads, 0, stream_>>>(
          dinp, dout, inp, w, mean, rstd, N, C);
    });
    if (!in_registers)
      k_layernorm_bwd_dx<<<grid, kThreads, 0, stream_>>>(dinp, dout, inp, w, mean, rstd, N, C);
    CUDA_CHECK_LAUNCH();
    colsum<2>(dw, db, N, C, LnTerm{dout, inp, mean, rstd, C});
  }
  void add_bias(float* y, const float* bias, int N, int C) override {
    const auto timed = prof_->time("add_bias");
    if (!N || !C) return;
    k_add_bias<<<row_blocks(N), row_threads(C), 0, stream_>>>(y, bias, N, C);
    CUDA_CHECK_LAUNCH();
  }
  void bias_grad(float* dbias, const float* dy, int N, int C) override {
    const auto timed = prof_->time("bias_grad");
    if (!N || !C) return;
    colsum<1>(dbias, nullptr, N, C, BiasTerm{dy, C});
  }
  void add(float* out, const float* a, const float* b, size_t n) override {
    const auto timed = prof_->time("add");
    if (!n) return;
    k_add<<<grid_for(n), kThreads, 0, stream_>>>(out, a, b, n);
    CUDA_CHECK_LAUNCH();
  }
  void accumulate(float* y, const float* x, size_t n) override {
    const auto timed = prof_->time("accumulate");
    if (!n) return;
    k_accumulate<<<grid_for(n), kThreads, 0, stream_>>>(y, x, n);
    CUDA_CHECK_LAUNCH();
  }
  void gelu_fwd(float* out, const float* inp, size_t n) override {
    const auto timed = prof_->time("gelu_fwd");
    if (!n) return;
    k_gelu_fwd<<<grid_for(n), kThreads, 0, stream_>>>(out, inp, n);
    CUDA_CHECK_LAUNCH();
  }
  void bias_gelu_fwd(float* out, float* pre, const float* bias, int N, int C) override {
    const auto timed = prof_->time("bias_gelu_fwd");
    if (!N || !C) return;
    k_bias_gelu_fwd<<<row_blocks(N), row_threads(C), 0, stream_>>>(out, pre, bias, N, C);
    CUDA_CHECK_LAUNCH();
  }
  void bias_residual(float* out, const float* x, const float* y, const float* bias, int N,
                     int C) override {
    const auto timed = prof_->time("bias_residual");
    if (!N || !C) return;
    k_bias_residual<<<row_blocks(N), row_threads(C), 0, stream_>>>(out, x, y, bias, N, C);
    CUDA_CHECK_LAUNCH();
  }
  void gelu_bwd(float* dinp, const float* inp, const float* dout, size_t n) override {
    const auto timed = prof_->time("gelu_bwd");
    if (!n) return;
    k_gelu_bwd<<<grid_for(n), kThreads, 0, stream_>>>(dinp, inp, dout, n);
    CUDA_CHECK_LAUNCH();
  }

  // ---- attention ----
  // Per (b,h): Q, K, V are (T, hd) views of qkv with row stride 3·H·hd; P = att[b,h] (T,T);
  // O = out[b, :, h] (T, hd) with row stride H·hd.
  // Causal attention touches only the lower triangle of each (T,T) matrix, so its GEMMs run
  // per block of rows (queries) or columns (keys), each over the part it needs: about
  // (nb+1)/(2·nb) of the full products' work and traffic for nb blocks. The softmax kernels
  // write zeros above the diagonal, which the diagonal blocks then read.
  void attention_fwd(float* out, float* att, const float* qkv, int B, int Tn, int H,
                     int hd) override {
    if (!B || !Tn || !H) return;
    const long long ld = 3LL * H * hd, ldo = static_cast<long long>(H) * hd, TT = 1LL * Tn * Tn;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    const BhView q{qkv, Tn * ld, hd}, k{qkv + ldo, Tn * ld, hd}, v{qkv + 2 * ldo, Tn * ld, hd};
    const BhView p{att, H * TT, TT}, o{out, Tn * ldo, hd};
    for_causal_blocks(Tn, [&](int r0, int r1) {  // query rows [r0, r1) see keys [0, r1)
      // S = scale · Q·Kᵀ
      gemm_bh(false, true, r1 - r0, r1, hd, scale, at(q, r0 * ld), ld, k, ld, 0.0f,
              at(p, 1LL * r0 * Tn), Tn, B, H);
    });
    softmax_rows(/*backward=*/false, att, nullptr, B * H * Tn, Tn);
    for_causal_blocks(Tn, [&](int r0, int r1) {
      // O = P·V
      gemm_bh(false, false, r1 - r0, hd, r1, 1.0f, at(p, 1LL * r0 * Tn), Tn, v, ld, 0.0f,
              at(o, r0 * ldo), ldo, B, H);
    });
  }
  void attention_bwd(float* dqkv, float* scratch, const float* dout, const float* qkv,
                     const float* att, int B, int Tn, int H, int hd) override {
    if (!B || !Tn || !H) return;
    const long long ld = 3LL * H * hd, ldo = static_cast<long long>(H) * hd, TT = 1LL * Tn * Tn;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    const BhView q{qkv, Tn * ld, hd}, k{qkv + ldo, Tn * ld, hd}, v{qkv + 2 * ldo, Tn * ld, hd};
    const BhView dq{dqkv, Tn * ld, hd}, dk{dqkv + ldo, Tn * ld, hd},
        dv{dqkv + 2 * ldo, Tn * ld, hd};
    const BhView p{att, H * TT, TT}, ds{scratch, H * TT, TT}, dO{dout, Tn * ldo, hd};
    for_causal_blocks(Tn, [&](int r0, int r1) {
      // dP = dO·Vᵀ for query rows [r0, r1), keys [0, r1)
      gemm_bh(false, true, r1 - r0, r1, hd, 1.0f, at(dO, r0 * ldo), ldo, v, ld, 0.0f,
              at(ds, 1LL * r0 * Tn), Tn, B, H);
    });
    for_causal_blocks(Tn, [&](int c0, int c1) {
      // dV = Pᵀ·dO for keys [c0, c1): the queries that see them are [c0, T)
      gemm_bh(true, false, c1 - c0, hd, Tn - c0, 1.0f, at(p, 1LL * c0 * Tn + c0), Tn,
              at(dO, c0 * ldo), ldo, 0.0f, at(dv, c0 * ld), ld, B, H);
    });
    softmax_rows(/*backward=*/true, scratch, att, B * H * Tn, Tn);
    for_causal_blocks(Tn, [&](int r0, int r1) {
      // dQ = scale · dS·K
      gemm_bh(false, false, r1 - r0, hd, r1, scale, at(ds, 1LL * r0 * Tn), Tn, k, ld, 0.0f,
              at(dq, r0 * ld), ld, B, H);
    });
    for_causal_blocks(Tn, [&](int c0, int c1) {
      // dK = scale · dSᵀ·Q for keys [c0, c1), queries [c0, T)
      gemm_bh(true, false, c1 - c0, hd, Tn - c0, scale, at(ds, 1LL * c0 * Tn + c0), Tn,
              at(q, c0 * ld), ld, 0.0f, at(dk, c0 * ld), ld, B, H);
    });
  }

  // ---- loss ----
  void softmax_xent(float* logits, float* losses, const int32_t* targets, int N, int V,
                    float grad_scale) override {
    const auto timed = prof_->time("softmax_xent");
    if (!N) {
      CUDA_CHECK(cudaMemsetAsync(loss_dev_, 0, sizeof(double), stream_));
      return;
    }
    if (V > 0) {
      vocab_hint_ = std::max(vocab_hint_, V);
      vocab_known_ = true;
    }
    const int threads = V >= 1024 ? 1024 : (V >= 512 ? 512 : 256);
    k_softmax_xent<<<N, threads, 0, stream_>>>(logits, losses, targets, V, grad_scale);
    CUDA_CHECK_LAUNCH();
    k_sum_to_double<<<1, 1024, 0, stream_>>>(loss_dev_, losses, N);
    CUDA_CHECK_LAUNCH();
  }
  double loss_sum() override {
    CUDA_CHECK(cudaMemcpyAsync(loss_host_, loss_dev_, sizeof(double), cudaMemcpyDeviceToHost,
                               stream_));
    count_d2h(sizeof(double));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    return *loss_host_;
  }

  // ---- optimizer ----
  void adam(float* p, const float* g, float* m, float* v, size_t n, float lr, float b1, float b2,
            float eps, float wd, int64_t t) override {
    const auto timed = prof_->time("adam");
    if (!n) return;
    // Bias corrections computed on the host exactly as the CPU backend does.
    const float c1 = 1.0f / (1.0f - std::pow(b1, static_cast<float>(t)));
    const float c2 = 1.0f / (1.0f - std::pow(b2, static_cast<float>(t)));
    k_adam<<<grid_for(n), kThreads, 0, stream_>>>(p, g, m, v, n, lr, b1, b2, eps, wd, c1, c2);
    CUDA_CHECK_LAUNCH();
  }

 private:
  static constexpr size_t kBlasWorkspace = size_t(32) << 20;  // cuBLAS' advice for Hopper

  void* dev_alloc(size_t bytes) {
    void* p = nullptr;
    bytes = std::max<size_t>(bytes, 4);
    CUDA_CHECK(cudaMalloc(&p, bytes));
    CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    return p;
  }
  void dev_free(void* p) {
    if (!p) return;
    CUDA_CHECK(cudaStreamSynchronize(stream_));  // no queued work may still use it
    CUDA_CHECK(cudaStreamSynchronize(sync_stream_));
    CUDA_CHECK(cudaFree(p));
  }

  // Register-resident row kernels hold K elements per lane: calls fn(integral_constant<K>) for
  // the smallest power of two K <= MaxK with 32·K >= len and returns true, or returns false when
  // the row is longer (the streaming kernel then).
  template <int MaxK, int K = 1, class Fn>
  static bool with_row_chunks(int len, Fn&& fn) {
    if (32 * K >= len) {
      fn(std::integral_constant<int, K>{});
      return true;
    }
    if constexpr (K < MaxK) return with_row_chunks<MaxK, 2 * K>(len, fn);
    return false;
  }

  // Row kernels: a block per row (grid-stride beyond 65536 rows), threads over columns.
  static unsigned row_blocks(int rows) { return static_cast<unsigned>(std::min(rows, 65536)); }
  static unsigned row_threads(int C) {
    return static_cast<unsigned>(std::min(kThreads, std::max(32, (C + 31) / 32 * 32)));
  }

  // The causal softmax over `rows` rows of length Tn (forward: x = scores → probabilities;
  // backward: x = dP → dS with P): the register-resident kernel for the smallest K with
  // 32·K >= Tn, the streaming one beyond T = 1024.
  void softmax_rows(bool backward, float* x, const float* P, int rows, int Tn) {
    const auto timed = prof_->time(backward ? "attention softmax_bwd" : "attention softmax_fwd");
    const unsigned grid = rows_grid(rows);
    const bool in_registers = with_row_chunks<32>(Tn, [&](auto k) {
      if (backward)
        k_causal_softmax_bwd_reg<decltype(k)::value><<<grid, kThreads, 0, stream_>>>(x, P, rows,
                                                                                   Tn);
      else
        k_causal_softmax_fwd_reg<decltype(k)::value><<<grid, kThreads, 0, stream_>>>(x, rows, Tn);
    });
    if (!in_registers) {
      if (backward)
        k_causal_softmax_bwd<<<grid, kThreads, 0, stream_>>>(x, P, rows, Tn);
      else
        k_causal_softmax_fwd<<<grid, kThreads, 0, stream_>>>(x, rows, Tn);
    }
    CUDA_CHECK_LAUNCH();
  }

  // Grid for warp-per-row kernels (kThreads/32 rows per block).
  static unsigned rows_grid(int rows) {
    const int per = kThreads / 32;
    return static_cast<unsigned>((rows + per - 1) / per);
  }

  // Row-major C(M,N) = α·op(A)·op(B) + β·C through the operand swap: column-major
  // Cᵀ(N,M) = op(B)ᵀ·op(A)ᵀ.
  void gemm_rm(bool ta, bool tb, int M, int N, int K, float alpha, const float* A, int lda,
               const float* B, int ldb, float beta, float* C, int ldc) {
    if (M <= 0 || N <= 0) return;
    const auto timed = prof_->time_gemm(ta, tb, M, N, K, 1);
    const cublasOperation_t opA = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opB = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLAS_CHECK(cublasGemmEx(blas_, opB, opA, N, M, K, &alpha, B, CUDA_R_32F, ldb, A, CUDA_R_32F,
                              lda, &beta, C, CUDA_R_32F, ldc, compute_, CUBLAS_GEMM_DEFAULT));
  }

  // The blocks of the causal GEMMs: fn(first, end) over [0, T) in blocks of at least 64 rows,
  // at most 8 of them (one block, the whole product, for T <= 64).
  template <class Fn>
  static void for_causal_blocks(int Tn, Fn fn) {
    const int size = std::max(64, (Tn + 7) / 8);
    for (int r0 = 0; r0 < Tn; r0 += size) fn(r0, std::min(Tn, r0 + size));
  }
  static BhView at(const BhView& x, long long offset) {
    return BhView{x.base + offset, x.per_seq, x.per_head};
  }

  // The same for every (sequence, head) of an attention op in one batched cuBLAS call: a kernel
  // writes the B·H operand pointers into a workspace just before it (stream order keeps the
  // next call's pointers from overwriting them early). One call per operation instead of one
  // per head or sequence: at T = 512 a single problem is a few µs of GPU time, less than a
  // launch.
  void gemm_bh(bool ta, bool tb, int M, int N, int K, float alpha, BhView A, long long lda,
               BhView B, long long ldb, float beta, BhView C, long long ldc, int Bn, int Hn) {
    const int count = Bn * Hn;
    if (M <= 0 || N <= 0 || count <= 0) return;
    const cublasOperation_t opA = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opB = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (Bn == 1 || Hn == 1) {  // one stride per problem: the strided call, no pointer arrays
      const auto stride = [&](const BhView& x) { return Hn == 1 ? x.per_seq : x.per_head; };
      const auto timed = prof_->time_gemm(ta, tb, M, N, K, count);
      CUBLAS_CHECK(cublasGemmStridedBatchedEx(
          blas_, opB, opA, N, M, K, &alpha, B.base, CUDA_R_32F, static_cast<int>(ldb), stride(B),
          A.base, CUDA_R_32F, static_cast<int>(lda), stride(A), &beta,
          const_cast<float*>(C.base), CUDA_R_32F, static_cast<int>(ldc), stride(C), count,
          compute_, CUBLAS_GEMM_DEFAULT));
      return;
    }
    auto* ptrs = static_cast<const float**>(ptr_ws_.get(3 * static_cast<size_t>(count) *
                                                         sizeof(float*)));
    const float** pa = ptrs;
    const float** pb = ptrs + count;
    float** pc = const_cast<float**>(ptrs + 2 * count);
    k_bh_pointers<<<grid_for(count), kThreads, 0, stream_>>>(pa, pb, pc, A, B, C, Hn, count);
    CUDA_CHECK_LAUNCH();
    const auto timed = prof_->time_gemm(ta, tb, M, N, K, count);
    CUBLAS_CHECK(cublasGemmBatchedEx(
        blas_, opB, opA, N, M, K, &alpha, reinterpret_cast<const void* const*>(pb), CUDA_R_32F,
        static_cast<int>(ldb), reinterpret_cast<const void* const*>(pa), CUDA_R_32F,
        static_cast<int>(lda), &beta, reinterpret_cast<void* const*>(pc), CUDA_R_32F,
        static_cast<int>(ldc), count, compute_, CUBLAS_GEMM_DEFAULT));
  }

  // out0 (C) += Σ rows of term.x, out1 (C) += Σ rows of term.y (K = 2).
  template <int K, class Term>
  void colsum(float* out0, float* out1, int N, int C, Term term) {
    // Enough row chunks to fill the GPU, at least 64 rows each, at most 64 chunks.
    const int col_blocks = (C + kColTile - 1) / kColTile;
    int chunks = std::max(1, std::min({64, (N + 63) / 64, (2 * sms_ + col_blocks - 1) / col_blocks}));
    const int rows_per_chunk = (N + chunks - 1) / chunks;
    chunks = (N + rows_per_chunk - 1) / rows_per_chunk;
    float* partial = static_cast<float*>(
        colsum_ws_.get(static_cast<size_t>(K) * chunks * C * sizeof(float)));
    const dim3 block(kColTile, kRowLanes), grid(col_blocks, chunks);
    k_colsum_partial<K, Term><<<grid, block, 0, stream_>>>(partial, N, C, rows_per_chunk, term);
    CUDA_CHECK_LAUNCH();
    k_colsum_finish<<<(C + 127) / 128, 128, 0, stream_>>>(out0, K > 1 ? out1 : nullptr, partial,
                                                          chunks, C);
    CUDA_CHECK_LAUNCH();
  }

  int device_;
  // Host↔device copies issued (device-to-device not counted); atomic: staging may run on
  // another thread.
  std::atomic<long long> h2d_calls_{0}, h2d_bytes_{0}, d2h_calls_{0}, d2h_bytes_{0};
  void count_h2d(size_t bytes) {
    h2d_calls_ += 1;
    h2d_bytes_ += static_cast<long long>(bytes);
  }
  void count_d2h(size_t bytes) {
    d2h_calls_ += 1;
    d2h_bytes_ += static_cast<long long>(bytes);
  }
  std::string math_;                  // run.gpu_math
  cublasComputeType_t compute_;       // its cuBLAS compute type
  cudaStream_t stream_ = nullptr;       // compute: every op
  cudaStream_t sync_stream_ = nullptr;  // inter-DC staging copies
  cudaEvent_t ev_compute_ = nullptr;    // compute work a stage_out waits for
  cudaEvent_t ev_staged_in_ = nullptr;  // a stage_in copy that later compute waits for
  struct TokenSlot {
    int32_t* host = nullptr;  // (cap) page-locked bounce buffer
    size_t cap = 0;
    cudaEvent_t ev = nullptr;  // the last copy out of it
  };
  TokenSlot tok_[2];
  int tok_next_ = 0;
  cublasHandle_t blas_ = nullptr;
  void* blas_ws_ = nullptr;
  int sms_ = 1;
  double* loss_dev_ = nullptr;   // (1) loss sum of the last softmax_xent
  double* loss_host_ = nullptr;  // (1) pinned
  int vocab_hint_ = 256;         // largest V seen by softmax_xent (byte-level: 256)
  bool vocab_known_ = false;     // softmax_xent has run: every token id is < vocab_hint_
  Workspace colsum_ws_;          // (K, chunks, C) partial column sums
  Workspace ptr_ws_;             // (3, B·H) operand pointers of the attention GEMMs
  Workspace token_ws_;           // (V+1 + N) token-id offsets and row lists of embedding_bwd
  std::unique_ptr<OpProfile> prof_;  // per-op GPU time when STRAIT_CUDA_PROFILE=1
  Workspace copy_ws_;            // (n) staging for overlapping copies
};

}  // namespace

std::unique_ptr<Backend<float>> make_cuda_backend(int device, const std::string& math) {
  return std::make_unique<CudaBackend>(device, math);
}

namespace {
CudaBackend& as_cuda(Backend<float>& be) {
  auto* c = dynamic_cast<CudaBackend*>(&be);
  STRAIT_CHECK(c != nullptr, "backend " + be.name() + " is not a CUDA backend");
  return *c;
}
}  // namespace

void* cuda_compute_stream(Backend<float>& be) { return as_cuda(be).compute_stream(); }
int cuda_device(Backend<float>& be) { return as_cuda(be).device(); }
CudaCopyCounts cuda_copy_counts(Backend<float>& be) { return as_cuda(be).copy_counts(); }

}  // namespace strait
