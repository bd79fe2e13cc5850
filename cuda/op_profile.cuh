// op_profile.cuh — optional per-op GPU time of the CUDA backend, for finding where a step's time
// goes on a machine without a working profiler (ncu and nsys are not always usable on a lent GPU
// machine). With STRAIT_CUDA_PROFILE=1 in the environment, each backend op is bracketed by a
// pair of CUDA events on the compute stream; the elapsed times are summed per op name (GEMMs per
// shape) and printed to stderr when the backend is destroyed. Off by default: the event pairs
// and their harvesting cost time, so benchmark figures are taken without it.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "check.cuh"

namespace strait {

class OpProfile {
 public:
  // One op's bracket: records the start event now and the end event when it goes out of scope.
  class Scope {
   public:
    Scope() = default;
    Scope(OpProfile* p, std::string name) : p_(p), name_(std::move(name)) {
      a_ = p_->take();
      CUDA_CHECK(cudaEventRecord(a_, p_->stream_));
    }
    Scope(Scope&& o) noexcept
        : p_(std::exchange(o.p_, nullptr)), name_(std::move(o.name_)), a_(o.a_) {}
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    Scope& operator=(Scope&&) = delete;
    ~Scope() {
      if (!p_) return;
      cudaEvent_t b = p_->take();
      (void)cudaEventRecord(b, p_->stream_);
      p_->pending_.push_back(Pending{std::move(name_), a_, b});
      if (p_->pending_.size() >= kHarvestAt) p_->harvest();
    }

   private:
    OpProfile* p_ = nullptr;
    std::string name_;
    cudaEvent_t a_ = nullptr;
  };

  OpProfile(cudaStream_t stream, std::string label) : stream_(stream), label_(std::move(label)) {
    const char* e = std::getenv("STRAIT_CUDA_PROFILE");
    on_ = e && *e && std::strcmp(e, "0") != 0;
  }
  OpProfile(const OpProfile&) = delete;
  OpProfile& operator=(const OpProfile&) = delete;
  // Prints the table (if on and anything was timed) and releases the events; errors ignored, as
  // this also runs while a failed job is being torn down.
  ~OpProfile() {
    if (on_) {
      if (cudaStreamSynchronize(stream_) == cudaSuccess) {
        harvest();
        print();
      }
      for (auto& p : pending_) (void)cudaEventDestroy(p.a), (void)cudaEventDestroy(p.b);
      for (cudaEvent_t e : free_) (void)cudaEventDestroy(e);
    }
  }

  bool on() const { return on_; }
  Scope time(const char* name) { return on_ ? Scope(this, name) : Scope(); }
  // GEMMs are told apart by shape: "gemm MxNxK" with the transposes, "×batch" when batched.
  Scope time_gemm(bool ta, bool tb, int M, int N, int K, int batch) {
    if (!on_) return Scope();
    std::string name = "gemm " + std::to_string(M) + "x" + std::to_string(N) + "x" +
                       std::to_string(K) + " " + (ta ? "T" : "N") + (tb ? "T" : "N");
    if (batch > 1) name += " x" + std::to_string(batch);
    return Scope(this, std::move(name));
  }

 private:
  static constexpr size_t kHarvestAt = 4096;  // pending event pairs before they are summed
  struct Pending {
    std::string name;
    cudaEvent_t a, b;
  };

  cudaEvent_t take() {
    if (!free_.empty()) {
      cudaEvent_t e = free_.back();
      free_.pop_back();
      return e;
    }
    cudaEvent_t e = nullptr;
    CUDA_CHECK(cudaEventCreate(&e));  // with timing
    return e;
  }
  // Waits for the pending events, adds their times to the totals and recycles them.
  void harvest() {
    if (pending_.empty()) return;
    CUDA_CHECK(cudaEventSynchronize(pending_.back().b));
    for (auto& p : pending_) {
      float ms = 0.0f;
      CUDA_CHECK(cudaEventElapsedTime(&ms, p.a, p.b));
      auto& t = totals_[p.name];
      t.first += ms;
      t.second += 1;
      free_.push_back(p.a);
      free_.push_back(p.b);
    }
    pending_.clear();
  }
  void print() const {
    if (totals_.empty()) return;
    std::vector<std::pair<std::string, std::pair<double, long>>> rows(totals_.begin(),
                                                                     totals_.end());
    std::sort(rows.begin(), rows.end(),
              [](const auto& x, const auto& y) { return x.second.first > y.second.first; });
    double total = 0;
    long calls = 0;
    for (const auto& r : rows) total += r.second.first, calls += r.second.second;
    std::fprintf(stderr, "strait cuda profile (%s): %ld ops, %.3f ms of GPU time in ops\n",
                 label_.c_str(), calls, total);
    std::fprintf(stderr, "  %-40s %8s %12s %10s %7s\n", "op", "calls", "total ms", "ms/call",
                 "share");
    for (const auto& r : rows)
      std::fprintf(stderr, "  %-40s %8ld %12.3f %10.4f %6.1f%%\n", r.first.c_str(),
                   r.second.second, r.second.first, r.second.first / r.second.second,
                   total > 0 ? 100.0 * r.second.first / total : 0.0);
  }

  cudaStream_t stream_;
  std::string label_;
  bool on_ = false;
  std::vector<Pending> pending_;
  std::vector<cudaEvent_t> free_;
  std::map<std::string, std::pair<double, long>> totals_;  // name → (ms, calls)
};

}  // namespace strait
