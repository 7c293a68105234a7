#!/bin/sh
# required-tests.sh [--check BUILD_DIR] - the tests CI requires, one a line.
# The programs' names come from the sources (tests/test_*.c), their split
# cases from tests/CMakeLists.txt (PK_TEST_SPLIT_*: a case that may skip
# has a CTest test of its own, so that a skip shows as "Skipped"); the
# rest are listed here.  .ci/run fails if one is missing from a build or
# skips.  With --check, every one must be a test of BUILD_DIR (ctest -N):
# the CTest test required_tests_listed runs that in make check, so that a
# rename or a parse slip shows before CI does.
set -eu
cd "$(dirname "$0")/.."

list() {
	for f in tests/test_*.c; do basename "$f" .c; done
	# The split cases: <program>.<case without its test_ prefix>.  Comments
	# are dropped first (one naming a case was once counted as a case of
	# the set above it), and a set() that closes on its own line ends there.
	awk '{ sub(/#.*/, "") }
	     /^set\(PK_TEST_SPLIT_/ { inset = 1 }
	     inset { print; if (index($0, ")")) inset = 0 }' tests/CMakeLists.txt |
		sed 's/^set(//; s/)//' |
		tr ' \t' '\n\n' | awk '/^PK_TEST_SPLIT_/ { prog = substr($0, 15); next }
					/^test_/ { print prog "." substr($0, 6) }'
	for t in spin_conlock fuzz_store_files fuzz_store_recipes fuzz_store_packages \
		fuzz_console fuzz_dyndbg fuzz_modules fuzz_config fuzz_printf \
		abi_exports hardening layers layers_selftest headers_c_cxx header_docs \
		formatter_signal_safe install_consume man_pages docs_check kernel_pedantic \
		deps_sets required_tests_listed build_minimal deb_install; do
		echo "$t"
	done
	# The examples (examples/CMakeLists.txt), each run by a test.
	for t in hello crash crash_direct custom_console persist runtime_config; do
		echo "example.$t"
	done
	for m in handoff legacy thread; do echo "example.server.$m"; echo "example.sighandler.$m"; done
}

case ${1:-} in
--check)
	[ $# -eq 2 ] || { echo "usage: $0 [--check BUILD_DIR]" >&2; exit 2; }
	listed=$(cd "$2" && ctest -N | sed -n 's/^ *Test *#[0-9]*: //p')
	missing=0
	for t in $(list); do
		printf '%s\n' "$listed" | grep -qxF "$t" ||
			{ echo "required test $t is not a test of $2" >&2; missing=$((missing + 1)); }
	done
	[ "$missing" -eq 0 ] || exit 1
	echo "every required test ($(list | wc -l)) is a test of $2"
	;;
'') list ;;
*) echo "usage: $0 [--check BUILD_DIR]" >&2; exit 2 ;;
esac
