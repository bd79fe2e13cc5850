// path_direct.cpp — baseline path selector "direct": every transfer takes its direct link.
#include "control/policies.hpp"

namespace strait {
namespace {
class Direct final : public PathSelector {
 public:
  std::string name() const override { return "direct"; }
  std::vector<std::vector<int>> choose(int n) override {
    std::vector<std::vector<int>> p(n * n);
    for (int s = 0; s < n; ++s)
      for (int d = 0; d < n; ++d)
        if (s != d) p[s * n + d] = {s, d};
    return p;
  }
};
}  // namespace

std::unique_ptr<PathSelector> make_direct_path_selector(const Config&) {
  return std::make_unique<Direct>();
}

}  // namespace strait
