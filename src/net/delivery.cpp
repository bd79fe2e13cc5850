// delivery.cpp — merging timed intervals and counting the chunks inside them (delivery.hpp).
#include "net/delivery.hpp"

#include <algorithm>

namespace strait {

std::vector<LinkInterval> merge_per_link(std::vector<LinkInterval> v) {
  std::sort(v.begin(), v.end(), [](const LinkInterval& a, const LinkInterval& b) {
    return a.link != b.link ? a.link < b.link : a.from < b.from;
  });
  std::vector<LinkInterval> out;
  for (const LinkInterval& iv : v) {
    if (!out.empty() && out.back().link == iv.link && iv.from <= out.back().to)
      out.back().to = std::max(out.back().to, iv.to);
    else
      out.push_back(iv);
  }
  return out;
}

std::vector<double> bytes_inside(const std::vector<LinkInterval>& merged,
                                 const std::vector<Arrival>& arrived, int links) {
  std::vector<double> bytes(static_cast<size_t>(links), 0.0);
  for (const LinkInterval& iv : merged)
    for (const Arrival& a : arrived)
      if (a.link == iv.link && a.at > iv.from && a.at <= iv.to) bytes[a.link] += a.bytes;
  return bytes;
}

}  // namespace strait
