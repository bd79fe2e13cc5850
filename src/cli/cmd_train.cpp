// cmd_train.cpp — `strait train`: MPI start-up, collective config check, the run, the exit code.
// Every rank loads the config; if any rank fails, all agree and return 2 with the message printed
// once (rank 0), before any output file exists. Then rank 0 judges where the run writes (the
// same host checks as `strait validate`) and everyone agrees on that too.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "cli/commands.hpp"
#include "config/config.hpp"
#include "config/limits.hpp"
#include "core/check.hpp"
#include "train/trainer.hpp"
#include "validate/host.hpp"
#include "validate/validate.hpp"

namespace strait {

namespace {

// A launcher that cannot see the ranks' exit status (mpirun, when it is signalled itself,
// exits 1 whatever they did) may ask rank 0 for it: scripts/mpirun-local sets this variable.
void record_exit_status(int rank, int code) {
  const char* path = std::getenv("STRAIT_STATUS_FILE");
  if (rank != 0 || !path || !*path) return;
  if (std::FILE* f = std::fopen(path, "w")) {
    std::fprintf(f, "%d\n", code);
    std::fclose(f);
  }
}

// Rank 0's string on every rank of the world.
std::string bcast_string(std::string s) {
  int len = static_cast<int>(s.size());
  MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD));
  s.resize(static_cast<size_t>(len));
  if (len > 0) MPI_CHECK(MPI_Bcast(s.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD));
  return s;
}

}  // namespace

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
    record_exit_status(rank, 2);
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
  // Where the run writes, judged where it is written (rank 0) before anything exists.
  const std::string host =
      bcast_string(rank == 0 ? limits::join_errors(host_problems(cfg, opt.trace_path,
                                                                 opt.checkpoint_path,
                                                                 args.out.empty() ? "" : "--out"))
                             : "");
  if (!host.empty()) {
    if (rank == 0) std::fprintf(stderr, "strait: %s\n", host.c_str());
    record_exit_status(rank, 2);
    MPI_Finalize();
    return 2;
  }
  install_stop_handlers();
  const TrainOutcome res = train(cfg, MPI_COMM_WORLD, opt);
  record_exit_status(rank, res.exit_code);
  MPI_Finalize();
  return res.exit_code;
}

}  // namespace strait
