#!/bin/sh
# deps_check.sh SRC: scripts/deps.sh asks each make target for what it
# needs.  `make install` needs a C compiler, make and cmake, found as
# commands on any system (no dpkg); the test suite's Debian packages are
# checked only where dpkg-query exists, and skipped with a note elsewhere.
set -eu
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin" "$tmp/nocmake"
for c in cmake make cc; do
	p=$(command -v $c) || { echo "$c is not installed" >&2; exit 1; }
	ln -s "$p" "$tmp/bin/$c"
	[ $c = cmake ] || ln -s "$p" "$tmp/nocmake/$c"
done
sh=$(command -v sh)
# install: no dpkg-query on PATH, nothing said, success.
out=$(PATH=$tmp/bin "$sh" "$src/scripts/deps.sh" install 2>&1) ||
	{ echo "deps.sh install failed without dpkg: $out" >&2; exit 1; }
[ -z "$out" ] || { echo "deps.sh install said: $out" >&2; exit 1; }
# install without cmake: fails, naming it.
if out=$(PATH=$tmp/nocmake "$sh" "$src/scripts/deps.sh" install 2>&1); then
	echo "deps.sh install succeeded without cmake" >&2
	exit 1
fi
case $out in
*"cmake not found"*) ;;
*) echo "deps.sh install without cmake said: $out" >&2; exit 1 ;;
esac
# check without dpkg-query: a note, and success.
out=$(PATH=$tmp/bin "$sh" "$src/scripts/deps.sh" check 2>&1) ||
	{ echo "deps.sh check failed without dpkg: $out" >&2; exit 1; }
case $out in
*"no dpkg-query"*"not checked"*) ;;
*) echo "deps.sh check without dpkg said: $out" >&2; exit 1 ;;
esac
# make install PK_INSTALL_BENCH=ON (set pkbench) without dpkg-query: a
# note naming pkbench's own needs, not the test suite's.
out=$(PATH=$tmp/bin "$sh" "$src/scripts/deps.sh" pkbench 2>&1) ||
	{ echo "deps.sh pkbench failed without dpkg: $out" >&2; exit 1; }
case $out in
*"no dpkg-query"*"C++ compiler and spdlog") ;;
*) echo "deps.sh pkbench without dpkg said: $out" >&2; exit 1 ;;
esac
grep -q '^install: DEPS_SET = pkbench$' "$src/Makefile" ||
	{ echo "make install PK_INSTALL_BENCH=ON does not check the pkbench set" >&2; exit 1; }
echo "deps: install needs cmake, make and cc only; packages skipped with a note without dpkg"
