// bench_compute.cpp — the compute figure of merit of a backend (a benchmark, not a test; `make
// bench`). For each model, one rank and one datacenter:
//  1. the reference, through the backend the step runs on (OpenBLAS on one core, or cuBLAS):
//     GEMM FLOP/s over every Backend::gemm shape of one forward + backward of the model
//     (bench/gemm_ref.hpp), and a square 1024³ GEMM as a second, model-independent column;
//  2. a short training run with the real trainer and trace: model FLOP/s of a step (PaLM
//     convention, model/transformer.hpp) over the median step time after 3 warm-up steps;
//  3. ratio = step FLOP/s ÷ reference; overhead = rank 0's controller + trace time as a share
//     of the step.
// The CUDA backend's goal (the issue): ratio_vs_shapes >= 0.6 at the GPU model sizes.
// Writes a CSV and prints a table. Usage: bench_compute --help.
#include <CLI/CLI.hpp>
#include <cblas.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "backend/select.hpp"
#include "config/config.hpp"
#include "gemm_ref.hpp"
#include "model/memory.hpp"
#include "model/transformer.hpp"
#include "trace/trace_reader.hpp"
#include "train/trainer.hpp"
#include "validate/validate.hpp"

using namespace strait;

namespace {

// The benchmark models, all trained as one rank in one datacenter from configs/default.toml;
// 0 keeps that file's value (layers 4, d_model 128, heads 4, d_ff 512, seq_len 128, 16 sequences).
// - default, wide: CPU sizes (a step takes 0.2–0.6 s on one core).
// - gpu-medium, gpu-large: CUDA sizes, 8192 tokens per step. Their GEMMs (M = 8192 rows,
//   N and K of 1024–8192) are large enough to be tensor-core bound on an H200 rather than
//   launch- or memory-bound, so the step is measured against what cuBLAS reaches on a busy
//   device. Attention materialises its B·H·T² probabilities per layer (plus as much scratch in
//   backward): 16·16·512² floats = 256 MiB at gpu-medium, 8·16·1024² floats = 512 MiB at
//   gpu-large; both fit easily in 141 GB.
// model.vocab stays 256 (byte-level tokens; the config accepts nothing else).
struct BenchModel {
  const char* name;
  int layers, d_model, heads, d_ff, seq_len, global_batch;
};
const BenchModel kModels[] = {
    {"default", 0, 0, 0, 0, 0, 0},
    {"wide", 0, 256, 8, 1024, 0, 0},
    {"gpu-medium", 4, 1024, 16, 4096, 512, 16},
    {"gpu-large", 4, 2048, 16, 8192, 1024, 8},
};

constexpr double kShapesTargetMs = 1000;  // timed part of the same-shapes reference
constexpr double kSquareTargetMs = 500;   // and of the square one

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

const BenchModel* find_model(const std::string& name) {
  for (const auto& m : kModels)
    if (name == m.name) return &m;
  return nullptr;
}

std::string model_names() {
  std::string s;
  for (const auto& m : kModels) s += (s.empty() ? "" : ", ") + std::string(m.name);
  return s;
}

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "bench_compute: %s\n", msg.c_str());
  MPI_Finalize();
  return 2;
}

