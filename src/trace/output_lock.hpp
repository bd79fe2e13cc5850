// output_lock.hpp — a run's claim on an output path (its trace, its checkpoint) for as long as it
// lives. Without it a second run started with --force on the same path truncated the first run's
// trace before it found out that the path was busy (issue 10, defect 1). The claim is an advisory
// lock (flock) on "<path>.lock", taken before anything is checked, created or replaced, and held
// until the run ends; the kernel drops it when the process dies, so a killed run never leaves a
// path locked (a stale .lock file without its lock is free). A path that some other program holds
// open for writing with HDF5's own lock is refused too.
#pragma once
#include <string>

namespace strait {

class OutputLock {
 public:
  // Throws std::runtime_error naming the path and, when known, the holder ("pid 123 on node-a")
  // when another live process holds it.
  explicit OutputLock(const std::string& path);
  ~OutputLock();  // removes the lock file while still holding it, then lets go
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  const std::string& path() const { return path_; }
  static std::string lock_path(const std::string& path) { return path + ".lock"; }

 private:
  std::string path_, lock_;
  int fd_ = -1;
};

}  // namespace strait
