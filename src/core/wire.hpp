// wire.hpp — a small binary encoding for records whose size varies (the controller's decision
// record travels to every rank as bytes, src/control/plan.cpp). Fixed-width little-endian-host
// values in a byte vector; every rank of a job runs the same binary, so no schema travels.
// A Reader that runs past its end throws, so a truncated or corrupt record fails loudly.
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace strait::wire {

class Writer {
 public:
  template <typename T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const char*>(&v);
    buf_.insert(buf_.end(), p, p + sizeof(T));
  }
  void put(const std::string& s) {
    put<uint64_t>(s.size());
    buf_.insert(buf_.end(), s.begin(), s.end());
  }
  template <typename T>
  void put(const std::vector<T>& v) {
    put<uint64_t>(v.size());
    for (const auto& x : v) put(x);
  }
  const std::vector<char>& bytes() const { return buf_; }
  std::vector<char> take() { return std::move(buf_); }

 private:
  std::vector<char> buf_;
};

class Reader {
 public:
  Reader(const char* p, size_t n) : p_(p), end_(p + n) {}
  explicit Reader(const std::vector<char>& v) : Reader(v.data(), v.size()) {}

  template <typename T>
  void get(T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      uint64_t n = 0;
      get(n);
      need(n);
      v.assign(p_, p_ + n);
      p_ += n;
    } else if constexpr (is_vector<T>::value) {
      uint64_t n = 0;
      get(n);
      // Each element takes at least one byte: a length beyond the rest is corrupt.
      need(n);
      v.clear();
      v.resize(n);
      for (auto& x : v) get(x);
    } else {
      static_assert(std::is_trivially_copyable_v<T>);
      need(sizeof(T));
      std::memcpy(&v, p_, sizeof(T));
      p_ += sizeof(T);
    }
  }
  template <typename T>
  T get() {
    T v{};
    get(v);
    return v;
  }
  bool done() const { return p_ == end_; }

 private:
  template <typename T>
  struct is_vector : std::false_type {};
  template <typename T, typename A>
  struct is_vector<std::vector<T, A>> : std::true_type {};
  void need(uint64_t n) const {
    if (n > static_cast<uint64_t>(end_ - p_)) throw std::runtime_error("wire: record truncated");
  }
  const char* p_;
  const char* end_;
};

}  // namespace strait::wire
