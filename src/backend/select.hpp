// select.hpp — picks the backend a run computes on: "cpu", "cuda" or "auto" (CUDA when a device
// is visible). The only file above cuda/ that mentions CUDA is select.cpp, which opens the CUDA
// backend's shared module (cuda_module.hpp) only for "cuda" and "auto": a CPU run loads no CUDA
// library. The rest of the code sees a Backend and a DcComm.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>

#include "backend/backend.hpp"
#include "backend/dc_comm.hpp"

namespace strait {

struct ComputeBackend {
  std::unique_ptr<Backend<float>> be;
  std::unique_ptr<DcComm<float>> dc;  // reductions inside the datacenter on be's memory
  std::string name;                   // "cpu" or "cuda"
};

// kind: "cpu" | "cuda" | "auto". gpu_math: "tf32" | "bf16" | "fp32", the CUDA GEMM compute type
// (the CPU backend computes in FP32 and ignores it). dc_comm: the DC's communicator
// (MPI_COMM_NULL for one rank). node_rank, the rank's index among the ranks on its machine,
// picks the GPU (node_rank mod visible devices), so that datacenters emulated on one machine
// spread over its GPUs. Throws std::runtime_error when "cuda" is asked for and there is no CUDA
// build or no visible device.
ComputeBackend make_compute_backend(const std::string& kind, const std::string& gpu_math,
                                    MPI_Comm dc_comm, int node_rank);

// The calling rank's index among the ranks of `comm` on the same machine. Collective over comm.
int node_rank(MPI_Comm comm);

// Number of visible CUDA devices (0 without a CUDA build, or when its module or the CUDA
// libraries cannot be loaded). The first call opens the module.
int cuda_devices();
// Why CUDA cannot be used here ("" when a device is visible): no module, a library it needs
// missing (the loader's message), or no device.
std::string cuda_unavailable();

// Sets this rank's OpenBLAS threads (the CPU backend's GEMMs): `requested` (run.blas_threads), or
// with 0 the rank's share of its node, max(1, usable cores / ranks on the node) — usable cores as
// the rank's CPU affinity allows, so a launcher's binding is respected. Collective over `comm`
// (to count the ranks on each node). Returns the threads in force (openblas_get_num_threads).
// Each rank sets its own: a plain `mpirun strait train` no longer runs one OpenBLAS thread per
// core in every rank.
int pin_blas_threads(int requested, MPI_Comm comm);

}  // namespace strait
