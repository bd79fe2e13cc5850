// trainer.cpp — one run, start to end: start-up (startup.cpp), model state (model_state.cpp),
// then the step loop. Start-up checks that can fail on bad input happen on rank 0 before any
// file is created, and their verdict is broadcast so that every rank returns the same exit
// status and none hangs.
#include "train/trainer.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>

#include "backend/select.hpp"
#include "control/controller.hpp"
#include "core/apportion.hpp"
#include "core/check.hpp"
#include "core/timer.hpp"
#include "data/corpus.hpp"
#include "model/transformer.hpp"
#include "net/transport.hpp"
#include "sync/sync.hpp"
#include "topo/topology.hpp"
#include "trace/checkpoint.hpp"
#include "trace/trace.hpp"
#include "train/model_state.hpp"
#include "train/startup.hpp"

namespace strait {

namespace {

// Set by the handler, read by the step loop (and possibly another thread): a lock-free atomic is
// both async-signal-safe and race-free.
std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);
extern "C" void on_stop_signal(int sig) { g_stop_signal.store(sig, std::memory_order_relaxed); }

// The path selector's paths, decided on rank 0, handed to every rank's transport.
void share_paths(const Topology& topo, const Controller* ctl, Transport& transport) {
  std::vector<int> flat;  // (length, DCs...) per ordered pair
  if (ctl)
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

// Rank 0: the step's rows of /ranks, /links and /decisions, then the step row (commit point).
void trace_step(TraceWriter& trace, const StepRow& row, const StepExchange& x,
                const std::vector<double>& waits, const Config& cfg, const Topology& topo,
                const Transport& transport, const std::vector<int64_t>& offsets) {
  std::vector<RankRow> rr;
  for (int r = 0; r < topo.world_size; ++r) {
    const auto& m = x.ranks[r];
    rr.push_back(RankRow{row.step, r, cfg.dc_of_rank(r), m.compute_ms, m.sync_ms, waits[r],
                         m.emulated_ms, m.split});
  }
  trace.append_ranks(rr);
  std::vector<LinkRow> lr;
  const int n = topo.num_dcs;
  for (int s = 0; s < n; ++s)
    for (int t = 0; t < n; ++t) {
      if (s == t) continue;
      const auto& c = x.links[s * n + t];
      const double gbps = c.busy_ms > 0 ? c.bytes * 8.0 / (c.busy_ms * 1e6) : 0.0;
      lr.push_back(LinkRow{row.step, s, t, c.bytes, c.busy_ms, gbps, transport.capacity_gbps(s, t),
                           transport.emulated_gbps(s, t), transport.latency_ms(s, t), c.queued_ms});
    }
  if (!lr.empty()) trace.append_links(lr);
  for (const auto& dr : x.rows) trace.append_decision(dr);
  trace.append_step(row, offsets);
}

// Rank 0's running sums for the closing summary.
struct Summary {
  double tok_s = 0, wall = 0, compute = 0, sync = 0, wait = 0, ctl = 0, trace = 0;
  int steps = 0;
  void add(const StepRow& r, double ctl_ms, double trace_ms) {
    tok_s += r.tokens / (r.wall_ms / 1e3), wall += r.wall_ms, compute += r.compute_ms;
    sync += r.sync_ms, wait += r.wait_ms, ctl += ctl_ms, trace += trace_ms;
    ++steps;
  }
};

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
  auto refuse = [&](const std::string& why) {
    if (root) std::fprintf(stderr, "strait: %s\n", why.c_str());
    free_topology(topo);
    out.exit_code = 2;
    return out;
  };

  // ---- start-up checks (rank 0 decides, everyone agrees) and the state the run starts from ----
  Checkpoint ck;
  const std::string refused = agree(topo, root ? check_startup(cfg, opt, ck) : "");
  if (!refused.empty()) return refuse(refused);
  // The loader checked that the corpus is readable; its size after de-duplication is known only
  // now. Every rank reads the same files, so rank 0's verdict stands for all.
  Corpus corpus;
  std::string corpus_err;
  try {
    corpus = load_corpus(cfg.train.corpus);
    if (corpus.bytes.size() < static_cast<size_t>(Tn) + 1)
      corpus_err = "train.corpus: " + cfg.train.corpus + " holds " +
                   std::to_string(corpus.bytes.size()) + " bytes; expected at least model.seq_len + 1 = " +
                   std::to_string(Tn + 1);
  } catch (const std::exception& e) {
    corpus_err = std::string("train.corpus: ") + e.what();
  }
  corpus_err = agree(topo, root ? corpus_err : "");
  if (!corpus_err.empty()) return refuse(corpus_err);
  StartState st = start_state(cfg, topo, !opt.resume.empty(), std::move(ck));
  std::vector<std::vector<double>> splits = std::move(st.splits);
  std::vector<double> shares = std::move(st.shares);
  const int64_t start = st.step;

  ComputeBackend compute = make_compute_backend(cfg.backend, cfg.gpu_math,
                                                topo.dc_size > 1 ? topo.dc_comm : MPI_COMM_NULL,
                                                node_rank(topo.world));
  Backend<float>& be = *compute.be;
  std::vector<Layout> layouts = dc_layouts(mc, splits[topo.dc]);
  std::vector<std::unique_ptr<ParamSet<float>>> experts;
  std::vector<SyncChannel> channels;
  for (int e = 0; e < E; ++e) {
    auto& x = st.experts[e];
    experts.push_back(std::make_unique<ParamSet<float>>(be, layouts[topo.local_rank]));
    experts[e]->load_full(x.p, x.m, x.v);
    experts[e]->adam_t = x.adam_t;
    x = StartState::Expert{};  // the shards hold it now
    channels.push_back(SyncChannel::open(topo, be));
  }
  auto close_channels = [&] {
    for (auto& c : channels) c.close();
  };

  Transformer<float> model(be, *compute.dc);
  std::unique_ptr<Controller> ctl;
  if (root) ctl = std::make_unique<Controller>(cfg, topo, splits, shares);
  const std::string strategy_name = agree(topo, root ? ctl->sync_strategy() : "");
  auto sync = make_sync_strategy(strategy_name);
  STRAIT_CHECK(sync != nullptr, "unknown sync strategy " + strategy_name);
  MPI_CHECK(MPI_Barrier(topo.world));  // link schedules start together
  Transport transport(cfg, MPI_Wtime());
  share_paths(topo, ctl.get(), transport);

  // ---- trace ----
  const std::vector<std::string> hosts = gather_hostnames(topo);
  const std::vector<std::string> backends = gather_rank_strings(topo, be.name());
  std::unique_ptr<TraceWriter> trace;
  std::string trace_err;
  if (root && !opt.trace_path.empty()) {
    try {
      trace = std::make_unique<TraceWriter>(opt.trace_path, opt.force,
                                            make_run_meta(cfg, topo, corpus, hosts, backends, opt.resume));
    } catch (const std::exception& e) {
      trace_err = e.what();
    }
  }
  trace_err = agree(topo, trace_err);
  if (!trace_err.empty()) {
    close_channels();
    return refuse(trace_err);
  }
  if (trace) {
    for (const auto& row : ctl->initial_rows(start)) trace->append_decision(row);
    trace->flush();
  }
  if (say) print_header(cfg, topo, corpus, hosts, backends, splits, shares, strategy_name, opt, start);

  auto write_ckpt = [&](int64_t next_step) {
    if (opt.checkpoint_path.empty()) return;
    const Checkpoint c =
        assemble_checkpoint(cfg, next_step, splits, shares, experts, layouts, channels, topo);
    std::string err;
    if (root) {
      try {
        write_checkpoint(opt.checkpoint_path, c);
      } catch (const std::exception& ex) {
        err = ex.what();
      }
    }
    err = agree(topo, err);
    if (!err.empty()) STRAIT_FATAL("writing checkpoint failed: " + err);
  };

  // ---- the step loop ----
  std::vector<int32_t> tokens, targets;
  std::vector<int> seqs = apportion(shares, B, 1);
  std::vector<double> waits(root ? topo.world_size : 0);
  const double speed = cfg.datacenters[topo.dc].speed[topo.local_rank];
  double ctl_ms_prev = 0, trace_ms_prev = 0;
  Summary sum;
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

    // 1. forward + backward, tensor parallel in the DC
    RankMeasure me;
    double t0 = now_ms();
    me.loss = model.forward_backward(ps, tokens.data(), targets.data(), b);
    be.synchronize();
    me.compute_ms = now_ms() - t0;
    if (speed < 1.0) {  // emulate a slower device by idling for the time it would lose
      const double idle = (1.0 / speed - 1.0) * me.compute_ms;
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(idle));
      me.emulated_ms = idle;
    }
    // 2. gradient sync across DCs, weighted by this DC's share of the global batch
    t0 = now_ms();
    const SyncInput in{&topo, &layouts, static_cast<double>(b) / B};
    // A world of one rank holds the global gradient already (weight 1): no strategy has anything
    // to do, and skipping it keeps a single-GPU run free of the host round trip.
    if (topo.world_size > 1) sync->sync(ps, channels[e], in, transport);
    me.sync_ms = now_ms() - t0;
    // 3. optimizer
    t0 = now_ms();
    ps.adam_t += 1;
    be.adam(ps.params, ps.grads, ps.adam_m, ps.adam_v, ps.layout.shard_total,
            static_cast<float>(cfg.train.lr), static_cast<float>(cfg.train.beta1),
            static_cast<float>(cfg.train.beta2), static_cast<float>(cfg.train.eps),
            static_cast<float>(cfg.train.weight_decay), ps.adam_t);
    be.synchronize();
    me.optimizer_ms = now_ms() - t0;
    me.stop = g_stop_signal.load(std::memory_order_relaxed) != 0 ? 1.0 : 0.0;
    me.split = splits[topo.dc][topo.local_rank];

