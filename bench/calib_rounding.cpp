// calib_rounding.cpp — calibrates the TF32/BF16 tolerances of tests/unit/test_cuda_parity.cpp on
// the CPU (a measurement tool, not a test). It emulates what cuBLAS does to GEMM operands under
// run.gpu_math (round to nearest or truncate to TF32's 10 / BF16's 7 mantissa bits, FP32
// accumulation) on the CPU backend — through a Backend wrapper for Backend::gemm and through a
// cblas_sgemm interposer for the GEMMs inside the CPU attention — and prints the normalised
// errors of GEMMs, attention and 20 training steps (the parity test's model and data) against
// plain FP32. Usage: build/calib_rounding [data seeds, default 3]. Figures: docs/cuda.md.
#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/dc_comm.hpp"
#include "core/rng.hpp"
#include "model/params.hpp"
#include "model/transformer.hpp"
#include "tests/common/parity_run.hpp"

using namespace strait;

// ---------------------------------------------------------------- rounding
enum class Fmt { FP32, TF32_RN, TF32_TR, BF16_RN, BF16_TR, NOISE };
const char* fmt_name(Fmt f) {
  switch (f) {
    case Fmt::FP32: return "fp32";
    case Fmt::TF32_RN: return "tf32-rn";
    case Fmt::TF32_TR: return "tf32-tr";
    case Fmt::BF16_RN: return "bf16-rn";
    case Fmt::BF16_TR: return "bf16-tr";
    case Fmt::NOISE: return "fp32-noise";
  }
  return "?";
}
inline float round_to(float x, Fmt f) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7F800000u) == 0x7F800000u) return x;  // inf/nan
  switch (f) {
    case Fmt::FP32: case Fmt::NOISE: return x;
    case Fmt::BF16_TR: u &= 0xFFFF0000u; break;
    case Fmt::TF32_RN: u += 0x0FFFu + ((u >> 13) & 1u); u &= ~0x1FFFu; break;
    case Fmt::TF32_TR: u &= ~0x1FFFu; break;
    case Fmt::BF16_RN: u += 0x7FFFu + ((u >> 16) & 1u); u &= 0xFFFF0000u; break;
  }
  std::memcpy(&x, &u, 4);
  return x;
}
void round_vec(std::vector<float>& v, Fmt f) {
  for (auto& x : v) x = round_to(x, f);
}
// Elements a row-major operand with `rows` rows of which `cols` are used occupies.
inline size_t span(int rows, int cols, int ld) {
  return rows <= 0 || cols <= 0 ? 0 : size_t(rows - 1) * ld + cols;
}

// ---------------------------------------------------------------- cblas_sgemm interposer
// The CPU backend's attention calls cblas_sgemm directly; this definition in the executable
// takes those calls (and all others), rounds A and B when g_blas_fmt != FP32, and forwards.
static Fmt g_blas_fmt = Fmt::FP32;
static double g_noise = 0;
using sgemm_fn = void (*)(const enum CBLAS_ORDER, const enum CBLAS_TRANSPOSE,
                          const enum CBLAS_TRANSPOSE, const blasint, const blasint, const blasint,
                          const float, const float*, const blasint, const float*, const blasint,
                          const float, float*, const blasint);
