#!/usr/bin/env bash
# gpu-check.sh — the one prepared check for a machine with a CUDA GPU (a lent H200, say), meant
# to finish within 8 minutes:
#   1. build Release with the CUDA backend (sm_90 unless CUDA_ARCH says otherwise), or take the
#      binaries of a prebuilt bundle (BUNDLE=dir, made by scripts/gpu-bundle on a machine with the
#      project's dependencies: the GPU machine's image may lack Open MPI, HDF5 and OpenBLAS);
#   2. test_cuda_parity: every op against the CPU backend in FP32, TF32 and BF16 GEMM math, the
#      staging copies' ordering, what a step copies, then 20 training steps per math; and
#      test_equivalence on 6 ranks with the CUDA backend (FP32 GEMMs): distributed layouts
#      sharing the GPU reproduce the single-process GPU run, reruns and resume bit-identical;
#   3. bench_compute on the CUDA backend (the benchmark model sizes, TF32 and BF16): model FLOP/s
#      of a training step against cuBLAS GEMM FLOP/s for the same shapes, measured in the same
#      run (the issue's 60% goal), and model FLOP utilisation against the datasheet peak; then
#      a short profiled run (STRAIT_CUDA_PROFILE=1: GPU time per op, GEMMs per shape);
#   4. a short training run of configs/default.toml on 4 ranks (2 datacenters × 2 ranks sharing
#      the GPU, shaped links) on the CUDA and on the CPU backend, summarised by `strait report`;
#   5. a report to results/gpu/<date>-<device>.md with the CSVs beside it, copied to $OUT too.
# Usage: scripts/gpu-check.sh            (from anywhere; it works in the repository root)
# Worst case (every phase hitting its timeout) under 10 minutes; a healthy run on an H200 should
# take 2-3 (not yet measured). With $OUT set (the device tool), results are copied there as each
# phase ends.
# Environment: BUNDLE (prebuilt bundle folder; skips the build), BUILD (build folder, default
#   build-gpu), CUDA_ARCH (default 90), STEPS (training steps, default 50), BENCH_STEPS (default
#   20), GPU_CHECK_ALLOW_STALE_BUNDLE=1 to use a bundle built from another commit,
#   GPU_CHECK_ALLOW_NO_GPU=1 to exercise the script on a machine without a GPU (the CUDA
#   parts then fail or skip and are reported as such).
# A build needs what a normal build needs (cmake, Open MPI, HDF5, Eigen, OpenBLAS, toml++, CLI11,
# GoogleTest: scripts/install-deps) plus nvcc; it says what is missing and stops if not there.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${BUILD:-build-gpu}
CUDA_ARCH=${CUDA_ARCH:-90}
STEPS=${STEPS:-50}
BENCH_STEPS=${BENCH_STEPS:-20}
NP=4
T0=$(date +%s)

say() { printf '\n==> [%4ss] %s\n' "$(($(date +%s) - T0))" "$*"; }
# keep FILE [NAME]: copy to $OUT at once, so that a run cut off at its time limit still returns
# what it had done (the device tool returns at most 8 files from $OUT: this script keeps 6).
keep() { if [ -n "${OUT:-}" ] && [ -f "$1" ]; then mkdir -p "$OUT" && cp "$1" "$OUT/${2:-$(basename "$1")}"; fi; }
# note FILE: append to $OUT/runs.log (the bench and training logs, in order).
note() { if [ -n "${OUT:-}" ] && [ -f "$1" ]; then mkdir -p "$OUT" && cat "$1" >>"$OUT/runs.log"; fi; }

# ---- where things go ----
DATE=$(date -u +%Y-%m-%d)
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
  GPU_INFO=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -n1)
elif [ "${GPU_CHECK_ALLOW_NO_GPU:-0}" = 1 ]; then
  GPU_NAME="no-gpu"
  GPU_INFO="(no GPU: nvidia-smi missing or found no device)"
