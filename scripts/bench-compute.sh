#!/usr/bin/env bash
# bench-compute.sh — CPU backend benchmark: step FLOP/s vs single-core SGEMM, controller and
# trace overhead. Writes results/bench/compute.csv. Usage: scripts/bench-compute.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
mkdir -p results/bench
OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=4294967296 \
  "$build/bench_compute" "$PWD" results/bench/compute.csv "${STEPS:-30}"
