// layout.cpp — the tensor list, parameter count, shard shapes and split rule, and full <-> shard
// copies.
#include "model/layout.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/apportion.hpp"
#include "core/check.hpp"

namespace strait {

size_t TensorDesc::full_size() const {
  size_t n = 1;
  for (auto d : shape) n *= static_cast<size_t>(d);
  return n;
}

namespace {

// One row of the model's tensor list: the Layout or LayerTensors field that indexes the tensor,
// its name (a layer's without the "h<i>." prefix), its full shape and how it is sharded.
template <class Owner>
struct Row {
  int Owner::*index;
  const char* name;
  std::vector<int64_t> shape;
  ShardKind kind;
};

// The model's tensors in layout order: these, then every layer's, then the final layer norm.
// This is the one list: make_layout places it and parameter_count sums it (per layer, so a deep
// model is counted without being listed).
std::vector<Row<Layout>> leading_rows(const ModelConfig& m) {
  const int64_t C = m.d_model, V = m.vocab, T = m.seq_len;
  return {{&Layout::wte, "wte", {V, C}, ShardKind::Replicated},
          {&Layout::wpe, "wpe", {T, C}, ShardKind::Replicated}};
}

std::vector<Row<LayerTensors>> layer_rows(const ModelConfig& m) {
  const int64_t C = m.d_model, F = m.d_ff;
  using LT = LayerTensors;
  return {{&LT::ln1_w, "ln1_w", {C}, ShardKind::Replicated},
          {&LT::ln1_b, "ln1_b", {C}, ShardKind::Replicated},
          {&LT::qkv_w, "qkv_w", {C, 3 * C}, ShardKind::QkvCols},
          {&LT::qkv_b, "qkv_b", {3 * C}, ShardKind::QkvCols},
          {&LT::proj_w, "proj_w", {C, C}, ShardKind::HeadRows},
          {&LT::proj_b, "proj_b", {C}, ShardKind::Replicated},
          {&LT::ln2_w, "ln2_w", {C}, ShardKind::Replicated},
          {&LT::ln2_b, "ln2_b", {C}, ShardKind::Replicated},
          {&LT::fc_w, "fc_w", {C, F}, ShardKind::FfCols},
          {&LT::fc_b, "fc_b", {F}, ShardKind::FfCols},
          {&LT::fcproj_w, "fcproj_w", {F, C}, ShardKind::FfRows},
          {&LT::fcproj_b, "fcproj_b", {C}, ShardKind::Replicated}};
}

std::vector<Row<Layout>> trailing_rows(const ModelConfig& m) {
  const int64_t C = m.d_model;
  return {{&Layout::lnf_w, "lnf_w", {C}, ShardKind::Replicated},
          {&Layout::lnf_b, "lnf_b", {C}, ShardKind::Replicated}};
}

// Full elements of some rows, counted in N (double: never overflows; long long: exact).
template <class N, class Rows>
N elements(const Rows& rows) {
  N n = 0;
  for (const auto& r : rows) {
    N e = 1;
    for (int64_t d : r.shape) e *= static_cast<N>(d);
    n += e;
  }
  return n;
}

// Calls f(full_index, shard_index, count) for each contiguous run of a tensor's shard.
template <typename F>
void for_each_run(const TensorDesc& t, const ModelConfig& m, const ShardSpec& s, F&& f) {
  const size_t C = m.d_model, hd = m.d_model / m.heads;
  switch (t.kind) {
    case ShardKind::Replicated:
      f(size_t{0}, size_t{0}, t.full_size());
      return;
    case ShardKind::QkvCols: {
      // full columns: [Q (C) | K (C) | V (C)], head h at h*hd in each third.
      const size_t rows = t.shape.size() == 2 ? t.shape[0] : 1;
      const size_t full_cols = 3 * C, w = s.heads * hd, shard_cols = 3 * w;
      for (size_t r = 0; r < rows; ++r)
        for (size_t part = 0; part < 3; ++part)
          f(r * full_cols + part * C + s.head_begin * hd, r * shard_cols + part * w, w);
      return;
    }
    case ShardKind::HeadRows: {
      const size_t cols = t.shape[1];
      f(s.head_begin * hd * cols, size_t{0}, s.heads * hd * cols);
      return;
    }
    case ShardKind::FfCols: {
      const size_t rows = t.shape.size() == 2 ? t.shape[0] : 1;
      const size_t full_cols = m.d_ff;
      for (size_t r = 0; r < rows; ++r) f(r * full_cols + s.col_begin, r * s.cols, size_t(s.cols));
      return;
    }
    case ShardKind::FfRows: {
      const size_t cols = t.shape[1];
      f(s.col_begin * cols, size_t{0}, s.cols * cols);
      return;
    }
  }
}

size_t shard_size_of(const TensorDesc& t, const ModelConfig& m, const ShardSpec& s) {
  size_t n = 0;
  for_each_run(t, m, s, [&](size_t, size_t, size_t c) { n += c; });
  return n;
}

}  // namespace

Layout make_layout(const ModelConfig& m, const ShardSpec& spec) {
  STRAIT_CHECK(m.d_model % m.heads == 0, "d_model must be divisible by heads");
  Layout l;
  l.model = m;
  l.spec = spec;
  auto add = [&](std::string name, const std::vector<int64_t>& shape, ShardKind kind) {
    l.tensors.push_back(TensorDesc{std::move(name), shape, kind, 0, 0});
    return static_cast<int>(l.tensors.size() - 1);
  };
  for (const auto& r : leading_rows(m)) l.*r.index = add(r.name, r.shape, r.kind);
  const auto per_layer = layer_rows(m);
  for (int i = 0; i < m.layers; ++i) {
    std::string p = "h";  // built by appends: GCC 12 warns falsely (-Wrestrict) on "h" + string
    p += std::to_string(i);
    p += ".";
    LayerTensors lt{};
    for (const auto& r : per_layer) lt.*r.index = add(p + r.name, r.shape, r.kind);
    l.layers.push_back(lt);
  }
  for (const auto& r : trailing_rows(m)) l.*r.index = add(r.name, r.shape, r.kind);
  size_t off = 0, full = 0;
  for (auto& t : l.tensors) {
    t.offset = off;
    t.shard_size = shard_size_of(t, m, spec);
    off += t.shard_size;
    full += t.full_size();
  }
  l.shard_total = off;
  l.full_total = full;
  return l;
}

double parameter_count_as_double(const ModelConfig& m) {
  return elements<double>(leading_rows(m)) + elements<double>(trailing_rows(m)) +
         static_cast<double>(m.layers) * elements<double>(layer_rows(m));
}

long long parameter_count(const ModelConfig& m) {
  STRAIT_CHECK(parameter_count_as_double(m) <= kMaxParametersPerExpert,
               "parameter_count: the model is above kMaxParametersPerExpert");
  return elements<long long>(leading_rows(m)) + elements<long long>(trailing_rows(m)) +
         m.layers * elements<long long>(layer_rows(m));
}

SplitCheck check_split(const ModelConfig& m, const std::vector<double>& split) {
  SplitCheck out;
  out.whole_heads = !split.empty();
  for (double f : split) {
    const double h = f * m.heads;
    out.heads.push_back(h);
    if (!(std::fabs(h - std::round(h)) <= kWholeHeadTolerance && std::round(h) >= 1))
      out.whole_heads = false;
  }
  out.enough_cols = m.d_ff >= static_cast<int>(split.size());
  return out;
}

std::vector<ShardSpec> shard_specs(const ModelConfig& m, const std::vector<double>& split) {
  const int n = static_cast<int>(split.size());
  STRAIT_CHECK(n >= 1 && n <= m.heads && n <= m.d_ff, "cannot split the model over " +
                                                          std::to_string(n) + " ranks");
  const auto heads = apportion(split, m.heads, 1), cols = apportion(split, m.d_ff, 1);
  std::vector<ShardSpec> specs(n);
  int hb = 0, cb = 0;
  for (int i = 0; i < n; ++i) {
    specs[i] = ShardSpec{hb, heads[i], cb, cols[i]};
    hb += heads[i];
    cb += cols[i];
  }
  return specs;
}

template <typename T>
void extract_shard(const Layout& l, const T* full, T* shard) {
  size_t full_off = 0;
  for (const auto& t : l.tensors) {
    for_each_run(t, l.model, l.spec, [&](size_t fi, size_t si, size_t c) {
      std::copy_n(full + full_off + fi, c, shard + t.offset + si);
    });
    full_off += t.full_size();
  }
}

template <typename T>
void insert_shard(const Layout& l, const T* shard, T* full) {
  size_t full_off = 0;
  for (const auto& t : l.tensors) {
    for_each_run(t, l.model, l.spec, [&](size_t fi, size_t si, size_t c) {
      std::copy_n(shard + t.offset + si, c, full + full_off + fi);
    });
    full_off += t.full_size();
  }
}

template void extract_shard<float>(const Layout&, const float*, float*);
template void extract_shard<double>(const Layout&, const double*, double*);
template void insert_shard<float>(const Layout&, const float*, float*);
template void insert_shard<double>(const Layout&, const double*, double*);

}  // namespace strait
