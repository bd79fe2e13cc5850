// run_start.cpp — the start phase of a run (see run.hpp): rank 0 decides whether the run may
// start and every rank agrees (so bad input exits 2 everywhere, before any file exists), then
// the start state, the backend, the controller's first decision record, the transport and the
// trace.
#include <chrono>
#include <cstdio>

#include "core/apportion.hpp"
#include "core/check.hpp"
#include "core/timer.hpp"
#include "core/wire.hpp"
#include "net/run_clock.hpp"
#include "train/model_state.hpp"
#include "train/run.hpp"
#include "train/startup.hpp"

namespace strait {

Run::Run(const Config& cfg, MPI_Comm comm, const TrainOptions& opt)
    : cfg_(cfg), opt_(opt), topo_(make_topology(cfg, comm)), ledger_(topo_.world_size) {
  root_ = topo_.world_rank == 0;
  const ModelConfig& mc = cfg.model;
  {  // watching from the start: a start-up that hangs (a peer stopped early) ends the job too
    int level = 0;
    MPI_Query_thread(&level);
    std::vector<std::string> dcs;
    for (const auto& dc : cfg.datacenters) dcs.push_back(dc.name);
    watchdog_ = std::make_unique<Watchdog>(
        topo_, dcs, cfg.stall_timeout_s, cfg.stop_grace_s, level >= MPI_THREAD_MULTIPLE,
        [this](const std::string& status, const std::string& reason) {
          // The link's thread may be writing: wait for it briefly, then keep the lock, so that
          // nothing is written after the close (the job is aborted right after this).
          if (!trace_mu_.try_lock_for(std::chrono::seconds(2))) return;
          try {
            if (trace_) trace_->close(status, reason);
          } catch (const std::exception& e) {
            std::fprintf(stderr, "strait: watchdog: the trace could not be closed: %s\n", e.what());
          }
        });
    beat(0, Watchdog::Phase::start);
  }

  // ---- checks (rank 0 decides, everyone agrees) ----
  Checkpoint ck;
  const std::string refused = agree(topo_, root_ ? check_startup(cfg, opt, ck, locks_) : "");
  if (!refused.empty()) throw Refused(refused);
  // The loader checked that the corpus is readable; its size after de-duplication is known only
  // now. Every rank reads the same files, so rank 0's verdict stands for all.
  std::string corpus_err;
  try {
    corpus_ = load_corpus(cfg.train.corpus);
    if (corpus_.bytes.size() < static_cast<size_t>(mc.seq_len) + 1)
      corpus_err = "train.corpus: " + cfg.train.corpus + " holds " +
                   std::to_string(corpus_.bytes.size()) +
                   " bytes; expected at least model.seq_len + 1 = " + std::to_string(mc.seq_len + 1);
  } catch (const std::exception& e) {
    corpus_err = std::string("train.corpus: ") + e.what();
  }
  corpus_err = agree(topo_, root_ ? corpus_err : "");
  if (!corpus_err.empty()) throw Refused(corpus_err);

  // ---- the state the run starts from ----
  StartState st = start_state(cfg, topo_, !opt.resume.empty(), std::move(ck));
  start_ = next_step_ = st.step;
  out_.first_step = start_;
  if (!opt.resume.empty()) last_checkpoint_ = start_;
  if (root_ && opt.verbose && !st.notice.empty()) std::printf("%s\n", st.notice.c_str());
  const int blas_threads = pin_blas_threads(cfg.blas_threads, topo_.world);
  scenario_ = std::make_shared<const Scenario>(cfg);
  compute_ = make_compute_backend(cfg.backend, cfg.gpu_math,
                                  topo_.dc_size > 1 ? topo_.dc_comm : MPI_COMM_NULL,
                                  node_rank(topo_.world));
  Backend<float>& be = *compute_.be;
  layouts_ = dc_layouts(mc, st.splits[topo_.dc]);
  for (int e = 0; e < mc.experts; ++e) {
    auto& x = st.experts[e];
    experts_.push_back(std::make_unique<ParamSet<float>>(be, layouts_[topo_.local_rank]));
    experts_[e]->load_full(x.p, x.m, x.v);
    experts_[e]->adam_t = x.adam_t;
    x = StartState::Expert{};  // the shards hold it now
    channels_.push_back(SyncChannel::open(topo_, be));
  }
  // The model reduces through the pacer, which emulates the scenario's load inside the compute
  // (pacer.hpp); it synchronizes the device only when some rank is ever loaded or emulated.
  pacer_ = std::make_unique<Pacer>(*compute_.dc, be, scenario_->loaded() || cfg.device_gflops > 0);
  model_ = std::make_unique<Transformer<float>>(be, *pacer_);
  // A balancer that weighs a re-split's gain against its measured cost needs the cost before
  // its first decision: a re-split to the starting layout makes the same gathers, broadcasts and
  // allocations as any other (and keeps every bit); it is reported with the first step.
  if (topo_.dc_size > 1 && balancer_weighs_resplit_cost(cfg.control.balancer)) {
    const double t0 = now_ms();
    reshard(experts_, layouts_, layouts_, channels_, topo_, be);
    reshard_ms_ = now_ms() - t0;
  }
  clock_ = estimate_clock_offsets(topo_.world);

  // ---- the controller and its first decision records ----
  // The records of steps start .. start + lag − 1 are decided now (no step has been heard yet);
  // from then on the answer to step s's reports decides step s + lag.
  int level = 0;
  MPI_Query_thread(&level);
  thread_multiple_ = level >= MPI_THREAD_MULTIPLE;
  lag_ = cfg.control.lag;
  report_early_ = cfg.control.report == "after-compute";
  early_paths_ = cfg.control.early_paths;
  std::string first_records;
  if (root_) {
    Plan start;
    start.made_after = start_ - 1;
    start.effective = start_;
    start.splits = st.first_splits;  // the checkpoint's on resume, unless the config's apply
    start.shares = st.first_shares;
    try {
      ctl_ = std::make_unique<Controller>(cfg, make_world(cfg, *scenario_, thread_multiple_),
                                          scenario_, std::move(start));
    } catch (const std::exception& e) {
      STRAIT_FATAL(e.what());  // validation checks the policy names first
    }
    std::vector<Plan> plans{ctl_->initial(decision_rows_)};
    for (int k = 1; k < lag_ && start_ + k < cfg.train.steps; ++k)
      if (auto p = ctl_->decide(start_, start_ + k, 0.0, decision_rows_)) plans.push_back(*p);
    wire::Writer w;
    w.put<uint64_t>(plans.size());
    for (const Plan& p : plans) w.put(encode(p));
    const std::vector<char> b = w.take();
    first_records.assign(b.begin(), b.end());
  }
  first_records = agree(topo_, first_records);  // start-up: plain MPI, before the run's clock
  {
    const std::vector<char> b(first_records.begin(), first_records.end());
    wire::Reader r(b);
    const uint64_t count = r.get<uint64_t>();
    for (uint64_t i = 0; i < count; ++i) {
      Plan p = decode_plan(r.get<std::vector<char>>());
      pending_[p.effective] = std::move(p);
    }
  }
  const Plan first = pending_.at(start_);

  MPI_CHECK(MPI_Barrier(topo_.world));  // link schedules start together
  const double schedules_t0 = MPI_Wtime();
  transport_ = std::make_unique<Transport>(cfg, scenario_, schedules_t0);
  if (root_) publish_run_clock(schedules_t0);  // for tc under scripts/netns-run
  transport_->set_clock_offset(clock_.offset_s);
  // The control link's rounds run on a thread of their own when MPI allows two threads in it.
  control_ = std::make_unique<ControlLink>(
      topo_, *transport_, thread_multiple_,
      [this](const ControlLink::Gathered& g, std::vector<char>& bytes) { return on_round(g, bytes); });

  // ---- trace ----
  const std::vector<std::string> hosts = gather_hostnames(topo_);
  const std::vector<std::string> backends = gather_rank_strings(topo_, be.name());
  std::string trace_err;
  if (root_ && !opt.trace_path.empty()) {
    try {
      RunMeta meta = make_run_meta(cfg, topo_, corpus_, hosts, backends, opt.resume);
      meta.clock_offset_ms.clear();
      for (size_t r = 0; r < clock_.all_offset_s.size(); ++r) {
        meta.clock_offset_ms.push_back(clock_.all_offset_s[r] * 1e3);
        meta.clock_error_ms.push_back(clock_.all_error_s[r] * 1e3);
      }
      std::lock_guard<std::timed_mutex> lock(trace_mu_);  // the watchdog may look
      trace_ = open_trace(opt, meta, start_);
      for (const auto& row : decision_rows_) trace_->append_decision(row);
      trace_->flush();
    } catch (const std::exception& e) {  // a trace that cannot start is agreed like bad input
      trace_err = e.what();
      std::lock_guard<std::timed_mutex> lock(trace_mu_);
      trace_.reset();
    }
  }
  trace_err = agree(topo_, trace_err);
  if (!trace_err.empty()) throw Refused(trace_err);
  decision_rows_.clear();
  if (root_ && opt.verbose)
    print_header(cfg, topo_, corpus_, hosts, backends, first.splits, first.shares,
                 first.sync.strategy, opt, start_, blas_threads);
  // The first record may already differ from the start state (a scripted re-split at the start
  // step of a resumed run): it is applied like any other.
  plan_ = std::make_shared<const Plan>(Plan{start_ - 1, start_, st.splits, st.shares, {}, {}, {}});
  apply(first);
  pending_.erase(start_);
  started_ = true;
}

Run::~Run() = default;

}  // namespace strait