static sgemm_fn real_sgemm() {
  static sgemm_fn f = reinterpret_cast<sgemm_fn>(dlsym(RTLD_NEXT, "cblas_sgemm"));
  if (!f) { std::fprintf(stderr, "no real cblas_sgemm\n"); std::abort(); }
  return f;
}
extern "C" void cblas_sgemm(OPENBLAS_CONST enum CBLAS_ORDER Order,
                            OPENBLAS_CONST enum CBLAS_TRANSPOSE TransA,
                            OPENBLAS_CONST enum CBLAS_TRANSPOSE TransB, OPENBLAS_CONST blasint M,
                            OPENBLAS_CONST blasint N, OPENBLAS_CONST blasint K,
                            OPENBLAS_CONST float alpha, OPENBLAS_CONST float* A,
                            OPENBLAS_CONST blasint lda, OPENBLAS_CONST float* B,
                            OPENBLAS_CONST blasint ldb, OPENBLAS_CONST float beta, float* C,
                            OPENBLAS_CONST blasint ldc) {
  if (g_blas_fmt == Fmt::NOISE && Order == CblasRowMajor) {
    // FP32 with a different summation order: each output gets a relative g_noise·normal error.
    static uint64_t call = 0;
    ++call;
    real_sgemm()(Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        C[size_t(i) * ldc + j] *= float(1.0 + g_noise * normal01(55, call, size_t(i) * N + j));
    return;
  }
  if (g_blas_fmt == Fmt::FP32 || Order != CblasRowMajor) {
    real_sgemm()(Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  const bool ta = TransA != CblasNoTrans, tb = TransB != CblasNoTrans;
  std::vector<float> a(A, A + span(ta ? K : M, ta ? M : K, lda));
  std::vector<float> b(B, B + span(tb ? N : K, tb ? K : N, ldb));
  round_vec(a, g_blas_fmt);
  round_vec(b, g_blas_fmt);
  real_sgemm()(Order, TransA, TransB, M, N, K, alpha, a.data(), lda, b.data(), ldb, beta, C, ldc);
}
struct BlasFmtScope {
  Fmt old;
  explicit BlasFmtScope(Fmt f) : old(g_blas_fmt) { g_blas_fmt = f; }
  ~BlasFmtScope() { g_blas_fmt = old; }
};

// ---------------------------------------------------------------- RoundingBackend
class RoundingBackend final : public Backend<float> {
 public:
  explicit RoundingBackend(Fmt f) : f_(f), in_(make_cpu_backend<float>()) {}
  std::string name() const override { return std::string("round-") + fmt_name(f_); }
  float* alloc(size_t n) override { return in_->alloc(n); }
  void free(float* p) override { in_->free(p); }
  void zero(float* p, size_t n) override { in_->zero(p, n); }
  void to_host(float* h, const float* d, size_t n) override { in_->to_host(h, d, n); }
  void from_host(float* d, const float* h, size_t n) override { in_->from_host(d, h, n); }
  void copy(float* d, const float* s, size_t n) override { in_->copy(d, s, n); }
  int32_t* alloc_tokens(size_t n) override { return in_->alloc_tokens(n); }
  void free_tokens(int32_t* p) override { in_->free_tokens(p); }
  void tokens_from_host(int32_t* d, const int32_t* h, size_t n) override {
    in_->tokens_from_host(d, h, n);
  }
  void synchronize() override { in_->synchronize(); }
  float* alloc_host(size_t n) override { return in_->alloc_host(n); }
  void free_host(float* p) override { in_->free_host(p); }
  void stage_out(float* h, const float* d, size_t n) override { in_->stage_out(h, d, n); }
  void stage_in(float* d, const float* h, size_t n) override { in_->stage_in(d, h, n); }
  void gemm(bool ta, bool tb, int M, int N, int K, float alpha, const float* A, int lda,
            const float* B, int ldb, float beta, float* C, int ldc) override {
    if (f_ == Fmt::FP32) {
      in_->gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
      return;
    }
    a_.assign(A, A + span(ta ? K : M, ta ? M : K, lda));
    b_.assign(B, B + span(tb ? N : K, tb ? K : N, ldb));
    round_vec(a_, f_);
    round_vec(b_, f_);
    in_->gemm(ta, tb, M, N, K, alpha, a_.data(), lda, b_.data(), ldb, beta, C, ldc);
  }
  void embedding_fwd(float* o, const int32_t* t, const float* wte, const float* wpe, int B,
                     int T, int C) override { in_->embedding_fwd(o, t, wte, wpe, B, T, C); }
  void embedding_bwd(float* dwte, float* dwpe, const float* d, const int32_t* t, int B, int T,
                     int C) override { in_->embedding_bwd(dwte, dwpe, d, t, B, T, C); }
  void layernorm_fwd(float* o, float* m, float* r, const float* i, const float* w,
                     const float* b, int N, int C) override {
    in_->layernorm_fwd(o, m, r, i, w, b, N, C);
  }
  void layernorm_bwd(float* di, float* dw, float* db, const float* d, const float* i,
                     const float* w, const float* m, const float* r, int N, int C) override {
    in_->layernorm_bwd(di, dw, db, d, i, w, m, r, N, C);
  }
  void add_bias(float* y, const float* b, int N, int C) override { in_->add_bias(y, b, N, C); }
  void bias_grad(float* db, const float* dy, int N, int C) override {
    in_->bias_grad(db, dy, N, C);
  }
  void add(float* o, const float* a, const float* b, size_t n) override { in_->add(o, a, b, n); }
  void accumulate(float* y, const float* x, size_t n) override { in_->accumulate(y, x, n); }
  void gelu_fwd(float* o, const float* i, size_t n) override { in_->gelu_fwd(o, i, n); }
  void bias_gelu_fwd(float* o, float* p, const float* b, int N, int C) override {
    in_->bias_gelu_fwd(o, p, b, N, C);
  }
  void bias_residual(float* o, const float* x, const float* y, const float* b, int N,
                     int C) override {
    in_->bias_residual(o, x, y, b, N, C);
  }
  void gelu_bwd(float* di, const float* i, const float* d, size_t n) override {
    in_->gelu_bwd(di, i, d, n);
  }
  void attention_fwd(float* o, float* att, const float* qkv, int B, int T, int H,
                     int hd) override { in_->attention_fwd(o, att, qkv, B, T, H, hd); }
  void attention_bwd(float* dqkv, float* s, const float* d, const float* qkv, const float* att,
                     int B, int T, int H, int hd) override {
    in_->attention_bwd(dqkv, s, d, qkv, att, B, T, H, hd);
  }
  void softmax_xent(float* l, float* ls, const int32_t* t, int N, int V, float g) override {
    in_->softmax_xent(l, ls, t, N, V, g);
  }
  double loss_sum() override { return in_->loss_sum(); }
  void adam(float* p, const float* g, float* m, float* v, size_t n, float lr, float b1, float b2,
            float eps, float wd, int64_t t) override {
    in_->adam(p, g, m, v, n, lr, b1, b2, eps, wd, t);
  }

 private:
  Fmt f_;
  std::unique_ptr<Backend<float>> in_;
  std::vector<float> a_, b_;
};

// ---------------------------------------------------------------- helpers (as in the test)
std::vector<float> randn(size_t n, uint64_t stream, float scale = 1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(scale * normal01(99, stream, i));
  return v;
}
template <class X, class Y>
double nerr(const std::vector<X>& x, const std::vector<Y>& ref) {
  double d2 = 0, r2 = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = double(x[i]) - double(ref[i]);
    d2 += d * d;
    r2 += double(ref[i]) * double(ref[i]);
  }
  return std::sqrt(d2) / std::max(std::sqrt(r2), 1e-30);
}
// Normalised error of C only over the M×N used region (row-major, ld).
template <class X, class Y>
double nerr_region(const std::vector<X>& x, const std::vector<Y>& ref, int M, int N, int ld) {
  double d2 = 0, r2 = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      const size_t k = size_t(i) * ld + j;
      const double d = double(x[k]) - double(ref[k]);
      d2 += d * d;
      r2 += double(ref[k]) * double(ref[k]);
    }
  return std::sqrt(d2) / std::max(std::sqrt(r2), 1e-30);
}
const Fmt kFmts[] = {Fmt::FP32, Fmt::TF32_RN, Fmt::TF32_TR, Fmt::BF16_RN, Fmt::BF16_TR};
const Fmt kRound[] = {Fmt::TF32_RN, Fmt::TF32_TR, Fmt::BF16_RN, Fmt::BF16_TR};

// Exact-ish double GEMM of float operands (row-major).
std::vector<double> gemm_d(bool ta, bool tb, int M, int N, int K, double alpha,
                           const std::vector<float>& A, int lda, const std::vector<float>& B,
                           int ldb, double beta, const std::vector<float>& C0, int ldc) {
  std::vector<double> C(C0.begin(), C0.end());
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k) {
        const double a = ta ? A[size_t(k) * lda + i] : A[size_t(i) * lda + k];
        const double b = tb ? B[size_t(j) * ldb + k] : B[size_t(k) * ldb + j];
        s += a * b;
      }
      C[size_t(i) * ldc + j] = alpha * s + beta * double(C0[size_t(i) * ldc + j]);
    }
  return C;
}

