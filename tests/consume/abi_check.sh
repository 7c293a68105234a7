#!/bin/sh
# abi_check.sh LIB: libprintk.so exports the public pk_ API and nothing
# else (src/libprintk.map), under soname libprintk.so.0.
set -eu
lib=$1
# nm prints versioned names as name@@PRINTK_0.
syms=$(nm -D --defined-only "$lib" | awk '{ sub(/@.*/, "", $3); print $3 }')
bad=$(echo "$syms" | grep -v '^pk_[a-zA-Z0-9]' | grep -vx 'PRINTK_0' || true)
if [ -n "$bad" ]; then
	echo "exported beyond the public API:" >&2
	echo "$bad" >&2
	exit 1
fi
n=$(echo "$syms" | grep -c '^pk_[a-zA-Z0-9]' || true)
for f in pk_printk pk_init pk_console_register pk_reader_open pk_panic; do
	echo "$syms" | grep -qx "$f" || { echo "$f is not exported" >&2; exit 1; }
done
soname=$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libprintk.so.0 ] || { echo "soname is '$soname'" >&2; exit 1; }
echo "abi: $n public symbols exported, nothing else; soname $soname"
