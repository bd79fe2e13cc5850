// memory.cpp — see memory.hpp. Parameters are counted from the layout itself, activations by
// the documented formula.
#include "model/memory.hpp"

#include "core/apportion.hpp"
#include "model/layout.hpp"

namespace strait {
namespace {

// A rank's shard elements over all layers. Every layer shards alike, so the layouts of no
// layer and of one layer give it without listing a deep model tensor by tensor.
double shard_elements(const ModelConfig& m, const ShardSpec& spec) {
  ModelConfig none = m, one = m;
  none.layers = 0;
  one.layers = 1;
  const double outside = static_cast<double>(make_layout(none, spec).shard_total);
  const double layer = static_cast<double>(make_layout(one, spec).shard_total) - outside;
  return outside + m.layers * layer;
}

}  // namespace

MemoryEstimate estimate_memory(const Config& cfg, int world_rank) {
  const int d = cfg.dc_of_rank(world_rank);
  const int local = world_rank - cfg.first_rank_of_dc(d);
  const ModelConfig& m = cfg.model;
  const ShardSpec spec = shard_specs(m, cfg.datacenters[d].split)[local];
  const double b = apportion(cfg.train.batch_shares, cfg.train.global_batch, 1)[d];  // DC batch
  const double V = m.vocab, C = m.d_model, T = m.seq_len, L = m.layers, E = m.experts;
  const double h = spec.heads, hd = m.d_model / m.heads, fr = spec.cols;

  const double P = shard_elements(m, spec);
  MemoryEstimate est{};
  est.params_bytes = 4 * P * E;
  est.grads_bytes = 4 * P * E;
  est.adam_bytes = 8 * P * E;
  // The activation formula of docs/config.md ("Memory check"), a rough count of the step's
  // buffers, fed the rank's exact heads and columns.
  est.activations_bytes =
      4 * b * T * (L * (10 * C + 4 * h * hd + 2 * h * T + 3 * fr) + 2 * V + 4 * C);
  est.total_bytes = est.params_bytes + est.grads_bytes + est.adam_bytes + est.activations_bytes;
  return est;
}

}  // namespace strait
