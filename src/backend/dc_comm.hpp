// dc_comm.hpp — reductions among the ranks of one datacenter (tensor parallelism).
// The model calls allreduce_sum where the Megatron math needs it (after a row-parallel matmul
// forward, before a column-parallel matmul backward). CPU: MPI over host buffers (dc_comm.cpp);
// CUDA: NCCL over device buffers (cuda/). A DcComm of size 1 does nothing.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <memory>

namespace strait {

template <typename T>
class DcComm {
 public:
  virtual ~DcComm() = default;
  virtual int size() const = 0;
  virtual void allreduce_sum(T* buf, size_t n) = 0;
};

// comm may be MPI_COMM_NULL for a single rank (then no MPI call is ever made).
template <typename T>
std::unique_ptr<DcComm<T>> make_mpi_dc_comm(MPI_Comm comm);

}  // namespace strait
