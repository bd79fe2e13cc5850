// bench_compute.cpp — CPU backend figure of merit (a benchmark, not a test; `make bench`).
// For each model: single-core SGEMM FLOP/s (OpenBLAS, 1 thread, square 1024 and the model's
// largest training GEMM shape), then a short single-rank training run with the real trainer and
// trace; model FLOP/s of a step (PaLM convention, model/transformer.hpp) over the median step
// time, divided by the SGEMM figure measured in the same run. Overhead = rank 0's controller +
// trace time as a share of step wall time. Writes results/bench/compute.csv and prints a table.
#include <cblas.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/timer.hpp"
#include "model/transformer.hpp"
#include "trace/trace_reader.hpp"
#include "train/trainer.hpp"

using namespace strait;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// GFLOP/s of C(M,N) = A(M,K)·B(K,N), median of `reps` after one warm-up.
double sgemm_gflops(int M, int N, int K, int reps) {
  std::vector<float> A(static_cast<size_t>(M) * K, 0.5f), B(static_cast<size_t>(K) * N, 0.25f),
      C(static_cast<size_t>(M) * N);
  std::vector<double> t;
  for (int r = 0; r <= reps; ++r) {
    const double t0 = now_ms();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A.data(), K, B.data(), N,
                0.0f, C.data(), N);
    if (r) t.push_back(now_ms() - t0);
  }
  return 2.0 * M * N * K / (median(t) * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string src = argc > 1 ? argv[1] : ".";
  const std::string out_csv = argc > 2 ? argv[2] : src + "/results/bench/compute.csv";
  const int steps = argc > 3 ? std::stoi(argv[3]) : 30;
  openblas_set_num_threads(1);
  const std::string tmp = "/tmp/strait-bench-" + std::to_string(getpid());
  std::filesystem::create_directories(tmp);

  struct Case {
    std::string name, sets;
  };
  // "default" is configs/default.toml's model; "wide" doubles d_model and d_ff.
  const std::vector<Case> cases = {
      {"default", ""},
      {"wide", "d_model=256 d_ff=1024 heads=8"},
  };
  std::FILE* csv = std::fopen(out_csv.c_str(), "w");
  if (!csv) {
    std::fprintf(stderr, "bench_compute: cannot write %s\n", out_csv.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  std::fprintf(csv, "model,layers,d_model,d_ff,seq_len,tokens_per_step,sgemm_gflops,"
                    "sgemm_model_shape_gflops,step_ms_median,step_gflops,ratio,controller_pct,"
                    "trace_pct,overhead_pct,compute_pct,sync_pct,optimizer_and_rest_pct\n");
  std::printf("%-8s %8s %10s %10s %10s %8s %9s %9s\n", "model", "tokens", "sgemm", "sgemm@model",
              "step", "ratio", "overhead", "compute");
  for (const auto& c : cases) {
    std::vector<std::string> sets = {"datacenter.0.ranks=1", "datacenter.1.ranks=1",
                                     "train.steps=" + std::to_string(steps), "train.log_every=1000",
                                     "run.name=bench", "run.out_dir=\"" + tmp + "\""};
    // One rank, one DC: the default config has two DCs, so keep the first and weight it fully.
    Config cfg = load_config(src + "/configs/default.toml", sets);
    cfg.datacenters.resize(1);
    cfg.datacenters[0].ranks = 1;
    cfg.datacenters[0].split = {1.0};
    cfg.datacenters[0].speed = {1.0};
    cfg.train.batch_shares = {1.0};
    cfg.links.clear();
    if (!c.sets.empty()) {
      cfg.model.d_model = 256, cfg.model.d_ff = 1024, cfg.model.heads = 8;
    }
    const auto& m = cfg.model;
    const int tokens = cfg.train.global_batch * m.seq_len;
    const double gemm_peak = sgemm_gflops(1024, 1024, 1024, 5);
    const double gemm_model = sgemm_gflops(tokens, m.d_ff, m.d_model, 5);

    TrainOptions opt;
    opt.trace_path = tmp + "/" + c.name + ".h5";
    opt.force = true;
    opt.verbose = false;
    const TrainOutcome res = train(cfg, MPI_COMM_SELF, opt);
    if (res.exit_code != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    const TraceData td = read_trace(opt.trace_path, false);
    std::vector<double> wall, ctl, tr, comp, syn;
    for (size_t i = 3; i < td.steps.size(); ++i) {  // skip warm-up steps
      wall.push_back(td.steps[i].wall_ms);
      ctl.push_back(td.steps[i].controller_ms);
      tr.push_back(td.steps[i].trace_ms);
      comp.push_back(td.steps[i].compute_ms);
      syn.push_back(td.steps[i].sync_ms);
    }
    const double step_ms = median(wall);
    const double flops = model_flops_per_token(m) * tokens;
    const double step_gflops = flops / (step_ms * 1e6);
    const double ratio = step_gflops / gemm_peak;
    const double ctl_pct = 100 * median(ctl) / step_ms, tr_pct = 100 * median(tr) / step_ms;
    const double comp_pct = 100 * median(comp) / step_ms, syn_pct = 100 * median(syn) / step_ms;
    std::fprintf(csv, "%s,%d,%d,%d,%d,%d,%.2f,%.2f,%.2f,%.2f,%.3f,%.3f,%.3f,%.3f,%.1f,%.1f,%.1f\n",
                 c.name.c_str(), m.layers, m.d_model, m.d_ff, m.seq_len, tokens, gemm_peak,
                 gemm_model, step_ms, step_gflops, ratio, ctl_pct, tr_pct, ctl_pct + tr_pct,
                 comp_pct, syn_pct, 100 - comp_pct - syn_pct - ctl_pct - tr_pct);
    std::printf("%-8s %8d %7.1f GF %7.1f GF %7.1f ms %7.1f%% %8.2f%% %8.1f%%\n", c.name.c_str(),
                tokens, gemm_peak, gemm_model, step_ms, 100 * ratio, ctl_pct + tr_pct, comp_pct);
    std::fflush(stdout);
  }
  std::fclose(csv);
  std::filesystem::remove_all(tmp);
  std::printf("wrote %s\n", out_csv.c_str());
  MPI_Finalize();
  return 0;
}
