// courier.hpp — hands the software shaper's chunks to MPI at their delivery time, across calls.
// A chunk has left its gateway when its transmission on the emulated link has ended and arrives
// one latency later. A TCP sender is free once its bytes are on the wire, so a gateway is too: it
// posts a copy of the chunk here and goes on (to its next ring step, its next collective, its
// compute) while the courier delivers. A gateway that waited for its own deliveries paid the
// latency of its outgoing hop as well as its incoming one: on a 3-DC ring with one 100 ms hop (the
// others 5 ms) a sync took 408 ms against 220 ms under tc, and with the deliveries kept only
// within one collective the first DC's step still took 220 ms against 123 ms under tc.
//
// Order: MPI matches one sender's messages of one (channel, tag) in the order they were sent,
// and a channel's tags repeat from one collective to the next, so chunks must be handed over in
// the order of their delivery times (the shaper keeps those monotone on a link, and a message's
// MPI destination is always its link's far end) and, for equal times, in the order posted.
//
// With MPI_THREAD_MULTIPLE the courier is a thread of its own: it sleeps until the next delivery
// and, while handed-over sends are incomplete, tests them every kProgressSeconds (a message
// above MPI's eager limit moves only while its sender calls into MPI; a gateway computing makes
// no MPI calls). Without it (threaded = false) the owner calls pump() and flush() itself and a
// gateway waits for its deliveries at the end of each call (the transport does so).
//
// Contract: flush() before freeing a channel that items may still be waiting to use.
#pragma once
#include <mpi.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace strait {

class Courier {
 public:
  struct Item {
    double deliver = 0;  // run seconds (MPI_Wtime() − t0)
    MPI_Comm channel = MPI_COMM_NULL;
    int dst = 0, tag = 0;
    MPI_Datatype type = MPI_BYTE;  // MPI_DOUBLE for a flow's timestamp header
    std::vector<char> data;        // a copy: the sender's buffer moves on
  };
  static constexpr double kProgressSeconds = 5e-4;

  Courier(double t0, bool threaded);
  ~Courier();  // flushes (while MPI is up), then stops the thread
  Courier(const Courier&) = delete;
  Courier& operator=(const Courier&) = delete;

  bool threaded() const { return threaded_; }
  // Takes a chunk to deliver at item.deliver (thread-safe).
  void post(Item item);
  // Unthreaded use: hands every due item to MPI, tests what was handed over, and returns the
  // earliest delivery still waiting (1e300: none).
  double pump();
  // Returns once everything posted has been handed to MPI and MPI has finished sending it.
  void flush();

 private:
  double now() const { return MPI_Wtime() - t0_; }
  double pump_locked();  // mu_ held
  bool idle_locked() const { return items_.empty() && reqs_.empty(); }
  void loop();

  double t0_;
  bool threaded_;
  std::mutex mu_;
  std::condition_variable wake_;  // the thread: an item was posted, or quit
  std::condition_variable idle_;  // flush(): nothing left
  bool quit_ = false;
  std::vector<Item> items_;              // by delivery time, ties in the order posted
  std::vector<MPI_Request> reqs_;        // handed to MPI, not yet known complete
  std::vector<std::vector<char>> sent_;  // their buffers, kept until they are
  std::thread th_;
};

}  // namespace strait
