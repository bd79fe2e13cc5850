// emu.cpp — the emulator's scheduler (cooperative fibers per block), CUDA runtime and cuBLAS
// stand-ins. See emu.hpp for the model and its limits.
#include "emu.hpp"

#include <cblas.h>
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "include/cublas_v2.h"
#include "include/cuda_runtime.h"

namespace emu {

dim3 g_block_idx, g_block_dim, g_grid_dim;

namespace {

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "cuda emulator: %s\n", what.c_str());
  std::abort();
}

constexpr size_t kStackBytes = 128 * 1024;
constexpr int kMaxThreads = 1024;

// The context switch. On x86-64 a few instructions that save the callee-saved registers and
// swap stacks (glibc's swapcontext also saves the signal mask, a system call per switch, which
// made the emulated parity test 10x slower); elsewhere ucontext.
#if defined(__x86_64__)
extern "C" void emu_switch(void** save_sp, void* load_sp);
asm(R"(
  .text
  .globl emu_switch
  .type emu_switch,@function
emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size emu_switch, .-emu_switch
)");
struct Context {
  void* sp = nullptr;
};
#else
using Context = ucontext_t;
#endif

struct Fiber {
  Context ctx;
  dim3 tid;
  int warp = 0, lane = 0;
  bool done = false;
  int waiting = 0;  // 0 runnable, 1 block barrier, 2 warp barrier
  unsigned gen = 0; // the barrier generation it waits to see pass
};

struct Block {
  std::vector<Fiber> fibers;
  std::vector<std::unique_ptr<char[]>> stacks;
  Context sched;
  Fiber* cur = nullptr;
  const std::function<void()>* body = nullptr;
  int live = 0;                      // threads not yet returned
  int arrived = 0;                   // at the block barrier
  unsigned gen = 0;
  std::vector<int> warp_live, warp_arrived;
  std::vector<unsigned> warp_gen;
  float slots[kMaxThreads / 32][32];
  bool used_barrier = false;
};
Block g;
bool g_direct = false;   // plain calls: no fibers, no barriers allowed
dim3 g_direct_tid;
const char* g_site = "";
std::map<std::string, bool> g_barrier_free;  // launch site → its first block reached no barrier
long g_fiber_blocks = 0, g_direct_blocks = 0;

void release_if_complete(int warp) {
  if (g.arrived > 0 && g.arrived == g.live) g.arrived = 0, ++g.gen;
  if (g.warp_arrived[warp] > 0 && g.warp_arrived[warp] == g.warp_live[warp])
    g.warp_arrived[warp] = 0, ++g.warp_gen[warp];
}

void to_scheduler(Fiber* f);

void trampoline() {
  (*g.body)();
  Fiber* f = g.cur;
  f->done = true;
  --g.live;
  --g.warp_live[f->warp];
  release_if_complete(f->warp);
  to_scheduler(f);  // never resumed
}

#if defined(__x86_64__)
void to_scheduler(Fiber* f) { emu_switch(&f->ctx.sp, g.sched.sp); }
void to_fiber(Fiber* f) { emu_switch(&g.sched.sp, f->ctx.sp); }
void start_fiber(Fiber* f, char* stack) {
  // A fresh stack that emu_switch "returns" into trampoline from: six zeroed callee-saved
  // registers, trampoline's address, and a dummy return address so that trampoline starts with
  // the stack aligned as after a call (rsp = 8 mod 16).
  auto* top = reinterpret_cast<uintptr_t*>(
      (reinterpret_cast<uintptr_t>(stack) + kStackBytes) & ~uintptr_t(15));
  *--top = 0;
  *--top = reinterpret_cast<uintptr_t>(&trampoline);
  for (int i = 0; i < 6; ++i) *--top = 0;
  f->ctx.sp = top;
}
#else
void to_scheduler(Fiber* f) { swapcontext(&f->ctx, &g.sched); }
void to_fiber(Fiber* f) { swapcontext(&g.sched, &f->ctx); }
void start_fiber(Fiber* f, char* stack) {
  getcontext(&f->ctx);
  f->ctx.uc_stack.ss_sp = stack;
  f->ctx.uc_stack.ss_size = kStackBytes;
  f->ctx.uc_link = nullptr;
  makecontext(&f->ctx, trampoline, 0);
}
#endif

