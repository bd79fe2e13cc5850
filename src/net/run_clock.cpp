// run_clock.cpp — rank 0's run start on the wall clock, for scripts/netns-run (run_clock.hpp).
#include "net/run_clock.hpp"

#include <mpi.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace strait {

void publish_run_clock(double t0) {
  const char* path = std::getenv("STRAIT_CLOCK_FILE");
  if (!path || !*path) return;
  // The wall clock at t0: now, less the MPI time elapsed since t0 (read back to back).
  const double wall_now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double epoch = wall_now - (MPI_Wtime() - t0);
  const std::string tmp = std::string(path) + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  bool ok = f && std::fprintf(f, "%.6f\n", epoch) > 0;
  if (f) ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path) != 0)
    throw std::runtime_error(std::string("STRAIT_CLOCK_FILE=") + path +
                             ": cannot write the run's start time (" + std::strerror(errno) +
                             "); scripts/netns-run needs it to apply the link schedules on time");
}

}  // namespace strait
