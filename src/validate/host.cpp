// host.cpp — see host.hpp.
#include "validate/host.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "backend/select.hpp"
#include "config/messages.hpp"
#include "model/layout.hpp"

namespace strait {

namespace fs = std::filesystem;

double checkpoint_bytes(const Config& cfg) {
  return 12.0 * parameter_count_as_double(cfg.model) * cfg.model.experts + (1 << 20);
}

namespace {

// The folder a file will be created in, or its nearest existing ancestor (the run creates the
// missing folders).
fs::path existing_folder(const std::string& file) {
  std::error_code ec;
  fs::path p = fs::absolute(fs::path(file).parent_path().empty() ? fs::path(".") : fs::path(file).parent_path(), ec);
  while (!p.empty() && !fs::exists(p, ec)) {
    if (p == p.parent_path()) break;
    p = p.parent_path();
  }
  return p;
}

struct Output {
  std::string path, key;
  double need = 0;  // bytes it needs free
};

std::string bytes(double b) {
  char buf[32];
  if (b >= 1073741824.0) std::snprintf(buf, sizeof buf, "%.3g GiB", b / 1073741824.0);
  else if (b >= 1048576.0) std::snprintf(buf, sizeof buf, "%.3g MiB", b / 1048576.0);
  else std::snprintf(buf, sizeof buf, "%.3g KiB", b / 1024.0);
  return buf;
}

}  // namespace

std::vector<std::string> host_problems(const Config& cfg, const std::string& trace,
                                       const std::string& checkpoint, const std::string& flag) {
  std::vector<std::string> out;
  // A path the config did not set is made of run.out_dir (and run.name): point there.
  auto key_of = [&](const std::string& key) { return cfg.where.count(key) ? key : std::string("run.out_dir"); };
  auto at = [&](const std::string& key) { return flag.empty() ? cfg.where_of(key_of(key)) : flag + ":0"; };
  auto name = [&](const std::string& key) { return flag.empty() ? key_of(key) : flag + " (" + key + ")"; };
  const double ckpt = checkpoint_bytes(cfg);
  std::vector<Output> outputs;
  if (!trace.empty()) outputs.push_back({trace, "trace.path", 1 << 20});
  if (!checkpoint.empty()) outputs.push_back({checkpoint, "checkpoint.path", ckpt});
  // Both on one file system: it must hold both.
  unsigned long first_fsid = 0;
  bool have_first = false;
  double total = 0;
  for (const Output& o : outputs) {
    if (!flag.empty())
      if (const std::string clash = output_clash(cfg, o.path); !clash.empty())
        out.push_back(msg::line(at(o.key), name(o.key), clash,
                                "an output path that is none of the run's inputs"));
    const fs::path dir = existing_folder(o.path);
    if (::access(dir.c_str(), W_OK) != 0) {
      const int err = errno;
      out.push_back(msg::line(at(o.key), name(o.key),
                              "cannot write " + o.path + ": the folder " + dir.string() +
                                  (err == EROFS ? " is on a read-only file system"
                                                : std::string(" is not writable (") +
                                                      std::strerror(err) + ")"),
                              "a writable folder for the run's outputs"));
      continue;
    }
    struct statvfs vfs {};
    if (::statvfs(dir.c_str(), &vfs) != 0) continue;  // no figures: nothing to judge
    const double free_bytes = static_cast<double>(vfs.f_bavail) * static_cast<double>(vfs.f_frsize);
    double need = o.need;
    if (have_first && vfs.f_fsid == first_fsid) need += total;
    if (!have_first) first_fsid = vfs.f_fsid, have_first = true, total = o.need;
    if (free_bytes < need)
      out.push_back(msg::line(
          at(o.key), name(o.key),
          "the file system of " + dir.string() + " has " + bytes(free_bytes) +
              " free, the run needs about " + bytes(need) +
              " there (a checkpoint of this model is about " + bytes(ckpt) + ")",
          "a folder with room for the trace and a checkpoint"));
  }
  if (cfg.backend == "cuda")
    if (const std::string why = cuda_unavailable(); !why.empty())
      out.push_back(msg::line(cfg.where_of("run.backend"), "run.backend",
                              "\"cuda\" on this machine: " + why,
                              "\"cpu\", or \"auto\" (CUDA where a device is visible)"));
  return out;
}

}  // namespace strait
