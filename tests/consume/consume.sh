#!/bin/sh
# consume.sh SRC BUILD WORK: install the libprintk of build tree BUILD into
# a prefix under WORK, then build and run tests/consume/consumer.c against
# it the ways users do: pkg-config (dynamic and --static, with no relp.pc
# in sight), find_package(printk) (shared and static, no relp.pc either),
# the archive with nothing but -pthread, add_subdirectory of the source
# tree SRC, and add_subdirectory by a project that installs a library of
# its own through install(EXPORT).  Each program must print its line.
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
	bin/pkmsg share/man/man1/pkmsg.1 share/doc/libprintk/LICENSE \
	share/doc/libprintk/CHANGELOG.md; do
	[ -e "$prefix/$f" ] || { echo "install: $f is missing" >&2; exit 1; }
done
for f in "$prefix"/lib/libprintk.so.1 "$prefix"/lib/cmake/printk/printkTargets.cmake \
	"$prefix"/lib/cmake/printk/printkConfigVersion.cmake; do
	[ -e "$f" ] || { echo "install: $f is missing" >&2; exit 1; }
done
for h in "$src"/include/printk/*.h; do
	[ -e "$prefix/include/printk/${h##*/}" ] || { echo "install: header ${h##*/} is missing" >&2; exit 1; }
done
# Every man page of docs/man, in the section its name ends in, but
# pkbench's: pkbench is installed only when asked (PK_INSTALL_BENCH).
for m in "$src"/docs/man/*.[137]; do
	page=${m##*/}
	[ "$page" = pkbench.1 ] && continue
	[ -e "$prefix/share/man/man${page##*.}/$page" ] ||
		{ echo "install: man page $page is missing" >&2; exit 1; }
done
bench=$(sed -n 's/^PK_INSTALL_BENCH:BOOL=//p' "$build/CMakeCache.txt")
for f in bin/pkbench share/man/man1/pkbench.1; do
	if [ "$bench" = ON ] && [ ! -e "$prefix/$f" ]; then
		echo "install: $f is missing (PK_INSTALL_BENCH=ON)" >&2
		exit 1
	elif [ "$bench" != ON ] && [ -e "$prefix/$f" ]; then
		echo "install: $f installed, but PK_INSTALL_BENCH is not ON" >&2
		exit 1
	fi
done
# make install's summary (scripts/install-summary.sh): a few lines, and
# how to run a program against a prefix the loader does not search.
summary=$(sh "$src/scripts/install-summary.sh" "$build" "" "$prefix")
lines=$(echo "$summary" | wc -l)
[ "$lines" -le 12 ] || { echo "install summary: $lines lines: $summary" >&2; exit 1; }
case $summary in
*"libprintk installed in $prefix"*"LD_LIBRARY_PATH=$prefix/lib"*) ;;
*) echo "install summary: $summary" >&2; exit 1 ;;
esac
soname=$(readelf -d "$prefix/lib/libprintk.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libprintk.so.1 ] || { echo "install: soname is '$soname'" >&2; exit 1; }

# 1. pkg-config, where only libprintk.pc is found (no relp.pc: librelp is
# loaded at run time and no .pc file of it is needed, dynamic or static).
command -v pkg-config >/dev/null || { echo "pkg-config is not installed" >&2; exit 1; }
flags=$(PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig pkg-config --print-errors --cflags --libs \
	libprintk) || { echo "pkg-config --cflags --libs libprintk failed" >&2; exit 1; }
# shellcheck disable=SC2086
$cc -Wall -Wextra -Werror -o "$work/pc_consumer" "$src/tests/consume/consumer.c" $flags \
	-Wl,-rpath,"$prefix/lib"
run_consumer pkg-config "$work/pc_consumer"
sflags=$(PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig pkg-config --print-errors --static --cflags \
	--libs libprintk) || { echo "pkg-config --static libprintk failed" >&2; exit 1; }
case $sflags in
*relp*) echo "pkg-config --static libprintk names relp: $sflags" >&2; exit 1 ;;
esac
# The archive alone (the .so hidden), as pkg-config --static says.
mkdir -p "$work/static_only"
cp "$prefix/lib/libprintk.a" "$work/static_only/"
sflags=$(echo "$sflags" | sed "s|-L[^ ]*|-L$work/static_only|")
# shellcheck disable=SC2086
$cc -Wall -Wextra -Werror -o "$work/pc_static" "$src/tests/consume/consumer.c" $sflags
run_consumer "pkg-config --static" "$work/pc_static"

