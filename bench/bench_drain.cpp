// bench_drain.cpp — can a sender see its link drain under tc? Rank 0 hands N chunks of C bytes
// to MPI_Isend at once, for rank 1 in the next datacenter (two ranks, one per DC, under
// scripts/netns-run --mpi); rank 0 records when each send request completed, rank 1 (receives
// posted ahead) when each chunk arrived, both from the barrier before the sends. If completions
// come at the link's pace, a tc sender has the sighting the software shaper's adaptive routes cut
// on (docs/paths.md, "Seeing the link drain under tc"); if the socket buffers swallow the chunks,
// they all complete at once and it has none. Prints, per repeat: how many chunks completed within
// 1 ms (swallowed), the last completion and the last arrival, and the median of arrival −
// completion (the barrier's exits differ by up to a one-way latency).
// Usage: bench_drain CHUNKS BYTES [REPEATS]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = argc > 1 ? std::atoi(argv[1]) : 0, c = argc > 2 ? std::atoi(argv[2]) : 0;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  if (size != 2 || n < 2 || c < 1 || repeats < 1) {
    if (rank == 0) std::fprintf(stderr, "usage: bench_drain CHUNKS>=2 BYTES>=1 [REPEATS] (2 ranks)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  std::vector<char> buf(static_cast<size_t>(n) * static_cast<size_t>(c), 1);
  std::vector<MPI_Request> q(static_cast<size_t>(n));
  std::vector<double> t(static_cast<size_t>(n)), other(static_cast<size_t>(n));
  for (int rep = 0; rep < repeats; ++rep) {
    if (rank == 1)
      for (int i = 0; i < n; ++i)
        MPI_Irecv(buf.data() + static_cast<size_t>(i) * c, c, MPI_BYTE, 0, i, MPI_COMM_WORLD, &q[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    if (rank == 0)
      for (int i = 0; i < n; ++i)
        MPI_Isend(buf.data() + static_cast<size_t>(i) * c, c, MPI_BYTE, 1, i, MPI_COMM_WORLD, &q[i]);
    std::vector<bool> done(static_cast<size_t>(n), false);
    for (int left = n; left > 0;)
      for (int i = 0; i < n; ++i) {
        if (done[i]) continue;
        int f = 0;
        MPI_Test(&q[i], &f, MPI_STATUS_IGNORE);
        if (f) done[i] = true, t[i] = MPI_Wtime() - t0, --left;
      }
    if (rank == 1) MPI_Send(t.data(), n, MPI_DOUBLE, 0, n, MPI_COMM_WORLD);
    if (rank == 0) {
      MPI_Recv(other.data(), n, MPI_DOUBLE, 1, n, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      std::vector<double> lag(static_cast<size_t>(n));
      int swallowed = 0;
      for (int i = 0; i < n; ++i) lag[i] = other[i] - t[i], swallowed += t[i] < 1e-3;
      std::nth_element(lag.begin(), lag.begin() + n / 2, lag.end());
      std::printf("bench_drain: %d x %d B: %d completed within 1 ms; last completion %.3f s, last "
                  "arrival %.3f s; arrival - completion median %.1f ms\n",
                  n, c, swallowed, *std::max_element(t.begin(), t.end()),
                  *std::max_element(other.begin(), other.end()), lag[n / 2] * 1e3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
