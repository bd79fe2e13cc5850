// host_buffer.hpp — a grow-only host staging buffer from a backend's alloc_host (page-locked
// memory on CUDA), owned like a unique_ptr. The sync channels keep their gradient shards in one,
// so that stage_out / stage_in are DMA copies on the GPU.
#pragma once
#include <cstddef>
#include <utility>

#include "backend/backend.hpp"

namespace strait {

template <typename T>
class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(Backend<T>* be) : be_(be) {}
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  HostBuffer(HostBuffer&& o) noexcept { swap(o); }
  HostBuffer& operator=(HostBuffer&& o) noexcept {
    HostBuffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~HostBuffer() {
    if (p_) be_->free_host(p_);
  }

  // n elements; grows (contents lost) only when n exceeds what was allocated before.
  void resize(size_t n) {
    if (n > cap_) {
      if (p_) be_->free_host(p_);
      p_ = nullptr;
      p_ = be_->alloc_host(n);
      cap_ = n;
    }
    n_ = n;
  }
  T* data() { return p_; }
  const T* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  void swap(HostBuffer& o) noexcept {
    std::swap(be_, o.be_);
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(cap_, o.cap_);
  }
  Backend<T>* be_ = nullptr;
  T* p_ = nullptr;
  size_t n_ = 0, cap_ = 0;
};

}  // namespace strait
