// startup.cpp — start-up checks, run metadata and the header (see startup.hpp).
#include "train/startup.hpp"

#include <unistd.h>

#include <climits>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "backend/select.hpp"
#include "config/limits.hpp"
#include "core/apportion.hpp"
#include "core/check.hpp"
#include "core/version.hpp"
#include "model/layout.hpp"

namespace strait {

namespace {

std::string iso_now() {
  char buf[64];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// Throws std::runtime_error saying how the checkpoint differs from the config.
void check_checkpoint_fits(const Config& cfg, const Checkpoint& ck) {
  const ModelConfig& mc = cfg.model;
  const Layout full = make_layout(mc, shard_specs(mc, {1.0})[0]);
  if (static_cast<int>(ck.experts.size()) != mc.experts)
    throw std::runtime_error("has " + std::to_string(ck.experts.size()) + " experts, the config " +
                             std::to_string(mc.experts));
  for (const auto& ex : ck.experts) {
    if (ex.params.size() != full.tensors.size())
      throw std::runtime_error("tensor count differs from the config's model");
    for (size_t i = 0; i < full.tensors.size(); ++i)
      if (ex.params[i].name != full.tensors[i].name || ex.params[i].shape != full.tensors[i].shape)
        throw std::runtime_error("tensor " + ex.params[i].name +
                                 " does not match the config's model (" + full.tensors[i].name +
                                 ")");
  }
  if (ck.splits.size() != cfg.datacenters.size() ||
      ck.batch_shares.size() != cfg.datacenters.size())
    throw std::runtime_error("datacenter count differs from the config");
  for (size_t d = 0; d < ck.splits.size(); ++d)
    if (static_cast<int>(ck.splits[d].size()) != cfg.datacenters[d].ranks)
      throw std::runtime_error("datacenter " + cfg.datacenters[d].name +
                               " has a different rank count than in the checkpoint");
  auto same_tensors = [&](const std::vector<NamedTensor>& ts, const char* what) {
    if (ts.size() != full.tensors.size())
      throw std::runtime_error(std::string(what) + " has a different tensor count than the model");
    for (size_t i = 0; i < ts.size(); ++i)
      if (ts[i].name != full.tensors[i].name || ts[i].shape != full.tensors[i].shape ||
          ts[i].data.size() != full.tensors[i].full_size())
        throw std::runtime_error(std::string(what) + " tensor " + ts[i].name +
                                 " does not match the config's model");
  };
  for (const auto& ex : ck.experts) {
    same_tensors(ex.adam_m, "adam_m");
    same_tensors(ex.adam_v, "adam_v");
    if (ex.adam_t < 0) throw std::runtime_error("has a negative Adam step count");
  }
  if (ck.seed != cfg.train.seed)
    throw std::runtime_error("was written with seed " + std::to_string(ck.seed) +
                             ", the config has train.seed = " + std::to_string(cfg.train.seed));
  if (ck.next_step < 0) throw std::runtime_error("has a negative next_step");
  if (ck.next_step >= cfg.train.steps)
    throw std::runtime_error("is at step " + std::to_string(ck.next_step) + ", the run has only " +
                             std::to_string(cfg.train.steps));
  // What it records is held to the config's own rules: a split must give whole heads, shares
  // must give every datacenter a sequence.
  for (size_t d = 0; d < ck.splits.size(); ++d) {
    std::string why = limits::fractions_problem(ck.splits[d], ck.splits[d].size());
    if (why.empty() && !check_split(cfg.model, ck.splits[d]).ok())
      why = "it does not give each rank a whole number >= 1 of the " +
            std::to_string(cfg.model.heads) + " heads and >= 1 MLP column";
    if (!why.empty())
      throw std::runtime_error("records an invalid split of datacenter " + cfg.datacenters[d].name +
                               ": " + why);
  }
  if (const std::string why = limits::shares_problem(ck.batch_shares, cfg.train.global_batch);
      !why.empty())
    throw std::runtime_error("records invalid batch shares: " + why);
}

}  // namespace

std::string check_startup(const Config& cfg, const TrainOptions& opt, Checkpoint& ck,
                          std::vector<std::unique_ptr<OutputLock>>& locks) {
  namespace fs = std::filesystem;
  // Claimed before they are looked at: a run that holds them keeps them, whatever --force says.
  try {
    for (const std::string* p : {&opt.trace_path, &opt.checkpoint_path})
      if (!p->empty()) locks.push_back(std::make_unique<OutputLock>(*p));
  } catch (const std::exception& e) {
    return e.what();
  }
  if (cfg.backend == "cuda")
    if (const std::string why = cuda_unavailable(); !why.empty())
      return "run.backend = \"cuda\": " + why + "; use \"cpu\" or \"auto\"";
  if (!opt.resume.empty() && !opt.trace_path.empty() &&
      fs::weakly_canonical(opt.trace_path) == fs::weakly_canonical(opt.resume))
    return "--resume " + opt.resume + " is also the trace path; expected a different --out";
  if (!opt.trace_path.empty() && fs::exists(opt.trace_path) && !opt.force) {
    if (opt.resume.empty())
      return "trace " + opt.trace_path + " exists; pass --force to overwrite it, or --resume "
             "CHECKPOINT to continue it";
    std::vector<std::string> dcs;
    for (const auto& dc : cfg.datacenters) dcs.push_back(dc.name);
    const std::string why =
        TraceWriter::why_not_continue(opt.trace_path, cfg.train.seed, dcs, cfg.world_size());
    if (!why.empty())
      return "trace " + opt.trace_path + " cannot be continued (" + why +
             "); pass --force to replace it, or --out for a new trace";
  }
  std::error_code ec;  // the checkpoint a run resumes from is its own to replace
  if (!opt.checkpoint_path.empty() && fs::exists(opt.checkpoint_path) && !opt.force &&
      !(!opt.resume.empty() && fs::equivalent(opt.checkpoint_path, opt.resume, ec)))
    return "checkpoint " + opt.checkpoint_path + " exists; pass --force to overwrite it";
  if (opt.resume.empty()) return "";
  try {
    ck = read_checkpoint(opt.resume);
    check_checkpoint_fits(cfg, ck);
  } catch (const std::exception& e) {
    return "--resume " + opt.resume + ": " + e.what();
  }
  return "";
}

std::unique_ptr<TraceWriter> open_trace(const TrainOptions& opt, const RunMeta& meta,
                                        int64_t start_step) {
  std::error_code ec;
  const bool there = std::filesystem::exists(opt.trace_path, ec);
  if (!opt.resume.empty() && there &&
      TraceWriter::why_not_continue(opt.trace_path, meta.seed, meta.dc_names, meta.world_size)
          .empty())
    return std::make_unique<TraceWriter>(opt.trace_path, meta,
                                         TraceContinue{start_step, opt.resume});
  return std::make_unique<TraceWriter>(opt.trace_path, /*force=*/true, meta);
}

std::string agree(const Topology& t, std::string msg) {
  int len = static_cast<int>(msg.size());
  MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT, 0, t.world));
  msg.resize(len);
  if (len) MPI_CHECK(MPI_Bcast(msg.data(), len, MPI_CHAR, 0, t.world));
  return msg;
}

