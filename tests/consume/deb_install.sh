#!/bin/sh
# deb_install.sh SRC CC: the Debian packages (make deb: CPack from the
# install components) hold what they should and depend on what they
# should, install with dpkg into this system, a program built with
# `cc app.c $(pkg-config --cflags --libs libprintk)` and one built with
# find_package(printk) run against them, and they purge cleanly.
#
# It needs root, dpkg and what `make deb` needs (dpkg-shlibdeps from
# dpkg-dev, file); without them it skips (exit 77) saying why, and with
# PK_TEST_DEB=1 (CI) a skip is a failure.  It also skips, rather than
# replace them, where libprintk packages are already installed.  The
# packages land in /usr for a few seconds: tests/consume/CMakeLists.txt
# gives the test a RESOURCE_LOCK, and it removes them on every exit.
set -u
src=$(cd "$1" && pwd) || exit 1
cc=$2

skip() {
	if [ "${PK_TEST_DEB:-0}" = 1 ]; then
		echo "deb_install: FAILED: cannot run and PK_TEST_DEB=1: $*"
		exit 1
	fi
	echo "deb_install: skipped: $*"
	exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (dpkg -i into this system)"
for c in dpkg dpkg-deb dpkg-query dpkg-shlibdeps file cpack pkg-config make; do
	command -v $c >/dev/null 2>&1 ||
		skip "no $c (Debian: dpkg-dev, file, cmake, pkgconf, make)"
done
for p in libprintk1 libprintk-dev; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		skip "$p is already installed here; not replacing it"
	fi
done

tmp=$(mktemp -d) || exit 1
installed=""
cleanup() {
	if [ -n "$installed" ]; then
		dpkg --purge libprintk-dev libprintk1 >"$tmp/remove.log" 2>&1 ||
			{ echo "deb_install: dpkg --purge failed:"; cat "$tmp/remove.log"; }
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
fail=0
bad() {
	echo "deb_install: $*"
	fail=1
}

# make deb, in a build directory of its own.
if ! make -C "$src" deb DEBBUILD="$tmp/b" JOBS=2 CC="$cc" >"$tmp/make.log" 2>&1; then
	tail -n 40 "$tmp/make.log"
	echo "deb_install: make deb failed"
	exit 1
fi
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$tmp/b/CMakeCache.txt")
arch=$(dpkg --print-architecture)
run=$tmp/b/libprintk1_${version}_$arch.deb
dev=$tmp/b/libprintk-dev_${version}_$arch.deb
for f in "$run" "$dev"; do
	[ -f "$f" ] || { ls "$tmp/b"/*.deb; echo "deb_install: no ${f##*/}"; exit 1; }
done

# What each package holds, and what it depends on.
dpkg-deb -c "$run" | awk '{ print $6 }' | sed 's|^\./|/|' >"$tmp/run.list"
dpkg-deb -c "$dev" | awk '{ print $6 }' | sed 's|^\./|/|' >"$tmp/dev.list"
has() { # LIST PATTERN WHAT
	grep -qE "$2" "$tmp/$1.list" || bad "${1}: no $3 in the package"
}
hasnt() {
	grep -qE "$2" "$tmp/$1.list" && bad "${1}: $3 in the package"
}
has run '^/usr/bin/pkmsg$' pkmsg
has run '^/usr/lib/.*/libprintk\.so\.1$' libprintk.so.1
has run '^/usr/share/man/man1/pkmsg\.1' pkmsg.1
has run '^/usr/share/man/man7/libprintk\.7' libprintk.7
hasnt run '^/usr/include/|\.a$|\.pc$|/man3/|\.so$' "a development file"
has dev '^/usr/include/printk/printk\.h$' printk.h
has dev '^/usr/lib/.*/libprintk\.a$' libprintk.a
has dev '^/usr/lib/.*/libprintk\.so$' "the libprintk.so link"
has dev '^/usr/lib/.*/pkgconfig/libprintk\.pc$' libprintk.pc
has dev '^/usr/lib/.*/cmake/printk/printkConfig\.cmake$' "the CMake package"
has dev '^/usr/share/man/man3/pk_printk\.3' pk_printk.3
hasnt dev '^/usr/bin/|\.so\.1$|/man[17]/' "a runtime file"
deps=$(dpkg-deb -f "$run" Depends)
case $deps in
*libc6*) ;;
*) bad "libprintk1 Depends: \"$deps\", no libc6" ;;
esac
# The shlibs file, for packages built against libprintk.so.1.
dpkg-deb -e "$run" "$tmp/run.ctl"
grep -qx "libprintk 1 libprintk1 (>= $version)" "$tmp/run.ctl/shlibs" 2>/dev/null ||
	bad "libprintk1's shlibs file is not \"libprintk 1 libprintk1 (>= $version)\""
