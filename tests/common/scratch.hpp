// scratch.hpp — a unit test binary's scratch folder (configs, corpora), made on first use under
// the system's temp folder and removed when the binary exits: each run of such a binary left a
// folder of its own in /tmp before (150 after a day of runs). Named by a tag and the pid, so
// binaries running at once (ctest -j) do not share one. Removed only by the process that made
// it: a death test's forked child that exits normally must not take it from its parent.
#pragma once
#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace strait::test {

// The folder for `tag` (the first call's tag names it; one per binary).
inline const std::filesystem::path& scratch_dir(const std::string& tag) {
  struct Dir {
    std::filesystem::path path;
    pid_t owner;
    ~Dir() {
      std::error_code ec;
      if (getpid() == owner) std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir = [&] {
    const std::filesystem::path p =
        std::filesystem::temp_directory_path() / ("strait_test_" + tag + "_" + std::to_string(getpid()));
    std::filesystem::create_directories(p);
    return Dir{p, getpid()};
  }();
  return dir.path;
}

}  // namespace strait::test