std::vector<std::string> gather_hostnames(const Topology& t) {
  char host[64] = {0};
  gethostname(host, sizeof(host) - 1);
  return gather_rank_strings(t, host);
}

std::vector<std::string> gather_rank_strings(const Topology& t, const std::string& s) {
  constexpr int kLen = 64;
  char mine[kLen] = {0};
  s.copy(mine, kLen - 1);
  std::vector<char> all(t.world_rank == 0 ? kLen * t.world_size : 0);
  MPI_CHECK(MPI_Gather(mine, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, 0, t.world));
  std::vector<std::string> hosts(t.world_size);
  if (t.world_rank == 0)
    for (int r = 0; r < t.world_size; ++r) hosts[r] = std::string(all.data() + kLen * r).c_str();
  return hosts;
}

RunMeta make_run_meta(const Config& cfg, const Topology& t, const Corpus& corpus,
                      const std::vector<std::string>& hosts,
                      const std::vector<std::string>& backends, const std::string& resumed_from) {
  RunMeta meta;
  meta.config_text = cfg.source_text;
  meta.config_file = cfg.source_file;
  meta.version = version();
  meta.commit = commit();
  meta.start_time = iso_now();
  meta.run_name = cfg.run_name;
  meta.hosts = hosts;
  meta.backends = backends;
  for (int r = 0; r < t.world_size; ++r) meta.rank_dc.push_back(cfg.dc_of_rank(r));
  for (const auto& dc : cfg.datacenters) meta.dc_names.push_back(dc.name);
  meta.world_size = t.world_size;
  meta.seed = cfg.train.seed;
  meta.experts = cfg.model.experts;
  meta.params_per_expert = parameter_count(cfg.model);
  meta.corpus_entropy_bits = corpus.entropy_bits;
  meta.corpus_bytes = static_cast<long long>(corpus.bytes.size());
  meta.resumed_from = resumed_from;
  int level = 0;
  MPI_Query_thread(&level);
  meta.mpi_thread_level = level;
  return meta;
}

