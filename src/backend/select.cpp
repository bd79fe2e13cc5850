// select.cpp — backend choice and the CPU backend's threads. The CUDA backend is a shared module
// (backend/cuda_module.hpp) opened here only when a run asks for it: this is the only file above
// cuda/ that knows CUDA exists, and it knows it only as a table of functions.
#include "backend/select.hpp"

#include <cblas.h>
#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <vector>

#ifndef STRAIT_HAVE_CUDA
#error "STRAIT_HAVE_CUDA must be defined to 0 or 1 by the build"
#endif
#include "backend/cuda_module.hpp"
#include "core/check.hpp"

// Linked in by tests that carry the CUDA objects (or their CPU emulation); null otherwise.
extern "C" const strait::CudaModule* strait_cuda_module() __attribute__((weak));

namespace strait {

namespace {

struct Loaded {
  const CudaModule* m = nullptr;
  std::string why;  // why not, when m is null
};

// Where libstrait_cuda.so may be: $STRAIT_CUDA_MODULE, beside the executable, one folder up (the
// tests' binaries in build/tests), lib/ beside bin/ (scripts/gpu-bundle), the loader's path.
std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("STRAIT_CUDA_MODULE"); env && *env) return {env};
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto dir = exe.parent_path();
    for (const auto& p : {dir, dir.parent_path(), dir.parent_path() / "lib"})
      out.push_back((p / "libstrait_cuda.so").string());
  }
  out.push_back("libstrait_cuda.so");
  return out;
}

const Loaded& cuda_module() {
  static Loaded l;
  static std::once_flag once;
  std::call_once(once, [] {
    if (strait_cuda_module) {
      l.m = strait_cuda_module();
      return;
    }
    if (!STRAIT_HAVE_CUDA) {
      l.why = "this build has no CUDA backend (nvcc was not found at configure time)";
      return;
    }
    for (const std::string& path : candidates()) {
      std::error_code ec;
      if (path.find('/') != std::string::npos && !std::filesystem::exists(path, ec)) continue;
      void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) {  // there, but it or a library it needs (libcudart, cuBLAS) cannot be loaded
        l.why = std::string("cannot load the CUDA module: ") + dlerror();
        continue;
      }
      using Entry = const CudaModule* (*)();
      const auto entry = reinterpret_cast<Entry>(dlsym(h, "strait_cuda_module"));
      const CudaModule* m = entry ? entry() : nullptr;
      if (!m || m->version != CudaModule::kVersion) {
        l.why = path + " is not this strait's CUDA module";
        continue;
      }
      l.m = m;  // never closed: the backend's code must outlive every object it made
      return;
    }
    if (l.why.empty()) l.why = "the CUDA module libstrait_cuda.so was not found beside the executable";
  });
  return l;
}

}  // namespace

int cuda_devices() {
  const Loaded& l = cuda_module();
  return l.m ? l.m->device_count() : 0;
}

std::string cuda_unavailable() {
  const Loaded& l = cuda_module();
  if (!l.m) return l.why;
  return l.m->device_count() > 0 ? "" : "no CUDA device is visible";
}

ComputeBackend make_compute_backend(const std::string& kind, const std::string& gpu_math,
                                    MPI_Comm dc_comm, int node_rank) {
  ComputeBackend out;
  const bool want_cuda = kind == "cuda" || (kind == "auto" && cuda_devices() > 0);
  if (want_cuda) {
    const Loaded& l = cuda_module();
    if (!l.m) throw std::runtime_error("run.backend = \"cuda\": " + l.why);
    const int n = l.m->device_count();
    if (n == 0) throw std::runtime_error("run.backend = \"cuda\" but no CUDA device is visible");
    out.be = l.m->make_backend(node_rank % n, gpu_math);
    out.dc = l.m->make_dc_comm(dc_comm, *out.be);
    out.name = "cuda";
    return out;
  }
  out.be = make_cpu_backend<float>();
  out.dc = make_mpi_dc_comm<float>(dc_comm);
  out.name = "cpu";
  return out;
}

int pin_blas_threads(int requested, MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int on_node = 1;
  MPI_CHECK(MPI_Comm_size(node, &on_node));
  MPI_CHECK(MPI_Comm_free(&node));
  int threads = requested;
  if (threads <= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    const int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    threads = std::max(1, cores / std::max(1, on_node));
  }
  openblas_set_num_threads(threads);
  return openblas_get_num_threads();
}

int node_rank(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int r = 0;
  MPI_CHECK(MPI_Comm_rank(node, &r));
  MPI_CHECK(MPI_Comm_free(&node));
  return r;
}

}  // namespace strait
