#!/bin/sh
# deps.sh [ci|bench] - make sure the Debian packages libprintk needs are installed.
# As root, missing packages are installed with apt-get; otherwise the exact
# apt-get line is printed and the script fails.
set -e
PKGS="cmake make gcc g++ pkgconf libcmocka-dev libspdlog-dev librelp-dev gnuplot-nox util-linux"
if [ "$1" = ci ]; then
	# Sanitizer runtimes, libFuzzer, the model checker, a syslog daemon with
	# its RELP input (test_relp), and man with groff for the man_pages and docs_check tests.
	PKGS="$PKGS clang-14 libclang-rt-14-dev spin rsyslog rsyslog-relp man-db groff-base"
fi
if [ "$1" = bench ]; then
	# pkbench's LTTng-UST row (make demo).  Under systemd, Debian's
	# lttng-tools package enables and starts the lttng-sessiond service;
	# elsewhere scripts/lttng-session.sh starts a daemon.
	PKGS="$PKGS lttng-tools liblttng-ust-dev"
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
