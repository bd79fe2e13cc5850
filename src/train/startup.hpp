// startup.hpp — what happens before the first step: the checks that can refuse a run (decided
// by rank 0 and agreed by every rank, so that bad input exits 2 everywhere and nothing hangs),
// the trace's run metadata, and the header a run prints.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "data/corpus.hpp"
#include "topo/topology.hpp"
#include "trace/checkpoint.hpp"
#include "trace/output_lock.hpp"
#include "trace/trace.hpp"
#include "train/trainer.hpp"

namespace strait {

// Rank 0 only: why the run may not start (empty: it may). First claims the trace and checkpoint
// paths (OutputLock, into `locks`: hold them for the run's life), so that nothing another live
// run holds is looked at, let alone replaced. Reads the --resume checkpoint into `ck` and checks
// it against the config's model, datacenters and steps, and its splits and batch shares against
// the config's rules.
std::string check_startup(const Config& cfg, const TrainOptions& opt, Checkpoint& ck,
                          std::vector<std::unique_ptr<OutputLock>>& locks);

// Rank 0: the run's trace — the trace a resumed run continues when it is there and is this run's
// (TraceWriter's continuing constructor), else a new one. check_startup has allowed either.
std::unique_ptr<TraceWriter> open_trace(const TrainOptions& opt, const RunMeta& meta,
                                        int64_t start_step);

// Broadcasts rank 0's message (empty = fine) to every rank of topo.world.
std::string agree(const Topology& t, std::string msg);

// Host name of every world rank (filled on rank 0; collective).
std::vector<std::string> gather_hostnames(const Topology& t);
// Each rank's string (at most 63 bytes) on rank 0, in world-rank order; empty elsewhere.
std::vector<std::string> gather_rank_strings(const Topology& t, const std::string& s);

RunMeta make_run_meta(const Config& cfg, const Topology& t, const Corpus& corpus,
                      const std::vector<std::string>& hosts,
                      const std::vector<std::string>& backends, const std::string& resumed_from);

// Rank 0's header: version, model, corpus and its entropy, rank→DC map, policies.
void print_header(const Config& cfg, const Topology& t, const Corpus& corpus,
                  const std::vector<std::string>& hosts, const std::vector<std::string>& backends,
                  const std::vector<std::vector<double>>& splits, const std::vector<double>& shares,
                  const std::string& sync_strategy, const TrainOptions& opt, int64_t start_step,
                  int blas_threads);

}  // namespace strait