void print_header(const Config& cfg, const Topology& t, const Corpus& corpus,
                  const std::vector<std::string>& hosts, const std::vector<std::string>& backends,
                  const std::vector<std::vector<double>>& splits, const std::vector<double>& shares,
                  const std::string& sync_strategy, const TrainOptions& opt, int64_t start_step,
                  int blas_threads) {
  const ModelConfig& mc = cfg.model;
  const int B = cfg.train.global_batch;
  std::printf("strait %s (%s) | config %s | run %s\n", version(), commit(),
              cfg.source_file.c_str(), cfg.run_name.c_str());
  std::printf("model: %d layers, d_model %d, %d heads, d_ff %d, seq_len %d, %d expert(s), %lld "
              "parameters each\n",
              mc.layers, mc.d_model, mc.heads, mc.d_ff, mc.seq_len, mc.experts,
              parameter_count(mc));
  std::printf("corpus: %s, %zu files, %zu bytes, unigram entropy %.3f bits/byte = %.3f nats\n",
              cfg.train.corpus.c_str(), corpus.files.size(), corpus.bytes.size(),
              corpus.entropy_bits, corpus.entropy_bits * 0.6931471805599453);
  const auto seqs = apportion(shares, B, 1);
  for (int d = 0; d < t.num_dcs; ++d) {
    std::printf("datacenter %-10s ranks %d-%d  batch %d/%d  split [", cfg.datacenters[d].name.c_str(),
                t.dc_first_rank[d], t.dc_first_rank[d] + t.dc_ranks[d] - 1, seqs[d], B);
    for (size_t i = 0; i < splits[d].size(); ++i) std::printf("%s%.3g", i ? " " : "", splits[d][i]);
    std::printf("]  hosts:");
    for (int r = 0; r < t.dc_ranks[d]; ++r) std::printf(" %s", hosts[t.dc_first_rank[d] + r].c_str());
    std::printf("\n");
  }
  std::map<std::string, int> per_backend;  // ranks per backend name
  for (const auto& b : backends) ++per_backend[b];
  std::printf("backend:");
  for (const auto& [name, n] : per_backend) std::printf(" %s (%d rank%s)", name.c_str(), n, n == 1 ? "" : "s");
  if (per_backend.count("cpu"))  // each rank sets its own (run.blas_threads); rank 0's count
    std::printf(", %d OpenBLAS thread%s per rank", blas_threads, blas_threads == 1 ? "" : "s");
  std::printf("\n");
  std::printf("network: shaper %s, time_scale %g\n", cfg.network.shaper.c_str(),
              cfg.network.time_scale);
  std::printf("policies: forecaster %s, balancer %s, paths %s, sync %s, overlap %s\n",
              cfg.control.forecaster.c_str(), cfg.control.balancer.c_str(),
              cfg.control.path_selector.c_str(), sync_strategy.c_str(), cfg.control.overlap.c_str());
  if (!opt.trace_path.empty()) std::printf("trace: %s\n", opt.trace_path.c_str());
  if (!opt.resume.empty())
    std::printf("resumed from %s at step %lld\n", opt.resume.c_str(), static_cast<long long>(start_step));
  std::fflush(stdout);
}

}  // namespace strait
