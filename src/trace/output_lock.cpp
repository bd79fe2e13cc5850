// output_lock.cpp — see output_lock.hpp.
#include "trace/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace strait {

namespace {

std::string read_holder(int fd) {
  char buf[256] = {0};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string s(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

}  // namespace

OutputLock::OutputLock(const std::string& path) : path_(path), lock_(lock_path(path)) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path parent = fs::path(lock_).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  // Open, lock, and make sure the file locked is still the one at the path: a holder that let go
  // unlinks it first, and a lock on an unlinked file guards nothing.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(lock_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      throw std::runtime_error("cannot create " + lock_ + " to claim " + path + ": " +
                               std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string holder = read_holder(fd);
      ::close(fd);
      if (err == EWOULDBLOCK)
        throw std::runtime_error(path + " is in use by another live run" +
                                 (holder.empty() ? "" : " (" + holder + ")") +
                                 "; wait for it to end, or choose another path");
      throw std::runtime_error("cannot lock " + lock_ + ": " + std::strerror(err));
    }
    struct stat a {}, b {};
    if (::fstat(fd, &a) == 0 && ::stat(lock_.c_str(), &b) == 0 && a.st_ino == b.st_ino &&
        a.st_dev == b.st_dev) {
      fd_ = fd;
      break;
    }
    ::close(fd);  // unlinked under us: try the new one
  }
  if (fd_ < 0) throw std::runtime_error("cannot claim " + path + ": its lock file keeps changing");
  char host[128] = {0};
  ::gethostname(host, sizeof host - 1);
  const std::string me = "pid " + std::to_string(::getpid()) + " on " + host + "\n";
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, me.data(), me.size(), 0);
  // A writer outside this scheme (an older strait, an h5py writer) holds HDF5's exclusive lock
  // on the file itself while it writes; a shared probe fails exactly then.
  const int probe = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (probe >= 0) {
    struct stat st {};
    const bool regular = ::fstat(probe, &st) == 0 && S_ISREG(st.st_mode);
    const bool held = regular && ::flock(probe, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(probe);
    if (held) {
      ::unlink(lock_.c_str());
      ::close(fd_);
      fd_ = -1;
      throw std::runtime_error(path + " is open for writing in another process (it holds the "
                               "file's HDF5 lock); wait for it to end, or choose another path");
    }
  }
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  ::unlink(lock_.c_str());
  ::close(fd_);
}

}  // namespace strait
