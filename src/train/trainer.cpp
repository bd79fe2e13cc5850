// trainer.cpp — one run, start to end. Start-up checks that can fail on bad input (trace or
// checkpoint in the way, unreadable checkpoint) happen on rank 0 before any file is created, and
// their verdict is broadcast so that every rank returns the same exit status and none hangs.
#include "train/trainer.hpp"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <thread>

#include "backend/backend.hpp"
#include "backend/dc_comm.hpp"
#include "backend/select.hpp"
#include "control/controller.hpp"
#include "core/apportion.hpp"
#include "core/check.hpp"
#include "core/timer.hpp"
#include "core/version.hpp"
#include "data/corpus.hpp"
#include "model/transformer.hpp"
#include "net/transport.hpp"
#include "sync/sync.hpp"
#include "topo/topology.hpp"
#include "trace/checkpoint.hpp"
#include "trace/trace.hpp"

namespace strait {

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

// Broadcasts rank 0's verdict (empty = fine) to every rank.
std::string agree(const Topology& t, std::string msg) {
  int len = static_cast<int>(msg.size());
  MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT, 0, t.world));
  msg.resize(len);
  if (len) MPI_CHECK(MPI_Bcast(msg.data(), len, MPI_CHAR, 0, t.world));
  return msg;
}

std::vector<Layout> dc_layouts(const ModelConfig& m, const std::vector<double>& split) {
  std::vector<Layout> out;
  for (const auto& s : shard_specs(m, split)) out.push_back(make_layout(m, s));
  return out;
}

// Full parameters and Adam state of one expert, assembled on the DC's gateway (collective over
// the DC). Returns false on non-gateway ranks.
bool gather_expert(const ParamSet<float>& ps, SyncChannel& ch, const SyncInput& in,
                   std::vector<float>& p, std::vector<float>& m, std::vector<float>& v) {
  std::vector<float> sp, sm, sv;
  ps.shard_to_host(sp, sm, sv);
  gather_full_to_gateway(sp.data(), ch, in);
  if (in.topo->is_gateway) p = ch.full;
  gather_full_to_gateway(sm.data(), ch, in);
  if (in.topo->is_gateway) m = ch.full;
  gather_full_to_gateway(sv.data(), ch, in);
  if (in.topo->is_gateway) v = ch.full;
  return in.topo->is_gateway;
}

void bcast_floats(std::vector<float>& v, size_t n, int root, MPI_Comm c) {
  v.resize(n);
  MPI_CHECK(MPI_Bcast(v.data(), static_cast<int>(n), MPI_FLOAT, root, c));
}

std::string iso_now() {
  char buf[64];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string hostname() {
  char h[256] = {0};
  gethostname(h, sizeof h - 1);
  return h;
}


}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

