// policies.hpp — the factory of every registered policy (one .cpp each); registry.cpp tables
// them by name with a one-line summary.
#pragma once
#include "control/policy.hpp"

namespace strait {

std::unique_ptr<Forecaster> make_last_value_forecaster(const Config&);
std::unique_ptr<Forecaster> make_moving_mean_forecaster(const Config&);
std::unique_ptr<Forecaster> make_ewma_forecaster(const Config&);
std::unique_ptr<Forecaster> make_gm11_forecaster(const Config&);
std::unique_ptr<Forecaster> make_gmc_forecaster(const Config&);
std::unique_ptr<Forecaster> make_oracle_forecaster(const Config&);
std::unique_ptr<Balancer> make_static_balancer(const Config&);
std::unique_ptr<Balancer> make_scheduled_balancer(const Config&);
std::unique_ptr<Balancer> make_proportional_balancer(const Config&);
std::unique_ptr<Balancer> make_oracle_balancer(const Config&);
std::unique_ptr<PathSelector> make_direct_path_selector(const Config&);
std::unique_ptr<PathSelector> make_scheduled_path_selector(const Config&);
std::unique_ptr<PathSelector> make_shortest_path_selector(const Config&);
std::unique_ptr<PathSelector> make_widest_path_selector(const Config&);
std::unique_ptr<PathSelector> make_ewma_widest_path_selector(const Config&);
std::unique_ptr<PathSelector> make_mdp_path_selector(const Config&);
std::unique_ptr<PathSelector> make_oracle_path_selector(const Config&);
std::unique_ptr<PathSelector> make_oracle_now_path_selector(const Config&);
std::unique_ptr<SyncPlanner> make_hierarchical_planner(const Config&);
std::unique_ptr<SyncPlanner> make_star_planner(const Config&);
std::unique_ptr<SyncPlanner> make_ring_best_planner(const Config&);
std::unique_ptr<SyncPlanner> make_blp_planner(const Config&);
std::unique_ptr<SyncPlanner> make_mpi_allreduce_planner(const Config&);
std::unique_ptr<SyncPlanner> make_scheduled_planner(const Config&);
std::unique_ptr<OverlapScheduler> make_sequential_overlap(const Config&);
std::unique_ptr<OverlapScheduler> make_pgcs_overlap(const Config&);
std::unique_ptr<OverlapScheduler> make_scheduled_overlap(const Config&);

}  // namespace strait
