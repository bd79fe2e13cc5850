// cpu_backend.cpp — the CPU backend: OpenBLAS for every matmul, plain loops for the rest.
// Each rank runs single-threaded BLAS (ranks already share the cores). Attention runs two
// GEMMs per (sequence, head) on strided views of the QKV buffer, so it needs no re-layout.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cpu_math.hpp"
#include "core/check.hpp"

namespace strait {
namespace {

inline void blas_gemm(bool ta, bool tb, int M, int N, int K, float alpha, const float* A, int lda,
                      const float* B, int ldb, float beta, float* C, int ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N,
              K, alpha, A, lda, B, ldb, beta, C, ldc);
}
inline void blas_gemm(bool ta, bool tb, int M, int N, int K, double alpha, const double* A,
                      int lda, const double* B, int ldb, double beta, double* C, int ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N,
              K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <typename T>
class CpuBackend final : public Backend<T> {
 public:
  std::string name() const override { return "cpu"; }

  T* alloc(size_t n) override {
    void* p = nullptr;
    const size_t bytes = std::max<size_t>(64, ((n * sizeof(T) + 63) / 64) * 64);
    STRAIT_CHECK(posix_memalign(&p, 64, bytes) == 0, "out of host memory");
    std::memset(p, 0, bytes);
    return static_cast<T*>(p);
  }
  void free(T* p) override { std::free(p); }
  void zero(T* p, size_t n) override { std::memset(p, 0, n * sizeof(T)); }
  void to_host(T* h, const T* d, size_t n) override { std::memcpy(h, d, n * sizeof(T)); }
  void from_host(T* d, const T* h, size_t n) override { std::memcpy(d, h, n * sizeof(T)); }
  void copy(T* dst, const T* src, size_t n) override { std::memmove(dst, src, n * sizeof(T)); }
  int32_t* alloc_tokens(size_t n) override {
    return static_cast<int32_t*>(std::calloc(std::max<size_t>(n, 1), sizeof(int32_t)));
  }
  void free_tokens(int32_t* p) override { std::free(p); }
  void tokens_from_host(int32_t* d, const int32_t* h, size_t n) override {
    std::memcpy(d, h, n * sizeof(int32_t));
  }

  // Host memory is the backend's memory: staging is a plain copy.
  T* alloc_host(size_t n) override { return alloc(n); }
  void free_host(T* p) override { free(p); }
  void stage_out(T* h, const T* d, size_t n) override { to_host(h, d, n); }
  void stage_in(T* d, const T* h, size_t n) override { from_host(d, h, n); }

  void gemm(bool ta, bool tb, int M, int N, int K, T alpha, const T* A, int lda, const T* B,
            int ldb, T beta, T* C, int ldc) override {
    blas_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  }

  void embedding_fwd(T* out, const int32_t* tok, const T* wte, const T* wpe, int B, int Tn,
                     int C) override {
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < Tn; ++t) {
        T* o = out + (static_cast<size_t>(b) * Tn + t) * C;
        const T* e = wte + static_cast<size_t>(tok[b * Tn + t]) * C;
        const T* p = wpe + static_cast<size_t>(t) * C;
        for (int c = 0; c < C; ++c) o[c] = e[c] + p[c];
      }
  }
  void embedding_bwd(T* dwte, T* dwpe, const T* dout, const int32_t* tok, int B, int Tn,
                     int C) override {
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < Tn; ++t) {
        const T* d = dout + (static_cast<size_t>(b) * Tn + t) * C;
        T* e = dwte + static_cast<size_t>(tok[b * Tn + t]) * C;
        T* p = dwpe + static_cast<size_t>(t) * C;
        for (int c = 0; c < C; ++c) {
          e[c] += d[c];
          p[c] += d[c];
        }
      }
  }

