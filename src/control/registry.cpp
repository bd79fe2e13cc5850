// registry.cpp — the policy tables: slot → (name, factory, one-line summary). A new policy adds
// one file and one row here; configs name policies by these strings, validation
// (src/validate/) checks names against these tables, and `strait policies` and docs/config.md
// list them from here (a test keeps the docs in step).
#include <stdexcept>
#include <utility>

#include "control/policies.hpp"

namespace strait {
namespace {

template <typename Base>
struct Entry {
  const char* name;
  std::unique_ptr<Base> (*make)(const Config&);
  const char* summary;
};
template <typename Base>
using Table = std::vector<Entry<Base>>;

const Table<Forecaster> kForecasters = {
    {"last-value", make_last_value_forecaster, "each rank's load in the last completed step"},
    {"moving-mean", make_moving_mean_forecaster,
     "mean of each rank's load over the last 8 completed steps"},
    {"ewma", make_ewma_forecaster,
     "exponentially weighted mean of each rank's load ([control.forecast] ewma_alpha)"},
    {"gm11", make_gm11_forecaster,
     "rolling GM(1,1) of each rank's load, with its checks and a fallback baseline "
     "([control.forecast])"},
    {"gmc", make_gmc_forecaster,
     "Grey Markov Chain: gm11 corrected by a Markov chain of its relative residuals, same checks "
     "and fallback"},
    {"oracle", make_oracle_forecaster,
     "UPPER BOUND, not a method: last compute / the scenario's true speed at the step forecast"},
};
const Table<Balancer> kBalancers = {
    {"static", make_static_balancer, "the splits and batch shares the run started with"},
    {"scheduled", make_scheduled_balancer, "replays [[control.resplit]] entries"},
    {"proportional", make_proportional_balancer,
     "re-splits heads/columns and batch shares so predicted times are equal, when the gain beats "
     "noise and the measured re-split cost ([control.balance])"},
    {"oracle", make_oracle_balancer,
     "UPPER BOUND, not a method: proportional's rule on the scenario's true speeds"},
};
const Table<PathSelector> kPathSelectors = {
    {"direct", make_direct_path_selector, "every transfer on its direct link"},
    {"scheduled", make_scheduled_path_selector,
     "replays [[control.reroute]] entries (shortest paths where no entry applies and no link is)"},
    {"shortest", make_shortest_path_selector, "fewest hops, then least believed latency"},
    {"widest", make_widest_path_selector,
     "largest bottleneck of the last wire measurement (direct or up to two relays)"},
    {"ewma-widest", make_ewma_widest_path_selector,
     "largest bottleneck of the smoothed wire measurements ([control.paths] ewma_alpha)"},
    {"mdp", make_mdp_path_selector,
     "Markov decision process over link congestion states, value iteration ([control.paths]); under hierarchical, refined jointly over the ring's hops on the expected figures"},
    {"oracle", make_oracle_path_selector,
     "UPPER BOUND, not a method: the best path on the scenario's true link figures (under hierarchical, jointly over the ring's hops)"},
    {"oracle-now", make_oracle_now_path_selector,
     "REACTION BOUND, not a method: the oracle on the true link figures at the moment it decides, not when the decision takes effect"},
};
const Table<SyncPlanner> kSyncPlanners = {
    {"hierarchical", make_hierarchical_planner,
     "gather in each DC, ring among gateways, scatter (strategy hierarchical)"},
    {"star", make_star_planner,
     "parameter server at the DC with the lowest predicted time on the believed links "
     "(strategy owners)"},
    {"ring-best", make_ring_best_planner,
     "hierarchical, in the ring order of least predicted time on the believed links (docs/sync.md)"},
    {"blp", make_blp_planner,
     "owner plan from the BLP linear program (slices, multi-path flows, one-relay paths) on the "
     "believed links, latency-aware (strategy owners)"},
    {"mpi-allreduce", make_mpi_allreduce_planner,
     "the gateways call MPI_Allreduce; only with network.shaper = \"none\" (strategy "
     "mpi-allreduce)"},
    {"scheduled", make_scheduled_planner,
     "hierarchical, then the planners [[control.switch]] entries name"},
};
const Table<OverlapScheduler> kOverlap = {
    {"sequential", make_sequential_overlap, "each step syncs and updates before the next computes"},
    {"pgcs", make_pgcs_overlap,
     "a step's sync runs while the next step computes the next expert (needs experts >= 2)"},
    {"scheduled", make_scheduled_overlap,
     "sequential, then the schedulers [[control.switch]] entries name"},
};

template <typename Base>
std::unique_ptr<Base> make(const Table<Base>& t, const std::string& name, const Config& cfg) {
  for (const auto& e : t)
    if (name == e.name) return e.make(cfg);
  return nullptr;
}
template <typename Base>
std::vector<std::string> names(const Table<Base>& t) {
  std::vector<std::string> out;
  for (const auto& e : t) out.push_back(e.name);
  return out;
}
template <typename Base>
std::string summary(const Table<Base>& t, const std::string& name) {
  for (const auto& e : t)
    if (name == e.name) return e.summary;
  return "";
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

bool balancer_weighs_resplit_cost(const std::string& name) {
  return name == "proportional" || name == "oracle";
}

const std::vector<std::string>& policy_slots() {
  static const std::vector<std::string> slots = {"forecaster", "balancer", "path_selector",
                                                 "sync_planner", "overlap"};
  return slots;
}

std::vector<std::string> policy_names(const std::string& slot) {
  if (slot == "forecaster") return names(kForecasters);
  if (slot == "balancer") return names(kBalancers);
  if (slot == "path_selector") return names(kPathSelectors);
  if (slot == "sync_planner") return names(kSyncPlanners);
  if (slot == "overlap") return names(kOverlap);
  return {};
}

std::string policy_summary(const std::string& slot, const std::string& name) {
  if (slot == "forecaster") return summary(kForecasters, name);
  if (slot == "balancer") return summary(kBalancers, name);
  if (slot == "path_selector") return summary(kPathSelectors, name);
  if (slot == "sync_planner") return summary(kSyncPlanners, name);
  if (slot == "overlap") return summary(kOverlap, name);
  return "";
}

}  // namespace strait
