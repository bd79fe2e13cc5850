// dc_comm.cpp — DcComm over MPI_Allreduce on host memory (the CPU backend's partner).
#include "backend/dc_comm.hpp"

#include "core/check.hpp"

namespace strait {
namespace {

template <typename T>
class MpiDcComm final : public DcComm<T> {
 public:
  explicit MpiDcComm(MPI_Comm comm) : comm_(comm) {
    if (comm_ != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_size(comm_, &size_));
  }
  int size() const override { return size_; }
  void allreduce_sum(T* buf, size_t n) override {
    if (size_ <= 1 || n == 0) return;
    const MPI_Datatype dt = sizeof(T) == 4 ? MPI_FLOAT : MPI_DOUBLE;
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, buf, static_cast<int>(n), dt, MPI_SUM, comm_));
  }

 private:
  MPI_Comm comm_;
  int size_ = 1;
};

}  // namespace

template <typename T>
std::unique_ptr<DcComm<T>> make_mpi_dc_comm(MPI_Comm comm) {
  return std::make_unique<MpiDcComm<T>>(comm);
}
template std::unique_ptr<DcComm<float>> make_mpi_dc_comm<float>(MPI_Comm);
template std::unique_ptr<DcComm<double>> make_mpi_dc_comm<double>(MPI_Comm);

}  // namespace strait
