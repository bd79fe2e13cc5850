// clock.cpp — ping-pong clock offsets (see clock.hpp).
#include "topo/clock.hpp"

#include "core/check.hpp"

namespace strait {

ClockOffsets estimate_clock_offsets(MPI_Comm comm, int rounds) {
  int rank = 0, size = 1;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &size));
  constexpr int kTag = 77;
  ClockOffsets out;
  if (rank == 0) {
    out.all_offset_s.assign(size, 0.0);
    out.all_error_s.assign(size, 0.0);
    for (int r = 1; r < size; ++r) {
      double best_rtt = 1e300, best_off = 0;
      for (int k = 0; k < rounds; ++k) {
        const double t0 = MPI_Wtime();
        double tr = 0;
        MPI_CHECK(MPI_Send(&t0, 1, MPI_DOUBLE, r, kTag, comm));
        MPI_CHECK(MPI_Recv(&tr, 1, MPI_DOUBLE, r, kTag, comm, MPI_STATUS_IGNORE));
        const double t1 = MPI_Wtime();
        if (t1 - t0 < best_rtt) best_rtt = t1 - t0, best_off = (t0 + t1) / 2 - tr;
      }
      out.all_offset_s[r] = best_off;
      out.all_error_s[r] = best_rtt / 2;
      const double res[2] = {best_off, best_rtt / 2};
      MPI_CHECK(MPI_Send(res, 2, MPI_DOUBLE, r, kTag, comm));
    }
  } else {
    for (int k = 0; k < rounds; ++k) {
      double t0 = 0;
      MPI_CHECK(MPI_Recv(&t0, 1, MPI_DOUBLE, 0, kTag, comm, MPI_STATUS_IGNORE));
      const double tr = MPI_Wtime();
      MPI_CHECK(MPI_Send(&tr, 1, MPI_DOUBLE, 0, kTag, comm));
    }
    double res[2] = {0, 0};
    MPI_CHECK(MPI_Recv(res, 2, MPI_DOUBLE, 0, kTag, comm, MPI_STATUS_IGNORE));
    out.offset_s = res[0];
    out.error_s = res[1];
  }
  return out;
}

}  // namespace strait
