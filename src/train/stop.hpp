// stop.hpp — SIGINT/SIGTERM as a request to stop at the next step boundary. The handler only
// sets a lock-free atomic (async-signal-safe); the step loop reads it and the exchange turns one
// rank's request into a stop of every rank at the same step.
#pragma once

namespace strait {

// Installs the SIGINT/SIGTERM handlers.
void install_stop_handlers();
// Whether a stop signal has arrived.
bool stop_requested();

}  // namespace strait
