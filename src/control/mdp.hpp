// mdp.hpp — finite Markov decision processes with costs, solved for a policy that minimises the
// expected discounted cost. Used by the MDP path selector (path_mdp.cpp), whose state space is a
// product of per-link congestion chains: the solver therefore takes the expectation over next
// states as a function (the caller contracts its factored transition model), and an explicit
// form for small problems and tests.
//   value iteration   V ← min_a [ c(s,a) + γ · E_a V (s) ], stopped, with Δ = V_{k+1} − V_k,
//                     by one of two rules that each make the greedy policy of V_{k+1} ε-optimal
//                     from any start (so a re-solve may start from the last solution):
//                     sup-norm  ‖Δ‖∞ < ε(1−γ)/(2γ) (Puterman, Markov Decision Processes, 1994,
//                               Thm 6.3.1); the values returned are V_{k+1}, within ε/2 of V*;
//                     span      max Δ − min Δ <= ε(1−γ)/γ (MacQueen's bounds, Puterman §6.6.3):
//                               V* lies within V_{k+1} + γ/(1−γ)·[min Δ, max Δ], and the values
//                               returned are the middle of that band, within ε/2 of V*. It stops
//                               far sooner where the values converge mostly by a common offset,
//                               as the path selector's do (discounted sums of step times, every
//                               state's alike): ~130 sweeps a pair on mesh6 with sup-norm.
//   policy iteration  exact evaluation of each policy (Eigen LU of I − γP_π), then improvement,
//                     until the policy is stable (explicit transition matrices only).
#pragma once
#include <functional>
#include <vector>

namespace strait {

struct MdpSolution {
  std::vector<int> policy;    // per state: the action
  std::vector<double> value;  // per state: expected discounted cost from there
  int iterations = 0;
  double residual = 0;        // the last Δ's span (span rule) or ‖Δ‖∞ (sup-norm rule)
};

// E_a V: out[s] = Σ_{s'} P(s' | s, a) · V[s'].
using MdpExpect = std::function<void(int action, const std::vector<double>& V, std::vector<double>& out)>;

// S states, A actions, cost[s·A + a]; 0 <= γ < 1, ε > 0. start: the values to iterate from
// (S entries; empty: 0) — a re-solve of a slightly changed model starts from the last solution
// and stops sooner; the stopping rule bounds the result whatever the start.
constexpr int kMaxValueIterations = 1000000;
enum class StopRule { sup_norm, span };
MdpSolution value_iteration(int S, int A, const std::vector<double>& cost, const MdpExpect& expect,
                            double gamma, double epsilon, int max_iterations = kMaxValueIterations,
                            const std::vector<double>& start = {},
                            StopRule rule = StopRule::span);

// The expectation over a product of independent chains: W(x) = Σ_{x'} Π_l P_l(x_l, x'_l) V(x'),
// x a joint state of L = P.size() chains with K states each (x_l is digit l of x in base K,
// digit 0 the least significant), P_l K×K row-major; V has K^L entries. One mode product per
// chain, O(L·K^(L+1)) instead of the K^(2L) of the explicit joint matrix.
std::vector<double> contract_product_chains(std::vector<double> V,
                                            const std::vector<std::vector<double>>& P, int K);

// P[a] is S×S row-major: P[a][s·S + s'].
MdpExpect explicit_expect(const std::vector<std::vector<double>>& P, int S);
MdpSolution policy_iteration(int S, int A, const std::vector<double>& cost,
                             const std::vector<std::vector<double>>& P, double gamma);
// The discounted cost of a fixed policy (exact, Eigen).
std::vector<double> evaluate_policy(int S, int A, const std::vector<double>& cost,
                                    const std::vector<std::vector<double>>& P, double gamma,
                                    const std::vector<int>& policy);

}  // namespace strait
