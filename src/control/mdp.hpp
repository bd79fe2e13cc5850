// mdp.hpp — finite Markov decision processes with costs, solved for a policy that minimises the
// expected discounted cost. Used by the MDP path selector (path_mdp.cpp), whose state space is a
// product of per-link congestion chains: the solver therefore takes the expectation over next
// states as a function (the caller contracts its factored transition model), and an explicit
// form for small problems and tests.
//   value iteration   V ← min_a [ c(s,a) + γ · E_a V (s) ], stopped when ‖V_{k+1} − V_k‖∞ <
//                     ε(1−γ)/(2γ): the greedy policy of the result is then ε-optimal (Puterman,
//                     Markov Decision Processes, 1994, Thm 6.3.1) from any start, so a re-solve
//                     may start from the last solution;
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
  double residual = 0;        // last ‖V_{k+1} − V_k‖∞ (value iteration)
};

// E_a V: out[s] = Σ_{s'} P(s' | s, a) · V[s'].
using MdpExpect = std::function<void(int action, const std::vector<double>& V, std::vector<double>& out)>;

// S states, A actions, cost[s·A + a]; 0 <= γ < 1, ε > 0. start: the values to iterate from
// (S entries; empty: 0) — a re-solve of a slightly changed model starts from the last solution
// and stops sooner; the stopping rule bounds the result whatever the start.
constexpr int kMaxValueIterations = 1000000;
MdpSolution value_iteration(int S, int A, const std::vector<double>& cost, const MdpExpect& expect,
                            double gamma, double epsilon, int max_iterations = kMaxValueIterations,
                            const std::vector<double>& start = {});

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
