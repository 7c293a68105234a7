#!/bin/sh
# fuzz.sh [SECONDS] - build the libFuzzer target for store files with
# clang-14 (ASan + UBSan) in build-fuzz/ and run it for SECONDS (default
# 60) on a copy of the checked-in seed corpus.  Fails on any crash, leak
# or sanitizer report; the reproducer is left in build-fuzz/artifacts/.
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

corpus="$build/corpus"
mkdir -p "$corpus" "$build/artifacts"
cp "$root"/verify/corpus/store/* "$corpus"/
# -max_len: a minimal store file is 5632 bytes, keep room for mutations.
# -timeout: a single input taking this long counts as a hang.
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
"$build/verify/fuzz_store" -max_len=12288 -timeout=10 -rss_limit_mb=2048 \
	-max_total_time="$secs" -print_final_stats=1 \
	-artifact_prefix="$build/artifacts/" "$corpus"
