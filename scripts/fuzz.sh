#!/bin/sh
# fuzz.sh [SECONDS] - build the libFuzzer target for store files with
# clang-14 (ASan + UBSan) in build-fuzz/ and run it for SECONDS in all
# (default 60): a third in file mode on a copy of the store seed corpus
# (verify/corpus/store: crashes, hangs, sanitizer reports), a third in recipe
# mode on the recipe seeds (verify/corpus/recipe: the same, and the
# property that the reader returns only what was written, or reports it
# lost).  Fails on any crash, leak, sanitizer report or property
# violation; the reproducer is left in build-fuzz/artifacts/ (replay it
# with PK_FUZZ_MODE=recipe or =package for a recipe- or package-mode one).
# A third of the time goes to package mode on verify/corpus/package: the
# decoder of deferred records' packages, which pkmsg runs on files it is
# given.
set -eu
secs=${1:-60}
case $secs in ''|*[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PK_FUZZ_BUILD:-$root/build-fuzz}
CC=${CC:-clang-14}
CXX=${CXX:-clang++-14}
jobs=${PK_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}

cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DPK_FUZZ=ON -DPK_BENCH=OFF \
	-DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
	>/dev/null
cmake --build "$build" --target fuzz_store -j "$jobs"
mkdir -p "$build/artifacts"

# fuzz MODE SECONDS SEEDS: one libFuzzer run on a copy of SEEDS.
fuzz() {
	corpus="$build/corpus-$1"
	mkdir -p "$corpus"
	cp "$root"/verify/corpus/"$3"/* "$corpus"/
	echo "== fuzz_store, $1 mode, $2 s"
	# -max_len: a minimal store file is 5632 bytes, keep room for mutations.
	# -timeout: a single input taking this long counts as a hang.
	PK_FUZZ_MODE=$1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	"$build/verify/fuzz_store" -max_len=12288 -timeout=10 -rss_limit_mb=2048 \
		-max_total_time="$2" -print_final_stats=1 \
		-artifact_prefix="$build/artifacts/$1-" "$corpus"
}

third=$((secs / 3))
[ "$third" -gt 0 ] || third=1
rest=$((secs - 2 * third))
[ "$rest" -gt 0 ] || rest=1
fuzz file "$third" store
fuzz recipe "$third" recipe
fuzz package "$rest" package
