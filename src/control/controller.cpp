// controller.cpp — policy wiring, proposals and the decision record (see controller.hpp).
#include "control/controller.hpp"

#include <stdexcept>

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

Plan Controller::propose(std::vector<std::string>& details) {
  const Forecast f = forecaster_->forecast(view_);
  BalanceDecision b = balancer_->decide(view_, f);
  PathDecision p = paths_->choose(view_);
  SyncDecision s = planner_->plan(view_, p.paths);
  const OverlapDecision o = overlap_->decide(view_);
  details = {f.detail, b.detail, p.detail, s.detail, o.detail};
  Plan next;
  next.made_after = view_.last() ? view_.last()->step : view_.plan().effective - 1;
  next.effective = view_.effective_step();
  next.splits = std::move(b.splits);
  next.shares = std::move(b.shares);
  next.paths = std::move(p.paths);
  next.sync = std::move(s.plan);
  next.overlap = o.overlap;
  check_shape(next, view_.world());
  return next;
}

Plan Controller::initial(std::vector<DecisionRow>& rows) {
  const int64_t first = view_.plan().effective;
  view_.set_clock(first, 0.0);
  std::vector<std::string> details;
  Plan p = propose(details);
  view_.set_plan(p);
  const std::string names[] = {forecaster_->name(), balancer_->name(), paths_->name(),
                               planner_->name(), overlap_->name()};
  for (size_t k = 0; k < policy_slots().size(); ++k)
    rows.push_back({first, first, policy_slots()[k], names[k], details[k]});
  rows.push_back({first, first, "plan", "controller", to_json(p)});
  return p;
}

void Controller::record(StepRecord r) { view_.record(std::move(r)); }

std::optional<Plan> Controller::decide(int64_t at_step, int64_t effective_step,
                                       double run_time_s, std::vector<DecisionRow>& rows) {
  view_.set_clock(effective_step, run_time_s);
  std::vector<std::string> details;
  Plan next = propose(details);
  const Plan& cur = view_.plan();
  if (next.same_decisions(cur)) return std::nullopt;
  const bool changed[] = {false,  // forecasts are not decisions; the balancer acts on them
                          next.splits != cur.splits || next.shares != cur.shares,
                          next.paths != cur.paths, !(next.sync == cur.sync),
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
