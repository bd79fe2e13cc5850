// trainer.hpp — one training run: sample → forward/backward (tensor parallel in the DC) →
// emulated load → gradient sync across DCs → Adam → measurements to the controller → trace,
// step after step (the phases are in run.hpp). train() is collective over `comm` and takes a validated Config; it is what `strait train`
// runs and what the MPI tests call in-process (any communicator, e.g. MPI_COMM_SELF).
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "config/config.hpp"
#include "train/stop.hpp"

namespace strait {

struct TrainOptions {
  std::string trace_path;       // empty: no trace
  std::string checkpoint_path;  // empty: no checkpoint
  bool force = false;           // overwrite an existing trace / checkpoint
  std::string resume;           // checkpoint to continue from (empty: fresh start)
  bool verbose = true;          // rank 0 prints header, progress and summary
  bool keep_final_params = false;  // rank 0 returns the full parameters of every expert
};

struct TrainOutcome {
  int exit_code = 0;                  // 0 done; 2 bad input; 3 stopped by SIGINT/SIGTERM; 4 failed
                                      // (non-finite loss, an output not written); the watchdog
                                      // aborts a stalled job with 5 (3 after a stop request)
  std::vector<double> losses;         // global-batch loss of every executed step (all ranks)
  int64_t first_step = 0;             // step of losses[0]
  int resplits = 0;                   // re-splits applied (this rank's DC or another)
  std::vector<std::vector<float>> final_params;  // rank 0, per expert, canonical full layout
};

TrainOutcome train(const Config& cfg, MPI_Comm comm, const TrainOptions& opt);

}  // namespace strait
