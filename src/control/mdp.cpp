// mdp.cpp — value and policy iteration (see mdp.hpp).
#include "control/mdp.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace strait {

namespace {
void check(int S, int A, const std::vector<double>& cost, double gamma) {
  if (S <= 0 || A <= 0 || cost.size() != static_cast<size_t>(S) * A)
    throw std::invalid_argument("mdp: cost must have S·A entries");
  if (!(gamma >= 0 && gamma < 1)) throw std::invalid_argument("mdp: gamma must be in [0, 1)");
}
}  // namespace

MdpSolution value_iteration(int S, int A, const std::vector<double>& cost, const MdpExpect& expect,
                            double gamma, double epsilon, int max_iterations,
                            const std::vector<double>& start, StopRule rule) {
  check(S, A, cost, gamma);
  if (!(epsilon > 0)) throw std::invalid_argument("mdp: epsilon must be > 0");
  if (!start.empty() && start.size() != static_cast<size_t>(S))
    throw std::invalid_argument("mdp: start must have S entries");
  MdpSolution sol;
  if (start.empty()) sol.value.assign(S, 0.0);
  else sol.value = start;
  sol.policy.assign(S, 0);
  // With Δ = V_{k+1} − V_k (mdp.hpp): the span rule stops once max Δ − min Δ <= ε(1−γ)/γ, the
  // sup-norm rule once ‖Δ‖∞ < ε(1−γ)/(2γ). With γ = 0 one sweep is exact.
  const bool span = rule == StopRule::span;
  const double stop = gamma > 0 ? epsilon * (1 - gamma) / (span ? gamma : 2 * gamma) : 0.0;
  std::vector<std::vector<double>> ev(A, std::vector<double>(S));
  std::vector<double> next(S);
  double lo = 0, hi = 0;
  for (int it = 1; it <= max_iterations; ++it) {
    for (int a = 0; a < A; ++a) expect(a, sol.value, ev[a]);
    lo = 1e300, hi = -1e300;
    for (int s = 0; s < S; ++s) {
      double best = 1e300;
      for (int a = 0; a < A; ++a) {
        const double q = cost[static_cast<size_t>(s) * A + a] + gamma * ev[a][s];
        if (q < best - 1e-12) best = q;  // ties: the lower action
      }
      next[s] = best;
      lo = std::min(lo, best - sol.value[s]);
      hi = std::max(hi, best - sol.value[s]);
    }
    sol.value.swap(next);
    sol.iterations = it;
    sol.residual = span ? hi - lo : std::max(std::fabs(lo), std::fabs(hi));
    if (gamma == 0 || (span ? sol.residual <= stop : sol.residual < stop)) break;
  }
  // The greedy policy of the final values (what the stopping rule bounds); a constant added to
  // every value moves no comparison, so it is taken before the values are centred.
  for (int a = 0; a < A; ++a) expect(a, sol.value, ev[a]);
  for (int s = 0; s < S; ++s) {
    double best = 1e300;
    for (int a = 0; a < A; ++a) {
      const double q = cost[static_cast<size_t>(s) * A + a] + gamma * ev[a][s];
      if (q < best - 1e-12) best = q, sol.policy[s] = a;
    }
  }
  // MacQueen's bounds: V* lies within V_{k+1} + γ/(1−γ)·[min Δ, max Δ]; the middle of that band
  // is within γ/(1−γ)·(max Δ − min Δ)/2 <= ε/2 of it.
  if (span && gamma > 0) {
    const double shift = gamma / (1 - gamma) * (lo + hi) / 2;
    for (double& v : sol.value) v += shift;
  }
  return sol;
}

std::vector<double> contract_product_chains(std::vector<double> V,
                                            const std::vector<std::vector<double>>& P, int K) {
  const size_t X = V.size(), k = static_cast<size_t>(K);
  size_t joint = 1;
  for (const auto& Pl : P) {
    if (K < 1 || Pl.size() != k * k)
      throw std::invalid_argument("contract_product_chains: a chain that is not K x K");
    joint *= k;
  }
  if (joint != X) throw std::invalid_argument("contract_product_chains: V does not hold K^L values");
  std::vector<double> out(X);
  size_t stride = 1;  // K^l: the distance between neighbouring values of digit l
  for (size_t l = 0; l < P.size(); ++l, stride *= k) {
    const double* Pl = P[l].data();
    // x = hi·K·stride + digit·stride + lo: walked in that order, so no division per entry (the
    // controller solves up to 3125 joint states a pair, every step, for each ring pair).
    for (size_t hi = 0; hi < X; hi += k * stride)
      for (size_t digit = 0; digit < k; ++digit)
        for (size_t lo = 0; lo < stride; ++lo) {
          const double* v = V.data() + hi + lo;
          double acc = 0;
          for (size_t j = 0; j < k; ++j) acc += Pl[digit * k + j] * v[j * stride];
          out[hi + digit * stride + lo] = acc;
        }
    V.swap(out);
  }
  return V;
}

MdpExpect explicit_expect(const std::vector<std::vector<double>>& P, int S) {
  return [&P, S](int a, const std::vector<double>& V, std::vector<double>& out) {
    out.assign(S, 0.0);
    for (int s = 0; s < S; ++s)
      for (int t = 0; t < S; ++t) out[s] += P[a][static_cast<size_t>(s) * S + t] * V[t];
  };
}

std::vector<double> evaluate_policy(int S, int A, const std::vector<double>& cost,
                                    const std::vector<std::vector<double>>& P, double gamma,
                                    const std::vector<int>& policy) {
  check(S, A, cost, gamma);
  Eigen::MatrixXd M = Eigen::MatrixXd::Identity(S, S);
  Eigen::VectorXd c(S);
  for (int s = 0; s < S; ++s) {
    const int a = policy[s];
    c(s) = cost[static_cast<size_t>(s) * A + a];
    for (int t = 0; t < S; ++t) M(s, t) -= gamma * P[a][static_cast<size_t>(s) * S + t];
  }
  const Eigen::VectorXd v = M.partialPivLu().solve(c);
  return std::vector<double>(v.data(), v.data() + S);
}

MdpSolution policy_iteration(int S, int A, const std::vector<double>& cost,
                             const std::vector<std::vector<double>>& P, double gamma) {
  check(S, A, cost, gamma);
  MdpSolution sol;
  sol.policy.assign(S, 0);
  const MdpExpect expect = explicit_expect(P, S);
  std::vector<std::vector<double>> ev(A);
  for (int it = 1; it <= 10000; ++it) {
    sol.value = evaluate_policy(S, A, cost, P, gamma, sol.policy);
    for (int a = 0; a < A; ++a) expect(a, sol.value, ev[a]);
    bool stable = true;
    for (int s = 0; s < S; ++s) {
      int arg = sol.policy[s];
      double best = cost[static_cast<size_t>(s) * A + arg] + gamma * ev[arg][s];
      for (int a = 0; a < A; ++a) {
        const double q = cost[static_cast<size_t>(s) * A + a] + gamma * ev[a][s];
        if (q < best - 1e-9) best = q, arg = a;  // change only on a strict improvement
      }
      if (arg != sol.policy[s]) stable = false, sol.policy[s] = arg;
    }
    sol.iterations = it;
    if (stable) break;
  }
  return sol;
}

}  // namespace strait
