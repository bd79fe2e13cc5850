// bench_allreduce.cpp — the reference a user would reach for: a plain MPI_Allreduce (sum of
// floats) of a gradient's size among the ranks of the job, one per datacenter under
// scripts/netns-run --mpi, so it crosses the same tc-shaped links as strait's sync. Prints and
// appends to a CSV: bytes, ranks, median and min milliseconds over the repeats (after 2 warm-up
// calls), each timed barrier → MPI_Allreduce → max over ranks.
// Usage: bench_allreduce BYTES REPEATS CSV LABEL
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 5) {
    if (rank == 0) std::fprintf(stderr, "usage: bench_allreduce BYTES REPEATS CSV LABEL\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const long long bytes = std::atoll(argv[1]);
  const int repeats = std::atoi(argv[2]);
  if (bytes < 4 || repeats < 1) {
    if (rank == 0) std::fprintf(stderr, "bench_allreduce: BYTES >= 4 and REPEATS >= 1\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const size_t n = static_cast<size_t>(bytes / 4);
  std::vector<float> in(n, 1.0f + rank), out(n);
  std::vector<double> times;
  for (int i = 0; i < repeats + 2; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double dt = MPI_Wtime() - t0, worst = 0;
    MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (i >= 2) times.push_back(worst * 1e3);
  }
  const float want = static_cast<float>(size * (size + 1)) / 2;
  long long wrong = 0;
  for (float x : out) wrong += x != want;
  std::sort(times.begin(), times.end());
  if (rank == 0) {
    const double med = times[times.size() / 2], lo = times.front();
    std::printf("MPI_Allreduce %lld bytes, %d ranks: median %.2f ms, min %.2f ms, %lld wrong\n",
                bytes, size, med, lo, wrong);
    if (std::FILE* f = std::fopen(argv[3], "a")) {
      std::fprintf(f, "%s,%lld,%d,%.3f,%.3f,%lld\n", argv[4], bytes, size, med, lo, wrong);
      std::fclose(f);
    }
  }
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
