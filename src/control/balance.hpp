// balance.hpp — the rule of the balancers "proportional" (on the forecast) and "oracle" (on the
// scenario's true speeds, an upper bound): split each DC's heads and MLP columns so that its
// slowest rank is as fast as whole heads allow, and the global batch across DCs so that the
// slowest DC is as fast as whole sequences allow — the discrete form of "every rank's, and
// every DC's, predicted time equal" — then change the plan in force only when it pays. T is the
// predicted step time: the slowest DC's compute (its sequences × its slowest rank's time per
// sequence) plus the sync time of the plan in force (measured; overlapped with the compute under
// the pipelined overlap).
//   - a DC is re-split only when its slowest rank is predicted faster per sequence by more than
//     [control.balance] hysteresis and the noise of the recent forecasts for its ranks (two
//     robust standard deviations of their relative error: noise is not chased), and when its
//     re-split cost has been measured;
//   - batch shares alone move when T falls by more than the hysteresis and the pooled noise;
//   - the re-splits taken are those that add most net value, gain_steps × (T in force − T new)
//     − the measured cost of the re-split, and the whole change must still gain more than the
//     hysteresis and have a positive net value.
// docs/balance.md gives the rule with its readings; the two policies differ only in the loads
// they hand to it.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "control/policy.hpp"

namespace strait {

// Heads per rank of one DC (each >= 1, summing to model.heads) that minimise the slowest rank's
// time per sequence, rank r taking ms_per_flop[r] × sequence_flops(its heads, their columns):
// the greedy that gives each next head to the rank it slows least (optimal for a min-max of
// costs that grow with the heads), columns counted in proportion to the heads. Needs
// 1 <= ranks <= heads and all ms_per_flop > 0.
std::vector<int> balance_heads(const ModelConfig& m, const std::vector<double>& ms_per_flop);

// Sequences per DC (each >= 1, summing to B) that minimise max_d seqs[d] × ms_per_seq[d]; the
// same greedy. Needs 1 <= DCs <= B and all ms_per_seq > 0.
std::vector<int> balance_sequences(const std::vector<double>& ms_per_seq, int B);

// The rule, with its memory of past forecasts (their errors are the noise level).
class BalanceRule {
 public:
  explicit BalanceRule(const Config& cfg) : cfg_(cfg.control.balance) {}

  // ref_ms: per world rank, the load predicted for view.effective_step() at the rank's reference
  // work (work.hpp); empty: nothing to go on, the plan in force stays. `source` names what the
  // loads came from for the detail ("forecast" or, for the oracle, "true speeds").
  BalanceDecision decide(const ControllerView& v, const std::vector<double>& ref_ms,
                         const std::string& source);

 private:
  void score(const ControllerView& v);  // the errors of past predictions whose step completed
  double noise(const ControllerView& v, int dc) const;  // dc < 0: every rank pooled

  BalanceConfig cfg_;
  std::map<int64_t, std::vector<double>> predicted_;  // step → ref_ms predicted for it
  std::vector<std::deque<double>> errors_;             // per rank: recent relative errors
};

}  // namespace strait
