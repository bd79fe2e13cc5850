// link_state.cpp — online link estimates from wire measurements (see link_state.hpp).
#include "control/link_state.hpp"

#include <algorithm>
#include <cmath>

#include "control/view.hpp"

namespace strait {
namespace {
// How far the reference may move before the levels are cut again from the kept measurements.
constexpr double kRebin = 0.05;
}  // namespace

LinkStates::LinkStates(int n, std::vector<double> configured_gbps,
                       std::vector<double> configured_latency_ms, Params p)
    : n_(n), p_(p), nominal_(std::move(configured_gbps)),
      latency_prior_(std::move(configured_latency_ms)) {
  const size_t L = static_cast<size_t>(n) * n;
  last_ = ewma_ = ref_ = binned_ref_ = nominal_;
  series_.assign(L, {});
  lat_ = latency_prior_;
  lat_seen_.assign(L, false);
  last_step_.assign(L, -1);
  seen_.assign(L, 0);
  last_state_.assign(L, p_.states - 1);
  counts_.assign(L, std::vector<double>(static_cast<size_t>(p_.states) * p_.states, 0.0));
  sum_.assign(L, std::vector<double>(p_.states, 0.0));
  num_.assign(L, std::vector<double>(p_.states, 0.0));
}

int LinkStates::level(double gbps, double ref) const {
  if (ref <= 0) return 0;
  const int k = static_cast<int>(std::floor(gbps / ref * p_.states));
  return std::clamp(k, 0, p_.states - 1);
}

int LinkStates::state_of(int s, int d, double gbps) const {
  return level(gbps, binned_ref_[s * n_ + d]);
}

void LinkStates::add(int l, int64_t step, double gbps) {
  const int k = level(gbps, binned_ref_[l]);
  // A transition only between consecutive measured steps: across a gap the chain's own
  // prediction stands in for the unobserved steps.
  if (last_step_[l] >= 0 && step == last_step_[l] + 1) {
    counts_[l][static_cast<size_t>(last_state_[l]) * p_.states + k] += 1;
    ++seen_[l];
  }
  last_state_[l] = k;
  last_step_[l] = step;
  sum_[l][k] += gbps;
  num_[l][k] += 1;
}

void LinkStates::rebin(int l) {
  binned_ref_[l] = ref_[l];
  std::fill(counts_[l].begin(), counts_[l].end(), 0.0);
  std::fill(sum_[l].begin(), sum_[l].end(), 0.0);
  std::fill(num_[l].begin(), num_[l].end(), 0.0);
  seen_[l] = 0;
  last_step_[l] = -1;
  for (const Sample& x : series_[l]) add(l, x.step, x.gbps);
}

void LinkStates::observe(const StepRecord& r) {
  for (int s = 0; s < n_; ++s)
    for (int d = 0; d < n_; ++d) {
      const int l = s * n_ + d;
      if (s == d || nominal_[l] <= 0 || l >= static_cast<int>(r.links.size())) continue;
      const LinkStep& m = r.links[l];
      if (m.latency_samples > 0) {
        lat_[l] = lat_seen_[l] ? (1 - p_.ewma_alpha) * lat_[l] + p_.ewma_alpha * m.latency_ms
                               : m.latency_ms;
        lat_seen_[l] = true;
      }
      if (!(m.stream_ms > 0 && m.stream_bytes > 0)) continue;
      const double g = m.stream_gbps();
      ewma_[l] = last_step_[l] >= 0 ? (1 - p_.ewma_alpha) * ewma_[l] + p_.ewma_alpha * g : g;
      last_[l] = g;
      auto& ser = series_[l];
      ser.push_back({r.step, g});
      if (ser.size() > kKept) ser.erase(ser.begin());
      // The reference: the 90th percentile (nearest rank) of the kept measurements — high
      // enough to be the link at its best when it is congested most of the time, low enough
      // that one measurement above what the link carries (a burst the receiver found late)
      // does not become the link's best.
      std::vector<double> v;
      v.reserve(ser.size());
      for (const Sample& x : ser) v.push_back(x.gbps);
      const size_t rank = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(v.size()))) - 1;
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(rank), v.end());
      ref_[l] = v[rank];
      if (std::fabs(ref_[l] - binned_ref_[l]) > kRebin * binned_ref_[l]) rebin(l);
      else add(l, r.step, g);
    }
}

double LinkStates::last_gbps(int s, int d) const { return last_[s * n_ + d]; }
double LinkStates::ewma_gbps(int s, int d) const { return ewma_[s * n_ + d]; }
double LinkStates::latency_ms(int s, int d) const { return lat_[s * n_ + d]; }
int LinkStates::last_state(int s, int d) const { return last_state_[s * n_ + d]; }

std::vector<double> LinkStates::transition(int s, int d) const {
  const int K = p_.states;
  const auto& c = counts_[s * n_ + d];
  std::vector<double> P(static_cast<size_t>(K) * K);
  // Laplace: one pseudo-count a cell; and K more on the diagonal, so that a link with little
  // history is expected to stay where it is rather than to be anywhere (with no counts a link
  // would otherwise be as likely to collapse as to stay, and every decision would hedge).
  for (int i = 0; i < K; ++i) {
    double row = 0;
    for (int j = 0; j < K; ++j) row += c[i * K + j] + 1.0 + (i == j ? K : 0);
    for (int j = 0; j < K; ++j) P[i * K + j] = (c[i * K + j] + 1.0 + (i == j ? K : 0)) / row;
  }
  return P;
}

std::vector<double> LinkStates::state_gbps(int s, int d) const {
  const int K = p_.states, l = s * n_ + d;
  std::vector<double> g(K);
  for (int k = 0; k < K; ++k)
    g[k] = num_[l][k] > 0 ? sum_[l][k] / num_[l][k] : binned_ref_[l] * (k + 0.5) / K;
  return g;
}

std::vector<double> LinkStates::belief(int s, int d, int64_t at) const {
  const int K = p_.states, l = s * n_ + d;
  std::vector<double> b(K, 0.0);
  b[last_state_[l]] = 1.0;
  if (last_step_[l] < 0) return b;
  const std::vector<double> P = transition(s, d);
  // Past a few hundred steps the chain has long forgotten where it started.
  const int64_t steps = std::min<int64_t>(at - last_step_[l], 256);
  for (int64_t t = 0; t < steps; ++t) {
    std::vector<double> next(K, 0.0);
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < K; ++j) next[j] += b[i] * P[i * K + j];
    b = std::move(next);
  }
  return b;
}

}  // namespace strait