// --set overrides for a model's sizes: load_valid_config validates them with the rest of the
// file.
std::vector<std::string> model_sets(const BenchModel& b) {
  std::vector<std::string> s;
  auto add = [&](const char* key, int v) {
    if (v) s.push_back(std::string(key) + "=" + std::to_string(v));
  };
  add("model.layers", b.layers);
  add("model.d_model", b.d_model);
  add("model.heads", b.heads);
  add("model.d_ff", b.d_ff);
  add("model.seq_len", b.seq_len);
  add("train.global_batch", b.global_batch);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::string src = ".", out_csv, backend = "cpu", gpu_math = "tf32";
  int steps = 30;
  std::vector<std::string> models;
  CLI::App app{"bench_compute: model FLOP/s of a training step over the backend's GEMM FLOP/s "
               "for the model's own GEMM shapes, measured in the same run (one rank)"};
  // --src and --steps: the last one given wins (scripts/bench-compute.sh passes its own first).
  app.add_option("--src", src, "Source tree: configs/default.toml is read from here (default .)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--out", out_csv,
                 "CSV to write (default <src>/results/bench/compute.csv for cpu, "
                 "<src>/results/gpu/compute-<gpu-math>.csv for cuda)");
  app.add_option("--steps", steps, "Training steps per model; the first 3 are warm-up (default 30)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--backend", backend, "cpu | cuda (default cpu)");
  app.add_option("--gpu-math", gpu_math, "CUDA GEMM compute type: tf32 | bf16 | fp32 (default tf32)");
  app.add_option("--models", models,
                 "Comma-separated, from " + model_names() +
                     " (default default,wide for cpu, gpu-medium,gpu-large for cuda)")
      ->delimiter(',');
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // CLI11 prints the message (or --help)
    MPI_Finalize();
    return rc == 0 ? 0 : 2;
  }
  if (backend != "cpu" && backend != "cuda")
    return usage_error("--backend: unknown backend \"" + backend + "\"; expected cpu or cuda");
  if (gpu_math != "tf32" && gpu_math != "bf16" && gpu_math != "fp32")
    return usage_error("--gpu-math: unknown GPU math \"" + gpu_math +
                       "\"; expected one of tf32, bf16, fp32");
  if (steps < 4)
    return usage_error("--steps: " + std::to_string(steps) +
                       " leaves no measured step; expected an integer >= 4 (the first 3 are "
                       "warm-up)");
  if (models.empty())
    models = backend == "cuda" ? std::vector<std::string>{"gpu-medium", "gpu-large"}
                               : std::vector<std::string>{"default", "wide"};
  for (const auto& m : models)
    if (!find_model(m))
      return usage_error("--models: unknown model \"" + m + "\"; expected a comma-separated list "
                         "from " + model_names());
  if (backend == "cuda") {
    if (!STRAIT_HAVE_CUDA)
      return usage_error("--backend cuda: this build has no CUDA backend (configured without "
                         "nvcc or with -DSTRAIT_CUDA=OFF); expected --backend cpu");
    if (cuda_devices() == 0)
      return usage_error("--backend cuda: no CUDA device is visible; expected --backend cpu");
  }
  const bool cuda = backend == "cuda";
  if (!std::filesystem::is_regular_file(src + "/configs/default.toml"))
    return usage_error("--src: " + src + "/configs/default.toml not found; expected the "
                       "repository root");
  if (out_csv.empty())
    out_csv = cuda ? src + "/results/gpu/compute-" + gpu_math + ".csv"
                   : src + "/results/bench/compute.csv";
  // The table goes to <out>.partial and is renamed at the end: a run that fails half-way leaves
  // no CSV that looks complete.
  const std::string partial_csv = out_csv + ".partial";
  std::error_code ec;
  const std::filesystem::path out_dir = std::filesystem::path(out_csv).parent_path();
  if (!out_dir.empty()) std::filesystem::create_directories(out_dir, ec);
  std::FILE* csv = ec ? nullptr : std::fopen(partial_csv.c_str(), "w");
  if (!csv)
    return usage_error("--out: cannot write " + partial_csv + (ec ? " (" + ec.message() + ")" : "") +
                       "; expected a writable file path");

  openblas_set_num_threads(1);  // one core: the CPU figure is per core
  const std::string tmp = "/tmp/strait-bench-" + std::to_string(getpid());
  std::filesystem::create_directories(tmp);
  std::fprintf(csv, "model,backend,gpu_math,layers,d_model,heads,d_ff,seq_len,tokens_per_step,"
                    "gemm_square_gflops,gemm_shapes_gflops,gemm_shapes_flop_share,step_ms_median,"
                    "step_gflops,ratio_vs_shapes,ratio_vs_square,compute_pct,sync_pct,"
                    "optimizer_and_rest_pct,controller_pct,trace_pct,overhead_pct\n");
  const std::string math_col = cuda ? gpu_math : "-";  // the CPU computes in FP32
  std::printf("backend %s%s, %d steps per model (median after 3)\n", backend.c_str(),
              cuda ? (", gpu-math " + gpu_math).c_str() : " (OpenBLAS, 1 thread)", steps);
  std::printf("%-10s %6s %10s %10s %6s %10s %10s %8s %8s %8s %8s\n", "model", "tokens",
              "gemm1024^3", "gemm@shape", "share", "step ms", "step GF/s", "vs shape",
              "vs 1024", "compute", "overhead");

  for (const auto& name : models) {
    const BenchModel& bm = *find_model(name);
    std::vector<std::string> sets = {"datacenter.0.ranks=1", "datacenter.1.ranks=1",
                                     "train.steps=" + std::to_string(steps), "train.log_every=1000",
                                     "run.name=bench", "run.out_dir=\"" + tmp + "\"",
                                     "run.backend=\"" + backend + "\"",
                                     "run.gpu_math=\"" + gpu_math + "\""};
    for (auto& s : model_sets(bm)) sets.push_back(s);
    Config cfg;
    try {
      cfg = load_valid_config(src + "/configs/default.toml", sets);
    } catch (const ConfigError& e) {
      std::fprintf(stderr, "bench_compute: model %s: config error: %s\n", bm.name, e.what());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    // One rank, one DC: the default config has two DCs, so keep the first and weight it fully.
    cfg.datacenters.resize(1);
    cfg.datacenters[0].ranks = 1;
    cfg.datacenters[0].split = {1.0};
    cfg.datacenters[0].speed = {1.0};
    cfg.train.batch_shares = {1.0};
    cfg.links.clear();
    // load_valid_config checked memory for the two-DC file (half the batch per rank); check again
    // for the whole batch on one rank (host memory: meaningful for the CPU backend only).
    const double need = estimate_memory(cfg, 0).total_bytes, limit = memory_limit_bytes(cfg);
    if (!cuda && limit > 0 && need > limit) {
      std::fprintf(stderr, "bench_compute: model %s needs about %.1f GiB on one rank, above the "
                   "%.1f GiB of this machine; expected a smaller model (--models)\n",
                   bm.name, need / 1073741824.0, limit / 1073741824.0);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const auto& m = cfg.model;
    const int tokens = cfg.train.global_batch * m.seq_len;
    const double model_flops = model_flops_per_token(m) * tokens;

    const auto calls = bench::model_gemm_calls(m, tokens);
    const double list_flops = bench::total_flops(calls);
    const double attn_flops = 12.0 * m.layers * m.d_model * m.seq_len * tokens;
    if (std::fabs(list_flops + attn_flops - model_flops) > 1e-9 * model_flops) {
      std::fprintf(stderr, "bench_compute: the GEMM list (%.6g FLOP) does not match the model's "
                   "matmul FLOPs (%.6g); bench/gemm_ref.cpp is out of date with transformer.cpp\n",
                   list_flops, model_flops - attn_flops);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double sq_gflops = 0, shapes_gflops = 0;
    {  // the reference backend lives only here: the trainer makes its own
      ComputeBackend ref = make_compute_backend(backend, gpu_math, MPI_COMM_NULL, 0);
      sq_gflops = bench::time_gemms(*ref.be, {{"square", false, false, 1024, 1024, 1024, 0.f}},
                                    kSquareTargetMs).gflops;
      shapes_gflops = bench::time_gemms(*ref.be, calls, kShapesTargetMs).gflops;
    }

    TrainOptions opt;
    opt.trace_path = tmp + "/" + bm.name + ".h5";
    opt.force = true;
    opt.verbose = false;
    const TrainOutcome res = train(cfg, MPI_COMM_SELF, opt);
    if (res.exit_code != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    const TraceData td = read_trace(opt.trace_path, false);
    std::filesystem::remove(opt.trace_path);
    std::vector<double> wall, ctl, tr, comp, syn;
    for (size_t i = 3; i < td.steps.size(); ++i) {  // skip warm-up steps
      wall.push_back(td.steps[i].wall_ms);
      ctl.push_back(td.steps[i].controller_ms);
      tr.push_back(td.steps[i].trace_ms);
      comp.push_back(td.steps[i].compute_ms);
      syn.push_back(td.steps[i].sync_ms);
    }
    const double step_ms = median(wall);
    const double step_gflops = model_flops / (step_ms * 1e6);
    const double share = list_flops / model_flops;
    const double r_shapes = step_gflops / shapes_gflops, r_square = step_gflops / sq_gflops;
    const double ctl_pct = 100 * median(ctl) / step_ms, tr_pct = 100 * median(tr) / step_ms;
    const double comp_pct = 100 * median(comp) / step_ms, syn_pct = 100 * median(syn) / step_ms;
    std::fprintf(csv,
                 "%s,%s,%s,%d,%d,%d,%d,%d,%d,%.2f,%.2f,%.4f,%.3f,%.2f,%.3f,%.3f,%.1f,%.1f,%.1f,"
                 "%.3f,%.3f,%.3f\n",
                 bm.name, backend.c_str(), math_col.c_str(), m.layers, m.d_model, m.heads, m.d_ff,
                 m.seq_len, tokens, sq_gflops, shapes_gflops, share, step_ms, step_gflops, r_shapes,
                 r_square, comp_pct, syn_pct, 100 - comp_pct - syn_pct - ctl_pct - tr_pct, ctl_pct,
                 tr_pct, ctl_pct + tr_pct);
    std::fflush(csv);
    std::printf("%-10s %6d %10.1f %10.1f %5.1f%% %10.2f %10.1f %7.1f%% %7.1f%% %7.1f%% %7.2f%%\n",
                bm.name, tokens, sq_gflops, shapes_gflops, 100 * share, step_ms, step_gflops,
                100 * r_shapes, 100 * r_square, comp_pct, ctl_pct + tr_pct);
    std::fflush(stdout);
  }
  if (std::fclose(csv) != 0 || std::rename(partial_csv.c_str(), out_csv.c_str()) != 0) {
    std::fprintf(stderr, "bench_compute: --out: cannot finish %s\n", out_csv.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::filesystem::remove_all(tmp);
  std::printf("GFLOP/s columns: the reference GEMMs through the %s backend; \"share\" is the part "
              "of the model FLOPs the same-shape GEMMs carry (attention's batched GEMMs are not "
              "among them)\nwrote %s\n", backend.c_str(), out_csv.c_str());
  MPI_Finalize();
  return 0;
}
