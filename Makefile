# libprintk - the two commands of the README:
#   make demo    build, then run the storm and latency benchmarks (pkbench demo)
#   make check   build, then run the test suite
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all demo check deps build clean

all: build

deps:
	@sh scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

check: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_FLAGS)

demo: build
	$(BUILD)/bench/pkbench demo

clean:
	rm -rf $(BUILD)
