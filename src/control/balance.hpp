// balance.hpp — the rule of the balancers "proportional" (on the forecast) and "oracle" (on the
// scenario's true speeds, an upper bound): split each DC's heads and MLP columns so that its
// slowest rank is as fast as whole heads allow, and the global batch across DCs so that the
// slowest DC is as fast as whole sequences allow — the discrete form of "every rank's, and
// every DC's, predicted time equal" — then change the plan in force only when it pays. T is the
// step time: the slowest DC's compute (its sequences × its slowest rank's time per sequence)
// plus the sync time of the plan in force (measured; overlapped with the compute under the
// pipelined overlap), on the prediction held for gain_steps steps, or, where the next
// gain_steps steps are known (the oracle), averaged over them.
//   - skill gate (predictions only): on the loads that came, the plans the last noise_window
//     predictions asked for are replayed against the plans the mean of the steps before each
//     asked for. A forecast that chases noise asks for splits the next step undoes and loses to
//     the mean; unless the predictions' plans do better on average, the rule acts on the recent
//     mean of the loads instead (which also undoes a change an outlier slipped through); and
//     per rank, only where the rank's own loads persist from step to step (von Neumann's ratio
//     of successive differences), its recent mean otherwise. Until
//     half a window is scored (warm-up) the rule acts on the mean of the last steps, and a
//     change must win on each of the last 4 steps' loads, or of the last 3 when every rank's
//     load is steady across them and was before (2 at a new level once every step before them
//     was steady, 3 at least): that is its confirmation;
//   - a DC is re-split only when that makes its slowest rank faster per sequence by more than
//     the hysteresis, and its re-split cost has been measured;
//   - batch shares alone move when they lower T by more than the hysteresis;
//   - the re-splits taken are those that add most net value, gain_steps × (T in force − T new)
//     − the measured cost of the re-split; the whole change must still gain more than the
//     hysteresis and have a positive net value. Candidates are tuned to the loads of the step
//     decided for (the oracle weighs them on the known next steps, but does not tune to their
//     mean: that moved plans ahead of a change the rule would meet when it came);
//   - hysteresis in time (after the warm-up): the same change must be asked for by
//     [control.balance] confirm decisions in a row, so a one-step outlier moves nothing —
//     unless (act_early) recent changes have lasted (still paid on the next step's loads) often
//     enough that acting on the first ask pays by its expected gain and loss
//     (p (confirm − 1) g > (1 − p)(2c + confirm g)).
// docs/balance.md gives the rule with its readings; the two policies differ only in the loads
// they hand to it.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
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

// Every rank's FLOPs per step under the configured splits and batch shares (its reference work).
std::vector<double> reference_flops(const World& w);

// The plan whole heads and sequences allow for these loads (per world rank, ms per step at its
// reference work): each DC's heads by balance_heads, then the sequences by balance_sequences.
// Also what bench/balance_bound.cpp replays on a scenario's true speeds.
struct TunedPlan {
  std::vector<std::vector<double>> splits;  // per DC, fractions of the heads
  std::vector<int> seqs;                    // per DC
};
TunedPlan tune_plan(const World& w, const std::vector<double>& loads);
// The same with the reference FLOPs given (reference_flops(w)), for callers that score many.
TunedPlan tune_plan(const World& w, const std::vector<double>& loads,
                    const std::vector<double>& ref_flops);
// The compute time of a plan on these loads: the slowest DC's sequences × its slowest rank's time
// per sequence (no sync, no re-split cost).
double plan_compute_ms(const World& w, const std::vector<double>& loads, const TunedPlan& p);
double plan_compute_ms(const World& w, const std::vector<double>& loads, const TunedPlan& p,
                       const std::vector<double>& ref_flops);

// Von Neumann's ratio of successive differences, eta = Σ (x_t − x_{t−1})² / Σ (x_t − mean)²:
// 2 on average for independent values (variance 4(n − 2) / ((n − 1)(n + 1)) for n values),
// small for values that keep a level (one change of level in the middle of 20, noise-free: 0.2;
// at the newest value: 1.05). NaN when fewer than 8 values, some not finite, or when they do
// not vary.
double von_neumann_ratio(const std::vector<double>& x);
// Whether a series' values depend on each other from step to step: eta more than two standard
// deviations below 2 (about 2% of independent series), or undefined (a series that does not vary
// is forecast by its mean whatever the forecaster; under 8 values nothing is tested); never
// when a value is not finite. A forecast can tell the next value from the mean only where
// values persist: on independent ones (a rank at 1.0 or 0.7 at even odds) a last-value
// forecast is a coin flip.
bool persists(const std::vector<double>& x);

// The rule, with its memory of past predictions (how the plans they asked for would have done).
class BalanceRule {
 public:
  explicit BalanceRule(const Config& cfg) : cfg_(cfg.control.balance) {}

  // ref_ms: per world rank, the load predicted for view.effective_step() at the rank's reference
  // work (work.hpp); empty: nothing to go on, the plan in force stays. `source` names what the
  // loads came from for the detail ("forecast" or, for the oracle, "true speeds"). futures:
  // the loads of the next gain_steps steps when they are known (the oracle), else empty.
  BalanceDecision decide(const ControllerView& v, const std::vector<double>& ref_ms,
                         const std::string& source,
                         const std::vector<std::vector<double>>& futures = {});

 private:
  void score(const ControllerView& v);  // the errors of past predictions whose step completed

  BalanceConfig cfg_;
  std::map<int64_t, std::vector<double>> predicted_;  // step → ref_ms predicted for it
  std::deque<double> backtest_;  // per scored step: the relative gain the predicted plan would
                                 // have had over the recent mean's plan, on the loads that came
  std::pair<std::vector<std::vector<double>>, std::vector<double>> pending_;  // change asked for
  int pending_count_ = 0;        // decisions in a row that asked for it
  std::pair<std::vector<std::vector<double>>, std::vector<double>> pending_from_;  // in force then
  // Whether changes last (act_early): per recent first ask (the last noise_window; pending_ with
  // pending_count_ 1) whether the next decision's loads still favoured it over pending_from_.
  std::deque<bool> lasted_;
};

}  // namespace strait
