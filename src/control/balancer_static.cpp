// balancer_static.cpp — baseline balancer "static": the splits and batch shares of the config,
// for the whole run.
#include "control/policies.hpp"

namespace strait {
namespace {
class Static final : public Balancer {
 public:
  std::string name() const override { return "static"; }
  BalanceDecision decide(const BalanceState&) override { return {}; }
};
}  // namespace

std::unique_ptr<Balancer> make_static_balancer(const Config&) {
  return std::make_unique<Static>();
}

}  // namespace strait