TrainOutcome train(const Config& cfg, MPI_Comm comm, const TrainOptions& opt) {
  TrainOutcome out;
  Topology topo = make_topology(cfg, comm);
  const bool root = topo.world_rank == 0;
  const bool say = root && opt.verbose;
  const ModelConfig& mc = cfg.model;
  const int B = cfg.train.global_batch, Tn = mc.seq_len, E = mc.experts;

  // ---- start-up checks (rank 0 decides, everyone agrees) ----
  std::string err;
  Checkpoint ck;
  if (root) {
    namespace fs = std::filesystem;
    if (cfg.backend == "cuda" && cuda_devices() == 0)
      err = "run.backend = \"cuda\" but no CUDA device is visible (or this build has no CUDA "
            "backend); use \"cpu\" or \"auto\"";
    else if (!opt.trace_path.empty() && fs::exists(opt.trace_path) && !opt.force)
      err = "trace " + opt.trace_path + " exists; pass --force to overwrite it";
    else if (!opt.checkpoint_path.empty() && fs::exists(opt.checkpoint_path) && !opt.force &&
             fs::path(opt.checkpoint_path) != fs::path(opt.resume))
      err = "checkpoint " + opt.checkpoint_path + " exists; pass --force to overwrite it";
    if (err.empty() && !opt.resume.empty()) {
      try {
        ck = read_checkpoint(opt.resume);
        const Layout full = make_layout(mc, shard_specs(mc, {1.0})[0]);
        if (static_cast<int>(ck.experts.size()) != E)
          throw std::runtime_error("has " + std::to_string(ck.experts.size()) +
                                   " experts, the config " + std::to_string(E));
        for (const auto& ex : ck.experts) {
          if (ex.params.size() != full.tensors.size())
            throw std::runtime_error("tensor count differs from the config's model");
          for (size_t i = 0; i < full.tensors.size(); ++i)
            if (ex.params[i].name != full.tensors[i].name ||
                ex.params[i].shape != full.tensors[i].shape)
              throw std::runtime_error("tensor " + ex.params[i].name +
                                       " does not match the config's model (" +
                                       full.tensors[i].name + ")");
        }
        if (ck.splits.size() != cfg.datacenters.size() ||
            ck.batch_shares.size() != cfg.datacenters.size())
          throw std::runtime_error("datacenter count differs from the config");
        for (size_t d = 0; d < ck.splits.size(); ++d)
          if (static_cast<int>(ck.splits[d].size()) != cfg.datacenters[d].ranks)
            throw std::runtime_error("datacenter " + cfg.datacenters[d].name +
                                     " has a different rank count than in the checkpoint");
        if (ck.next_step >= cfg.train.steps)
          throw std::runtime_error("is at step " + std::to_string(ck.next_step) +
                                   ", the run has only " + std::to_string(cfg.train.steps));
      } catch (const std::exception& e) {
        err = "--resume " + opt.resume + ": " + e.what();
      }
    }
  }
  err = agree(topo, err);
  if (!err.empty()) {
    if (root) std::fprintf(stderr, "strait: %s\n", err.c_str());
    free_topology(topo);
    out.exit_code = 2;
    return out;
  }

  Corpus corpus = load_corpus(cfg.train.corpus);  // validated by the config loader already

  // ---- state: splits, shares, parameters ----
  std::vector<std::vector<double>> splits;
  std::vector<double> shares = cfg.train.batch_shares;
  for (const auto& dc : cfg.datacenters) splits.push_back(dc.split);
  int64_t start = 0;
  std::vector<int64_t> adam_t(E, 0);
  {
    int64_t hdr[2] = {ck.next_step, 0};
    MPI_CHECK(MPI_Bcast(hdr, 2, MPI_INT64_T, 0, topo.world));
    start = hdr[0];
    if (!opt.resume.empty()) {
      for (size_t d = 0; d < splits.size(); ++d) {
        if (root) splits[d] = ck.splits[d];
        MPI_CHECK(MPI_Bcast(splits[d].data(), static_cast<int>(splits[d].size()), MPI_DOUBLE, 0,
                            topo.world));
      }
      if (root) shares = ck.batch_shares;
      MPI_CHECK(MPI_Bcast(shares.data(), static_cast<int>(shares.size()), MPI_DOUBLE, 0, topo.world));
      if (root)
        for (int e = 0; e < E; ++e) adam_t[e] = ck.experts[e].adam_t;
      MPI_CHECK(MPI_Bcast(adam_t.data(), E, MPI_INT64_T, 0, topo.world));
    }
  }

  ComputeBackend compute = make_compute_backend(
      cfg.backend, topo.dc_size > 1 ? topo.dc_comm : MPI_COMM_NULL, topo.local_rank);
  Backend<float>* be = compute.be.get();
  DcComm<float>* dcc = compute.dc.get();
  std::vector<Layout> layouts = dc_layouts(mc, splits[topo.dc]);
  std::vector<std::unique_ptr<ParamSet<float>>> experts;
  std::vector<SyncChannel> channels;
  for (int e = 0; e < E; ++e) {
    experts.push_back(std::make_unique<ParamSet<float>>(*be, layouts[topo.local_rank]));
    const size_t n = layouts[0].full_total;
    std::vector<float> p, m, v;
    if (opt.resume.empty()) {
      p = init_full<float>(layouts[0], cfg.train.seed, e);
      m.assign(n, 0.0f);
      v.assign(n, 0.0f);
    } else {
      if (root) {
        auto flat = [](const std::vector<NamedTensor>& ts) {
          std::vector<float> f;
          for (const auto& t : ts) f.insert(f.end(), t.data.begin(), t.data.end());
          return f;
        };
        p = flat(ck.experts[e].params), m = flat(ck.experts[e].adam_m), v = flat(ck.experts[e].adam_v);
      }
      bcast_floats(p, n, 0, topo.world);
      bcast_floats(m, n, 0, topo.world);
      bcast_floats(v, n, 0, topo.world);
    }
    experts[e]->load_full(p, m, v);
    experts[e]->adam_t = adam_t[e];
    channels.push_back(SyncChannel::open(topo));
  }
  ck = Checkpoint{};  // the full tensors are in the ParamSets now

  Transformer<float> model(*be, *dcc);
  std::unique_ptr<Controller> ctl;
  std::string strategy_name;
  if (root) {
    ctl = std::make_unique<Controller>(cfg, topo, splits, shares);
    strategy_name = ctl->sync_strategy();
  }
  strategy_name = agree(topo, strategy_name);
  auto sync = make_sync_strategy(strategy_name);
  STRAIT_CHECK(sync != nullptr, "unknown sync strategy " + strategy_name);
  MPI_CHECK(MPI_Barrier(topo.world));  // link schedules start together
  Transport transport(cfg, MPI_Wtime());
  {  // the path selector's paths, flattened as (length, DCs...) per ordered pair
    std::vector<int> flat;
    if (root)
      for (const auto& p : ctl->paths()) {
        flat.push_back(static_cast<int>(p.size()));
        flat.insert(flat.end(), p.begin(), p.end());
      }
    int len = static_cast<int>(flat.size());
    MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT, 0, topo.world));
    flat.resize(len);
    MPI_CHECK(MPI_Bcast(flat.data(), len, MPI_INT, 0, topo.world));
    std::vector<std::vector<int>> paths;
    for (size_t i = 0; i < flat.size(); i += 1 + flat[i])
      paths.emplace_back(flat.begin() + i + 1, flat.begin() + i + 1 + flat[i]);
    transport.set_paths(paths);
  }

  // ---- trace ----
  std::vector<std::string> hosts(topo.world_size);
  {
    std::string h = hostname();
    h.resize(64, '\0');
    std::vector<char> all(root ? 64 * topo.world_size : 0);
    MPI_CHECK(MPI_Gather(h.data(), 64, MPI_CHAR, all.data(), 64, MPI_CHAR, 0, topo.world));
    if (root)
      for (int r = 0; r < topo.world_size; ++r) hosts[r] = std::string(all.data() + 64 * r).c_str();
  }
  const long long nparams = parameter_count(mc);
  std::unique_ptr<TraceWriter> trace;
  if (root && !opt.trace_path.empty()) {
    RunMeta meta;
    meta.config_text = cfg.source_text;
    meta.config_file = cfg.source_file;
    meta.version = version();
    meta.commit = commit();
    meta.start_time = iso_now();
    meta.run_name = cfg.run_name;
    meta.hosts = hosts;
    for (int r = 0; r < topo.world_size; ++r) meta.rank_dc.push_back(cfg.dc_of_rank(r));
    for (const auto& dc : cfg.datacenters) meta.dc_names.push_back(dc.name);
    meta.world_size = topo.world_size;
    meta.seed = cfg.train.seed;
    meta.experts = E;
    meta.params_per_expert = nparams;
    meta.corpus_entropy_bits = corpus.entropy_bits;
    meta.corpus_bytes = static_cast<long long>(corpus.bytes.size());
    meta.resumed_from = opt.resume;
    int level = 0;
    MPI_Query_thread(&level);
    meta.mpi_thread_level = level;
    try {
      trace = std::make_unique<TraceWriter>(opt.trace_path, opt.force, meta);
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  err = agree(topo, err);
  if (!err.empty()) {
    if (root) std::fprintf(stderr, "strait: %s\n", err.c_str());
    for (auto& c : channels) c.close();
    free_topology(topo);
    out.exit_code = 2;
    return out;
  }
  if (trace) {
    for (const auto& row : ctl->initial_rows(start)) trace->append_decision(row);
    trace->flush();
  }

  const double entropy_nats = corpus.entropy_bits * 0.6931471805599453;
  if (say) {
    std::printf("strait %s (%s) | config %s | run %s\n", version(), commit(),
                cfg.source_file.c_str(), cfg.run_name.c_str());
    std::printf("model: %d layers, d_model %d, %d heads, d_ff %d, seq_len %d, %d expert(s), %lld "
                "parameters each\n",
                mc.layers, mc.d_model, mc.heads, mc.d_ff, mc.seq_len, E, nparams);
    std::printf("corpus: %s, %zu files, %zu bytes, unigram entropy %.3f bits/byte = %.3f nats\n",
                cfg.train.corpus.c_str(), corpus.files.size(), corpus.bytes.size(),
                corpus.entropy_bits, entropy_nats);
    const auto seqs = apportion(shares, B, 1);
    for (int d = 0; d < topo.num_dcs; ++d) {
      std::printf("datacenter %-10s ranks %d-%d  batch %d/%d  split [", cfg.datacenters[d].name.c_str(),
                  topo.dc_first_rank[d], topo.dc_first_rank[d] + topo.dc_ranks[d] - 1, seqs[d], B);
      for (size_t i = 0; i < splits[d].size(); ++i) std::printf("%s%.3g", i ? " " : "", splits[d][i]);
      std::printf("]  hosts:");
      for (int r = 0; r < topo.dc_ranks[d]; ++r) std::printf(" %s", hosts[topo.dc_first_rank[d] + r].c_str());
      std::printf("\n");
    }
    std::printf("policies: forecaster %s, balancer %s, paths %s, sync %s, overlap %s\n",
                cfg.control.forecaster.c_str(), cfg.control.balancer.c_str(),
                cfg.control.path_selector.c_str(), strategy_name.c_str(), cfg.control.overlap.c_str());
    if (trace) std::printf("trace: %s\n", opt.trace_path.c_str());
    if (!opt.resume.empty()) std::printf("resumed from %s at step %lld\n", opt.resume.c_str(), (long long)start);
    std::fflush(stdout);
  }

  auto write_ckpt = [&](int64_t next_step) {
    if (opt.checkpoint_path.empty()) return;
    // DC 0 assembles the full state on its gateway, world rank 0 (DCs hold identical models).
    Checkpoint c;
    c.next_step = next_step;
    c.seed = cfg.train.seed;
    c.config_text = cfg.source_text;
    c.splits = splits;
    c.batch_shares = shares;
    if (topo.dc == 0) {
      SyncInput in{&topo, &layouts, 1.0};
      for (int e = 0; e < E; ++e) {
        std::vector<float> p, m, v;
        if (!gather_expert(*experts[e], channels[e], in, p, m, v)) continue;
        CheckpointExpert ce;
        ce.adam_t = experts[e]->adam_t;
        size_t off = 0;
        for (const auto& t : layouts[0].tensors) {
          const size_t n = t.full_size();
          auto slice = [&](const std::vector<float>& f) {
            return NamedTensor{t.name, t.shape, std::vector<float>(f.begin() + off, f.begin() + off + n)};
          };
          ce.params.push_back(slice(p));
          ce.adam_m.push_back(slice(m));
          ce.adam_v.push_back(slice(v));
          off += n;
        }
        c.experts.push_back(std::move(ce));
      }
    }
    std::string e;
    if (root) {
      try {
        write_checkpoint(opt.checkpoint_path, c);
      } catch (const std::exception& ex) {
        e = ex.what();
      }
    }
    e = agree(topo, e);
    if (!e.empty()) STRAIT_FATAL("writing checkpoint failed: " + e);
  };

  // ---- the step loop ----
  std::vector<int32_t> tokens, targets;
  std::vector<int> seqs = apportion(shares, B, 1);
  const double speed = cfg.datacenters[topo.dc].speed[topo.local_rank];
  double ctl_ms_prev = 0, trace_ms_prev = 0;
  double sum_tok_s = 0, sum_wall = 0, sum_compute = 0, sum_sync = 0, sum_wait = 0;
  double sum_ctl = 0, sum_trace = 0;
  int logged = 0;
  bool stopped = false;
  int64_t step = start;
  out.first_step = start;
  for (; step < cfg.train.steps; ++step) {
    const double t_step = now_ms();
    const int e = static_cast<int>(step % E);
    ParamSet<float>& ps = *experts[e];
    const auto offsets = batch_offsets(corpus, cfg.train.seed, step, B, Tn);
    int begin = 0;
    for (int d = 0; d < topo.dc; ++d) begin += seqs[d];
    const int b = seqs[topo.dc];
    make_tokens(corpus, offsets, begin, b, Tn, tokens, targets);

    RankMeasure me;
    double t0 = now_ms();
    me.loss = model.forward_backward(ps, tokens.data(), targets.data(), b);
    be->synchronize();
    me.compute_ms = now_ms() - t0;
    if (speed < 1.0) {  // emulate a slower device by idling for the time it would lose
      const double idle = (1.0 / speed - 1.0) * me.compute_ms;
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(idle));
      me.emulated_ms = idle;
    }
    t0 = now_ms();
    SyncInput in{&topo, &layouts, static_cast<double>(b) / B};
    sync->sync(ps, channels[e], in, transport);
    me.sync_ms = now_ms() - t0;
    t0 = now_ms();
    ps.adam_t += 1;
    be->adam(ps.params, ps.grads, ps.adam_m, ps.adam_v, ps.layout.shard_total,
             static_cast<float>(cfg.train.lr), static_cast<float>(cfg.train.beta1),
             static_cast<float>(cfg.train.beta2), static_cast<float>(cfg.train.eps),
             static_cast<float>(cfg.train.weight_decay), ps.adam_t);
    be->synchronize();
    me.optimizer_ms = now_ms() - t0;
    me.stop = g_stop_signal != 0 ? 1.0 : 0.0;
    me.split = splits[topo.dc][topo.local_rank];

    t0 = now_ms();
    StepExchange x = exchange_step(topo, ctl.get(), step, me, transport.take_counters());
    me.wait_ms = now_ms() - t0;  // includes waiting for the slowest rank
    const double ctl_ms = x.controller_ms;
    const Decision& d = x.decision;
    out.losses.push_back(d.loss);
    const double wall_ms = now_ms() - t_step;

    if (root) {
      double t_tr = now_ms();
      StepRow row;
      row.step = step;
      row.expert = e;
      row.loss = d.loss;
      row.tokens = static_cast<int64_t>(B) * Tn;
      row.wall_ms = wall_ms;
      row.controller_ms = ctl_ms_prev;
      row.trace_ms = trace_ms_prev;
      for (int r = 0; r < topo.world_size; ++r) {
        const auto& m = x.ranks[r];
        row.compute_ms = std::max(row.compute_ms, m.compute_ms);
        row.sync_ms = std::max(row.sync_ms, m.sync_ms);
        row.wait_ms = std::max(row.wait_ms, r == 0 ? me.wait_ms : m.wait_ms);
        row.emulated_ms = std::max(row.emulated_ms, m.emulated_ms);
      }
      if (trace) {
        std::vector<RankRow> rr;
        for (int r = 0; r < topo.world_size; ++r) {
          const auto& m = x.ranks[r];
          rr.push_back(RankRow{step, r, cfg.dc_of_rank(r), m.compute_ms, m.sync_ms,
                               r == 0 ? me.wait_ms : m.wait_ms, m.emulated_ms, m.split});
        }
        trace->append_ranks(rr);
        std::vector<LinkRow> lr;
        const int n = topo.num_dcs;
        for (int s = 0; s < n; ++s)
          for (int t = 0; t < n; ++t) {
            if (s == t) continue;
            const auto& c = x.links[s * n + t];
            const double gbps = c.busy_ms > 0 ? c.bytes * 8.0 / (c.busy_ms * 1e6) : 0.0;
            lr.push_back(LinkRow{step, s, t, c.bytes, c.busy_ms, gbps, transport.capacity_gbps(s, t),
                                 transport.emulated_gbps(s, t), transport.latency_ms(s, t),
                                 c.queued_ms});
          }
        if (!lr.empty()) trace->append_links(lr);
        for (const auto& dr : x.rows) trace->append_decision(dr);
        trace->append_step(row, offsets);
      }
      trace_ms_prev = now_ms() - t_tr;
      ctl_ms_prev = ctl_ms;
      const double tok_s = row.tokens / (wall_ms / 1e3);
      sum_tok_s += tok_s, sum_wall += wall_ms, sum_compute += row.compute_ms;
      sum_sync += row.sync_ms, sum_wait += row.wait_ms, sum_ctl += ctl_ms, sum_trace += trace_ms_prev;
      ++logged;
      if (say && ((step + 1) % cfg.train.log_every == 0 || step == start || step + 1 == cfg.train.steps)) {
        std::printf("step %5lld/%d  expert %d  loss %.4f  %8.0f tok/s  compute %7.1f ms  sync %7.1f ms"
                    "  wait %6.1f ms%s\n",
                    (long long)step + 1, cfg.train.steps, e, d.loss, tok_s, row.compute_ms,
                    row.sync_ms, row.wait_ms, row.emulated_ms > 0 ? "  (emulated load)" : "");
        std::fflush(stdout);
      }
    }

    if (d.change) {  // re-split: move every expert's slices to their new owners
      ++out.resplits;
      if (d.splits[topo.dc] != splits[topo.dc]) {
        auto next = dc_layouts(mc, d.splits[topo.dc]);
        SyncInput in_old{&topo, &layouts, 1.0};
        for (int k = 0; k < E; ++k) {
          std::vector<float> p, m, v;
          gather_expert(*experts[k], channels[k], in_old, p, m, v);
          const size_t n = layouts[0].full_total;
          bcast_floats(p, n, 0, channels[k].dc);
          bcast_floats(m, n, 0, channels[k].dc);
          bcast_floats(v, n, 0, channels[k].dc);
          const int64_t t = experts[k]->adam_t;
          experts[k] = std::make_unique<ParamSet<float>>(*be, next[topo.local_rank]);
          experts[k]->load_full(p, m, v);
          experts[k]->adam_t = t;
        }
        layouts = std::move(next);
      }
      splits = d.splits;
      shares = d.shares;
      seqs = apportion(shares, B, 1);
    }
    if (d.stop) {
      stopped = true;
      ++step;
      break;
    }
    if (cfg.checkpoint.every > 0 && (step + 1) % cfg.checkpoint.every == 0 && step + 1 < cfg.train.steps)
      write_ckpt(step + 1);
  }

  write_ckpt(step);
  if (opt.keep_final_params && topo.dc == 0) {
    SyncInput in{&topo, &layouts, 1.0};
    for (int e = 0; e < E; ++e) {
      std::vector<float> p, m, v;
      if (gather_expert(*experts[e], channels[e], in, p, m, v) && root)
        out.final_params.push_back(std::move(p));
    }
  }
  if (trace) trace->close(stopped ? "interrupted" : "complete");
  if (say && logged > 0) {
    const double last = out.losses.back();
    std::printf("done: %lld steps, final loss %.4f nats (corpus unigram entropy %.3f nats)%s\n",
                (long long)(step - start), last, entropy_nats,
                last < entropy_nats ? "" : "  [not below the unigram entropy]");
    std::printf("mean per step: wall %.1f ms, compute %.1f ms, sync %.1f ms, wait %.1f ms, "
                "%.0f tok/s; controller %.2f%%, trace %.2f%% of wall time\n",
                sum_wall / logged, sum_compute / logged, sum_sync / logged, sum_wait / logged,
                sum_tok_s / logged, 100 * sum_ctl / sum_wall, 100 * sum_trace / sum_wall);
    if (!opt.checkpoint_path.empty()) std::printf("checkpoint: %s\n", opt.checkpoint_path.c_str());
    std::fflush(stdout);
  }
  if (stopped && root)
    std::fprintf(stderr, "strait: stopped by signal at step %lld; trace and checkpoint closed\n",
                 (long long)step);
  for (auto& c : channels) c.close();
  free_topology(topo);
  out.exit_code = stopped ? 3 : 0;
  return out;
}

}  // namespace strait
