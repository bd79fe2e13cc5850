# Wraps configure / build / test / bench. Every target first runs scripts/install-deps
# (a no-op once the Debian packages are there).
BUILD ?= build
JOBS  ?= $(shell nproc)
CONFIG ?= configs/default.toml
NP ?= $(shell /usr/bin/python3 scripts/world-size.py $(CONFIG) 2>/dev/null || echo 4)
MPIRUN = scripts/mpirun-local

.PHONY: all deps configure build run test bench bench-compute bench-links bench-forecast bench-sync bench-balance bench-paths clean

all: build

deps:
	@bash scripts/install-deps

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	@$(MPIRUN) -np $(NP) $(BUILD)/strait train --config $(CONFIG) --force

test: build
	@cd $(BUILD) && ctest --output-on-failure --timeout 900

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
