// layout.hpp — parameter layout and sharding math.
// A model's parameters are a list of named tensors with a full (unsharded) shape. Inside a
// datacenter each rank holds a shard: attention by whole heads (QKV columns, attention-out rows),
// the MLP by columns (fc columns, fc-out rows); everything else is replicated. A ShardSpec says
// which heads and columns a rank holds; extract/insert move between the full canonical tensor
// and a rank's shard, which is all a re-split, a checkpoint and the hierarchical sync need.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace strait {

enum class ShardKind {
  Replicated,  // every rank of the DC holds it whole
  QkvCols,     // (C, 3C) weight / (3C) bias: columns of the rank's heads in Q, K and V
  HeadRows,    // (C, C) attention-out weight: rows of the rank's heads
  FfCols,      // (C, F) weight / (F) bias: the rank's columns
  FfRows,      // (F, C) weight: the rank's rows
};

struct ShardSpec {
  int head_begin = 0, heads = 0;  // of model.heads
  int col_begin = 0, cols = 0;    // of model.d_ff
};

struct TensorDesc {
  std::string name;              // e.g. "wte", "h0.qkv_w"
  std::vector<int64_t> shape;    // full shape: 1-D (n) or 2-D (rows, cols)
  ShardKind kind = ShardKind::Replicated;
  size_t offset = 0;             // element offset in the rank's shard buffer
  size_t shard_size = 0;         // elements in the rank's shard
  size_t full_size() const;
};

// Per-layer tensor indices into Layout::tensors, in a fixed order.
struct LayerTensors {
  int ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, fcproj_w, fcproj_b;
};

struct Layout {
  ModelConfig model;
  ShardSpec spec;
  std::vector<TensorDesc> tensors;
  std::vector<LayerTensors> layers;
  int wte = 0, wpe = 0, lnf_w = 0, lnf_b = 0;
  size_t shard_total = 0;        // elements in a rank's shard buffer
  size_t full_total = 0;         // elements of the full model
};

Layout make_layout(const ModelConfig& m, const ShardSpec& spec);

// Parameters per expert: the full elements of make_layout's tensor list (the LM head is tied to
// wte). The double is exact below 2^53 and finite for any ModelConfig, so validation bounds a
// model with it before anything counts or lists it; parameter_count requires that bound.
constexpr double kMaxParametersPerExpert = 1e15;  // validation refuses larger models
double parameter_count_as_double(const ModelConfig& m);
long long parameter_count(const ModelConfig& m);  // aborts above kMaxParametersPerExpert

// Divides heads and d_ff columns among the ranks of a DC in proportion to split (largest
// remainder, core/apportion.hpp; every rank gets >= 1 head and >= 1 column). Aborts if that is
// impossible. This is the rule the run shards by; `strait validate` prints what it gives.
std::vector<ShardSpec> shard_specs(const ModelConfig& m, const std::vector<double>& split);

// The rule a configured split (a [[datacenter]] split or a [[control.resplit]]) must meet:
// every rank gets a whole number >= 1 of heads (f·heads within kWholeHeadTolerance of an
// integer) and >= 1 MLP column (d_ff >= ranks). It reports instead of aborting, so validation
// can name the problem. A split that passes never makes shard_specs abort, and shard_specs
// gives each rank the heads it asks for (largest remainder restores any rounding below half a
// head; the split's 1e-6 sum tolerance stays below that for fewer than about 10^6 heads).
constexpr double kWholeHeadTolerance = 1e-6;
struct SplitCheck {
  std::vector<double> heads;  // f·heads of each rank, as the split asks for them
  bool whole_heads = true;    // every one a whole number >= 1
  bool enough_cols = true;    // d_ff >= the number of ranks
  bool ok() const { return whole_heads && enough_cols; }
};
SplitCheck check_split(const ModelConfig& m, const std::vector<double>& split);

// Whole-model copies between the canonical full vector (tensors concatenated in layout order,
// each row-major in its full shape) and a rank's shard buffer.
template <typename T>
void extract_shard(const Layout& l, const T* full, T* shard);
template <typename T>
void insert_shard(const Layout& l, const T* shard, T* full);

}  // namespace strait
