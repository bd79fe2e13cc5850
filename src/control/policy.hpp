// policy.hpp — the five controller slots. Each slot is an interface; each policy is one small
// file implementing it, registered by name in registry.cpp. Policies run on rank 0 only, between
// steps, from measurements of steps already done; what they decide takes effect at a later step
// boundary, so a run stays reproducible for a given seed and scenario.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace strait {

// Load forecaster: per-rank load (compute + emulated ms per step) → forecast for the next step.
class Forecaster {
 public:
  virtual ~Forecaster() = default;
  virtual std::string name() const = 0;
  virtual void observe(const std::vector<double>& load) = 0;
  virtual std::vector<double> forecast() const = 0;  // empty until something was observed
};

struct BalanceState {
  int64_t step = 0;                               // the step just finished
  const std::vector<std::vector<double>>* splits; // current split per DC
  const std::vector<double>* shares;              // current batch share per DC
  const std::vector<double>* forecast;            // per-rank forecast load (may be empty)
};

struct BalanceDecision {
  bool change = false;
  std::vector<std::vector<double>> splits;  // new split per DC (all DCs)
  std::vector<double> shares;               // new batch share per DC
  std::string detail;                       // JSON for the trace
};

// Balancer: decides splits and batch shares; a change applies from the next step on.
class Balancer {
 public:
  virtual ~Balancer() = default;
  virtual std::string name() const = 0;
  virtual BalanceDecision decide(const BalanceState& s) = 0;
};

// Path selector: the DC sequence each inter-DC transfer src→dst takes.
class PathSelector {
 public:
  virtual ~PathSelector() = default;
  virtual std::string name() const = 0;
  // paths[src·n + dst] = {src, ..., dst}; entries with src == dst are empty.
  virtual std::vector<std::vector<int>> choose(int num_dcs) = 0;
};

// Sync planner: names the sync strategy (sync/registry.cpp) the next steps use.
class SyncPlanner {
 public:
  virtual ~SyncPlanner() = default;
  virtual std::string name() const = 0;
  virtual std::string strategy() const = 0;
};

// Overlap scheduler: whether expert e's sync may run while expert e+1 computes.
class OverlapScheduler {
 public:
  virtual ~OverlapScheduler() = default;
  virtual std::string name() const = 0;
  virtual bool overlap() const = 0;
};

// Factories by registered name; nullptr when the name is unknown.
std::unique_ptr<Forecaster> make_forecaster(const std::string& name, const Config& cfg);
std::unique_ptr<Balancer> make_balancer(const std::string& name, const Config& cfg);
std::unique_ptr<PathSelector> make_path_selector(const std::string& name, const Config& cfg);
std::unique_ptr<SyncPlanner> make_sync_planner(const std::string& name, const Config& cfg);
std::unique_ptr<OverlapScheduler> make_overlap_scheduler(const std::string& name,
                                                         const Config& cfg);
// Registered names of a slot: "forecaster", "balancer", "path_selector", "sync_planner",
// "overlap".
std::vector<std::string> policy_names(const std::string& slot);

}  // namespace strait
