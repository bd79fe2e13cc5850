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

std::vector<LinkInterval> last_per_link(const std::vector<LinkInterval>& merged) {
  // merge_per_link's order (by link, then start; a link's intervals apart): each link's last.
  std::vector<LinkInterval> out;
  for (const LinkInterval& iv : merged) {
    if (!out.empty() && out.back().link == iv.link) out.back() = iv;
    else out.push_back(iv);
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

std::vector<LinkInterval> paced_only(const std::vector<LinkInterval>& merged,
                                     const std::vector<Arrival>& arrived, double burst,
                                     double pause, std::vector<LinkInterval>* held) {
  std::vector<Arrival> a(arrived);
  std::sort(a.begin(), a.end(), [](const Arrival& x, const Arrival& y) {
    return x.link != y.link ? x.link < y.link : x.at < y.at;
  });
  std::vector<LinkInterval> out;
  for (const LinkInterval& iv : merged) {
    auto it = std::lower_bound(a.begin(), a.end(), iv, [](const Arrival& x, const LinkInterval& v) {
      return x.link != v.link ? x.link < v.link : x.at <= v.from;
    });
    // fastest: least time per byte after the chunk before; longest: the longest wait for one
    double bytes = 0, fastest = 1e300, longest = 0, prev = iv.from;
    for (; it != a.end() && it->link == iv.link && it->at <= iv.to; ++it) {
      if (!(it->bytes > 0)) continue;
      bytes += it->bytes;
      fastest = std::min(fastest, (it->at - prev) / it->bytes);
      longest = std::max(longest, it->at - prev);
      prev = it->at;
    }
    const double span = iv.to - iv.from;
    if (!(bytes > 0) || fastest >= burst * span / bytes || longest < pause * span) out.push_back(iv);
    else if (held) held->push_back(iv);
  }
  return out;
}

}  // namespace strait
