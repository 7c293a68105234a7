#!/bin/sh
# abi_check.sh LIB [INCLUDE]: libprintk.so exports the public pk_ API and
# nothing else (src/libprintk.map), under soname libprintk.so.1; with
# INCLUDE, every exported name is declared in a public header there (a
# pk_ function left with default visibility but not in the API fails).
set -eu
lib=$1 inc=${2:-}
# nm prints versioned names as name@@PRINTK_0.
syms=$(nm -D --defined-only "$lib" | awk '{ sub(/@.*/, "", $3); print $3 }')
bad=$(echo "$syms" | grep -v '^pk_[a-zA-Z0-9]' | grep -vx 'PRINTK_0' | grep -vx 'PRINTK_0\.2' || true)
if [ -n "$bad" ]; then
	echo "exported beyond the public API:" >&2
	echo "$bad" >&2
	exit 1
fi
n=$(echo "$syms" | grep -c '^pk_[a-zA-Z0-9]' || true)
for f in pk_printk pk_init pk_console_register pk_reader_open pk_panic pk_console_journal_make; do
	echo "$syms" | grep -qx "$f" || { echo "$f is not exported" >&2; exit 1; }
done
if [ -n "$inc" ]; then
	undeclared=$(echo "$syms" | grep '^pk_[a-zA-Z0-9]' | while read -r s; do
		grep -qw -- "$s" "$inc"/printk/*.h || echo "$s"
	done)
	if [ -n "$undeclared" ]; then
		echo "exported but declared in no public header:" >&2
		echo "$undeclared" >&2
		exit 1
	fi
fi
# The functions 0.2.0 added are bound to their own version node.
for f in pk_printk_loc pk_vprintk_loc pk_printk_site_loc pk_printk_fields_loc \
	pk_reader_tell_lane pk_reader_cursor pk_reader_seek_cursor; do
	nm -D --defined-only "$lib" | grep -q " $f@@PRINTK_0\.2\$" ||
		{ echo "$f is not exported at version PRINTK_0.2" >&2; exit 1; }
done
soname=$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libprintk.so.1 ] || { echo "soname is '$soname'" >&2; exit 1; }
echo "abi: $n public symbols exported, nothing else; soname $soname"