else
  echo "gpu-check: nvidia-smi finds no GPU (set GPU_CHECK_ALLOW_NO_GPU=1 to run anyway)" >&2
  exit 2
fi
SLUG=$(printf '%s' "$GPU_NAME" | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed 's/^-//;s/-$//')
WORK=$(mktemp -d "${TMPDIR:-/tmp}/strait-gpu-check.XXXXXX")
REPORT_DIR=$ROOT/results/gpu
REPORT=$REPORT_DIR/$DATE-$SLUG.md
mkdir -p "$REPORT_DIR"
say "gpu-check on $GPU_INFO; work folder $WORK; report $REPORT"

# Dense tensor-core peaks from the vendor's datasheets (TFLOP/s, no sparsity), for the model
# FLOP utilisation column; PEAK_TF32 / PEAK_BF16 override, unknown devices report "-".
case "$GPU_NAME" in
  *H100*|*H200*) PEAK_TF32=${PEAK_TF32:-494.7} PEAK_BF16=${PEAK_BF16:-989.4} ;;
  *A100*) PEAK_TF32=${PEAK_TF32:-156} PEAK_BF16=${PEAK_BF16:-312} ;;
  *) PEAK_TF32=${PEAK_TF32:-} PEAK_BF16=${PEAK_BF16:-} ;;
esac

# ---- 1. binaries ----
CORPUS_SET=()
if [ ! -e /usr/share/common-licenses ]; then
  CORPUS_SET=(--set "train.corpus=$ROOT/docs")  # the default corpus is a Debian folder
  echo "gpu-check: /usr/share/common-licenses not found; training on $ROOT/docs instead"
fi
if [ -n "${BUNDLE:-}" ]; then
  BUNDLE=$(cd "$BUNDLE" && pwd)
  say "prebuilt bundle $BUNDLE"
  # shellcheck disable=SC1091
  source "$BUNDLE/env.sh"
  STRAIT=$BUNDLE/bin/strait PARITY=$BUNDLE/bin/test_cuda_parity BENCH=$BUNDLE/bin/bench_compute
  EQUIV=$BUNDLE/bin/test_equivalence
  BUILD_NOTE="prebuilt bundle ($(head -n3 "$BUNDLE/MANIFEST.txt" 2>/dev/null | tr '\n' ' '))"
  # The bundle must hold this checkout's code: a stale one would test and report old binaries.
  bundle_commit=$(sed -n 's/^commit: \([0-9a-f]*\).*/\1/p' "$BUNDLE/MANIFEST.txt" 2>/dev/null || true)
  head_commit=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || true)
  if [ -n "$bundle_commit" ] && [ -n "$head_commit" ] && [ "${head_commit#"$bundle_commit"}" = "$head_commit" ]; then
    if [ "${GPU_CHECK_ALLOW_STALE_BUNDLE:-0}" != 1 ]; then
      echo "gpu-check: the bundle was built from commit $bundle_commit but this checkout is" \
           "${head_commit:0:12}; rebuild it (scripts/gpu-bundle) or set GPU_CHECK_ALLOW_STALE_BUNDLE=1" >&2
      exit 2
    fi
    BUILD_NOTE="$BUILD_NOTE — STALE: checkout is ${head_commit:0:12}"
  fi
  echo "(bundle: no build)" >"$WORK/build.log"