// ---------------------------------------------------------------- 2. GEMM
void gemm_case(const char* label, bool ta, bool tb, int M, int N, int K, float alpha, int lda,
               int ldb, int ldc, float beta, uint64_t sa, uint64_t sb, uint64_t sc) {
  const size_t na = size_t(ta ? K : M) * lda, nb = size_t(tb ? N : K) * ldb,
               nc = size_t(M) * ldc;
  const auto A = randn(na, sa), B = randn(nb, sb);
  const auto C0 = sc ? randn(nc, sc) : std::vector<float>(nc, 0.0f);
  const auto Cd = gemm_d(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C0, ldc);
  std::vector<float> Cref;
  std::printf("%-34s", label);
  for (Fmt f : kFmts) {
    RoundingBackend be(f);
    std::vector<float> C = C0;
    be.gemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
    if (f == Fmt::FP32) {
      Cref = C;
      std::printf(" fp32-vs-exact %.2e |", nerr_region(C, Cd, M, N, ldc));
    } else {
      std::printf(" %s %.3e (vs exact %.3e) |", fmt_name(f), nerr_region(C, Cref, M, N, ldc),
                  nerr_region(C, Cd, M, N, ldc));
    }
  }
  std::printf("\n");
}
void run_gemm() {
  std::printf("== GEMM: nerr vs CPU fp32 (and vs double-exact) ==\n");
  const int M = 37, N = 53, K = 71, pad = 3;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (float beta : {0.0f, 0.3f}) {
        const int lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
        char lab[64];
        std::snprintf(lab, sizeof lab, "37x53x71 ta=%d tb=%d beta=%.1f", ta, tb, beta);
        gemm_case(lab, ta, tb, M, N, K, 0.7f, lda, ldb, ldc, beta, 1, 2, 3);
      }
  gemm_case("512x256x128 (N,T)", false, true, 512, 256, 128, 1.0f, 128, 128, 256, 0.0f, 4, 5, 0);
}

