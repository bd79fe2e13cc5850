// cmd_train.cpp — `strait train`: MPI start-up, collective config check, the run, the exit code.
// Every rank loads the config; if any rank fails, all agree and return 2 with the message printed
// once (rank 0), before any output file exists.
#include <mpi.h>

#include <cstdio>
#include <filesystem>

#include "cli/commands.hpp"
#include "config/config.hpp"
#include "core/check.hpp"
#include "train/trainer.hpp"
#include "validate/validate.hpp"

namespace strait {

int cmd_train(const TrainArgs& args) {
  int provided = 0;
  // THREAD_MULTIPLE: an overlap scheduler syncs one expert from a second thread while the next
  // expert computes; each expert has its own communicators (sync/sync.hpp).
  MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided));
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  Config cfg;
  std::string err;
  try {
    cfg = load_valid_config(args.config, args.sets);
    check_world_size(cfg, size);
  } catch (const ConfigError& e) {
    err = e.what();
  }
  int bad = err.empty() ? 0 : 1, any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_bad) {
    // Report from the lowest failing rank (usually rank 0: they all read the same file).
    int first = bad ? rank : size, lowest = size;
    MPI_Allreduce(&first, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == lowest) std::fprintf(stderr, "strait: config error: %s\n", err.c_str());
    MPI_Finalize();
    return 2;
  }
  if (rank == 0 && provided < MPI_THREAD_MULTIPLE)
    std::fprintf(stderr, "strait: note: MPI gives thread level %d < MULTIPLE; overlap schedulers "
                 "will run sequentially\n", provided);

  TrainOptions opt;
  opt.trace_path = args.out.empty() ? cfg.trace.path : args.out;
  opt.checkpoint_path = cfg.checkpoint.path;
  if (!args.out.empty()) {  // keep the checkpoint next to an explicitly placed trace
    std::filesystem::path p(args.out);
    opt.checkpoint_path = (p.parent_path() / p.stem()).string() + ".ckpt.h5";
  }
  opt.force = args.force;
  opt.resume = args.resume;
  install_stop_handlers();
  const TrainOutcome res = train(cfg, MPI_COMM_WORLD, opt);
  MPI_Finalize();
  return res.exit_code;
}

}  // namespace strait
