#!/usr/bin/env bash
# bench-compute.sh — backend compute benchmark: step model FLOP/s vs the backend's GEMM FLOP/s for
# the model's own GEMM shapes (and a square 1024³), controller and trace overhead.
# Usage: scripts/bench-compute.sh [BUILD_DIR] [bench_compute flags...]
#   no flags: the CPU benchmark (one OpenBLAS thread, $STEPS or 30 steps per model) →
#   results/bench/compute.csv; flags are passed through (bench_compute --help), e.g.
#   scripts/bench-compute.sh build --backend cuda --gpu-math bf16 → results/gpu/compute-bf16.csv
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
if [ $# -gt 0 ] && [[ $1 != -* ]]; then build=$1; shift; fi
mkdir -p results/bench
OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=4294967296 \
  "$build/bench_compute" --src "$PWD" ${STEPS:+--steps "$STEPS"} "$@"