// ---------------------------------------------------------------- 3. attention
struct AttOut {
  std::vector<float> att, out, dqkv;
};
AttOut run_att(Backend<float>& be, const std::vector<float>& qkv, const std::vector<float>& dout,
               int B, int T, int H, int hd) {
  const size_t N = size_t(B) * T, Hh = size_t(H) * hd, natt = size_t(B) * H * T * T;
  float* q = be.alloc(N * 3 * Hh);
  float* o = be.alloc(N * Hh);
  float* a = be.alloc(natt);
  float* d = be.alloc(N * Hh);
  float* dq = be.alloc(N * 3 * Hh);
  float* s = be.alloc(natt);
  be.from_host(q, qkv.data(), qkv.size());
  be.from_host(d, dout.data(), dout.size());
  const auto dq0 = randn(N * 3 * Hh, 3);
  be.from_host(dq, dq0.data(), dq0.size());
  be.attention_fwd(o, a, q, B, T, H, hd);
  be.attention_bwd(dq, s, d, q, a, B, T, H, hd);
  AttOut r{std::vector<float>(natt), std::vector<float>(N * Hh), std::vector<float>(N * 3 * Hh)};
  be.to_host(r.att.data(), a, natt);
  be.to_host(r.out.data(), o, N * Hh);
  be.to_host(r.dqkv.data(), dq, N * 3 * Hh);
  for (float* p : {q, o, a, d, dq, s}) be.free(p);
  return r;
}
void run_attention() {
  std::printf("== Attention: nerr att / out / dqkv vs CPU fp32 ==\n");
  struct Shape { int B, T, H, hd; };
  auto cpu = make_cpu_backend<float>();
  auto cpud = make_cpu_backend<double>();
  for (const Shape sh : {Shape{2, 37, 3, 16}, Shape{5, 67, 2, 8}, Shape{1, 128, 4, 32}}) {
    const int B = sh.B, T = sh.T, H = sh.H, hd = sh.hd;
    const size_t N = size_t(B) * T, Hh = size_t(H) * hd, natt = size_t(B) * H * T * T;
    const auto qkv = randn(N * 3 * Hh, 1), dout = randn(N * Hh, 2);
    const AttOut ref = run_att(*cpu, qkv, dout, B, T, H, hd);
    // fp32 vs double (the CPU backend in double on the same float inputs)
    {
      std::vector<double> qd(qkv.begin(), qkv.end()), dd(dout.begin(), dout.end());
      double* q = cpud->alloc(qd.size()); double* o = cpud->alloc(N * Hh);
      double* a = cpud->alloc(natt); double* d = cpud->alloc(dd.size());
      double* dq = cpud->alloc(qd.size()); double* s = cpud->alloc(natt);
      cpud->from_host(q, qd.data(), qd.size());
      cpud->from_host(d, dd.data(), dd.size());
      cpud->attention_fwd(o, a, q, B, T, H, hd);
      cpud->attention_bwd(dq, s, d, q, a, B, T, H, hd);
      std::vector<double> ra(natt), ro(N * Hh), rd(qd.size());
      cpud->to_host(ra.data(), a, natt);
      cpud->to_host(ro.data(), o, N * Hh);
      cpud->to_host(rd.data(), dq, qd.size());
      for (double* p : {q, o, a, d, dq, s}) cpud->free(p);
      std::printf("B=%d T=%3d H=%d hd=%2d fp32-vs-double        att %.2e out %.2e dqkv %.2e\n",
                  B, T, H, hd, nerr(ref.att, ra), nerr(ref.out, ro), nerr(ref.dqkv, rd));
    }
    for (Fmt f : kRound) {
      auto qr = qkv, dr = dout;
      round_vec(qr, f);
      round_vec(dr, f);
      const AttOut a1 = run_att(*cpu, qr, dout, B, T, H, hd);  // qkv rounded
      const AttOut a2 = run_att(*cpu, qr, dr, B, T, H, hd);    // qkv and dout rounded
      AttOut a3;
      {
        BlasFmtScope sc(f);  // every attention GEMM operand rounded (incl. P, dS)
        a3 = run_att(*cpu, qkv, dout, B, T, H, hd);
      }
      std::printf("B=%d T=%3d H=%d hd=%2d %-7s in-round: att %.3e out %.3e dqkv %.3e "
                  "(+dout %.3e) | all-gemm: att %.3e out %.3e dqkv %.3e\n",
                  B, T, H, hd, fmt_name(f), nerr(a1.att, ref.att), nerr(a1.out, ref.out),
                  nerr(a1.dqkv, ref.dqkv), nerr(a2.dqkv, ref.dqkv), nerr(a3.att, ref.att),
                  nerr(a3.out, ref.out), nerr(a3.dqkv, ref.dqkv));
    }
  }
}

