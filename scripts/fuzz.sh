#!/bin/sh
# fuzz.sh [SECONDS] - build the libFuzzer targets of verify/ with clang-14
# (ASan + UBSan) in build-fuzz/ and run every harness in turn, one at a
# time, on a copy of its kept corpus (verify/corpus/NAME), SECONDS in all
# (default 180), shared out by weight.  Fails on any crash, hang, leak,
# sanitizer report or property violation; the reproducer is left in
# build-fuzz/artifacts/NAME-* (replay it: build-fuzz/verify/fuzz_X FILE,
# with PK_FUZZ_MODE=recipe or =package for those modes of fuzz_store).
#
#   store    fuzz_store, file mode: store files (verify/corpus/store)
#   recipe   fuzz_store, recipe mode: written records, then patched bytes,
#            and the property that the reader returns only what was written
#   package  fuzz_store, package mode: deferred records' packages
#   console  the PK_CONSOLE grammar, parsed only
#   dyndbg   PK_DYNDBG / pk_dyndbg_exec() queries
#   modules  PK_MODULES, against a model
#   config   the size, level and mode parsers, against a model
#   printf   the printf engine against glibc, and packed against direct
#
# Environment:
#   PK_FUZZ_RUNS=N     run each harness for N executions times its weight
#                      (see WEIGHTS below) instead of by time: the long
#                      documented run (docs/testing.md)
#   PK_FUZZ_ONLY="a b" only these harnesses
#   PK_FUZZ_CMIN=1     afterwards, minimize each harness's work corpus
#                      into verify/corpus/NAME (libFuzzer -merge=1)
#   PK_FUZZ_TIMEOUT    seconds one input may take before it counts as a hang
#                      (10; more on a machine loaded enough to stall a process)
#   PK_FUZZ_BUILD      the build directory (build-fuzz)
set -eu
secs=${1:-180}
case $secs in ''|*[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PK_FUZZ_BUILD:-$root/build-fuzz}
CC=${CC:-clang-14}
CXX=${CXX:-clang++-14}
jobs=${PK_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
runs=${PK_FUZZ_RUNS:-}
only=${PK_FUZZ_ONLY:-}

cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DPK_FUZZ=ON -DPK_BENCH=OFF \
	-DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
	>/dev/null
cmake --build "$build" --target fuzz_all -j "$jobs"
mkdir -p "$build/artifacts"

# NAME BINARY MODE MAX_LEN WEIGHT SHARE: the harnesses; WEIGHT, each one's
# share of the time in tenths; SHARE, its share of PK_FUZZ_RUNS in
# hundredths (the fast parsers take more executions).  -max_len: a minimal store
# file is 10752 bytes, one of 4 lanes 43008 (the seeds go up to that); the
# grammars' items are far shorter than
# console_spec.c's 4200-byte item limit.
WEIGHTS="config fuzz_config - 256 1 27
modules fuzz_modules - 1024 1 15
console fuzz_console - 4096 1 15
dyndbg fuzz_dyndbg - 1024 1 15
printf fuzz_printf - 1024 1 15
package fuzz_store package 4096 1 5
store fuzz_store file 45056 2 4
recipe fuzz_store recipe 12288 2 4"
total=0
for w in $(echo "$WEIGHTS" | awk '{ print $5 }'); do total=$((total + w)); done

# fuzz NAME BINARY MODE MAX_LEN WEIGHT SHARE: one libFuzzer run on a copy of the
# kept corpus.  -timeout: one input taking this long counts as a hang.
fuzz() {
	corpus="$build/corpus-$1"
	mkdir -p "$corpus"
	cp "$root"/verify/corpus/"$1"/* "$corpus"/
	if [ -n "$runs" ]; then
		limit="-runs=$((runs / 100 * $6))"
	else
		t=$((secs * $5 / total))
		[ "$t" -gt 0 ] || t=1
		limit="-max_total_time=$t"
	fi
	echo "== $1 ($2${3#-}, $limit)"
	mode=; [ "$3" = - ] || mode=$3
	# quarantine_size_mb: the default 256 MB quarantine costs page faults
	# on every input; a small one still catches use after free.
	PK_FUZZ_MODE=$mode UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	ASAN_OPTIONS=quarantine_size_mb=16 \
	"$build/verify/$2" -max_len="$4" -timeout="${PK_FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 $limit \
		-print_final_stats=1 -artifact_prefix="$build/artifacts/$1-" "$corpus"
	if [ "${PK_FUZZ_CMIN:-0}" = 1 ]; then
		rm -rf "$build/cmin-$1"
		mkdir -p "$build/cmin-$1"
		PK_FUZZ_MODE=$mode "$build/verify/$2" -max_len="$4" -merge=1 \
			"$build/cmin-$1" "$corpus" 2>&1 | tail -n 1
		# Keep the regression inputs by name; replace the rest.
		find "$root/verify/corpus/$1" -type f ! -name 'regress-*' -delete
		cp "$build/cmin-$1"/* "$root/verify/corpus/$1/"
	fi
}

echo "$WEIGHTS" | while read -r name bin mode maxlen weight share; do
	if [ -n "$only" ]; then
		case " $only " in *" $name "*) ;; *) continue ;; esac
	fi
	fuzz "$name" "$bin" "$mode" "$maxlen" "$weight" "$share"
done
