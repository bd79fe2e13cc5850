// fault.cpp — see fault.hpp.
#include "train/fault.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace strait {

Faults::Faults() {
  const char* env = std::getenv("STRAIT_FAULT");
  if (!env || !*env) return;
  const std::string s(env);
  long long step = -1, rank = -1;
  char kind[16] = {0};
  const int got = std::sscanf(s.c_str(), "%15[a-z-]:%lld:%lld", kind, &step, &rank);
  if (got >= 2 && step >= 0 && (std::string(kind) == "nan-loss" || std::string(kind) == "nan-grad")) {
    kind_ = std::string(kind) == "nan-loss" ? Kind::nan_loss : Kind::nan_grad;
    step_ = step;
    rank_ = got == 3 ? static_cast<int>(rank) : -1;
  } else {
    std::fprintf(stderr, "strait: note: STRAIT_FAULT=%s ignored; expected nan-loss:STEP[:RANK] or "
                 "nan-grad:STEP[:RANK]\n", env);
  }
}

void Faults::after_compute(int64_t step, int rank, double& loss, Backend<float>& be, float* grads,
                           size_t n) const {
  if (kind_ == Kind::none || step != step_ || (rank_ >= 0 && rank != rank_)) return;
  if (kind_ == Kind::nan_loss) {
    loss = std::nan("");
    return;
  }
  const std::vector<float> nan(n, std::nanf(""));
  be.from_host(grads, nan.data(), n);
  be.synchronize();
}

}  // namespace strait