# 2. The archive with nothing but -pthread (no -lrelp, no -ldl on glibc
# 2.34 and later): no librelp symbol is left for the linker to find.
if nm -u "$prefix/lib/libprintk.a" | grep -q ' relp'; then
	echo "libprintk.a needs librelp at link time:" >&2
	nm -u "$prefix/lib/libprintk.a" | grep ' relp' >&2
	exit 1
fi
$cc -o "$work/static_consumer" "$src/tests/consume/consumer.c" -I"$prefix/include" \
	"$prefix/lib/libprintk.a" -pthread
run_consumer "libprintk.a -pthread" "$work/static_consumer"
if readelf -d "$work/static_consumer" | grep -q 'NEEDED.*relp'; then
	echo "a program linked with libprintk.a needs librelp" >&2
	exit 1
fi
# A program that calls no function of the front door (only consoles, a
# reader, pk_flush()) starts the library from the archive too.
$cc -Wall -Wextra -Werror -o "$work/static_noinit" "$src/tests/consume/consumer_noinit.c" \
	-I"$prefix/include" "$prefix/lib/libprintk.a" -pthread
out=$("$work/static_noinit" 2>&1) || {
	echo "libprintk.a, a program without pk_init() or pk_printk(): $out" >&2
	exit 1
}
[ "$out" = "consumer_noinit: ok" ] ||
	{ echo "libprintk.a, a program without pk_init() or pk_printk(): $out" >&2; exit 1; }

# 3. find_package(printk), where pkg-config finds no relp.pc either.
PKG_CONFIG_LIBDIR=$work/none cmake -S "$src/tests/consume/find_package" -B "$work/fp" \
	-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$work/fp.log" 2>&1 ||
	{ cat "$work/fp.log" >&2; exit 1; }
cmake --build "$work/fp" >>"$work/fp.log" 2>&1 || { cat "$work/fp.log" >&2; exit 1; }
run_consumer "find_package printk::printk" "$work/fp/consumer_shared"
run_consumer "find_package printk::printk_static" "$work/fp/consumer_static"
if readelf -d "$work/fp/consumer_static" | grep -q 'libprintk\.so'; then
	echo "printk::printk_static linked the shared library" >&2
	exit 1
fi

# 4. add_subdirectory
cmake -S "$src/tests/consume/subproject" -B "$work/sub" -DPK_SOURCE_DIR="$src" \
	-DCMAKE_BUILD_TYPE=Release >"$work/sub.log" 2>&1 || { cat "$work/sub.log" >&2; exit 1; }
cmake --build "$work/sub" -j 2 >>"$work/sub.log" 2>&1 || { cat "$work/sub.log" >&2; exit 1; }
run_consumer add_subdirectory "$work/sub/hello"

# 5. add_subdirectory by a project that installs a library of its own,
# linked with libprintk, through its own install(EXPORT): no option needed.
hp=$work/host_prefix
cmake -S "$src/tests/consume/subproject_export" -B "$work/subx" -DPK_SOURCE_DIR="$src" \
	-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$hp" >"$work/subx.log" 2>&1 ||
	{ cat "$work/subx.log" >&2; exit 1; }
cmake --build "$work/subx" -j 2 >>"$work/subx.log" 2>&1 || { cat "$work/subx.log" >&2; exit 1; }
cmake --install "$work/subx" >>"$work/subx.log" 2>&1 || { cat "$work/subx.log" >&2; exit 1; }
for f in lib/cmake/host/hostTargets.cmake lib/cmake/printk/printkTargets.cmake \
	lib/libprintk.so.1 bin/hello; do
	[ -e "$hp/$f" ] || { echo "add_subdirectory + install(EXPORT): $f is missing" >&2; exit 1; }
done
# As a guest, libprintk installs neither its tools nor pkbench.
for f in bin/pkmsg bin/pkbench share/man/man1; do
	[ ! -e "$hp/$f" ] || { echo "add_subdirectory: libprintk installed $f" >&2; exit 1; }
done
run_consumer "add_subdirectory + install(EXPORT)" "$hp/bin/hello"
rm -rf "$work"