void wait_block() {
  Fiber* f = g.cur;
  ++g.arrived;
  if (g.arrived == g.live) {  // the last one in releases the others and goes on
    g.arrived = 0;
    ++g.gen;
    return;
  }
  f->waiting = 1;
  f->gen = g.gen;
  to_scheduler(f);
}

void wait_warp() {
  Fiber* f = g.cur;
  const int w = f->warp;
  ++g.warp_arrived[w];
  if (g.warp_arrived[w] == g.warp_live[w]) {
    g.warp_arrived[w] = 0;
    ++g.warp_gen[w];
    return;
  }
  f->waiting = 2;
  f->gen = g.warp_gen[w];
  to_scheduler(f);
}

void run_block_fibers(dim3 block) {
  const int n = static_cast<int>(block.x * block.y * block.z);
  if (n > kMaxThreads) die(std::string(g_site) + ": more than 1024 threads per block");
  if (n % 32 != 0 && n > 32) die(std::string(g_site) + ": block size not a multiple of 32");
  const int warps = (n + 31) / 32;
  g.fibers.assign(n, Fiber{});
  while (static_cast<int>(g.stacks.size()) < n) g.stacks.emplace_back(new char[kStackBytes]);
  g.live = n;
  g.arrived = 0;
  g.warp_live.assign(warps, 0);
  g.warp_arrived.assign(warps, 0);
  g.warp_gen.assign(warps, 0);
  for (int i = 0; i < n; ++i) {
    Fiber& f = g.fibers[i];
    f.tid = dim3(i % block.x, (i / block.x) % block.y, i / (block.x * block.y));
    f.warp = i / 32;
    f.lane = i % 32;
    ++g.warp_live[f.warp];
    start_fiber(&f, g.stacks[i].get());
  }
  int remaining = n;
  while (remaining > 0) {
    bool progress = false;
    for (int i = 0; i < n; ++i) {
      Fiber& f = g.fibers[i];
      if (f.done) continue;
      if (f.waiting == 1 && f.gen == g.gen) continue;
      if (f.waiting == 2 && f.gen == g.warp_gen[f.warp]) continue;
      f.waiting = 0;
      g.cur = &f;
      to_fiber(&f);
      g.cur = nullptr;
      progress = true;
      if (f.done) --remaining;
    }
    if (!progress) die(std::string(g_site) + ": deadlock (threads wait at a barrier others never reach)");
  }
}

}  // namespace

const dim3& thread_idx() { return g.cur ? g.cur->tid : g_direct_tid; }

void syncthreads() {
  if (g_direct) die(std::string(g_site) + ": __syncthreads in a block run without fibers");
  g.used_barrier = true;
  wait_block();
}

float shfl_xor(float v, int lane_mask) {
  if (g_direct) die(std::string(g_site) + ": warp shuffle in a block run without fibers");
  g.used_barrier = true;
  Fiber* f = g.cur;
  g.slots[f->warp][f->lane] = v;
  wait_warp();
  const float r = g.slots[f->warp][f->lane ^ lane_mask];
  wait_warp();  // nobody overwrites a slot before every lane has read it
  return r;
}

void launch(const char* site, dim3 grid, dim3 block, const std::function<void()>& body) {
  g_site = site;
  g_grid_dim = grid;
  g_block_dim = block;
  g.body = &body;
  const unsigned nb = grid.x * grid.y * grid.z;
  const unsigned nt = block.x * block.y * block.z;
  for (unsigned b = 0; b < nb; ++b) {
    g_block_idx = dim3(b % grid.x, (b / grid.x) % grid.y, b / (grid.x * grid.y));
    auto known = g_barrier_free.find(site);
    if (known != g_barrier_free.end() && known->second) {
      g_direct = true;
      for (unsigned t = 0; t < nt; ++t) {
        g_direct_tid = dim3(t % block.x, (t / block.x) % block.y, t / (block.x * block.y));
        body();
      }
      g_direct = false;
      ++g_direct_blocks;
    } else {
      g.used_barrier = false;
      run_block_fibers(block);
      if (known == g_barrier_free.end()) g_barrier_free[site] = !g.used_barrier;
      ++g_fiber_blocks;
    }
  }
}

