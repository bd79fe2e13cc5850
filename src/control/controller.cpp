// controller.cpp — policy wiring, proposals and the decision record (see controller.hpp).
#include "control/controller.hpp"

#include <limits>
#include <stdexcept>

#include "control/work.hpp"
#include "core/check.hpp"

namespace strait {

namespace {
template <typename P>
std::unique_ptr<P> need(std::unique_ptr<P> p, const char* slot, const std::string& name) {
  if (!p) throw std::runtime_error(std::string("control.") + slot + ": unknown policy \"" + name + "\"");
  return p;
}

// The proposal must be a complete, well-formed record: a policy bug must not reach the ranks.
void check_shape(const Plan& p, const World& w) {
  const int n = w.num_dcs;
  STRAIT_CHECK(static_cast<int>(p.splits.size()) == n && static_cast<int>(p.shares.size()) == n,
               "balancer: one split and one share per datacenter");
  for (int d = 0; d < n; ++d)
    STRAIT_CHECK(static_cast<int>(p.splits[d].size()) == w.dc_ranks[d],
                 "balancer: one split fraction per rank of datacenter " + w.dc_names[d]);
  STRAIT_CHECK(static_cast<int>(p.paths.size()) == n * n, "path selector: one path per ordered pair");
}
}  // namespace

Controller::Controller(const Config& cfg, World world, std::shared_ptr<const Scenario> scenario,
                       Plan start)
    : view_(std::move(world), std::move(scenario), std::move(start)) {
  const auto& c = cfg.control;
  forecaster_ = need(make_forecaster(c.forecaster, cfg), "forecaster", c.forecaster);
  balancer_ = need(make_balancer(c.balancer, cfg), "balancer", c.balancer);
  paths_ = need(make_path_selector(c.path_selector, cfg), "path_selector", c.path_selector);
  planner_ = need(make_sync_planner(c.sync_planner, cfg), "sync_planner", c.sync_planner);
  overlap_ = need(make_overlap_scheduler(c.overlap, cfg), "overlap", c.overlap);
}

Plan Controller::propose(std::vector<std::string>& details, Forecast& f) {
  f = forecaster_->forecast(view_);
  BalanceDecision b = balancer_->decide(view_, f);
  PathDecision p = paths_->choose(view_);
  SyncDecision s = planner_->plan(view_, p);
  const OverlapDecision o = overlap_->decide(view_);
  details = {f.detail, b.detail, p.detail, s.detail, o.detail};
  Plan next;
  next.made_after = view_.last() ? view_.last()->step : view_.plan().effective - 1;
  next.effective = view_.effective_step();
  next.splits = std::move(b.splits);
  next.shares = std::move(b.shares);
  next.paths = std::move(p.paths);
  next.routes = std::move(p.routes);
  next.sync = std::move(s.plan);
  next.overlap = o.overlap;
  check_shape(next, view_.world());
  return next;
}

Plan Controller::initial(std::vector<DecisionRow>& rows) {
  const int64_t first = view_.plan().effective;
  view_.set_clock(first, 0.0);
  std::vector<std::string> details;
  Forecast f;
  Plan p = propose(details, f);
  keep_forecast(f, p.made_after, first, view_.plan(), p);
  view_.set_plan(p);
  const std::string names[] = {forecaster_->name(), balancer_->name(), paths_->name(),
                               planner_->name(), overlap_->name()};
  for (size_t k = 0; k < policy_slots().size(); ++k)
    rows.push_back({first, first, policy_slots()[k], names[k], details[k]});
  rows.push_back({first, first, "plan", "controller", to_json(p)});
  return p;
}

void Controller::computed(StepRecord r) {
  set_work(view_.world(), r);
  view_.computed(std::move(r));
}

void Controller::record(StepRecord r) {
  set_work(view_.world(), r);  // the forecasters compare loads at the reference work
  // Its forecast has been traced (forecast_rows) or is not wanted (no trace).
  forecasts_.erase(forecasts_.begin(), forecasts_.upper_bound(r.step));
  view_.record(std::move(r));
}

void Controller::keep_forecast(const Forecast& f, int64_t made_after, int64_t step,
                               const Plan& under, const Plan& next) {
  if (f.load_ms.size() != static_cast<size_t>(view_.world().world_size)) return;
  Kept k{made_after, f};
  const std::vector<double> was = relative_work(view_.world(), under.splits, under.shares);
  const std::vector<double> will = relative_work(view_.world(), next.splits, next.shares);
  for (size_t r = 0; r < k.f.load_ms.size(); ++r) k.f.load_ms[r] *= will[r] / was[r];
  forecasts_[step] = std::move(k);
}

std::vector<ForecastRow> Controller::forecast_rows(const StepRecord& r) {
  std::vector<ForecastRow> rows;
  const auto it = forecasts_.find(r.step);
  if (it == forecasts_.end()) return rows;
  const Kept& k = it->second;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 0; i < k.f.load_ms.size() && i < r.ranks.size(); ++i) {
    auto at = [&](const auto& v, auto none) { return i < v.size() ? v[i] : none; };
    rows.push_back(ForecastRow{r.step, static_cast<int32_t>(i), k.made_after, k.f.load_ms[i],
                               r.ranks[i].load_ms(), at(k.f.model, forecaster_->name()),
                               at(k.f.why, std::string()), at(k.f.c, nan), at(k.f.p, nan)});
  }
  forecasts_.erase(it);
  return rows;
}

std::optional<Plan> Controller::decide(int64_t at_step, int64_t effective_step,
                                       double run_time_s, std::vector<DecisionRow>& rows) {
  view_.set_clock(effective_step, run_time_s);
  std::vector<std::string> details;
  Forecast f;
  Plan next = propose(details, f);
  const Plan& cur = view_.plan();
  keep_forecast(f, next.made_after, effective_step, cur, next);
  if (next.same_decisions(cur)) return std::nullopt;
  const bool changed[] = {false,  // forecasts are not decisions; the balancer acts on them
                          next.splits != cur.splits || next.shares != cur.shares,
                          next.paths != cur.paths || next.routes != cur.routes,
                          !(next.sync == cur.sync),
                          next.overlap != cur.overlap};
  const std::string names[] = {forecaster_->name(), balancer_->name(), paths_->name(),
                               planner_->name(), overlap_->name()};
  for (size_t k = 0; k < policy_slots().size(); ++k)
    if (changed[k]) rows.push_back({at_step, effective_step, policy_slots()[k], names[k], details[k]});
  rows.push_back({at_step, effective_step, "plan", "controller", to_json(next)});
  view_.set_plan(next);
  return next;
}

}  // namespace strait
