// check.cpp — fatal(): report and take the whole MPI job down.
#include "core/check.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>

namespace strait {

int world_rank() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return -1;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

void fatal(const char* file, int line, const std::string& what) {
  const int r = world_rank();
  std::fprintf(stderr, "strait: rank %d: %s:%d: %s\n", r, file, line, what.c_str());
  std::fflush(stderr);
  if (r >= 0) MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

}  // namespace strait
