// work.hpp — how much compute a rank's shard asks for, so that loads measured under one split
// and batch share can be compared with loads under another. Work is counted in model FLOPs of
// one forward + backward (matmuls and attention, the PaLM convention of model_flops_per_token,
// src/model/transformer.hpp) of the rank's heads and MLP columns plus the replicated tied LM
// head every rank of a DC computes, on its DC's sequences of the global batch.
//
// The forecasters forecast each rank's load at its *reference* work (its shard and batch under
// the configured split and batch shares): a re-split then shows as a change of work, not as a
// change of speed, and the balancers divide a forecast by the work it was made for to get the
// rank's time per unit of work (docs/balance.md).
#pragma once
#include <vector>

#include "control/view.hpp"
#include "model/layout.hpp"

namespace strait {

// FLOPs of one forward + backward of shard `s` on one sequence; the second form takes heads and
// MLP columns as numbers (a balancer weighing shares of a shard before they are whole).
double sequence_flops(const ModelConfig& m, const ShardSpec& s);
double sequence_flops(const ModelConfig& m, double heads, double cols);

// Each world rank's FLOPs per step under these splits (per DC) and batch shares.
std::vector<double> rank_flops(const World& w, const std::vector<std::vector<double>>& splits,
                               const std::vector<double>& shares);

// Each world rank's work under these splits and shares relative to its reference work (the
// configured splits and shares): 1 for a rank whose shard and batch are the configured ones,
// and for every rank when `splits` is empty (a view without a decision record yet).
std::vector<double> relative_work(const World& w, const std::vector<std::vector<double>>& splits,
                                  const std::vector<double>& shares);

// RankStep::work of every rank of a completed step, from the splits and batches it reported.
void set_work(const World& w, StepRecord& s);

}  // namespace strait
