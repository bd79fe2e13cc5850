// module.cpp — the CUDA backend's entry points as one table (backend/cuda_module.hpp), the
// symbol select.cpp looks up in libstrait_cuda.so. Plain C++: the emulated build of the kernels
// (tests/cuda_emu) compiles it unchanged.
#include "backend/cuda_module.hpp"
#include "cuda_backend.hpp"

extern "C" const strait::CudaModule* strait_cuda_module() {
  static const strait::CudaModule m = [] {
    strait::CudaModule t;
    t.device_count = strait::cuda_device_count;
    t.make_backend = strait::make_cuda_backend;
    t.make_dc_comm = strait::make_nccl_dc_comm;
    return t;
  }();
  return &m;
}
