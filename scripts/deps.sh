#!/bin/sh
# deps.sh [install|deb|check|bench|pkbench|ci] - make sure what a make target needs
# is there.
#   install  a C compiler, make and cmake: checked as commands, on any
#            system (librelp.h is optional: without it RELP is left out)
#   deb      install's, plus dpkg-shlibdeps (dpkg-dev) and file for
#            make deb: Debian packages
#   check    the test suite and pkbench (the default): Debian packages
#   bench    check's, plus gnuplot and LTTng for make demo
#   pkbench  install's, plus a C++ compiler and spdlog: make install
#            PK_INSTALL_BENCH=ON (pkbench's LTTng row is built when
#            liblttng-ust-dev is there, and left out otherwise)
#   ci       check's, plus what .ci/run needs
# The package sets are Debian's, checked with dpkg-query.  As root, missing
# packages are installed with apt-get; otherwise the exact apt-get line is
# printed and the script fails.  Where there is no dpkg-query (not Debian),
# the packages are not checked: a note says which to look for.
set -e
set_=${1:-check}

need_cmd() { # COMMAND... : the first found, or fail naming them
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 && return 0
	done
	echo "libprintk: $* not found (needed to build and install)" >&2
	exit 1
}
if [ "$set_" = install ]; then
	need_cmd cmake
	need_cmd make
	need_cmd "${CC:-cc}" gcc clang
	exit 0
fi

PKGS="cmake make gcc g++ pkgconf libcmocka-dev libspdlog-dev librelp-dev util-linux"
case $set_ in
check) ;;
deb)
	PKGS="cmake make gcc dpkg-dev file" ;;
pkbench)
	PKGS="cmake make gcc g++ libspdlog-dev" ;;
bench)
	# pkbench's plots (gnuplot) and its LTTng-UST row (make demo).  Under
	# systemd, Debian's lttng-tools package enables and starts the
	# lttng-sessiond service; elsewhere scripts/lttng-session.sh starts one.
	PKGS="$PKGS gnuplot-nox lttng-tools liblttng-ust-dev" ;;
ci)
	# Sanitizer runtimes, libFuzzer, the model checker, a syslog daemon with
	# its RELP input (test_relp), systemd-journald and journalctl
	# (test_journal), man with groff for the man_pages and
	# docs_check tests,
	# gnuplot for pkbench's plots, and make deb's tools for deb_install.
	PKGS="$PKGS dpkg-dev file gnuplot-nox clang-14 libclang-rt-14-dev spin rsyslog rsyslog-relp"
	PKGS="$PKGS systemd man-db groff-base" ;;
*)
	echo "deps.sh: unknown set '$set_' (install, deb, check, bench, pkbench or ci)" >&2
	exit 2 ;;
esac
if ! command -v dpkg-query >/dev/null 2>&1; then
	case $set_ in
	pkbench) what="a C++ compiler and spdlog" ;;
	deb) what="dpkg-dev and file" ;;
	*) what="cmocka, spdlog (C++), librelp headers, a C++ compiler and pkg-config" ;;
	esac
	echo "libprintk: no dpkg-query (not Debian): packages not checked; make $set_ needs" \
		"$what" >&2
	exit 0
fi
missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "libprintk needs these Debian packages:$missing" >&2
	echo "Install them with:" >&2
	echo "  sudo apt-get update && sudo apt-get install -y$missing" >&2
	exit 1
fi
echo "Installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing
