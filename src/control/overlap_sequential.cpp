// overlap_sequential.cpp — baseline overlap scheduler "sequential": each step's sync and update
// finish before the next step computes (the reference PGCS is measured against).
#include "control/policies.hpp"

namespace strait {
namespace {
class Sequential final : public OverlapScheduler {
 public:
  std::string name() const override { return "sequential"; }
  OverlapDecision decide(const ControllerView&) override { return {Overlap::sequential, "{}"}; }
};
}  // namespace

std::unique_ptr<OverlapScheduler> make_sequential_overlap(const Config&) {
  return std::make_unique<Sequential>();
}

}  // namespace strait