// ---------------------------------------------------------------- 4. training
// The parity test's own run (tests/common/parity_run.hpp), data seed ds, on `be`.
using TrainResult = parity::Run;
TrainResult train(Backend<float>& be, int steps, int ds, uint64_t perturb_stream) {
  auto dc = make_mpi_dc_comm<float>(MPI_COMM_NULL);
  return parity::train(be, *dc, steps, ds, perturb_stream);
}
void report(const char* what, int ds, const TrainResult& r, const TrainResult& ref) {
  double worst = 0;
  int ws = 0;
  for (size_t s = 0; s < ref.losses.size(); ++s) {
    const double d = std::abs(r.losses[s] - ref.losses[s]) / std::abs(ref.losses[s]);
    if (d > worst) worst = d, ws = int(s);
  }
  std::printf("ds=%d %-26s loss worst %.3e (step %2d) | update nerr %.3e | final-p nerr %.3e | "
              "loss %.4f -> %.4f\n",
              ds, what, worst, ws, nerr(r.update, ref.update), nerr(r.final_params, ref.final_params),
              r.losses.front(), r.losses.back());
}
void run_training(int nds) {
  std::printf("== Training, 20 steps ==\n");
  const int steps = 20;
  for (int ds = 0; ds < nds; ++ds) {
    auto cpu = make_cpu_backend<float>();
    const TrainResult ref = train(*cpu, steps, ds, 0);
    std::printf("ds=%d reference losses:", ds);
    for (double x : ref.losses) std::printf(" %.4f", x);
    std::printf("\n");
    for (uint64_t ps : {1ull, 2ull, 3ull}) {
      const TrainResult r = train(*cpu, steps, ds, ps);
      char lab[64];
      std::snprintf(lab, sizeof lab, "fp32 perturb 1e-7 #%llu", (unsigned long long)ps);
      report(lab, ds, r, ref);
    }
    for (double nz : {3e-7, 1e-6}) {
      g_noise = nz;
      BlasFmtScope sc(Fmt::NOISE);
      const TrainResult r = train(*cpu, steps, ds, 0);
      char lab[64];
      std::snprintf(lab, sizeof lab, "fp32 gemm-noise %.0e", nz);
      report(lab, ds, r, ref);
    }
    for (Fmt f : kRound) {
      RoundingBackend rb(f);
      const TrainResult r = train(rb, steps, ds, 0);
      char lab[64];
      std::snprintf(lab, sizeof lab, "%s be.gemm only", fmt_name(f));
      report(lab, ds, r, ref);
      BlasFmtScope sc(f);
      const TrainResult r2 = train(*cpu, steps, ds, 0);
      std::snprintf(lab, sizeof lab, "%s all gemms(+attn)", fmt_name(f));
      report(lab, ds, r2, ref);
    }
  }
}

int main(int argc, char** argv) {
  const int nds = argc > 1 ? std::atoi(argv[1]) : 3;
  run_gemm();
  run_attention();
  run_training(nds);
  return 0;
}
