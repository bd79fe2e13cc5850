// overlap_pgcs.cpp — overlap scheduler "pgcs" (parallel gradient computation and
// synchronisation): expert e's gradient sync runs while expert e+1 computes. Experts are
// trained in turn (step s trains expert s mod E), so with E >= 2 the step after a sync never
// touches the weights still being synchronised; the trainer updates expert e before it computes
// again, so the loss trajectory equals the sequential one. With one expert, or without
// MPI_THREAD_MULTIPLE (the sync runs on a second thread), there is nothing it may overlap: it
// then decides "sequential" and says why.
#include "control/policies.hpp"

namespace strait {
namespace {
class Pgcs final : public OverlapScheduler {
 public:
  std::string name() const override { return "pgcs"; }
  OverlapDecision decide(const ControllerView& v) override {
    if (v.world().experts < 2)
      return {Overlap::sequential, "{\"why\":\"one expert: nothing to overlap with\"}"};
    if (!v.world().thread_multiple)
      return {Overlap::sequential, "{\"why\":\"MPI does not provide MPI_THREAD_MULTIPLE\"}"};
    return {Overlap::pipelined, "{}"};
  }
};
}  // namespace

std::unique_ptr<OverlapScheduler> make_pgcs_overlap(const Config&) {
  return std::make_unique<Pgcs>();
}

}  // namespace strait
