#!/bin/sh
# harden_check.sh FORTIFY PIE FILE...: each ELF FILE (libprintk.so,
# pkmsg) is hardened as the build asked (PK_HARDEN, CMakeLists.txt):
# full RELRO (a GNU_RELRO segment and BIND_NOW: nothing is resolved
# lazily, the GOT is read-only once loaded), a stack protector
# (__stack_chk_fail called) and, with FORTIFY=1 (an optimised build),
# checked functions of _FORTIFY_SOURCE (__*_chk); with PIE=1 an
# executable is position-independent.
set -eu
fortify=$1 pie=$2
shift 2
bad=0
for f in "$@"; do
	was=$bad bad=0
	name=$(basename "$f")
	[ -f "$f" ] || { echo "$name: no such file" >&2; exit 1; }
	hdr=$(readelf -hW "$f")
	segs=$(readelf -lW "$f")
	dyn=$(readelf -dW "$f")
	und=$(nm -D --undefined-only "$f" | awk '{ sub(/@.*/, "", $2); print $2 }')
	echo "$segs" | grep -q 'GNU_RELRO' || { echo "$name: no GNU_RELRO segment" >&2; bad=1; }
	echo "$dyn" | grep -Eq '\(FLAGS\).*BIND_NOW|\(FLAGS_1\).*NOW|\(BIND_NOW\)' ||
		{ echo "$name: no BIND_NOW (partial RELRO only)" >&2; bad=1; }
	echo "$und" | grep -qx '__stack_chk_fail' ||
		{ echo "$name: no stack protector (__stack_chk_fail not called)" >&2; bad=1; }
	chk=$(echo "$und" | grep -E '^__.*_chk$' | grep -v '^__stack_chk' | tr '\n' ' ')
	if [ "$fortify" = 1 ] && [ -z "$chk" ]; then
		echo "$name: no _FORTIFY_SOURCE checked function (__*_chk)" >&2
		bad=1
	fi
	if [ "$pie" = 1 ] && echo "$hdr" | grep -q 'Type:.*EXEC'; then
		echo "$name: an executable that is not position-independent" >&2
		bad=1
	fi
	[ $bad = 0 ] && echo "$name: GNU_RELRO, BIND_NOW, __stack_chk_fail${chk:+, checked: $chk}"
	[ $was = 0 ] || bad=1
done
exit $bad
