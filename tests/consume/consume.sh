#!/bin/sh
# consume.sh SRC BUILD WORK: install the libprintk of build tree BUILD into
# a prefix under WORK, then build and run tests/consume/consumer.c against
# it three ways: pkg-config, find_package(printk) (shared and static), and
# add_subdirectory of the source tree SRC.  Each program must print its line.
set -eu
src=$1 build=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cc=${CC:-cc}

run_consumer() { # NAME PROGRAM
	out=$("$2" 2>&1) || { echo "$1: exited with an error: $out" >&2; exit 1; }
	case $out in
	*"consumer says 42"*) ;;
	*) echo "$1: the line is missing from its output: $out" >&2; exit 1 ;;
	esac
	# Its module's line carries the module; the one its level drops is not there.
	case $out in
	*"drops this"*) echo "$1: the module's level did not drop a line: $out" >&2; exit 1 ;;
	*"consumer: consumer's module says 43"*) echo "$1: ok" ;;
	*) echo "$1: the module's line is missing from its output: $out" >&2; exit 1 ;;
	esac
}

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in include/printk/printk.h include/printk/console.h include/printk/reader.h \
	lib/libprintk.a lib/pkgconfig/libprintk.pc lib/cmake/printk/printkConfig.cmake \
	bin/pkmsg share/man/man1/pkmsg.1; do
	[ -e "$prefix/$f" ] || { echo "install: $f is missing" >&2; exit 1; }
done
for f in "$prefix"/lib/libprintk.so.0 "$prefix"/lib/cmake/printk/printkTargets.cmake \
	"$prefix"/lib/cmake/printk/printkConfigVersion.cmake; do
	[ -e "$f" ] || { echo "install: $f is missing" >&2; exit 1; }
done
for h in "$src"/include/printk/*.h; do
	[ -e "$prefix/include/printk/${h##*/}" ] || { echo "install: header ${h##*/} is missing" >&2; exit 1; }
done
# Every man page of docs/man, in the section its name ends in.
for m in "$src"/docs/man/*.[137]; do
	page=${m##*/}
	[ -e "$prefix/share/man/man${page##*.}/$page" ] ||
		{ echo "install: man page $page is missing" >&2; exit 1; }
done
# pkbench, when this build made it.
if [ -x "$build/bench/pkbench" ] && [ ! -x "$prefix/bin/pkbench" ]; then
	echo "install: bin/pkbench is missing" >&2
	exit 1
fi
soname=$(readelf -d "$prefix/lib/libprintk.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libprintk.so.0 ] || { echo "install: soname is '$soname'" >&2; exit 1; }

# 1. pkg-config
command -v pkg-config >/dev/null || { echo "pkg-config is not installed" >&2; exit 1; }
flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs libprintk)
# shellcheck disable=SC2086
$cc -Wall -Wextra -Werror -o "$work/pc_consumer" "$src/tests/consume/consumer.c" $flags \
	-Wl,-rpath,"$prefix/lib"
run_consumer pkg-config "$work/pc_consumer"

# 2. find_package(printk)
cmake -S "$src/tests/consume/find_package" -B "$work/fp" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_BUILD_TYPE=Release >"$work/fp.log" 2>&1 || { cat "$work/fp.log" >&2; exit 1; }
cmake --build "$work/fp" >>"$work/fp.log" 2>&1 || { cat "$work/fp.log" >&2; exit 1; }
run_consumer "find_package printk::printk" "$work/fp/consumer_shared"
run_consumer "find_package printk::printk_static" "$work/fp/consumer_static"
if readelf -d "$work/fp/consumer_static" | grep -q 'libprintk\.so'; then
	echo "printk::printk_static linked the shared library" >&2
	exit 1
fi

# 3. add_subdirectory
cmake -S "$src/tests/consume/subproject" -B "$work/sub" -DPK_SOURCE_DIR="$src" \
	-DCMAKE_BUILD_TYPE=Release >"$work/sub.log" 2>&1 || { cat "$work/sub.log" >&2; exit 1; }
cmake --build "$work/sub" -j 2 >>"$work/sub.log" 2>&1 || { cat "$work/sub.log" >&2; exit 1; }
run_consumer add_subdirectory "$work/sub/hello"
rm -rf "$work"
