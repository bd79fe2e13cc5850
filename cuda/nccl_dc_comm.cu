// nccl_dc_comm.cu — DcComm<float> over device buffers: the CUDA backend's partner for the
// tensor-parallel reductions inside one datacenter (src/backend/dc_comm.hpp).
// - One rank (MPI_COMM_NULL or size 1): does nothing, makes no MPI or CUDA call.
// - NCCL: the DC's rank 0 makes the unique id, MPI_Bcast hands it to the others, then
//   ncclCommInitRank; ncclAllReduce(sum) runs in place on the backend's compute stream, so it
//   is ordered with the kernels around it without a sync.
// - Staged: when the build has no NCCL, or two ranks of the DC share one GPU (NCCL refuses a
//   communicator like that; a single-GPU test machine running 2 ranks per DC is the case), the
//   buffer goes device → pinned host → MPI_Allreduce → device.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "check.cuh"
#include "cuda_backend.hpp"

#ifndef STRAIT_HAVE_NCCL
#error "STRAIT_HAVE_NCCL must be defined to 0 or 1 by the build"
#endif
#if STRAIT_HAVE_NCCL
#include <nccl.h>
#endif

namespace strait {
namespace {

class NullDcComm final : public DcComm<float> {
 public:
  int size() const override { return 1; }
  void allreduce_sum(float*, size_t) override {}
};

class StagedDcComm final : public DcComm<float> {
 public:
  StagedDcComm(MPI_Comm comm, cudaStream_t stream) : comm_(comm), stream_(stream) {
    MPI_CHECK(MPI_Comm_size(comm_, &size_));
  }
  ~StagedDcComm() override {
    if (host_) (void)cudaFreeHost(host_);
  }
  int size() const override { return size_; }
  void allreduce_sum(float* buf, size_t n) override {
    if (n == 0) return;
    STRAIT_CHECK(n <= static_cast<size_t>(INT32_MAX), "staged allreduce of more than 2^31 floats");
    if (n > cap_) {
      if (host_) CUDA_CHECK(cudaFreeHost(host_));
      CUDA_CHECK(cudaMallocHost(&host_, n * sizeof(float)));
      cap_ = n;
    }
    const cudaStream_t s = stream_;
    CUDA_CHECK(cudaMemcpyAsync(host_, buf, n * sizeof(float), cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, host_, static_cast<int>(n), MPI_FLOAT, MPI_SUM, comm_));
    CUDA_CHECK(cudaMemcpyAsync(buf, host_, n * sizeof(float), cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaStreamSynchronize(s));  // host_ is reused by the next call
  }

 private:
  MPI_Comm comm_;
  cudaStream_t stream_;  // the backend's compute stream
  int size_ = 1;
  float* host_ = nullptr;  // (cap_) pinned staging buffer
  size_t cap_ = 0;
};

#if STRAIT_HAVE_NCCL
class NcclDcComm final : public DcComm<float> {
 public:
  NcclDcComm(MPI_Comm comm, int device, cudaStream_t stream) : stream_(stream) {
    int rank = 0;
    MPI_CHECK(MPI_Comm_size(comm, &size_));
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    ncclUniqueId id;
    if (rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_CHECK(MPI_Bcast(&id, static_cast<int>(sizeof(id)), MPI_BYTE, 0, comm));
    CUDA_CHECK(cudaSetDevice(device));
    NCCL_CHECK(ncclCommInitRank(&nccl_, size_, id, rank));
  }
  ~NcclDcComm() override {
    if (nccl_) (void)ncclCommDestroy(nccl_);
  }
  int size() const override { return size_; }
  void allreduce_sum(float* buf, size_t n) override {
    if (n == 0) return;
    NCCL_CHECK(ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, nccl_, stream_));
  }

 private:
  cudaStream_t stream_;  // the backend's compute stream
  int size_ = 1;
  ncclComm_t nccl_ = nullptr;
};
#endif

// True when two ranks of comm report the same GPU (by UUID). Collective over comm.
bool gpu_shared(MPI_Comm comm, int device, int size) {
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  constexpr int kUuid = static_cast<int>(sizeof(prop.uuid.bytes));
  std::vector<char> all(static_cast<size_t>(size) * kUuid);
  MPI_CHECK(MPI_Allgather(prop.uuid.bytes, kUuid, MPI_BYTE, all.data(), kUuid, MPI_BYTE, comm));
  for (int i = 0; i < size; ++i)
    for (int j = i + 1; j < size; ++j)
      if (std::memcmp(&all[static_cast<size_t>(i) * kUuid], &all[static_cast<size_t>(j) * kUuid],
                      kUuid) == 0)
        return true;
  return false;
}

}  // namespace

std::unique_ptr<DcComm<float>> make_nccl_dc_comm(MPI_Comm dc_comm, Backend<float>& be) {
  if (dc_comm == MPI_COMM_NULL) return std::make_unique<NullDcComm>();
  int size = 1, rank = 0;
  MPI_CHECK(MPI_Comm_size(dc_comm, &size));
  if (size <= 1) return std::make_unique<NullDcComm>();
  MPI_CHECK(MPI_Comm_rank(dc_comm, &rank));
  const int device = cuda_device(be);
  const auto stream = static_cast<cudaStream_t>(cuda_compute_stream(be));
  const bool shared = gpu_shared(dc_comm, device, size);
#if STRAIT_HAVE_NCCL
  if (!shared) return std::make_unique<NcclDcComm>(dc_comm, device, stream);
  if (rank == 0)
    std::fprintf(stderr, "strait: ranks of one datacenter share a GPU; tensor-parallel "
                         "reductions go through host memory and MPI instead of NCCL\n");
#else
  (void)shared;
  if (rank == 0)
    std::fprintf(stderr, "strait: built without NCCL; tensor-parallel reductions go through "
                         "host memory and MPI\n");
#endif
  return std::make_unique<StagedDcComm>(dc_comm, stream);
}

}  // namespace strait
