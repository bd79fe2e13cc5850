// controller.hpp — the controller on rank 0: five policy slots (policy.hpp) consulted at every
// step boundary through one ControllerView (view.hpp), and one decision record (plan.hpp) as
// their joint answer. It never runs on the critical path of a step's compute: the trainer hands
// it completed steps (record) and asks it for the plan of a later step (decide); whatever it
// changes reaches every rank through the exchange (exchange.hpp) and takes effect for all of
// them at the same step.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "control/plan.hpp"
#include "control/policy.hpp"
#include "control/view.hpp"
#include "trace/trace.hpp"

namespace strait {

class Controller {
 public:
  // `start` holds the splits and batch shares the run starts from (config or checkpoint) and
  // its first step in `effective`; the policies decide the rest. Throws std::runtime_error
  // naming the slot when a policy name is unknown (validation reports that earlier).
  Controller(const Config& cfg, World world, std::shared_ptr<const Scenario> scenario, Plan start);

  // The plan of the first step, and trace rows for every slot and the whole record.
  Plan initial(std::vector<DecisionRow>& rows);
  // A completed step (its update applied everywhere), oldest first; computed(): a step's compute
  // half before its sync completes (control.report = after-compute), replaced by record() later.
  void computed(StepRecord r);
  void record(StepRecord r);
  // The /forecasts rows of a completed step: each rank's forecast made for it (under the record
  // the step ran with) beside the load that came. Forecasts are kept until their step completes.
  std::vector<ForecastRow> forecast_rows(const StepRecord& r);
  // Consults every slot for `effective_step`; returns the new decision record when any slot's
  // answer differs from the plan in force (and appends its trace rows, made at `at_step`).
  std::optional<Plan> decide(int64_t at_step, int64_t effective_step, double run_time_s,
                             std::vector<DecisionRow>& rows);

  const ControllerView& view() const { return view_; }
  const Plan& plan() const { return view_.plan(); }

 private:
  Plan propose(std::vector<std::string>& details, Forecast& f);
  // Keeps f, made after `made_after` for step `step` under the record `under`, for the trace,
  // rescaled to the work of the record the step will run with, `next`.
  void keep_forecast(const Forecast& f, int64_t made_after, int64_t step, const Plan& under,
                     const Plan& next);

  ControllerView view_;
  std::unique_ptr<Forecaster> forecaster_;
  std::unique_ptr<Balancer> balancer_;
  std::unique_ptr<PathSelector> paths_;
  std::unique_ptr<SyncPlanner> planner_;
  std::unique_ptr<OverlapScheduler> overlap_;
  struct Kept {
    int64_t made_after = 0;
    Forecast f;
  };
  std::map<int64_t, Kept> forecasts_;  // by the step forecast
};

}  // namespace strait