else
  if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH=/usr/local/cuda/bin:$PATH
  fi
  missing=()
  for tool in cmake nvcc mpirun; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "gpu-check: missing on this machine: ${missing[*]} (see scripts/install-deps, or use a" \
         "bundle from scripts/gpu-bundle: BUNDLE=.gpu-bundle $0)" >&2
    exit 2
  fi
  say "configure $BUILD (Release, CUDA on, CMAKE_CUDA_ARCHITECTURES=$CUDA_ARCH)"
  rc=0
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSTRAIT_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH" >"$WORK/build.log" 2>&1 || rc=$?
  if [ "$rc" != 0 ] || ! grep -q "strait: CUDA backend 1" "$WORK/build.log"; then
    tail -n 40 "$WORK/build.log"
    keep "$WORK/build.log"
    echo "gpu-check: configure failed or did not enable the CUDA backend (exit $rc; $WORK/build.log)" >&2
    exit 1
  fi
  say "build strait, test_cuda_parity and bench_compute with $(nproc) jobs"
  # Old binaries may survive in $BUILD: a failed build must stop here, not test them.
  cmake --build "$BUILD" -j "$(nproc)" --target strait test_cuda_parity test_equivalence bench_compute \
    >>"$WORK/build.log" 2>&1 || rc=$?
  grep -E "error|warning" "$WORK/build.log" | head -n 40 || true
  if [ "$rc" != 0 ]; then
    keep "$WORK/build.log"
    echo "gpu-check: build failed (exit $rc; $WORK/build.log)" >&2
    exit 1
  fi
  STRAIT=$BUILD/strait PARITY=$BUILD/tests/test_cuda_parity BENCH=$BUILD/bench_compute
  EQUIV=$BUILD/tests/test_equivalence
  BUILD_NOTE="built here: $BUILD, CMAKE_CUDA_ARCHITECTURES=$CUDA_ARCH"
fi
for b in "$STRAIT" "$PARITY" "$EQUIV"; do
  if [ ! -x "$b" ]; then
    echo "gpu-check: $b is missing (build failed? see $WORK/build.log)" >&2
    exit 1
  fi
