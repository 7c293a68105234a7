#!/bin/sh
# kernel_pedantic.sh SRC CC [CXX]: tests/kernel_pedantic.c, which uses every
# macro of <printk/kernel.h> and <printk/warn.h>, compiles without a warning
# as C11 with CC and as C++17 with CXX, under -pedantic -Wall -Wextra
# -Werror, in each configuration that changes what the macros expand to:
# the defaults, DEBUG, PK_NO_DYNAMIC_DEBUG, and levels stripped by
# PK_MAX_LEVEL.  Without a C++ compiler the C++ half is skipped, and says
# so; with PK_TEST_REQUIRE_CXX=1 (CI) that fails instead.
set -eu
src=$1
cc=$2
cxx=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
file=$src/tests/kernel_pedantic.c
flags="-pedantic -Wall -Wextra -Werror -I$src/include -c -o $tmp/out.o"
n=0
for defs in "" "-DDEBUG" "-DDEBUG -DPK_NO_DYNAMIC_DEBUG" "-DPK_NO_DYNAMIC_DEBUG" \
	    "-DDEBUG -DPK_MAX_LEVEL=3" "-DPK_MAX_LEVEL=0"; do
	# shellcheck disable=SC2086 # the lists split on purpose
	$cc -x c -std=c11 $flags $defs "$file" ||
		{ echo "$cc -std=c11 -pedantic $defs: warnings (above)" >&2; exit 1; }
	n=$((n + 1))
	if [ -n "$cxx" ]; then
		# shellcheck disable=SC2086
		$cxx -x c++ -std=c++17 $flags $defs "$file" ||
			{ echo "$cxx -std=c++17 -pedantic $defs: warnings (above)" >&2; exit 1; }
		n=$((n + 1))
	fi
done
if [ -z "$cxx" ]; then
	if [ "${PK_TEST_REQUIRE_CXX:-0}" = 1 ]; then
		echo "kernel_pedantic: no C++ compiler found (install g++)" >&2
		exit 1
	fi
	echo "kernel_pedantic: no C++ compiler found: C++17 half skipped"
fi
echo "kernel_pedantic: $n compilations clean"
