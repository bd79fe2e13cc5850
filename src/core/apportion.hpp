// apportion.hpp — integer shares of a total in proportion to fractions (largest remainder),
// with a floor per part. Used for heads and MLP columns among a DC's ranks and for sequences of
// the global batch among DCs, so every layer of the code rounds the same way.
#pragma once
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "core/check.hpp"

namespace strait {

// Requires total >= floor_each · fractions.size(). Deterministic: ties go to the lower index.
inline std::vector<int> apportion(const std::vector<double>& fractions, int total, int floor_each) {
  const int n = static_cast<int>(fractions.size());
  STRAIT_CHECK(n > 0 && total >= floor_each * n, "apportion: " + std::to_string(total) +
                                                     " units cannot give " + std::to_string(n) +
                                                     " parts at least " + std::to_string(floor_each));
  const double sum = std::accumulate(fractions.begin(), fractions.end(), 0.0);
  const int free_units = total - floor_each * n;
  std::vector<int> out(n, floor_each);
  std::vector<double> rem(n);
  int given = 0;
  for (int i = 0; i < n; ++i) {
    // Each part wants its proportional share of the whole; the floor is part of that share.
    const double want = std::max(0.0, fractions[i] / sum * total - floor_each);
    const int w = static_cast<int>(std::floor(want + 1e-9));
    out[i] += w;
    given += w;
    rem[i] = want - w;
  }
  // Over-allocation is possible only when floors pushed small parts up; take back from the
  // parts with the smallest remainders among those above their floor.
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return rem[a] > rem[b]; });
  for (int k = 0; given < free_units; k = (k + 1) % n, ++given) ++out[order[k]];
  for (int k = n - 1; given > free_units; k = (k + n - 1) % n)
    if (out[order[k]] > floor_each) --out[order[k]], --given;
  return out;
}

}  // namespace strait