void launch_stats(long* fiber_blocks, long* direct_blocks) {
  *fiber_blocks = g_fiber_blocks;
  *direct_blocks = g_direct_blocks;
}

}  // namespace emu

// ---------------------------------------------------------------- CUDA runtime

namespace {
char g_handles[4096];  // distinct addresses for streams and events
int g_next_handle = 0;
void* handle() { return &g_handles[g_next_handle++ % 4096]; }
}  // namespace

cudaError_t cudaGetDeviceCount(int* n) {
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaGetLastError() { return cudaSuccess; }
const char* cudaGetErrorName(cudaError_t e) {
  return e == cudaSuccess ? "cudaSuccess" : e == cudaErrorMemoryAllocation
                                               ? "cudaErrorMemoryAllocation"
                                               : "cudaErrorInvalidValue";
}
const char* cudaGetErrorString(cudaError_t e) { return cudaGetErrorName(e); }
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidValue; }
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int) {
  std::memset(p, 0, sizeof *p);
  std::strcpy(p->name, "strait CUDA emulator");
  std::memcpy(p->uuid.bytes, "strait-emulator!", 16);
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr, int) {
  *v = 4;  // multiprocessors: sizes the column reductions' grids
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t* s) {
  *s = static_cast<cudaStream_t>(handle());
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) { return cudaStreamCreate(s); }
cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) { return cudaSuccess; }
cudaError_t cudaEventCreate(cudaEvent_t* e) {
  *e = static_cast<cudaEvent_t>(handle());
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) { return cudaEventCreate(e); }
cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) {
  *ms = 0.0f;  // no timing here
  return cudaSuccess;
}
// Exactly `bytes` (256-aligned like cudaMalloc's): a kernel reading past the end of its buffer
// then reads past the end of a host allocation, which valgrind or a sanitizer reports.
cudaError_t cudaMalloc(void** p, size_t bytes) {
  *p = nullptr;
  return posix_memalign(p, 256, bytes ? bytes : 1) == 0 ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaMallocHost(void** p, size_t bytes) { return cudaMalloc(p, bytes); }
cudaError_t cudaFree(void* p) {
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaFreeHost(void* p) { return cudaFree(p); }
cudaError_t cudaMemset(void* p, int v, size_t bytes) {
  std::memset(p, v, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* p, int v, size_t bytes, cudaStream_t) {
  return cudaMemset(p, v, bytes);
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind,
                            cudaStream_t) {
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}

// ---------------------------------------------------------------- cuBLAS

namespace {
float round_operand(float x, cublasComputeType_t c) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7F800000u) == 0x7F800000u) return x;  // inf, nan
  if (c == CUBLAS_COMPUTE_32F_FAST_TF32) {
    u += 0x0FFFu + ((u >> 13) & 1u);
    u &= ~0x1FFFu;
  } else if (c == CUBLAS_COMPUTE_32F_FAST_16BF) {
    u += 0x7FFFu + ((u >> 16) & 1u);
    u &= 0xFFFF0000u;
  } else {
    return x;
  }
  std::memcpy(&x, &u, 4);
  return x;
}

// Column-major op(X) of rows × cols with leading dimension ld: copies the columns it occupies,
// rounded.
std::vector<float> rounded(const float* X, bool trans, int rows, int cols, int ld,
                           cublasComputeType_t c) {
  const int stored_cols = trans ? rows : cols, stored_rows = trans ? cols : rows;
  std::vector<float> out(stored_cols > 0 ? static_cast<size_t>(stored_cols - 1) * ld + stored_rows : 0);
  for (int j = 0; j < stored_cols; ++j)
    for (int i = 0; i < stored_rows; ++i)
      out[static_cast<size_t>(j) * ld + i] = round_operand(X[static_cast<size_t>(j) * ld + i], c);
  return out;
}

cublasStatus_t gemm_one(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                        float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                        float* C, int ldc, cublasComputeType_t compute) {
  if (m < 0 || n < 0 || k < 0) return CUBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  const bool at = ta == CUBLAS_OP_T, bt = tb == CUBLAS_OP_T;
  // cuBLAS's documented checks on leading dimensions (column-major).
  if (lda < std::max(1, at ? k : m) || ldb < std::max(1, bt ? n : k) || ldc < std::max(1, m))
    return CUBLAS_STATUS_INVALID_VALUE;
  const auto Ar = rounded(A, at, m, k, lda, compute);
  const auto Br = rounded(B, bt, k, n, ldb, compute);
  cblas_sgemm(CblasColMajor, at ? CblasTrans : CblasNoTrans, bt ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, k ? Ar.data() : A, lda, k ? Br.data() : B, ldb, beta, C, ldc);
  return CUBLAS_STATUS_SUCCESS;
}
}  // namespace

