// cuda_backend.hpp — the entry points of the CUDA backend (cuda/), for src/backend/select.cpp.
// No CUDA header appears here, so host-only code can include it; everything CUDA stays in the
// .cu files. Only compiled in when the build has STRAIT_HAVE_CUDA=1.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>

#include "backend/backend.hpp"
#include "backend/dc_comm.hpp"

namespace strait {

// Visible CUDA devices; 0 when there is no driver or no device (never aborts).
int cuda_device_count();

// A Backend<float> on `device`: a compute stream, a sync stream for inter-datacenter staging,
// cuBLAS GEMMs with the compute type `math` names ("tf32", "bf16" or "fp32": run.gpu_math).
std::unique_ptr<Backend<float>> make_cuda_backend(int device, const std::string& math);

// Sum-reductions inside one datacenter over device buffers of `be` (a CUDA backend).
// dc_comm == MPI_COMM_NULL or a communicator of size 1: a no-op comm that makes no MPI call.
// Otherwise NCCL (unique id broadcast from the DC's rank 0 over dc_comm), enqueued on be's
// compute stream so that it is ordered with the kernels around it; when NCCL is absent from the
// build, or two ranks of the DC share one GPU (NCCL refuses that), the reduction is staged
// through host memory and MPI_Allreduce. Collective over dc_comm. be must outlive the comm.
std::unique_ptr<DcComm<float>> make_nccl_dc_comm(MPI_Comm dc_comm, Backend<float>& be);

// The compute stream (a cudaStream_t) and the device of a backend made by make_cuda_backend;
// abort the job for any other backend.
void* cuda_compute_stream(Backend<float>& be);
int cuda_device(Backend<float>& be);

// Host↔device copies a CUDA backend has issued since it was made (device-to-device copies not
// counted; nor are the staged DcComm's, which it issues itself): how the parity test checks
// what a training step copies.
struct CudaCopyCounts {
  long long h2d_calls = 0, h2d_bytes = 0, d2h_calls = 0, d2h_bytes = 0;
};
CudaCopyCounts cuda_copy_counts(Backend<float>& be);

}  // namespace strait