  void layernorm_fwd(T* out, T* mean, T* rstd, const T* inp, const T* w, const T* b, int N,
                     int C) override {
    const T eps = T(1e-5);
    for (int i = 0; i < N; ++i) {
      const T* x = inp + static_cast<size_t>(i) * C;
      T m = 0;
      for (int c = 0; c < C; ++c) m += x[c];
      m /= C;
      T var = 0;
      for (int c = 0; c < C; ++c) var += (x[c] - m) * (x[c] - m);
      var /= C;
      const T s = T(1) / std::sqrt(var + eps);
      T* o = out + static_cast<size_t>(i) * C;
      for (int c = 0; c < C; ++c) o[c] = (x[c] - m) * s * w[c] + b[c];
      mean[i] = m;
      rstd[i] = s;
    }
  }
  void layernorm_bwd(T* dinp, T* dw, T* db, const T* dout, const T* inp, const T* w,
                     const T* mean, const T* rstd, int N, int C) override {
    for (int i = 0; i < N; ++i) {
      const T* x = inp + static_cast<size_t>(i) * C;
      const T* dy = dout + static_cast<size_t>(i) * C;
      T* dx = dinp + static_cast<size_t>(i) * C;
      const T m = mean[i], s = rstd[i];
      T dnorm_mean = 0, dnorm_norm_mean = 0;
      for (int c = 0; c < C; ++c) {
        const T xhat = (x[c] - m) * s;
        const T dn = w[c] * dy[c];
        dnorm_mean += dn;
        dnorm_norm_mean += dn * xhat;
        db[c] += dy[c];
        dw[c] += xhat * dy[c];
      }
      dnorm_mean /= C;
      dnorm_norm_mean /= C;
      for (int c = 0; c < C; ++c) {
        const T xhat = (x[c] - m) * s;
        dx[c] += (w[c] * dy[c] - dnorm_mean - xhat * dnorm_norm_mean) * s;
      }
    }
  }

