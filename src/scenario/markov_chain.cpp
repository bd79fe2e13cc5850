// markov_chain.cpp — see markov_chain.hpp.
#include "scenario/markov_chain.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/rng.hpp"

namespace strait {

namespace {
constexpr uint64_t kMaxIntervals = 1ull << 30;  // 2 GiB of cached states at most

std::string str(double x) {
  std::ostringstream ss;
  ss << x;
  return ss.str();
}
}  // namespace

MarkovChain::MarkovChain(const std::vector<std::vector<double>>& transition, uint64_t seed,
                         uint64_t stream, const std::string& who)
    : seed_(seed), stream_(stream) {
  const size_t K = transition.size();
  if (K == 0 || K > 65535)
    throw std::invalid_argument(who + ": " + std::to_string(K) +
                                " transition rows; expected 1 to 65535 states");
  for (size_t i = 0; i < K; ++i) {
    const auto& row = transition[i];
    const std::string r = who + ": transition row " + std::to_string(i);
    if (row.size() != K)
      throw std::invalid_argument(r + " has " + std::to_string(row.size()) + " entries; expected " +
                                  std::to_string(K));
    double sum = 0;
    for (double p : row) {
      if (!std::isfinite(p) || p < 0 || p > 1)
        throw std::invalid_argument(r + " holds " + str(p) + "; expected entries in [0, 1]");
      sum += p;
    }
    if (std::fabs(sum - 1.0) > 1e-6)
      throw std::invalid_argument(r + " sums to " + str(sum) + "; expected 1 within 1e-6");
    std::vector<double> cdf(K);
    double acc = 0;
    for (size_t j = 0; j < K; ++j) cdf[j] = (acc += row[j] / sum);
    // Zero-probability tail entries must never be chosen: give them the last positive CDF value
    // (upper_bound skips equal entries), and make the last positive one exactly 1.
    size_t last = K - 1;
    while (last > 0 && row[last] == 0) --last;
    for (size_t j = last; j < K; ++j) cdf[j] = 1.0;
    cumulative_.push_back(std::move(cdf));
  }
}

int MarkovChain::state(uint64_t k) const {
  if (k >= kMaxIntervals)
    throw std::out_of_range("MarkovChain: interval " + std::to_string(k) + " is beyond the " +
                            std::to_string(kMaxIntervals) +
                            " intervals a chain can hold; expected a longer dwell");
  std::lock_guard<std::mutex> lock(mu_);
  while (seq_.size() <= k) {
    const uint64_t i = seq_.size() - 1;
    const std::vector<double>& cdf = cumulative_[seq_.back()];
    const double u = uniform01(seed_, stream_, i);
    const size_t next =
        static_cast<size_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
    seq_.push_back(static_cast<uint16_t>(std::min(next, cdf.size() - 1)));
  }
  return seq_[k];
}

}  // namespace strait
