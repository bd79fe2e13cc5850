#!/usr/bin/env bash
# gpu-check.sh — the one prepared check for a machine with a CUDA GPU (a lent H200, say), meant
# to finish within 8 minutes:
#   1. configure + build Release with the CUDA backend (sm_90 unless CUDA_ARCH says otherwise);
#   2. run test_cuda_parity (every op against the CPU backend, then 20 training steps);
#   3. time a short training run (default.toml, 4 ranks, 50 steps) on the CUDA and on the CPU
#      backend, and summarise both traces with `strait report`;
#   4. write a report to results/gpu/<date>-<device>.md, and to $OUT when $OUT is set.
# Usage: scripts/gpu-check.sh            (from anywhere; it works in the repository root)
# Environment: BUILD (build folder, default build-gpu), CUDA_ARCH (default 90), STEPS (default 50),
#   GPU_CHECK_ALLOW_NO_GPU=1 to exercise the script on a machine without a GPU (the CUDA parts
#   then fail or skip and are reported as such).
# Needs what a normal build needs (cmake, Open MPI, HDF5, Eigen, OpenBLAS, toml++, CLI11,
# GoogleTest: scripts/install-deps) plus nvcc; it says what is missing and stops if not there.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${BUILD:-build-gpu}
CUDA_ARCH=${CUDA_ARCH:-90}
STEPS=${STEPS:-50}
NP=4
T0=$(date +%s)

say() { printf '\n==> [%4ss] %s\n' "$(($(date +%s) - T0))" "$*"; }

# ---- where things go ----
DATE=$(date -u +%Y-%m-%d)
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
  GPU_INFO=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader)
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

# ---- prerequisites ----
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
missing=()
for tool in cmake nvcc mpirun; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "gpu-check: missing on this machine: ${missing[*]} (see scripts/install-deps)" >&2
  exit 2
fi
CORPUS_SET=()
if [ ! -e /usr/share/common-licenses ]; then
  CORPUS_SET=(--set "train.corpus=$ROOT/docs")  # the default corpus is a Debian folder
  echo "gpu-check: /usr/share/common-licenses not found; training on $ROOT/docs instead"
fi

# ---- 1. build ----
say "configure $BUILD (Release, CUDA on, CMAKE_CUDA_ARCHITECTURES=$CUDA_ARCH)"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSTRAIT_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH" 2>&1 | tee "$WORK/build.log"
if ! grep -q "strait: CUDA backend 1" "$WORK/build.log"; then
  echo "gpu-check: CMake did not enable the CUDA backend (see $WORK/build.log)" >&2
  exit 1
fi
say "build strait and test_cuda_parity with $(nproc) jobs"
cmake --build "$BUILD" -j "$(nproc)" --target strait test_cuda_parity 2>&1 | tee -a "$WORK/build.log" |
  grep -E "error|warning|Built target" || true
if [ ! -x "$BUILD/strait" ] || [ ! -x "$BUILD/tests/test_cuda_parity" ]; then
  echo "gpu-check: build failed (see $WORK/build.log)" >&2
  exit 1
fi

# ---- 2. parity ----
say "test_cuda_parity"
PARITY_RC=0
timeout 240 "$BUILD/tests/test_cuda_parity" 2>&1 | tee "$WORK/parity.log" || PARITY_RC=$?
PARITY_SUMMARY=$(grep -E '^\[ +(PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$WORK/parity.log" || true)

# ---- 3. training runs ----
declare -A TRAIN_RC TRAIN_S
train() {  # train BACKEND: STEPS steps of default.toml on NP ranks, trace in $WORK/BACKEND.h5
  local be=$1 rc=0 t1 t2
  say "train on backend $be: $NP ranks, $STEPS steps"
  t1=$(date +%s%N)
  timeout 200 scripts/mpirun-local -np "$NP" "$BUILD/strait" train --config configs/default.toml \
    --set run.backend="$be" --set train.steps="$STEPS" --set train.log_every=10 \
    --set checkpoint.path="$WORK/$be.ckpt.h5" ${CORPUS_SET[@]+"${CORPUS_SET[@]}"} \
    --out "$WORK/$be.h5" --force 2>&1 | tee "$WORK/train-$be.log" || rc=$?
  t2=$(date +%s%N)
  TRAIN_RC[$be]=$rc
  TRAIN_S[$be]=$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  if [ -f "$WORK/$be.h5" ]; then
    "$BUILD/strait" report "$WORK/$be.h5" >"$WORK/report-$be.txt" 2>&1 || true
  else
    echo "(no trace written)" >"$WORK/report-$be.txt"
  fi
}
train cuda
train cpu

pick() { grep -E "$1" "$WORK/report-$2.txt" | head -n1 | sed 's/^ *//' || true; }

# ---- 4. report ----
say "write $REPORT"
{
  echo "# GPU check $DATE — $GPU_NAME"
  echo
  echo "- date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')"
  echo "- device: $GPU_INFO"
  echo "- nvcc: $(nvcc --version | tail -n1)"
  echo "- commit: $(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
  echo "- host: $(nproc) cores; build $BUILD, CMAKE_CUDA_ARCHITECTURES=$CUDA_ARCH"
  echo
  echo "## Parity (test_cuda_parity, exit $PARITY_RC)"
  echo
  echo '```'
  echo "$PARITY_SUMMARY"
  grep -E 'nerr|worst relative|FAILED|Failure|step +cpu|^ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$' \
    "$WORK/parity.log" || true
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

if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  cp "$REPORT" "$OUT/"
  cp "$WORK/parity.log" "$OUT/"
  for be in cuda cpu; do
    [ -f "$WORK/$be.h5" ] && cp "$WORK/$be.h5" "$OUT/"
    cp "$WORK/train-$be.log" "$OUT/"
  done
  tail -n 200 "$WORK/build.log" >"$OUT/build-tail.log"
fi

say "done: parity exit $PARITY_RC, cuda run exit ${TRAIN_RC[cuda]}, cpu run exit ${TRAIN_RC[cpu]}"
cat "$REPORT"
[ "$PARITY_RC" = 0 ] && [ "${TRAIN_RC[cuda]}" = 0 ]