done
HAVE_BENCH=1
[ -x "$BENCH" ] || { HAVE_BENCH=0; echo "gpu-check: $BENCH is missing: the benchmark phase is skipped" >&2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # singleton runs as root

# ---- 2. parity ----
say "test_cuda_parity"
PARITY_RC=0
timeout 100 "$PARITY" 2>&1 | tee "$WORK/parity.log" || PARITY_RC=$?
keep "$WORK/parity.log"
say "test_equivalence on 6 ranks, CUDA backend, FP32 GEMMs"
EQUIV_RC=0
EQUIV_ENV=(STRAIT_TEST_BACKEND=cuda STRAIT_TEST_GPU_MATH=fp32)
[ -f /usr/share/common-licenses/Apache-2.0 ] || EQUIV_ENV+=(STRAIT_TEST_CORPUS="$ROOT/docs/design.md")
env "${EQUIV_ENV[@]}" timeout 90 scripts/mpirun-local -np 6 "$EQUIV" 2>&1 | tee "$WORK/equivalence.log" ||
  EQUIV_RC=$?
note "$WORK/equivalence.log"
EQUIV_SUMMARY=$(grep -aE 'PASSED|FAILED|loss: worst|Failure' "$WORK/equivalence.log" | sed 's/\x1b\[[0-9;]*m//g' || true)
PARITY_SUMMARY=$(grep -E '^\[ +(PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$WORK/parity.log" || true)

# ---- 3. benchmark: the step against cuBLAS on the same shapes ----
declare -A BENCH_RC
for math in tf32 bf16; do
  if [ "$HAVE_BENCH" = 0 ]; then BENCH_RC[$math]="skipped (no bench_compute)"; continue; fi
  say "bench_compute --backend cuda --gpu-math $math ($BENCH_STEPS steps per model)"
  BENCH_RC[$math]=0
  timeout 100 "$BENCH" --src "$ROOT" --backend cuda --gpu-math "$math" --steps "$BENCH_STEPS" \
    --out "$WORK/compute-$math.csv" 2>&1 | tee "$WORK/bench-$math.log" || BENCH_RC[$math]=$?
  keep "$WORK/compute-$math.csv"
  note "$WORK/bench-$math.log"
done

# Where the step's GPU time goes: event pairs around every op (so not part of the timed bench).
PROFILE_RC="skipped (no bench_compute)"
if [ "$HAVE_BENCH" = 1 ]; then
  say "profiled bench_compute: gpu-medium and gpu-large, tf32, 5 steps, STRAIT_CUDA_PROFILE=1"
  PROFILE_RC=0
  STRAIT_CUDA_PROFILE=1 timeout 70 "$BENCH" --src "$ROOT" --backend cuda --gpu-math tf32 \
    --steps 5 --out "$WORK/profile.csv" >"$WORK/profile.log" 2>&1 || PROFILE_RC=$?
  note "$WORK/profile.log"
fi

# ---- 4. training runs ----
declare -A TRAIN_RC TRAIN_S
train() {  # train BACKEND: STEPS steps of default.toml on NP ranks, trace in $WORK/BACKEND.h5
  local be=$1 rc=0 t1 t2
  say "train on backend $be: $NP ranks, $STEPS steps"
  t1=$(date +%s%N)
  timeout 60 scripts/mpirun-local -np "$NP" "$STRAIT" train --config configs/default.toml \
    --set run.backend="$be" --set train.steps="$STEPS" --set train.log_every=10 \
    --set checkpoint.path="$WORK/$be.ckpt.h5" ${CORPUS_SET[@]+"${CORPUS_SET[@]}"} \
    --out "$WORK/$be.h5" --force 2>&1 | tee "$WORK/train-$be.log" || rc=$?
  t2=$(date +%s%N)
  TRAIN_RC[$be]=$rc
  TRAIN_S[$be]=$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  if [ -f "$WORK/$be.h5" ]; then
    "$STRAIT" report "$WORK/$be.h5" >"$WORK/report-$be.txt" 2>&1 || true
  else
    echo "(no trace written)" >"$WORK/report-$be.txt"
  fi
  note "$WORK/train-$be.log"
}
train cuda
train cpu

pick() { grep -E "$1" "$WORK/report-$2.txt" | head -n1 | sed 's/^ *//' || true; }

# bench CSV → markdown rows with the model FLOP utilisation added (column names, not positions).
bench_rows() {  # bench_rows CSV PEAK_TFLOPS
  [ -f "$1" ] || { echo "| (no result: see the bench log) |"; return; }
  awk -F, -v peak="$2" '
    NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
    {
      mfu = peak != "" ? sprintf("%.1f%%", 100 * $col["step_gflops"] / (peak * 1000)) : "-"
      printf "| %s | %s | %s | %.0f | %.0f | %.1f%% | %.2f | %.0f / %.0f / %.0f | %.0f | %.1f%% | %s |\n",
        $col["model"], $col["gpu_math"], $col["tokens_per_step"], $col["gemm_shapes_gflops"],
        $col["step_gflops"], 100 * $col["ratio_vs_shapes"], $col["step_ms_median"],
        $col["compute_pct"], $col["sync_pct"], $col["optimizer_and_rest_pct"],
        $col["tokens_per_step"] / ($col["step_ms_median"] / 1000), 100 * $col["gemm_shapes_flop_share"], mfu
    }' "$1"
}

# ---- 5. report ----
say "write $REPORT"
{
  echo "# GPU check $DATE — $GPU_NAME"
  echo
  echo "- date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')"
  echo "- device: $GPU_INFO"
  echo "- nvcc: $(nvcc --version 2>/dev/null | tail -n1 || echo 'not on PATH')"
  echo "- commit: $(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
  echo "- host: $(nproc) cores; $BUILD_NOTE"
  echo "- command: scripts/gpu-check.sh (BUNDLE=${BUNDLE:-}, STEPS=$STEPS, BENCH_STEPS=$BENCH_STEPS)"
  echo
  echo "## Parity (test_cuda_parity, exit $PARITY_RC)"
  echo
  echo '```'
  echo "$PARITY_SUMMARY"
  grep -E 'nerr|worst relative|FAILED|Failure|step +cpu|^ +[0-9]+ +[0-9.]+( +[0-9.]+)+$|sum V=' \
    "$WORK/parity.log" || true
  echo '```'
  echo
  echo "## Distributed equivalence on the GPU (test_equivalence, 6 ranks, FP32 GEMMs; exit $EQUIV_RC)"
  echo
  echo '```'
  echo "$EQUIV_SUMMARY"
  echo '```'
  echo
  echo "## Benchmark: a training step against cuBLAS GEMMs of the same shapes (bench_compute)"
  echo
  echo "One rank, one datacenter. \"GEMM ref\" is the backend's GEMM FLOP/s over every dense GEMM"
  echo "shape of one forward + backward (attention's batched GEMMs are not in the list; \"GEMM"
  echo "share\" is their share of the model FLOPs). \"step/ref\" is the issue's goal (>= 60%)."
  echo "MFU is against the datasheet dense peak (TF32 ${PEAK_TF32:-?}, BF16 ${PEAK_BF16:-?} TFLOP/s)."
  echo
  echo "| model | math | tokens/step | GEMM ref GFLOP/s | step GFLOP/s | step/ref | step ms | compute / sync / optimizer+rest % | tokens/s | GEMM share | MFU |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  bench_rows "$WORK/compute-tf32.csv" "$PEAK_TF32"
  bench_rows "$WORK/compute-bf16.csv" "$PEAK_BF16"
  echo
  echo "bench exit codes: tf32 ${BENCH_RC[tf32]}, bf16 ${BENCH_RC[bf16]}"
  echo
  echo "## GPU time per op (STRAIT_CUDA_PROFILE=1, tf32, 5 steps incl. warm-up; exit $PROFILE_RC)"
  echo
  echo "One table per backend instance, in order: for each model the same-shape GEMM reference,"
  echo "then the training run. Shares are of the summed op time, not of wall time."
  echo
  echo '```'
  grep -aE '^strait cuda profile|^  ' "$WORK/profile.log" >"$WORK/profile.tbl" 2>/dev/null ||
    echo "(none)" >"$WORK/profile.tbl"
  head -n 160 "$WORK/profile.tbl"  # no pipeline: under set -e a SIGPIPE would end the script
  echo '```'
  echo
  echo "## Training: configs/default.toml, $NP ranks, $STEPS steps"
  echo
  echo "| backend | exit | wall s (incl. start) | tokens/s | wall ms/step | compute ms/step | sync ms/step |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  for be in cuda cpu; do
    tps=$(pick 'tokens/s' "$be" | awk '{print $2}')
    wall=$(pick '^ *wall ms' "$be" | awk '{print $3}')
    comp=$(pick '^ *compute ms' "$be" | awk '{print $3}')
    sync=$(pick '^ *sync ms' "$be" | awk '{print $3}')
    echo "| $be | ${TRAIN_RC[$be]} | ${TRAIN_S[$be]} | ${tps:--} | ${wall:--} | ${comp:--} | ${sync:--} |"
  done
  for be in cuda cpu; do
    echo
    echo "### strait report ($be)"
    echo
    echo '```'
    cat "$WORK/report-$be.txt"
    echo '```'
  done
} >"$REPORT"
for math in tf32 bf16; do
  [ -f "$WORK/compute-$math.csv" ] && cp "$WORK/compute-$math.csv" "$REPORT_DIR/$DATE-$SLUG-compute-$math.csv"
done

keep "$REPORT"
tail -n 200 "$WORK/build.log" >"$WORK/build-tail.log"
keep "$WORK/build-tail.log"

say "done: parity exit $PARITY_RC, equivalence exit $EQUIV_RC, bench exit tf32 ${BENCH_RC[tf32]} bf16 ${BENCH_RC[bf16]}," \
    "cuda run exit ${TRAIN_RC[cuda]}, cpu run exit ${TRAIN_RC[cpu]}"
cat "$REPORT"
[ "$PARITY_RC" = 0 ] && [ "$EQUIV_RC" = 0 ] && [ "${TRAIN_RC[cuda]}" = 0 ] && [ "${BENCH_RC[tf32]}" = 0 ]
