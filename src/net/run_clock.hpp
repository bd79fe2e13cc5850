// run_clock.hpp — where an external shaper learns when the run's link schedules started.
// The software shaper times every schedule from the transport's t0 (MPI_Wtime at the barrier
// that starts them together). Under tc, scripts/netns-run changes the kernel's classes at the
// same run times (`strait schedule`), so it needs t0 on the wall clock: rank 0 writes it, as
// seconds since the Unix epoch (CLOCK_REALTIME, shared by every namespace of one host), to the
// file named by $STRAIT_CLOCK_FILE when that is set (written to a temporary name and renamed,
// so a reader never sees half a line). docs/netns.md, "Schedules under tc".
#pragma once

namespace strait {

// t0 is an MPI_Wtime() reading; does nothing when $STRAIT_CLOCK_FILE is unset or empty, and
// throws std::runtime_error naming the file when it is set and cannot be written.
void publish_run_clock(double t0);

}  // namespace strait