    // 4. measurements to the controller, its decision back
    t0 = now_ms();
    const StepExchange x = exchange_step(topo, ctl.get(), step, me, transport.take_counters());
    me.wait_ms = now_ms() - t0;  // waiting for the slowest rank, and the controller
    MPI_CHECK(MPI_Gather(&me.wait_ms, 1, MPI_DOUBLE, waits.data(), 1, MPI_DOUBLE, 0, topo.world));
    const Decision& d = x.decision;
    out.losses.push_back(d.loss);
    const double wall_ms = now_ms() - t_step;

    // 5. trace and progress (rank 0)
    if (root) {
      const double t_tr = now_ms();
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
        row.wait_ms = std::max(row.wait_ms, waits[r]);
        row.emulated_ms = std::max(row.emulated_ms, m.emulated_ms);
      }
      if (trace) trace_step(*trace, row, x, waits, cfg, topo, transport, offsets);
      trace_ms_prev = now_ms() - t_tr;
      ctl_ms_prev = x.controller_ms;
      sum.add(row, x.controller_ms, trace_ms_prev);
      if (say && ((step + 1) % cfg.train.log_every == 0 || step == start || step + 1 == cfg.train.steps)) {
        std::printf("step %5lld/%d  expert %d  loss %.4f  %8.0f tok/s  compute %7.1f ms  sync %7.1f ms"
                    "  wait %6.1f ms%s\n",
                    static_cast<long long>(step) + 1, cfg.train.steps, e, d.loss,
                    row.tokens / (wall_ms / 1e3), row.compute_ms, row.sync_ms, row.wait_ms,
                    row.emulated_ms > 0 ? "  (emulated load)" : "");
        std::fflush(stdout);
      }
    }

    // 6. decisions take effect from the next step on
    if (d.change) {
      ++out.resplits;
      if (d.splits[topo.dc] != splits[topo.dc])
        reshard(experts, layouts, dc_layouts(mc, d.splits[topo.dc]), channels, topo, be);
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
    const SyncInput in{&topo, &layouts, 1.0};
    for (int e = 0; e < E; ++e) {
      std::vector<float> p, m, v;
      if (gather_expert(*experts[e], channels[e], in, p, m, v) && root)
        out.final_params.push_back(std::move(p));
    }
  }
  if (trace) trace->close(stopped ? "interrupted" : "complete");
  if (say && sum.steps > 0) {
    const double last = out.losses.back(), entropy_nats = corpus.entropy_bits * 0.6931471805599453;
    std::printf("done: %lld steps, final loss %.4f nats (corpus unigram entropy %.3f nats)%s\n",
                static_cast<long long>(step - start), last, entropy_nats,
                last < entropy_nats ? "" : "  [not below the unigram entropy]");
    std::printf("mean per step: wall %.1f ms, compute %.1f ms, sync %.1f ms, wait %.1f ms, "
                "%.0f tok/s; controller %.2f%%, trace %.2f%% of wall time\n",
                sum.wall / sum.steps, sum.compute / sum.steps, sum.sync / sum.steps,
                sum.wait / sum.steps, sum.tok_s / sum.steps, 100 * sum.ctl / sum.wall,
                100 * sum.trace / sum.wall);
    if (!opt.checkpoint_path.empty()) std::printf("checkpoint: %s\n", opt.checkpoint_path.c_str());
    std::fflush(stdout);
  }
  if (stopped && root)
    std::fprintf(stderr, "strait: stopped by signal at step %lld; trace and checkpoint closed\n",
                 static_cast<long long>(step));
  close_channels();
  free_topology(topo);
  out.exit_code = stopped ? 3 : 0;
  return out;
}

}  // namespace strait
