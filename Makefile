# libprintk - the commands of the README:
#   make demo    build, then run the storm and latency benchmarks (pkbench demo)
#                and a short simulation at 16 to 1024 CPUs (pkbench sim)
#   make check   build, then run the test suite
#   make torture build, then run the torture program (seeded; long):
#                TORTURE_FLAGS="--ci" for the bounded run, "--seed S" to repeat one
#   make torture-long  every scenario in every mode, over and over with new
#                seeds, for TORTURE_SECONDS (3600, an hour, by default), then
#                one line: runs per scenario and failures
#   make coverage  coverage build (gcc --coverage), the test suite, then a
#                per-file table of the lines of src/ and tools/ (gcovr)
#   make install [PREFIX=/usr/local] [DESTDIR=...] [PK_INSTALL_BENCH=ON]
#                build (Release), then install the library, headers,
#                pkg-config file, CMake package, pkmsg and the man pages
#                (pkbench too with PK_INSTALL_BENCH=ON); needs a C compiler,
#                make and cmake only; prints a summary (the log is kept)
#   make deb     build (Release, prefix /usr) in build-deb, then the Debian
#                packages libprintk1 and libprintk-dev (cpack -G DEB) there
# The project's own builds treat warnings as errors (PK_WERROR=ON); a
# project that includes libprintk does not get -Werror.
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all demo check torture torture-long coverage deps build install deb clean

all: build

# The packages each target needs (scripts/deps.sh): the test suite's for
# build and check, more for demo; install needs a compiler and cmake only.
# build asks for the tests and pkbench (PK_TESTS=ON, PK_BENCH=ON), so that
# make check fails, naming the package, rather than run no test.
DEPS_SET ?= check
deps:
	@sh scripts/deps.sh $(DEPS_SET)

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPK_WERROR=ON -DPK_TESTS=ON \
		-DPK_BENCH=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

check: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_FLAGS)

torture: build
	$(BUILD)/tests/torture $(TORTURE_FLAGS)

TORTURE_SECONDS ?= 3600
torture-long: build
	sh scripts/torture-long.sh $(BUILD)/tests/torture $(TORTURE_SECONDS)

COVBUILD ?= build-cov
coverage: deps
	@command -v gcovr >/dev/null || { echo "make coverage needs gcovr (apt-get install gcovr)" >&2; exit 1; }
	@cmake -S . -B $(COVBUILD) -DCMAKE_BUILD_TYPE=Debug -DPK_WERROR=ON -DPK_COVERAGE=ON \
		-DPK_TESTS=ON -DPK_BENCH=OFF >/dev/null
	@cmake --build $(COVBUILD) -j $(JOBS)
	@find $(COVBUILD) -name '*.gcda' -delete
	-cd $(COVBUILD) && ctest -j $(JOBS) \
		-E 'spin_conlock|fuzz_|install_consume|build_minimal|deb_install' $(CTEST_FLAGS)
	gcovr -r . $(COVBUILD) --object-directory $(COVBUILD) --filter 'src/' --filter 'tools/' \
		--exclude 'src/format/vsnprintf.c' --gcov-ignore-parse-errors --print-summary

PREFIX ?= /usr/local
INSTBUILD ?= build-install
PK_INSTALL_BENCH ?= OFF
ifeq ($(PK_INSTALL_BENCH),ON)
install: DEPS_SET = pkbench
else
install: DEPS_SET = install
endif
install: deps
	@echo "libprintk: building (Release) in $(INSTBUILD); log: $(INSTBUILD)/make-install.log"
	@mkdir -p $(INSTBUILD)
	@cmake -S . -B $(INSTBUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
		-DPK_TESTS=OFF -DPK_EXAMPLES=OFF -DPK_BENCH=$(PK_INSTALL_BENCH) \
		-DPK_INSTALL_BENCH=$(PK_INSTALL_BENCH) $(CMAKE_FLAGS) >$(INSTBUILD)/make-install.log 2>&1 || \
		{ tail -n 30 $(INSTBUILD)/make-install.log >&2; exit 1; }
	@cmake --build $(INSTBUILD) -j $(JOBS) >>$(INSTBUILD)/make-install.log 2>&1 || \
		{ grep -E -A3 'error|Error' $(INSTBUILD)/make-install.log | head -n 40 >&2; \
		  echo "libprintk: the build failed; see $(INSTBUILD)/make-install.log" >&2; exit 1; }
	@cmake --install $(INSTBUILD) >$(INSTBUILD)/install_manifest.log 2>&1 || \
		{ cat $(INSTBUILD)/install_manifest.log >&2; exit 1; }
	@sh scripts/install-summary.sh $(INSTBUILD) "$(DESTDIR)" $(PREFIX)

# Debian packages: CPack from the install components (cmake/package.cmake).
# The prefix is /usr so that the library goes to Debian's multiarch
# directory; the packages are left in $(DEBBUILD).
DEBBUILD ?= build-deb
deb: DEPS_SET = deb
deb: deps
	@mkdir -p $(DEBBUILD)
	@cmake -S . -B $(DEBBUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
		-DPK_TESTS=OFF -DPK_EXAMPLES=OFF -DPK_BENCH=OFF $(CMAKE_FLAGS) >$(DEBBUILD)/make-deb.log 2>&1 || \
		{ tail -n 30 $(DEBBUILD)/make-deb.log >&2; exit 1; }
	@cmake --build $(DEBBUILD) -j $(JOBS) >>$(DEBBUILD)/make-deb.log 2>&1 || \
		{ grep -E -A3 'error|Error' $(DEBBUILD)/make-deb.log | head -n 40 >&2; \
		  echo "libprintk: the build failed; see $(DEBBUILD)/make-deb.log" >&2; exit 1; }
	@cd $(DEBBUILD) && cpack -G DEB >>make-deb.log 2>&1 || \
		{ tail -n 30 make-deb.log >&2; exit 1; }
	@ls -1 $(DEBBUILD)/*.deb

# The demo's dependencies include LTTng for pkbench's LTTng-UST row.
demo: DEPS_SET = bench
demo: build
	$(BUILD)/bench/pkbench demo
	$(BUILD)/bench/pkbench sim --cpus 16,128,1024 --seconds 10 --json out/sim.json --png out/sim.png

clean:
	rm -rf $(BUILD)
