// check.cuh — CUDA_CHECK, CUDA_CHECK_LAUNCH, CUBLAS_CHECK and NCCL_CHECK: the CUDA side of the
// one error-check family (src/core/check.hpp). Each reports the failed statement, the library's
// error name and text, file, line and rank through strait::fatal, which aborts the whole MPI job.
// NCCL_CHECK expands to ncclGetErrorString, so only files that include <nccl.h> may use it.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "core/check.hpp"

#define CUDA_CHECK(call)                                                                  \
  do {                                                                                    \
    const cudaError_t strait_cuda_rc_ = (call);                                           \
    if (strait_cuda_rc_ != cudaSuccess)                                                   \
      ::strait::fatal(__FILE__, __LINE__, std::string(#call) + " failed: " +              \
                      cudaGetErrorName(strait_cuda_rc_) + ": " +                          \
                      cudaGetErrorString(strait_cuda_rc_));                               \
  } while (0)

// After a kernel launch: catches bad launch configurations (not errors inside the kernel,
// which surface at the next synchronising call).
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#define CUBLAS_CHECK(call)                                                                \
  do {                                                                                    \
    const cublasStatus_t strait_cublas_rc_ = (call);                                      \
    if (strait_cublas_rc_ != CUBLAS_STATUS_SUCCESS)                                       \
      ::strait::fatal(__FILE__, __LINE__, std::string(#call) + " failed: " +              \
                      cublasGetStatusName(strait_cublas_rc_) + ": " +                     \
                      cublasGetStatusString(strait_cublas_rc_));                          \
  } while (0)

#define NCCL_CHECK(call)                                                                  \
  do {                                                                                    \
    const ncclResult_t strait_nccl_rc_ = (call);                                          \
    if (strait_nccl_rc_ != ncclSuccess)                                                   \
      ::strait::fatal(__FILE__, __LINE__, std::string(#call) + " failed: " +              \
                      ncclGetErrorString(strait_nccl_rc_));                               \
  } while (0)