struct cublasContext {};
cublasStatus_t cublasCreate(cublasHandle_t* h) {
  *h = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy(cublasHandle_t h) {
  delete h;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream(cublasHandle_t, cudaStream_t) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasSetWorkspace(cublasHandle_t, void*, size_t) { return CUBLAS_STATUS_SUCCESS; }
const char* cublasGetStatusName(cublasStatus_t s) {
  return s == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS_INVALID_VALUE";
}
const char* cublasGetStatusString(cublasStatus_t s) { return cublasGetStatusName(s); }
cublasStatus_t cublasGemmEx(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m,
                            int n, int k, const void* alpha, const void* A, cudaDataType at,
                            int lda, const void* B, cudaDataType bt, int ldb, const void* beta,
                            void* C, cudaDataType ct, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t) {
  if (at != CUDA_R_32F || bt != CUDA_R_32F || ct != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
  return gemm_one(ta, tb, m, n, k, *static_cast<const float*>(alpha),
                  static_cast<const float*>(A), lda, static_cast<const float*>(B), ldb,
                  *static_cast<const float*>(beta), static_cast<float*>(C), ldc, compute);
}
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta,
                                          cublasOperation_t tb, int m, int n, int k,
                                          const void* alpha, const void* A, cudaDataType at,
                                          int lda, long long sa, const void* B, cudaDataType bt,
                                          int ldb, long long sb, const void* beta, void* C,
                                          cudaDataType ct, int ldc, long long sc, int batch,
                                          cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  if (batch < 0) return CUBLAS_STATUS_INVALID_VALUE;
  for (int i = 0; i < batch; ++i) {
    const cublasStatus_t s = cublasGemmEx(
        h, ta, tb, m, n, k, alpha, static_cast<const float*>(A) + i * sa, at, lda,
        static_cast<const float*>(B) + i * sb, bt, ldb, beta, static_cast<float*>(C) + i * sc, ct,
        ldc, compute, algo);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
  }
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasGemmBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                   int m, int n, int k, const void* alpha,
                                   const void* const Aarray[], cudaDataType at, int lda,
                                   const void* const Barray[], cudaDataType bt, int ldb,
                                   const void* beta, void* const Carray[], cudaDataType ct,
                                   int ldc, int batch, cublasComputeType_t compute,
                                   cublasGemmAlgo_t algo) {
  if (batch < 0) return CUBLAS_STATUS_INVALID_VALUE;
  for (int i = 0; i < batch; ++i) {  // the pointer arrays are "device" memory: host memory here
    const cublasStatus_t s = cublasGemmEx(h, ta, tb, m, n, k, alpha, Aarray[i], at, lda,
                                          Barray[i], bt, ldb, beta, Carray[i], ct, ldc, compute,
                                          algo);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
  }
  return CUBLAS_STATUS_SUCCESS;
}
