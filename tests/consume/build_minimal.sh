#!/bin/sh
# build_minimal.sh SRC CC: the tree builds and installs with nothing but a C
# compiler, make and CMake.  The optional packages (cmocka, spdlog,
# LTTng-UST, pkg-config) are hidden from a configure in a temporary
# directory, and so are librelp's header (the system include directories
# are ignored by find_path; PK_RELP stays AUTO) and the C++ compiler (CXX
# names none); it must print one line for each part it skips (tests,
# pkbench, RELP), and build and install (to a
# DESTDIR) the libraries, headers, pkg-config file, CMake package, pkmsg
# and the man pages.  Then PK_TESTS=ON without cmocka, and PK_BENCH=ON
# without spdlog (the C++ compiler back), must fail the configure with
# the same reason.
set -u
src=$1
cc=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
	echo "build_minimal: $*"
	fail=1
}
hide="-DCMAKE_DISABLE_FIND_PACKAGE_cmocka=ON -DCMAKE_DISABLE_FIND_PACKAGE_spdlog=ON
	-DCMAKE_DISABLE_FIND_PACKAGE_LTTngUST=ON -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON
	-DCMAKE_IGNORE_PATH=/usr/include;/usr/local/include --no-warn-unused-cli"
tests_line="-- libprintk: tests skipped: cmocka not found (Debian: libcmocka-dev)"
bench_line="-- libprintk: pkbench skipped: no C++ compiler found (Debian: g++)"
relp_line="-- libprintk: syslog over RELP skipped: librelp.h not found (Debian: librelp-dev)"

# shellcheck disable=SC2086
if ! CXX=$tmp/no-such-c++ cmake -S "$src" -B "$tmp/b" -DCMAKE_C_COMPILER="$cc" \
	-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr/local $hide >"$tmp/conf.log" 2>&1; then
	cat "$tmp/conf.log"
	echo "build_minimal: the configure without the optional packages failed"
	exit 1
fi
for l in "$tests_line" "$bench_line" "$relp_line"; do
	n=$(grep -cxF -- "$l" "$tmp/conf.log")
	[ "$n" = 1 ] || bad "the configure printed \"$l\" $n times, not once"
done
n=$(grep -c '^-- libprintk: .* skipped: ' "$tmp/conf.log")
[ "$n" = 3 ] || bad "the configure printed $n skip lines, not 3: $(grep 'skipped:' "$tmp/conf.log")"
if ! cmake --build "$tmp/b" -j 2 >"$tmp/build.log" 2>&1; then
	tail -n 40 "$tmp/build.log"
	echo "build_minimal: the build failed"
	exit 1
fi
if ! DESTDIR="$tmp/root" cmake --install "$tmp/b" >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	echo "build_minimal: the install failed"
	exit 1
fi
p=$tmp/root/usr/local
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$tmp/b/CMakeCache.txt")
for f in bin/pkmsg "$libdir/libprintk.a" "$libdir/libprintk.so" "$libdir/libprintk.so.1" \
	"$libdir/pkgconfig/libprintk.pc" "$libdir/cmake/printk/printkConfig.cmake" \
	include/printk/printk.h include/printk/kernel.h \
	share/man/man1/pkmsg.1 share/man/man3/pk_init.3 share/man/man7/libprintk.7; do
	[ -e "$p/$f" ] || bad "not installed: $f"
done
[ -x "$p/bin/pkmsg" ] && ! "$p/bin/pkmsg" --help >/dev/null 2>&1 &&
	bad "the installed pkmsg --help failed"
for f in pkbench torture; do
	find "$tmp/b" -name "$f" -type f | grep -q . && bad "$f was built without its packages"
done
[ -d "$tmp/b/tests" ] && bad "the tests were configured without cmocka"

# Asked for explicitly, a missing package fails the configure, saying why.
# shellcheck disable=SC2086
for ask in "PK_TESTS=ON -DPK_BENCH=OFF:cmocka not found (Debian: libcmocka-dev)" \
	"PK_BENCH=ON -DPK_TESTS=OFF:spdlog not found (Debian: libspdlog-dev)"; do
	opt=${ask%%:*} why=${ask#*:}
	if cmake -S "$src" -B "$tmp/ask" -DCMAKE_C_COMPILER="$cc" -D$opt $hide \
		>"$tmp/ask.log" 2>&1; then
		bad "-D$opt without its package configured"
	elif ! grep -qF -- "$why" "$tmp/ask.log"; then
		bad "-D$opt without its package failed without saying \"$why\":"
		sed 's/^/    /' "$tmp/ask.log" | tail -n 15
	fi
	rm -rf "$tmp/ask"
done

if [ "$fail" -ne 0 ]; then
	echo "build_minimal: FAILED"
	exit 1
fi
echo "build_minimal: ok: configured with 3 skip lines, built and installed" \
	"$(find "$tmp/root" -type f | wc -l) files; PK_TESTS=ON and PK_BENCH=ON fail as they should"
