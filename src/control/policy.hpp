// policy.hpp — the five controller slots. Each slot is an interface; each policy is one small
// file implementing it, registered by name in registry.cpp. Policies run on rank 0 only, between
// steps, and see the run through one ControllerView (view.hpp): measurements of completed
// steps, the configured world, the decision in force, and — for oracles only — the scenario.
// Every call returns the slot's whole proposal for view.effective_step() (not a delta); the
// controller compares it with the plan in force, and what changed goes into the next decision
// record (plan.hpp), which every rank applies at the same step boundary. A `detail` is JSON
// text for the trace: what the policy saw and why it decided so.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "control/plan.hpp"
#include "control/view.hpp"

namespace strait {

// Load forecaster: per-rank load (compute + emulated ms per step) for view.effective_step().
// The per-rank vectors after load_ms say how each forecast came about (for the trace); a policy
// that does not say leaves them empty.
struct Forecast {
  std::vector<double> load_ms;  // per world rank; empty while it has nothing to go on
  // [rank][j]: the load at effective_step + j, j < [control.forecast] horizon (ahead_ms[r][0]
  // is load_ms[r]); empty when the policy looks only at the effective step.
  std::vector<std::vector<double>> ahead_ms;
  std::vector<std::string> model;  // what produced load_ms[r]: "gm11", "gmc", "ewma", "oracle",
                                   // or "fallback:<baseline>" when a grey model handed over
  std::vector<std::string> why;    // why the fallback answered ("" when the model did)
  std::vector<double> c, p;        // GM(1,1) posterior variance ratio and small-error
                                   // probability of the window behind load_ms[r] (NaN: no fit)
  std::string detail = "{}";
};
class Forecaster {
 public:
  virtual ~Forecaster() = default;
  virtual std::string name() const = 0;
  virtual Forecast forecast(const ControllerView& v) = 0;
};

// Balancer: the splits (per DC) and batch shares to use.
struct BalanceDecision {
  std::vector<std::vector<double>> splits;
  std::vector<double> shares;
  std::string detail = "{}";
};
class Balancer {
 public:
  virtual ~Balancer() = default;
  virtual std::string name() const = 0;
  virtual BalanceDecision decide(const ControllerView& v, const Forecast& f) = 0;
};

// Path selector: the DC path of every ordered pair.
struct PathDecision {
  Paths paths;
  Routes routes;  // pairs whose bytes several paths share (empty entries, or empty: none)
  std::string detail = "{}";
};
class PathSelector {
 public:
  virtual ~PathSelector() = default;
  virtual std::string name() const = 0;
  virtual PathDecision choose(const ControllerView& v) = 0;
};

// Sync planner: the sync strategy and its plan, given the paths chosen for the same step.
struct SyncDecision {
  SyncPlan plan;
  std::string detail = "{}";
};
class SyncPlanner {
 public:
  virtual ~SyncPlanner() = default;
  virtual std::string name() const = 0;
  // `chosen`: the paths (and multi-path routes) the path selector chose for the same step.
  virtual SyncDecision plan(const ControllerView& v, const PathDecision& chosen) = 0;
};

// Overlap scheduler: sequential, or a step's sync overlapped with the next step's compute.
struct OverlapDecision {
  Overlap overlap = Overlap::sequential;
  std::string detail = "{}";
};
class OverlapScheduler {
 public:
  virtual ~OverlapScheduler() = default;
  virtual std::string name() const = 0;
  virtual OverlapDecision decide(const ControllerView& v) = 0;
};

// Factories by registered name; nullptr when the name is unknown.
std::unique_ptr<Forecaster> make_forecaster(const std::string& name, const Config& cfg);
std::unique_ptr<Balancer> make_balancer(const std::string& name, const Config& cfg);
std::unique_ptr<PathSelector> make_path_selector(const std::string& name, const Config& cfg);
std::unique_ptr<SyncPlanner> make_sync_planner(const std::string& name, const Config& cfg);
std::unique_ptr<OverlapScheduler> make_overlap_scheduler(const std::string& name,
                                                         const Config& cfg);
// Whether a balancer weighs re-splits against their measured cost: the trainer then times a
// re-split to the starting layout at start-up, so that the cost is known before it decides.
bool balancer_weighs_resplit_cost(const std::string& name);
// The controller's slots, in the order they decide: "forecaster", "balancer", "path_selector",
// "sync_planner", "overlap".
const std::vector<std::string>& policy_slots();
// Registered names of a slot (empty for an unknown slot), in registry order.
std::vector<std::string> policy_names(const std::string& slot);
// One line per registered policy of a slot: what it does (for --help and docs/config.md).
std::string policy_summary(const std::string& slot, const std::string& name);

}  // namespace strait
