// path_direct.cpp — baseline path selector "direct": every transfer takes its direct link.
#include "control/policies.hpp"

namespace strait {
namespace {
class Direct final : public PathSelector {
 public:
  std::string name() const override { return "direct"; }
  PathDecision choose(const ControllerView& v) override {
    return {direct_paths(v.world().num_dcs), {}, "{}"};
  }
};
}  // namespace

std::unique_ptr<PathSelector> make_direct_path_selector(const Config&) {
  return std::make_unique<Direct>();
}

}  // namespace strait
