// check.hpp — the one error-check family of strait.
// Every failed MPI / HDF5 / BLAS-side / CUDA call and every violated invariant goes through
// strait::fatal(), which prints the failed statement, file, line and world rank, then calls
// MPI_Abort so that no other rank is left hanging. Backends add their own macros (CUDA_CHECK,
// NCCL_CHECK in cuda/) on top of fatal().
#pragma once
#include <string>

namespace strait {

// Prints "strait: rank R: file:line: what" to stderr and aborts the whole MPI job (exit code 1).
// Safe to call before MPI_Init or after MPI_Finalize (then it exits the process).
[[noreturn]] void fatal(const char* file, int line, const std::string& what);

// World rank of this process, or -1 when MPI is not initialised.
int world_rank();

}  // namespace strait

#define STRAIT_FATAL(msg) ::strait::fatal(__FILE__, __LINE__, (msg))

// Invariant check: aborts the job when cond is false.
#define STRAIT_CHECK(cond, msg)                                                        \
  do {                                                                                 \
    if (!(cond)) ::strait::fatal(__FILE__, __LINE__, std::string("check failed: ") +  \
                                 #cond + ": " + (msg));                                \
  } while (0)

// MPI call check: aborts with the MPI error string.
#define MPI_CHECK(call)                                                                \
  do {                                                                                 \
    int strait_mpi_rc_ = (call);                                                       \
    if (strait_mpi_rc_ != MPI_SUCCESS) {                                               \
      char strait_mpi_msg_[512]; int strait_mpi_len_ = 0;                              \
      MPI_Error_string(strait_mpi_rc_, strait_mpi_msg_, &strait_mpi_len_);             \
      ::strait::fatal(__FILE__, __LINE__, std::string(#call) + " failed: " +           \
                      std::string(strait_mpi_msg_, strait_mpi_len_));                  \
    }                                                                                  \
  } while (0)

// HDF5 call check: HDF5 returns negative ids / herr_t on failure.
#define H5_CHECK(call)                                                                 \
  ([&]() {                                                                             \
    auto strait_h5_rc_ = (call);                                                       \
    if (strait_h5_rc_ < 0) ::strait::fatal(__FILE__, __LINE__, std::string(#call) +    \
                                           " failed (HDF5)");                          \
    return strait_h5_rc_;                                                              \
  }())
