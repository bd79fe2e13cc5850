// transformer.cpp — the step math. Buffer shapes are noted as (rows, cols); N = B·T tokens,
// H heads and F columns are this rank's shard, hd the head size.
#include "model/transformer.hpp"

#include "core/check.hpp"

namespace strait {

template <typename T>
Transformer<T>::~Transformer() {
  release();
}

template <typename T>
void Transformer<T>::release() {
  for (T* p : owned_) be_.free(p);
  owned_.clear();
  x_.clear();
  act_.clear();
  if (tokens_) be_.free_tokens(tokens_);
  if (targets_) be_.free_tokens(targets_);
  tokens_ = targets_ = nullptr;
  B_ = 0;
}

template <typename T>
void Transformer<T>::ensure(const Layout& l, int B) {
  const auto& m = l.model;
  const int hd = m.d_model / m.heads;
  if (B == B_ && m.layers == L_ && m.d_model == C_ && m.seq_len == Tn_ && m.vocab == V_ &&
      l.spec.heads == H_ && hd == hd_ && l.spec.cols == F_)
    return;
  release();
  B_ = B, L_ = m.layers, C_ = m.d_model, Tn_ = m.seq_len, V_ = m.vocab, H_ = l.spec.heads;
  hd_ = hd, F_ = l.spec.cols;
  const size_t N = static_cast<size_t>(B) * Tn_, C = C_, Hh = static_cast<size_t>(H_) * hd_;
  const size_t att = static_cast<size_t>(B) * H_ * Tn_ * Tn_;
  auto a = [&](size_t n) {
    T* p = be_.alloc(n);
    owned_.push_back(p);
    return p;
  };
  for (int i = 0; i <= L_; ++i) x_.push_back(a(N * C));
  for (int i = 0; i < L_; ++i) {
    act_.push_back(LayerAct{a(N * C), a(N), a(N), a(N * 3 * Hh), a(att), a(N * Hh), a(N * C),
                            a(N * C), a(N), a(N), a(N * F_), a(N * F_)});
  }
  lnf_ = a(N * C), lnf_mean_ = a(N), lnf_rstd_ = a(N), logits_ = a(N * V_), losses_ = a(N);
  tmp_ = a(N * C), dres_ = a(N * C), dqkv_ = a(N * 3 * Hh), datty_ = a(N * Hh);
  dfc_ = a(N * F_), datt_ = a(att);
  tokens_ = be_.alloc_tokens(N);
  targets_ = be_.alloc_tokens(N);
}

template <typename T>
double Transformer<T>::forward_impl(ParamSet<T>& ps, const int32_t* tokens,
                                    const int32_t* targets, int B) {
  const Layout& l = ps.layout;
  ensure(l, B);
  const int N = B * Tn_, C = C_, Hh = H_ * hd_, F = F_;
  const T* P = ps.params;
  auto W = [&](int idx) { return P + l.tensors[idx].offset; };
  be_.tokens_from_host(tokens_, tokens, N);
  be_.tokens_from_host(targets_, targets, N);

  be_.embedding_fwd(x_[0], tokens_, W(l.wte), W(l.wpe), B, Tn_, C);
  for (int i = 0; i < L_; ++i) {
    const auto& t = l.layers[i];
    auto& a = act_[i];
    be_.layernorm_fwd(a.ln1, a.ln1_mean, a.ln1_rstd, x_[i], W(t.ln1_w), W(t.ln1_b), N, C);
    be_.gemm(false, false, N, 3 * Hh, C, T(1), a.ln1, C, W(t.qkv_w), 3 * Hh, T(0), a.qkv, 3 * Hh);
    be_.add_bias(a.qkv, W(t.qkv_b), N, 3 * Hh);
    be_.attention_fwd(a.atty, a.att, a.qkv, B, Tn_, H_, hd_);
    be_.gemm(false, false, N, C, Hh, T(1), a.atty, Hh, W(t.proj_w), C, T(0), tmp_, C);
    dc_.allreduce_sum(tmp_, static_cast<size_t>(N) * C);  // row-parallel partial sums
    be_.bias_residual(a.x2, x_[i], tmp_, W(t.proj_b), N, C);
    be_.layernorm_fwd(a.ln2, a.ln2_mean, a.ln2_rstd, a.x2, W(t.ln2_w), W(t.ln2_b), N, C);
    be_.gemm(false, false, N, F, C, T(1), a.ln2, C, W(t.fc_w), F, T(0), a.fch, F);
    be_.bias_gelu_fwd(a.fcg, a.fch, W(t.fc_b), N, F);
    be_.gemm(false, false, N, C, F, T(1), a.fcg, F, W(t.fcproj_w), C, T(0), tmp_, C);
    dc_.allreduce_sum(tmp_, static_cast<size_t>(N) * C);
    be_.bias_residual(x_[i + 1], a.x2, tmp_, W(t.fcproj_b), N, C);
  }
  be_.layernorm_fwd(lnf_, lnf_mean_, lnf_rstd_, x_[L_], W(l.lnf_w), W(l.lnf_b), N, C);
  be_.gemm(false, true, N, V_, C, T(1), lnf_, C, W(l.wte), C, T(0), logits_, V_);  // tied head
  logits_valid_ = true;
  return 0;
}

template <typename T>
double Transformer<T>::forward(ParamSet<T>& ps, const int32_t* tokens, const int32_t* targets,
                               int B) {
  forward_impl(ps, tokens, targets, B);
  const int N = B * Tn_;
  std::vector<T> keep(static_cast<size_t>(N) * V_);
  be_.to_host(keep.data(), logits_, keep.size());
  be_.softmax_xent(logits_, losses_, targets_, N, V_, T(1) / N);
  be_.from_host(logits_, keep.data(), keep.size());  // leave the logits readable
  return be_.loss_sum() / N;
}

template <typename T>
std::vector<T> Transformer<T>::logits_to_host() const {
  STRAIT_CHECK(logits_valid_, "no forward has run");
  std::vector<T> out(static_cast<size_t>(B_) * Tn_ * V_);
  be_.to_host(out.data(), logits_, out.size());
  return out;
}

template <typename T>
double Transformer<T>::forward_backward(ParamSet<T>& ps, const int32_t* tokens,
                                        const int32_t* targets, int B) {
  forward_impl(ps, tokens, targets, B);
  const Layout& l = ps.layout;
  const int N = B * Tn_, C = C_, Hh = H_ * hd_, F = F_;
  const size_t NC = static_cast<size_t>(N) * C;
  const T* P = ps.params;
  T* G = ps.grads;
  auto W = [&](int idx) { return P + l.tensors[idx].offset; };
  auto D = [&](int idx) { return G + l.tensors[idx].offset; };
  be_.zero(G, l.shard_total);

  be_.softmax_xent(logits_, losses_, targets_, N, V_, T(1) / N);  // its sum is read at the end
  logits_valid_ = false;  // now holds dloss/dlogits
  // LM head (tied): dlnf (N,C) = dlogits (N,V)·wte (V,C); dwte += dlogitsᵀ·lnf.
  be_.gemm(false, false, N, C, V_, T(1), logits_, V_, W(l.wte), C, T(0), tmp_, C);
  be_.gemm(true, false, V_, C, N, T(1), logits_, V_, lnf_, C, T(1), D(l.wte), C);
  be_.zero(dres_, NC);
  be_.layernorm_bwd(dres_, D(l.lnf_w), D(l.lnf_b), tmp_, x_[L_], W(l.lnf_w), lnf_mean_, lnf_rstd_,
                    N, C);
  for (int i = L_ - 1; i >= 0; --i) {
    const auto& t = l.layers[i];
    auto& a = act_[i];
    // MLP: dres is d(x_{i+1}); the residual passes it straight to d(x2).
    be_.bias_grad(D(t.fcproj_b), dres_, N, C);
    be_.gemm(false, true, N, F, C, T(1), dres_, C, W(t.fcproj_w), C, T(0), dfc_, F);
    be_.gemm(true, false, F, C, N, T(1), a.fcg, F, dres_, C, T(1), D(t.fcproj_w), C);
    be_.gelu_bwd(dfc_, a.fch, dfc_, static_cast<size_t>(N) * F);
    be_.gemm(true, false, C, F, N, T(1), a.ln2, C, dfc_, F, T(1), D(t.fc_w), F);
    be_.bias_grad(D(t.fc_b), dfc_, N, F);
    be_.gemm(false, true, N, C, F, T(1), dfc_, F, W(t.fc_w), F, T(0), tmp_, C);
    dc_.allreduce_sum(tmp_, NC);  // column-parallel input gradient
    be_.layernorm_bwd(dres_, D(t.ln2_w), D(t.ln2_b), tmp_, a.x2, W(t.ln2_w), a.ln2_mean,
                      a.ln2_rstd, N, C);
    // Attention: dres is now d(x2).
    be_.bias_grad(D(t.proj_b), dres_, N, C);
    be_.gemm(false, true, N, Hh, C, T(1), dres_, C, W(t.proj_w), C, T(0), datty_, Hh);
    be_.gemm(true, false, Hh, C, N, T(1), a.atty, Hh, dres_, C, T(1), D(t.proj_w), C);
    be_.attention_bwd(dqkv_, datt_, datty_, a.qkv, a.att, B, Tn_, H_, hd_);
    be_.gemm(true, false, C, 3 * Hh, N, T(1), a.ln1, C, dqkv_, 3 * Hh, T(1), D(t.qkv_w), 3 * Hh);
    be_.bias_grad(D(t.qkv_b), dqkv_, N, 3 * Hh);
    be_.gemm(false, true, N, C, 3 * Hh, T(1), dqkv_, 3 * Hh, W(t.qkv_w), 3 * Hh, T(0), tmp_, C);
    dc_.allreduce_sum(tmp_, NC);
    be_.layernorm_bwd(dres_, D(t.ln1_w), D(t.ln1_b), tmp_, x_[i], W(t.ln1_w), a.ln1_mean,
                      a.ln1_rstd, N, C);
  }
  be_.embedding_bwd(D(l.wte), D(l.wpe), dres_, tokens_, B, Tn_, C);
  return be_.loss_sum() / N;  // read once the whole pass is queued
}

double model_flops_per_token(const ModelConfig& m) {
  const double C = m.d_model, F = m.d_ff, L = m.layers;
  const double matmul_params = L * (3 * C * C + C * C + 2 * C * F) + m.vocab * C;
  return 6.0 * matmul_params + 12.0 * L * C * m.seq_len;
}

template class Transformer<float>;
template class Transformer<double>;

}  // namespace strait
