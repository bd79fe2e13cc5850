// work.cpp — see work.hpp.
#include "control/work.hpp"

#include "core/apportion.hpp"
#include "core/check.hpp"

namespace strait {

namespace {

// Rank FLOPs from each rank's DC split and its DC's sequences.
std::vector<double> flops(const World& w, const std::vector<std::vector<double>>& splits,
                          const std::vector<int>& seqs) {
  const ModelConfig& m = w.cfg->model;
  std::vector<double> out;
  for (int d = 0; d < w.num_dcs; ++d)
    for (const ShardSpec& s : shard_specs(m, splits.at(d)))
      out.push_back(sequence_flops(m, s) * seqs.at(d));
  return out;
}

// Every rank's FLOPs under the configured splits and batch shares: its reference work.
std::vector<double> reference(const World& w) {
  std::vector<std::vector<double>> splits;
  for (const DatacenterConfig& dc : w.cfg->datacenters) splits.push_back(dc.split);
  return flops(w, splits, apportion(w.cfg->train.batch_shares, w.global_batch, 1));
}

}  // namespace

double sequence_flops(const ModelConfig& m, double heads, double cols) {
  const double T = m.seq_len, C = m.d_model, V = m.vocab, L = m.layers;
  const double hd = static_cast<double>(m.d_model) / m.heads, h = heads, c = cols;
  // Forward, per layer: QKV 2·T·C·3h·hd, scores and weighted values 2·2·T²·h·hd, attention-out
  // 2·T·h·hd·C, MLP in and out 2·2·T·C·c; the tied head 2·T·C·V once. Backward: twice that.
  const double layer = 6 * T * C * h * hd + 4 * T * T * h * hd + 2 * T * h * hd * C + 4 * T * C * c;
  return 3 * (L * layer + 2 * T * C * V);
}

double sequence_flops(const ModelConfig& m, const ShardSpec& s) {
  return sequence_flops(m, s.heads, s.cols);
}

std::vector<double> rank_flops(const World& w, const std::vector<std::vector<double>>& splits,
                               const std::vector<double>& shares) {
  return flops(w, splits, apportion(shares, w.global_batch, 1));
}

std::vector<double> relative_work(const World& w, const std::vector<std::vector<double>>& splits,
                                  const std::vector<double>& shares) {
  if (splits.empty()) return std::vector<double>(w.world_size, 1.0);  // no record yet
  const std::vector<double> ref = reference(w);
  std::vector<double> out = rank_flops(w, splits, shares);
  for (size_t r = 0; r < out.size(); ++r) out[r] /= ref[r];
  return out;
}

void set_work(const World& w, StepRecord& s) {
  STRAIT_CHECK(static_cast<int>(s.ranks.size()) == w.world_size, "a step record of every rank");
  std::vector<std::vector<double>> splits(w.num_dcs);
  std::vector<int> seqs(w.num_dcs);
  for (int r = 0; r < w.world_size; ++r) {
    splits[w.dc_of_rank[r]].push_back(s.ranks[r].split);
    seqs[w.dc_of_rank[r]] = s.ranks[r].batch;
  }
  const std::vector<double> ref = reference(w);
  const std::vector<double> now = flops(w, splits, seqs);
  for (int r = 0; r < w.world_size; ++r) s.ranks[r].work = now[r] / ref[r];
}

}  // namespace strait
