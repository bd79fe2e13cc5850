// balancer_static.cpp — baseline balancer "static": the splits and batch shares the run started
// with (the config's, or the checkpoint's on resume), for the whole run.
#include "control/policies.hpp"

namespace strait {
namespace {
class Static final : public Balancer {
 public:
  std::string name() const override { return "static"; }
  BalanceDecision decide(const ControllerView& v, const Forecast&) override {
    return {v.plan().splits, v.plan().shares, "{}"};
  }
};
}  // namespace

std::unique_ptr<Balancer> make_static_balancer(const Config&) {
  return std::make_unique<Static>();
}

}  // namespace strait
