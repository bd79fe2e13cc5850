// controller.cpp — policy wiring and the measurement/decision exchange.
#include "control/controller.hpp"

#include <sstream>
#include <stdexcept>

#include "core/apportion.hpp"
#include "core/check.hpp"

namespace strait {

namespace {
template <typename P>
std::unique_ptr<P> need(std::unique_ptr<P> p, const char* slot, const std::string& name) {
  if (!p) throw std::runtime_error(std::string("control.") + slot + ": unknown policy \"" + name + "\"");
  return p;
}
}  // namespace

Controller::Controller(const Config& cfg, const Topology& topo,
                       std::vector<std::vector<double>> splits, std::vector<double> shares)
    : cfg_(cfg), topo_(topo), splits_(std::move(splits)), shares_(std::move(shares)) {
  const auto& c = cfg.control;
  forecaster_ = need(make_forecaster(c.forecaster, cfg), "forecaster", c.forecaster);
  balancer_ = need(make_balancer(c.balancer, cfg), "balancer", c.balancer);
  paths_ = need(make_path_selector(c.path_selector, cfg), "path_selector", c.path_selector);
  planner_ = need(make_sync_planner(c.sync_planner, cfg), "sync_planner", c.sync_planner);
  overlap_ = need(make_overlap_scheduler(c.overlap, cfg), "overlap", c.overlap);
}

std::vector<DecisionRow> Controller::initial_rows(int64_t step) const {
  std::ostringstream paths;
  const int n = topo_.num_dcs;
  auto p = paths_->choose(n);
  paths << "{\"paths\":[";
  bool first = true;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      paths << (first ? "" : ",") << "[";
      for (size_t i = 0; i < p[s * n + d].size(); ++i) paths << (i ? "," : "") << p[s * n + d][i];
      paths << "]";
      first = false;
    }
  paths << "]}";
  return {
      {step, step, "forecaster", forecaster_->name(), "{}"},
      {step, step, "balancer", balancer_->name(), "{}"},
      {step, step, "path_selector", paths_->name(), paths.str()},
      {step, step, "sync_planner", planner_->name(),
       "{\"strategy\":\"" + planner_->strategy() + "\"}"},
      {step, step, "overlap", overlap_->name(),
       std::string("{\"overlap\":") + (overlap_->overlap() ? "true" : "false") + "}"},
  };
}

Decision Controller::on_step(int64_t step, const std::vector<RankMeasure>& m,
                             const std::vector<LinkCounters>& /*links: for path selectors*/,
                             std::vector<DecisionRow>& rows) {
  Decision d;
  std::vector<double> load(m.size());
  for (size_t r = 0; r < m.size(); ++r) {
    load[r] = m[r].compute_ms + m[r].emulated_ms;
    d.stop = d.stop || m[r].stop != 0;
  }
  // Global loss: each DC's mean loss weighted by its sequences of the global batch.
  const int B = cfg_.train.global_batch;
  const auto seqs = apportion(shares_, B, 1);
  for (int dc = 0; dc < topo_.num_dcs; ++dc)
    d.loss += static_cast<double>(seqs[dc]) / B * m[topo_.dc_first_rank[dc]].loss;
  forecaster_->observe(load);
  const auto fc = forecaster_->forecast();
  BalanceState s{step, &splits_, &shares_, &fc};
  BalanceDecision b = balancer_->decide(s);
  if (b.change) {
    splits_ = b.splits;
    shares_ = b.shares;
    rows.push_back({step, step + 1, "balancer", balancer_->name(), b.detail});
  }
  d.change = b.change;
  d.splits = splits_;
  d.shares = shares_;
  return d;
}

StepExchange exchange_step(const Topology& topo, Controller* ctl, int64_t step,
                           const RankMeasure& mine, const std::vector<LinkCounters>& my_links) {
  const int W = topo.world_size, n = topo.num_dcs;
  const int rec = RankMeasure::kFields + 3 * n * n;  // record, then (bytes, busy, queued) per link
  std::vector<double> send(rec);
  const double* f = &mine.compute_ms;
  std::copy(f, f + RankMeasure::kFields, send.begin());
  for (int l = 0; l < n * n; ++l) {
    send[RankMeasure::kFields + 3 * l] = my_links[l].bytes;
    send[RankMeasure::kFields + 3 * l + 1] = my_links[l].busy_ms;
    send[RankMeasure::kFields + 3 * l + 2] = my_links[l].queued_ms;
  }
  std::vector<double> gathered(topo.world_rank == 0 ? static_cast<size_t>(W) * rec : 0);
  MPI_CHECK(MPI_Gather(send.data(), rec, MPI_DOUBLE, gathered.data(), rec, MPI_DOUBLE, 0,
                       topo.world));
  StepExchange out;
  // Wire format: stop, change, loss, W split fractions (rank order), n shares.
  std::vector<double> wire(3 + W + n, 0.0);
  if (topo.world_rank == 0) {
    STRAIT_CHECK(ctl != nullptr, "rank 0 needs the controller");
    out.ranks.resize(W);
    out.links.assign(n * n, LinkCounters{});
    for (int r = 0; r < W; ++r) {
      const double* g = gathered.data() + static_cast<size_t>(r) * rec;
      std::copy(g, g + RankMeasure::kFields, &out.ranks[r].compute_ms);
      for (int l = 0; l < n * n; ++l) {
        out.links[l].bytes += g[RankMeasure::kFields + 3 * l];
        out.links[l].busy_ms += g[RankMeasure::kFields + 3 * l + 1];
        out.links[l].queued_ms += g[RankMeasure::kFields + 3 * l + 2];
      }
    }
    const double t0 = MPI_Wtime();
    Decision d = ctl->on_step(step, out.ranks, out.links, out.rows);
    out.controller_ms = (MPI_Wtime() - t0) * 1e3;
    wire[0] = d.stop, wire[1] = d.change, wire[2] = d.loss;
    for (int dc = 0, r = 0; dc < n; ++dc)
      for (double x : d.splits[dc]) wire[3 + r++] = x;
    for (int dc = 0; dc < n; ++dc) wire[3 + W + dc] = d.shares[dc];
  }
  MPI_CHECK(MPI_Bcast(wire.data(), static_cast<int>(wire.size()), MPI_DOUBLE, 0, topo.world));
  Decision& d = out.decision;
  d.stop = wire[0] != 0, d.change = wire[1] != 0, d.loss = wire[2];
  d.splits.resize(n);
  for (int dc = 0, r = 0; dc < n; ++dc)
    for (int i = 0; i < topo.dc_ranks[dc]; ++i) d.splits[dc].push_back(wire[3 + r++]);
  d.shares.assign(wire.begin() + 3 + W, wire.end());
  return out;
}

}  // namespace strait