  void add_bias(T* y, const T* bias, int N, int C) override {
    for (int i = 0; i < N; ++i) {
      T* r = y + static_cast<size_t>(i) * C;
      for (int c = 0; c < C; ++c) r[c] += bias[c];
    }
  }
  void bias_grad(T* dbias, const T* dy, int N, int C) override {
    for (int i = 0; i < N; ++i) {
      const T* r = dy + static_cast<size_t>(i) * C;
      for (int c = 0; c < C; ++c) dbias[c] += r[c];
    }
  }
  void add(T* out, const T* a, const T* b, size_t n) override {
    for (size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
  }
  void accumulate(T* y, const T* x, size_t n) override {
    for (size_t i = 0; i < n; ++i) y[i] += x[i];
  }

  static constexpr T kGeluC = T(0.7978845608028654);  // sqrt(2/pi)
  void gelu_fwd(T* out, const T* inp, size_t n) override {
    for (size_t i = 0; i < n; ++i) {
      const T x = inp[i];
      out[i] = T(0.5) * x * (T(1) + cpu::fast_tanh(kGeluC * (x + T(0.044715) * x * x * x)));
    }
  }
  // The CPU's fused ops are the separate ones in a row (the same arithmetic, so CPU results do
  // not depend on which the model calls); the fusion is for the GPU's memory traffic.
  void bias_gelu_fwd(T* out, T* pre, const T* bias, int N, int C) override {
    add_bias(pre, bias, N, C);
    gelu_fwd(out, pre, static_cast<size_t>(N) * C);
  }
  void bias_residual(T* out, const T* x, const T* y, const T* bias, int N, int C) override {
    for (int i = 0; i < N; ++i) {
      const size_t o = static_cast<size_t>(i) * C;
      for (int c = 0; c < C; ++c) out[o + c] = x[o + c] + (y[o + c] + bias[c]);
    }
  }
  void gelu_bwd(T* dinp, const T* inp, const T* dout, size_t n) override {
    for (size_t i = 0; i < n; ++i) {
      const T x = inp[i];
      const T u = kGeluC * (x + T(0.044715) * x * x * x);
      const T th = cpu::fast_tanh(u);
      const T sech2 = T(1) - th * th;
      const T du = kGeluC * (T(1) + T(3) * T(0.044715) * x * x);
      dinp[i] = dout[i] * (T(0.5) * (T(1) + th) + T(0.5) * x * sech2 * du);
    }
  }

  void attention_fwd(T* out, T* att, const T* qkv, int B, int Tn, int H, int hd) override {
    const int ld = 3 * H * hd, ldo = H * hd;
    const T scale = T(1) / std::sqrt(T(hd));
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h) {
        const T* q = qkv + static_cast<size_t>(b) * Tn * ld + h * hd;
        const T* k = q + H * hd;
        const T* v = q + 2 * H * hd;
        T* P = att + (static_cast<size_t>(b) * H + h) * Tn * Tn;
        // Scores for the causal lower triangle; row i only needs columns 0..i, but one GEMM
        // over the square is faster than T small ones at these sizes.
        blas_gemm(false, true, Tn, Tn, hd, scale, q, ld, k, ld, T(0), P, Tn);
        for (int i = 0; i < Tn; ++i) {
          T* row = P + static_cast<size_t>(i) * Tn;
          T mx = row[0];
          for (int j = 1; j <= i; ++j) mx = std::max(mx, row[j]);
          for (int j = 0; j <= i; ++j) row[j] = cpu::fast_exp(row[j] - mx);  // vectorises
          T sum = 0;
          for (int j = 0; j <= i; ++j) sum += row[j];
          const T inv = T(1) / sum;
          for (int j = 0; j <= i; ++j) row[j] *= inv;
          for (int j = i + 1; j < Tn; ++j) row[j] = 0;
        }
        T* o = out + static_cast<size_t>(b) * Tn * ldo + h * hd;
        blas_gemm(false, false, Tn, hd, Tn, T(1), P, Tn, v, ld, T(0), o, ldo);
      }
  }
  void attention_bwd(T* dqkv, T* scratch, const T* dout, const T* qkv, const T* att, int B,
                     int Tn, int H, int hd) override {
    const int ld = 3 * H * hd, ldo = H * hd;
    const T scale = T(1) / std::sqrt(T(hd));
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h) {
        const size_t base = static_cast<size_t>(b) * Tn * ld + h * hd;
        const T* q = qkv + base;
        const T* k = q + H * hd;
        const T* v = q + 2 * H * hd;
        T* dq = dqkv + base;
        T* dk = dq + H * hd;
        T* dv = dq + 2 * H * hd;
        const T* P = att + (static_cast<size_t>(b) * H + h) * Tn * Tn;
        T* dP = scratch + (static_cast<size_t>(b) * H + h) * Tn * Tn;
        const T* dO = dout + static_cast<size_t>(b) * Tn * ldo + h * hd;
        blas_gemm(false, true, Tn, Tn, hd, T(1), dO, ldo, v, ld, T(0), dP, Tn);   // dP = dO·Vᵀ
        blas_gemm(true, false, Tn, hd, Tn, T(1), P, Tn, dO, ldo, T(0), dv, ld);   // dV = Pᵀ·dO
        for (int i = 0; i < Tn; ++i) {  // dS = P ⊙ (dP − rowsum(P ⊙ dP)); zero above diagonal
          const T* p = P + static_cast<size_t>(i) * Tn;
          T* d = dP + static_cast<size_t>(i) * Tn;
          T dot = 0;
          for (int j = 0; j <= i; ++j) dot += p[j] * d[j];
          for (int j = 0; j <= i; ++j) d[j] = p[j] * (d[j] - dot);
          for (int j = i + 1; j < Tn; ++j) d[j] = 0;
        }
        blas_gemm(false, false, Tn, hd, Tn, scale, dP, Tn, k, ld, T(0), dq, ld);  // dQ = dS·K
        blas_gemm(true, false, Tn, hd, Tn, scale, dP, Tn, q, ld, T(0), dk, ld);   // dK = dSᵀ·Q
      }
  }

  void softmax_xent(T* logits, T* losses, const int32_t* targets, int N, int V,
                    T grad_scale) override {
    double total = 0;
    for (int i = 0; i < N; ++i) {
      T* z = logits + static_cast<size_t>(i) * V;
      T mx = z[0];
      for (int j = 1; j < V; ++j) mx = std::max(mx, z[j]);
      for (int j = 0; j < V; ++j) z[j] = cpu::fast_exp(z[j] - mx);
      T sum = 0;
      for (int j = 0; j < V; ++j) sum += z[j];
      const T inv = T(1) / sum;
      const int y = targets[i];
      const T py = z[y] * inv;
      losses[i] = -std::log(std::max(py, std::numeric_limits<T>::min()));
      total += static_cast<double>(losses[i]);
      for (int j = 0; j < V; ++j) z[j] = z[j] * inv * grad_scale;
      z[y] -= grad_scale;
    }
    loss_sum_ = total;
  }
  double loss_sum() override { return loss_sum_; }

  void adam(T* p, const T* g, T* m, T* v, size_t n, T lr, T b1, T b2, T eps, T wd,
            int64_t t) override {
    const T c1 = T(1) / (T(1) - std::pow(b1, T(t)));
    const T c2 = T(1) / (T(1) - std::pow(b2, T(t)));
    for (size_t i = 0; i < n; ++i) {
      m[i] = b1 * m[i] + (T(1) - b1) * g[i];
      v[i] = b2 * v[i] + (T(1) - b2) * g[i] * g[i];
      const T mh = m[i] * c1, vh = v[i] * c2;
      p[i] -= lr * (mh / (std::sqrt(vh) + eps) + wd * p[i]);
    }
  }

 private:
  double loss_sum_ = 0;  // of the last softmax_xent
};

}  // namespace

template <typename T>
std::unique_ptr<Backend<T>> make_cpu_backend() {
  return std::make_unique<CpuBackend<T>>();
}
template std::unique_ptr<Backend<float>> make_cpu_backend<float>();
template std::unique_ptr<Backend<double>> make_cpu_backend<double>();

}  // namespace strait
