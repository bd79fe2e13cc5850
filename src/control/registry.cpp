// registry.cpp — the policy tables: slot → (name → factory). A new policy adds one file and one
// row here; configs name policies by these strings.
#include <utility>

#include "control/policies.hpp"

namespace strait {
namespace {

template <typename Base>
using Table = std::vector<std::pair<const char*, std::unique_ptr<Base> (*)(const Config&)>>;

const Table<Forecaster> kForecasters = {{"last-value", make_last_value_forecaster},
                                        {"moving-mean", make_moving_mean_forecaster}};
const Table<Balancer> kBalancers = {{"static", make_static_balancer},
                                    {"scheduled", make_scheduled_balancer}};
const Table<PathSelector> kPathSelectors = {{"direct", make_direct_path_selector}};
const Table<SyncPlanner> kSyncPlanners = {{"hierarchical", make_hierarchical_planner}};
const Table<OverlapScheduler> kOverlap = {{"sequential", make_sequential_overlap}};

template <typename Base>
std::unique_ptr<Base> make(const Table<Base>& t, const std::string& name, const Config& cfg) {
  for (const auto& [n, f] : t)
    if (name == n) return f(cfg);
  return nullptr;
}
template <typename Base>
std::vector<std::string> names(const Table<Base>& t) {
  std::vector<std::string> out;
  for (const auto& e : t) out.push_back(e.first);
  return out;
}

}  // namespace

std::unique_ptr<Forecaster> make_forecaster(const std::string& n, const Config& c) {
  return make(kForecasters, n, c);
}
std::unique_ptr<Balancer> make_balancer(const std::string& n, const Config& c) {
  return make(kBalancers, n, c);
}
std::unique_ptr<PathSelector> make_path_selector(const std::string& n, const Config& c) {
  return make(kPathSelectors, n, c);
}
std::unique_ptr<SyncPlanner> make_sync_planner(const std::string& n, const Config& c) {
  return make(kSyncPlanners, n, c);
}
std::unique_ptr<OverlapScheduler> make_overlap_scheduler(const std::string& n, const Config& c) {
  return make(kOverlap, n, c);
}

std::vector<std::string> policy_names(const std::string& slot) {
  if (slot == "forecaster") return names(kForecasters);
  if (slot == "balancer") return names(kBalancers);
  if (slot == "path_selector") return names(kPathSelectors);
  if (slot == "sync_planner") return names(kSyncPlanners);
  if (slot == "overlap") return names(kOverlap);
  return {};
}

}  // namespace strait
