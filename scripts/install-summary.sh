#!/bin/sh
# install-summary.sh BUILD DESTDIR PREFIX - what `make install` put where,
# in a few lines (the full list: BUILD/install_manifest.txt).
set -eu
build=$1 destdir=$2 prefix=$3
man=$build/install_manifest.txt
[ -f "$man" ] || { echo "libprintk: $man is missing: was anything installed?" >&2; exit 1; }
count() { grep -c -- "$1" "$man" || true; }
libdir=$(sed -n 's|/libprintk\.so\.[0-9][0-9]*$||p' "$man" | head -n 1)
echo "libprintk installed in $destdir$prefix ($(wc -l <"$man") files, listed in $man):"
echo "  libraries  $(grep -E '/libprintk\.(a|so\.[0-9.]*)$' "$man" | sed 's|.*/||' | tr '\n' ' ')"
echo "  headers    $(count '/include/printk/') in $(sed -n 's|/printk/[^/]*\.h$||p' "$man" | head -n 1)/printk"
echo "  packages   libprintk.pc (pkg-config), lib/cmake/printk (find_package)"
tools=$(grep -E '/bin/[^/]+$' "$man" | sed 's|.*/||' | tr '\n' ' ')
echo "  programs   ${tools:-none}"
echo "  man pages  $(count '/share/man/')"
if grep -q '^PK_RELP_INCLUDE_DIR:PATH=.*NOTFOUND' "$build/CMakeCache.txt" ||
	grep -q '^PK_RELP:STRING=OFF' "$build/CMakeCache.txt"; then
	echo "  RELP       left out (PK_RELP=OFF, or no librelp.h: Debian librelp-dev)"
else
	echo "  RELP       built in; librelp.so.0 is loaded when a RELP console is made"
fi
[ -z "$destdir" ] || exit 0	# staged: the package's business
case $libdir in
/usr/lib | /usr/lib64 | /usr/lib/*-linux-gnu | /lib | /lib64 | /lib/*-linux-gnu) ;;
/usr/local/lib | /usr/local/lib64 | /usr/local/lib/*-linux-gnu)
	if [ "$(id -u)" = 0 ] && command -v ldconfig >/dev/null 2>&1; then
		ldconfig && echo "ran ldconfig: the loader finds libprintk.so.1 in $libdir"
	fi
	;;
*)
	echo "$libdir is not searched by the dynamic loader: link with"
	echo "  -Wl,-rpath,$libdir, or run with LD_LIBRARY_PATH=$libdir (README, 'Installing')"
	;;
esac
