// emu.hpp — runs the CUDA backend's kernels on the CPU, so that CI (which has nvcc but no GPU)
// executes their logic instead of only compiling it. gen_emu_source.py (next to this file) rewrites each
// `kernel<<<grid, block, shm, stream>>>(args);` of a .cu file into
// `::emu::launch("site", grid, block, [&] { kernel(args); });`, and the headers in include/
// stand in for the CUDA runtime and cuBLAS (host memory, synchronous copies, GEMMs through
// OpenBLAS in column-major order with the compute type's operand rounding).
//
// Execution model: blocks run one after another; the threads of a block run as cooperative
// fibers on one OS thread, switching only at __syncthreads() and warp shuffles, which are
// barriers here (a shuffle is a write of the lane's value, a warp barrier, a read of the
// partner's, a second barrier). __shared__ becomes `static`, which is block-shared memory
// because one block runs at a time. A launch site whose first block reaches no barrier runs its
// other blocks as plain calls (fast); a barrier reached in that mode aborts with the site's name.
// What this cannot show: anything about real concurrency — races between threads or streams,
// memory ordering, warp-divergence hazards, timing. Those need a GPU (scripts/gpu-check.sh).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct float2 {
  float x, y;
};
inline float2 make_float2(float a, float b) { return float2{a, b}; }

namespace emu {
extern dim3 g_block_idx, g_block_dim, g_grid_dim;
const dim3& thread_idx();
void syncthreads();
float shfl_xor(float v, int lane_mask);
// Runs body once per thread of every block of grid × block.
void launch(const char* site, dim3 grid, dim3 block, const std::function<void()>& body);
// Launch sites run so far and how (for the test's report): fibers, plain calls.
void launch_stats(long* fiber_blocks, long* direct_blocks);
}  // namespace emu

#define threadIdx (::emu::thread_idx())
#define blockIdx (::emu::g_block_idx)
#define blockDim (::emu::g_block_dim)
#define gridDim (::emu::g_grid_dim)
#define __global__
#define __device__ inline
#define __host__
#define __forceinline__
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ static
#define __syncthreads() ::emu::syncthreads()
#define __shfl_xor_sync(mask, v, o) ::emu::shfl_xor((v), (o))

using std::max;
using std::min;

// One OS thread runs every emulated thread, so a plain add is atomic.
inline float atomicAdd(float* p, float v) {
  const float old = *p;
  *p = old + v;
  return old;
}
