// transformer.hpp — forward and backward of one rank's shard of a GPT-style decoder.
// Megatron-style tensor parallelism inside a datacenter: QKV and MLP-in are column-parallel,
// attention-out and MLP-out row-parallel; DcComm::allreduce_sum joins the partial sums (two per
// layer forward, two backward). Replicated tensors (embeddings, LayerNorms, row-parallel biases,
// the tied LM head) are computed redundantly on every rank of the DC, so their gradients agree.
// Activations are owned here and shared by all experts (experts compute one at a time).
#pragma once
#include <cstdint>
#include <vector>

#include "backend/backend.hpp"
#include "backend/dc_comm.hpp"
#include "model/params.hpp"

namespace strait {

template <typename T>
class Transformer {
 public:
  Transformer(Backend<T>& be, DcComm<T>& dc) : be_(be), dc_(dc) {}
  ~Transformer();
  Transformer(const Transformer&) = delete;
  Transformer& operator=(const Transformer&) = delete;

  // Forward + backward over B sequences: tokens and targets are host arrays (B, seq_len).
  // ps.grads is overwritten with the gradient of the mean token loss. Returns the mean loss.
  double forward_backward(ParamSet<T>& ps, const int32_t* tokens, const int32_t* targets, int B);
  // Forward only; returns the mean loss (used by tests).
  double forward(ParamSet<T>& ps, const int32_t* tokens, const int32_t* targets, int B);
  // Logits (B·T, V) of the last forward, copied to the host (tests).
  std::vector<T> logits_to_host() const;

 private:
  void ensure(const Layout& l, int B);
  void release();
  double forward_impl(ParamSet<T>& ps, const int32_t* tokens, const int32_t* targets, int B);

  Backend<T>& be_;
  DcComm<T>& dc_;
  // Shapes the buffers were sized for.
  int B_ = 0, L_ = 0, C_ = 0, Tn_ = 0, V_ = 0, H_ = 0, hd_ = 0, F_ = 0;
  bool logits_valid_ = false;
  int32_t* tokens_ = nullptr;
  int32_t* targets_ = nullptr;
  struct LayerAct {
    T *ln1, *ln1_mean, *ln1_rstd, *qkv, *att, *atty, *x2, *ln2, *ln2_mean, *ln2_rstd, *fch, *fcg;
  };
  std::vector<T*> x_;              // residual stream entering each layer, plus the final one
  std::vector<LayerAct> act_;
  T *lnf_ = nullptr, *lnf_mean_ = nullptr, *lnf_rstd_ = nullptr, *logits_ = nullptr,
    *losses_ = nullptr;
  T *tmp_ = nullptr, *dres_ = nullptr, *dqkv_ = nullptr, *datty_ = nullptr, *dfc_ = nullptr,
    *datt_ = nullptr;
  std::vector<T*> owned_;
};

// Model FLOPs of one training step on `tokens` tokens of the full (unsharded) model: the PaLM
// convention, 6·(matmul parameters)·tokens + 12·layers·d_model·seq_len·tokens (attention).
double model_flops_per_token(const ModelConfig& m);

}  // namespace strait
