// select.cpp — backend choice (the CUDA edge on the host side).
#include "backend/select.hpp"

#include <stdexcept>

#ifndef STRAIT_HAVE_CUDA
#error "STRAIT_HAVE_CUDA must be defined to 0 or 1 by the build"
#endif
#include "core/check.hpp"
#if STRAIT_HAVE_CUDA
#include "cuda_backend.hpp"  // cuda/ is on the include path when the CUDA backend is built
#endif

namespace strait {

int cuda_devices() {
#if STRAIT_HAVE_CUDA
  return cuda_device_count();
#else
  return 0;
#endif
}

ComputeBackend make_compute_backend(const std::string& kind, const std::string& gpu_math,
                                    MPI_Comm dc_comm, int node_rank) {
  ComputeBackend out;
  const bool want_cuda = kind == "cuda" || (kind == "auto" && cuda_devices() > 0);
  if (want_cuda) {
#if STRAIT_HAVE_CUDA
    const int n = cuda_devices();
    if (n == 0) throw std::runtime_error("run.backend = \"cuda\" but no CUDA device is visible");
    const int dev = node_rank % n;
    out.be = make_cuda_backend(dev, gpu_math);
    out.dc = make_nccl_dc_comm(dc_comm, *out.be);
    out.name = "cuda";
    return out;
#else
    (void)node_rank;
    (void)gpu_math;
    throw std::runtime_error("run.backend = \"cuda\" but this build has no CUDA backend "
                             "(nvcc was not found at configure time)");
#endif
  }
  out.be = make_cpu_backend<float>();
  out.dc = make_mpi_dc_comm<float>(dc_comm);
  out.name = "cpu";
  return out;
}

int node_rank(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int r = 0;
  MPI_CHECK(MPI_Comm_rank(node, &r));
  MPI_CHECK(MPI_Comm_free(&node));
  return r;
}

}  // namespace strait