deps=$(dpkg-deb -f "$dev" Depends)
[ "$deps" = "libprintk1 (= $version)" ] ||
	bad "libprintk-dev Depends: \"$deps\", not \"libprintk1 (= $version)\""

# The -dev package alone is refused: it needs the runtime.
if dpkg -i "$dev" >"$tmp/devonly.log" 2>&1; then
	installed=1
	bad "libprintk-dev installed without libprintk1"
fi
dpkg --purge libprintk-dev >/dev/null 2>&1
installed=1
if ! dpkg -i "$run" "$dev" >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	echo "deb_install: dpkg -i failed"
	exit 1
fi

# A pkg-config consumer, against the system's copy only (no PKG_CONFIG_PATH).
cat >"$tmp/app.c" <<'APP'
#include <printk/printk.h>

int main(void)
{
	pk_info("hello from the packaged libprintk, %d\n", 42);
	return 0;
}
APP
pc=$(env -u PKG_CONFIG_PATH pkg-config --path libprintk 2>&1)
case $pc in
/usr/lib/*/pkgconfig/libprintk.pc | /usr/lib/pkgconfig/libprintk.pc) ;;
*) bad "pkg-config finds \"$pc\", not the package's libprintk.pc" ;;
esac
flags=$(env -u PKG_CONFIG_PATH pkg-config --cflags --libs libprintk) ||
	bad "pkg-config --cflags --libs libprintk failed"
# shellcheck disable=SC2086
if ! (cd "$tmp" && "$cc" -o app app.c $flags) >"$tmp/cc.log" 2>&1; then
	cat "$tmp/cc.log"
	bad "cc app.c \$(pkg-config --cflags --libs libprintk) failed"
else
	out=$(env -u LD_LIBRARY_PATH PK_CONSOLE=stderr "$tmp/app" 2>&1)
	case $out in
	*"hello from the packaged libprintk, 42"*) ;;
	*) bad "the program printed \"$out\"" ;;
	esac
	lib=$(env -u LD_LIBRARY_PATH ldd "$tmp/app" | awk '/libprintk\.so/ { print $3 }')
	case $lib in
	/usr/lib/* | /lib/*) ;;	# /lib is /usr/lib on a merged-/usr system
	*) bad "the program loads libprintk from \"$lib\", not the package's" ;;
	esac
fi
/usr/bin/pkmsg --help >/dev/null 2>&1 || bad "/usr/bin/pkmsg --help failed"

# A CMake consumer of the package's printk::printk, from /usr alone.
mkdir "$tmp/cm"
cat >"$tmp/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.22)
project(app C)
find_package(printk REQUIRED NO_CMAKE_ENVIRONMENT_PATH NO_CMAKE_PATH)
add_executable(app ${APP_SOURCE})
target_link_libraries(app PRIVATE printk::printk)
CM
if ! (cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_C_COMPILER="$cc" -DAPP_SOURCE="$tmp/app.c" &&
	cmake --build "$tmp/cm/b") >"$tmp/cm.log" 2>&1; then
	tail -n 20 "$tmp/cm.log"
	bad "a CMake program with find_package(printk) did not build against the packages"
else
	dir=$(sed -n 's/^printk_DIR:PATH=//p' "$tmp/cm/b/CMakeCache.txt")
	case $dir in
	/usr/lib/*/cmake/printk | /usr/lib/cmake/printk | /lib/*/cmake/printk) ;;
	*) bad "find_package(printk) found \"$dir\", not the package's" ;;
	esac
	out=$(env -u LD_LIBRARY_PATH PK_CONSOLE=stderr "$tmp/cm/b/app" 2>&1)
	case $out in
	*"hello from the packaged libprintk, 42"*) ;;
	*) bad "the CMake-built program printed \"$out\"" ;;
	esac
fi

# Purged, nothing is left, not even dpkg's record of them.
installed=""
if ! dpkg --purge libprintk-dev libprintk1 >"$tmp/remove.log" 2>&1; then
	cat "$tmp/remove.log"
	bad "dpkg --purge failed"
fi
for f in $(cat "$tmp/run.list" "$tmp/dev.list" | grep -v '/$'); do
	[ -e "$f" ] || [ -L "$f" ] || continue
	bad "$f is left after dpkg --purge"
done
for p in libprintk1 libprintk-dev; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
	case $st in
	"" | *not-installed) ;;
	*) bad "$p is still known to dpkg after the purge: $st" ;;
	esac
done

if [ "$fail" -ne 0 ]; then
	echo "deb_install: FAILED"
	exit 1
fi
echo "deb_install: ok: libprintk1 and libprintk-dev $version ($arch) built, installed with" \
	"dpkg, a pkg-config and a CMake consumer built and run against them, both purged"
