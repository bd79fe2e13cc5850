// mpi_allreduce.cpp — the gateways sum their weighted full gradients with one MPI_Allreduce on
// the expert's gateway communicator, inside the common frame (gather in the DC, weight,
// allreduce, scatter). The bytes never pass Transport::execute, so the software shaper cannot
// pace them and the per-link counters stay at zero: it is meant for kernel shaping
// (network.shaper = "none" under scripts/netns-run), and refuses to run otherwise (validation
// refuses the config before that). MPI_Allreduce sums in its own order, not DC order; the
// library is expected to give every gateway the same bits (MPI recommends it; Open MPI's and
// MPICH's algorithms for commutative ops do), and the equivalence tolerances still hold.
#include "sync/mpi_allreduce.hpp"

#include <climits>

#include "core/check.hpp"

namespace strait {

void MpiAllreduceSync::sync(ParamSet<float>& ps, SyncChannel& ch, const SyncInput& in,
                            Transport& tr) {
  STRAIT_CHECK(!tr.shaped(), "sync strategy mpi-allreduce bypasses the software shaper; it needs "
                             "network.shaper = \"none\"");
  sync_through_gateways(ps, ch, in, tr,
                        [](float* buf, size_t n, SyncChannel& c, const SyncInput&, Transport&) {
                          STRAIT_CHECK(n <= static_cast<size_t>(INT_MAX),
                                       "mpi-allreduce: more than INT_MAX floats in one call");
                          MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, buf, static_cast<int>(n),
                                                  MPI_FLOAT, MPI_SUM, c.gateways));
                        });
}

}  // namespace strait
