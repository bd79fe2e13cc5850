// overlap_sequential.cpp — baseline overlap scheduler "sequential": each expert's sync finishes
// before the next expert computes (the reference PGCS is measured against).
#include "control/policies.hpp"

namespace strait {
namespace {
class Sequential final : public OverlapScheduler {
 public:
  std::string name() const override { return "sequential"; }
  bool overlap() const override { return false; }
};
}  // namespace

std::unique_ptr<OverlapScheduler> make_sequential_overlap(const Config&) {
  return std::make_unique<Sequential>();
}

}  // namespace strait
