// cuda_module.hpp — the CUDA backend as select.cpp sees it: a table of its entry points. The
// backend (cuda/) is built as a shared module, libstrait_cuda.so, that select.cpp opens with
// dlopen() only when a run asks for run.backend = "cuda" or "auto": a CPU run never loads
// libcudart, cuBLAS or NCCL, and a binary built with CUDA still starts on a machine without
// them. Executables that link the CUDA objects themselves — the GPU parity test, and the tests
// that link the CPU emulation of the kernels (tests/cuda_emu) — provide strait_cuda_module()
// directly, and select.cpp takes that one.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>

#include "backend/backend.hpp"
#include "backend/dc_comm.hpp"

namespace strait {

struct CudaModule {
  static constexpr int kVersion = 1;
  int version = kVersion;
  int (*device_count)() = nullptr;  // visible devices; 0 without a driver (never aborts)
  std::unique_ptr<Backend<float>> (*make_backend)(int device, const std::string& math) = nullptr;
  std::unique_ptr<DcComm<float>> (*make_dc_comm)(MPI_Comm dc_comm, Backend<float>& be) = nullptr;
};

}  // namespace strait

// Defined by cuda/module.cpp (in libstrait_cuda.so, or linked into a test).
extern "C" const strait::CudaModule* strait_cuda_module();
