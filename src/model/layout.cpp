// layout.cpp — tensor list, shard shapes, and full <-> shard copies.
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
  const int64_t C = m.d_model, F = m.d_ff, V = m.vocab, T = m.seq_len;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, ShardKind kind) {
    l.tensors.push_back(TensorDesc{name, std::move(shape), kind, 0, 0});
    return static_cast<int>(l.tensors.size() - 1);
  };
  l.wte = add("wte", {V, C}, ShardKind::Replicated);
  l.wpe = add("wpe", {T, C}, ShardKind::Replicated);
  for (int i = 0; i < m.layers; ++i) {
    std::string p = "h";  // built by appends: GCC 12 warns falsely (-Wrestrict) on "h" + string
    p += std::to_string(i);
    p += ".";
    LayerTensors lt{};
    lt.ln1_w = add(p + "ln1_w", {C}, ShardKind::Replicated);
    lt.ln1_b = add(p + "ln1_b", {C}, ShardKind::Replicated);
    lt.qkv_w = add(p + "qkv_w", {C, 3 * C}, ShardKind::QkvCols);
    lt.qkv_b = add(p + "qkv_b", {3 * C}, ShardKind::QkvCols);
    lt.proj_w = add(p + "proj_w", {C, C}, ShardKind::HeadRows);
    lt.proj_b = add(p + "proj_b", {C}, ShardKind::Replicated);
    lt.ln2_w = add(p + "ln2_w", {C}, ShardKind::Replicated);
    lt.ln2_b = add(p + "ln2_b", {C}, ShardKind::Replicated);
    lt.fc_w = add(p + "fc_w", {C, F}, ShardKind::FfCols);
    lt.fc_b = add(p + "fc_b", {F}, ShardKind::FfCols);
    lt.fcproj_w = add(p + "fcproj_w", {F, C}, ShardKind::FfRows);
    lt.fcproj_b = add(p + "fcproj_b", {C}, ShardKind::Replicated);
    l.layers.push_back(lt);
  }
  l.lnf_w = add("lnf_w", {C}, ShardKind::Replicated);
  l.lnf_b = add("lnf_b", {C}, ShardKind::Replicated);
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
