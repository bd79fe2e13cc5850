// markov_chain.hpp — the state sequence of a discrete Markov chain over intervals 0, 1, 2, …,
// shared by the Markov-modulated link schedules (schedule.hpp) and load schedules (load.hpp).
// The chain starts in state 0 and leaves interval k by draw k of uniform01(seed, stream, k)
// (src/core/rng.hpp) through the row's cumulative distribution, so the sequence is a pure
// function of (matrix, seed, stream): every rank and every rerun sees the same one. States are
// drawn lazily and cached (thread-safe: the controller's thread and the step loop both read).
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace strait {

class MarkovChain {
 public:
  // `transition`: square, entries in [0, 1], rows summing to 1 within 1e-6, at most 65535
  // states. Throws std::invalid_argument beginning with `who` otherwise.
  MarkovChain(const std::vector<std::vector<double>>& transition, uint64_t seed, uint64_t stream,
              const std::string& who);

  size_t states() const { return cumulative_.size(); }
  // The state during interval k (k < 2^30; std::out_of_range beyond).
  int state(uint64_t k) const;

 private:
  std::vector<std::vector<double>> cumulative_;  // per row, normalised CDF (last entry exactly 1)
  uint64_t seed_ = 0, stream_ = 0;
  mutable std::mutex mu_;
  mutable std::vector<uint16_t> seq_{0};  // seq_[k] = state during interval k
};

}  // namespace strait
