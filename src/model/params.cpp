// params.cpp — ParamSet buffers and deterministic initialisation.
#include "model/params.hpp"

#include <cmath>

#include "core/check.hpp"
#include "core/rng.hpp"

namespace strait {

template <typename T>
ParamSet<T>::ParamSet(Backend<T>& backend, const Layout& l) : be(&backend), layout(l) {
  params = be->alloc(layout.shard_total);
  grads = be->alloc(layout.shard_total);
  adam_m = be->alloc(layout.shard_total);
  adam_v = be->alloc(layout.shard_total);
}

template <typename T>
ParamSet<T>::~ParamSet() {
  be->free(params);
  be->free(grads);
  be->free(adam_m);
  be->free(adam_v);
}

template <typename T>
void ParamSet<T>::load_full(const std::vector<T>& p, const std::vector<T>& m,
                            const std::vector<T>& v) {
  STRAIT_CHECK(p.size() == layout.full_total && m.size() == p.size() && v.size() == p.size(),
               "full parameter vectors have the wrong size");
  std::vector<T> shard(layout.shard_total);
  extract_shard(layout, p.data(), shard.data());
  be->from_host(params, shard.data(), shard.size());
  extract_shard(layout, m.data(), shard.data());
  be->from_host(adam_m, shard.data(), shard.size());
  extract_shard(layout, v.data(), shard.data());
  be->from_host(adam_v, shard.data(), shard.size());
}

template <typename T>
void ParamSet<T>::shard_to_host(std::vector<T>& p, std::vector<T>& m, std::vector<T>& v) const {
  p.resize(layout.shard_total);
  m.resize(layout.shard_total);
  v.resize(layout.shard_total);
  be->to_host(p.data(), params, p.size());
  be->to_host(m.data(), adam_m, m.size());
  be->to_host(v.data(), adam_v, v.size());
}

template <typename T>
std::vector<T> init_full(const Layout& l, uint64_t seed, int expert) {
  std::vector<T> full(l.full_total);
  const double resid_scale = 1.0 / std::sqrt(2.0 * l.model.layers);
  size_t off = 0;
  for (const auto& t : l.tensors) {
    const size_t n = t.full_size();
    const std::string& nm = t.name;
    const auto ends = [&](const char* s) {
      const std::string suf(s);
      return nm.size() >= suf.size() && nm.compare(nm.size() - suf.size(), suf.size(), suf) == 0;
    };
    const uint64_t stream = hash_name(nm.c_str()) ^ (0x5151ull * static_cast<uint64_t>(expert + 1));
    if (ends("ln1_w") || ends("ln2_w") || nm == "lnf_w") {
      for (size_t i = 0; i < n; ++i) full[off + i] = T(1);
    } else if (t.shape.size() == 1) {
      for (size_t i = 0; i < n; ++i) full[off + i] = T(0);
    } else {
      const double s = l.model.init_std * ((ends("proj_w")) ? resid_scale : 1.0);
      for (size_t i = 0; i < n; ++i) full[off + i] = static_cast<T>(s * normal01(seed, stream, i));
    }
    off += n;
  }
  return full;
}

template struct ParamSet<float>;
template struct ParamSet<double>;
template std::vector<float> init_full<float>(const Layout&, uint64_t, int);
template std::vector<double> init_full<double>(const Layout&, uint64_t, int);

}  // namespace strait
