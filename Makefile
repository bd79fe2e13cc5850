# Wraps configure / build / test / bench. Every target first runs scripts/install-deps
# (a no-op once the Debian packages are there).
BUILD ?= build
JOBS  ?= $(shell nproc)
CONFIG ?= configs/default.toml
NP ?= $(shell /usr/bin/python3 scripts/world-size.py $(CONFIG) 2>/dev/null || echo 4)
MPIRUN = scripts/mpirun-local

.PHONY: all deps configure build run test san-configure sanitize fuzz tsan bench bench-compute bench-links bench-forecast bench-sync bench-balance bench-paths clean

all: build

deps:
	@bash scripts/install-deps

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	@$(MPIRUN) -np $(NP) $(BUILD)/strait train --config $(CONFIG) --force

# The tests of slurm/ start a one-machine Slurm (scripts/slurm-local): its packages come here.
test: build
	@bash scripts/install-deps slurm
	@cd $(BUILD) && ctest --output-on-failure --timeout 900

# The checking tree (docs/reliability.md): clang, ASan + UBSan, the libFuzzer targets. `sanitize`
# runs the unit and MPI tests there and each fuzz target for FUZZ_CI_SECONDS; `fuzz` runs only
# the fuzz targets, for FUZZ_SECONDS each.
SAN_BUILD ?= build-san
FUZZ_SECONDS ?= 600
FUZZ_CI_SECONDS ?= 30
san-configure:
	@bash scripts/install-deps checking
	@cmake -S . -B $(SAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
	  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
	  -DSTRAIT_CUDA=OFF -DSTRAIT_SANITIZE=ON -DSTRAIT_FUZZ=ON >/dev/null
	@cmake --build $(SAN_BUILD) -j $(JOBS) --target strait_check_targets

sanitize: san-configure
	@cd $(SAN_BUILD) && STRAIT_FUZZ_SECONDS=$(FUZZ_CI_SECONDS) ctest -L 'unit|mpi|fuzz' \
	  --output-on-failure --timeout 1800

fuzz: san-configure
	@cd $(SAN_BUILD) && STRAIT_FUZZ_SECONDS=$(FUZZ_SECONDS) ctest -L fuzz -V

# ThreadSanitizer (a tree of its own: it cannot share one with ASan): the MPI tests, where the
# transport, the control link's thread, the pipelined sync thread and the watchdog run.
TSAN_BUILD ?= build-tsan
tsan:
	@bash scripts/install-deps checking
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
	  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DSTRAIT_CUDA=OFF -DSTRAIT_TSAN=ON >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target strait_mpi_targets
	@cd $(TSAN_BUILD) && ctest -L mpi --output-on-failure --timeout 1800

bench: bench-compute bench-links bench-forecast bench-sync bench-balance bench-paths

bench-compute: build
	@bash scripts/bench-compute.sh $(BUILD)

bench-links: build
	@bash scripts/bench-links.sh $(BUILD)

# The load forecasters on the real traces of ../shared/data/traces (results/forecast/).
bench-forecast: build
	@bash scripts/bench-forecast.sh $(BUILD)

# Every sync planner on every benchmark graph (software shaper): results/bench/sync.{csv,md}.
bench-sync: build
	@bash scripts/bench-sync.sh $(BUILD)

# Load scenarios x balancers (does re-splitting pay?): results/bench/balance.{csv,md}.
bench-balance: build
	@bash scripts/bench-balance.sh $(BUILD)

# Path selectors on congested, sparse and measured graphs: results/bench/paths.{csv,md}.
bench-paths: build
	@bash scripts/bench-paths.sh $(BUILD)

clean:
	rm -rf $(BUILD)
