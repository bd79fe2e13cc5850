// trainer.cpp — train(): start, steps, finish (train/run.hpp has the phases). A refused start
// (bad input, decided by rank 0 and agreed by all) returns exit status 2 on every rank; the
// Run's members release everything they hold on every path.
#include "train/trainer.hpp"

#include <cstdio>

#include "train/run.hpp"

namespace strait {

TrainOutcome train(const Config& cfg, MPI_Comm comm, const TrainOptions& opt) {
  std::unique_ptr<Run> run;
  try {
    run = std::make_unique<Run>(cfg, comm, opt);
  } catch (const Refused& e) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) std::fprintf(stderr, "strait: %s\n", e.what());
    TrainOutcome out;
    out.exit_code = 2;
    return out;
  }
  const bool completed = run->steps();
  return run->finish(!completed);
}

}  // namespace strait
