#!/bin/sh
# sigsafe_check.sh ARCHIVE: the formatter behind pk_printk() (vsnprintf.c,
# ptrext.c in ARCHIVE, an archive of one member per source: the build's
# libprintk_members.a, whose objects libprintk.a links into one) calls
# nothing that allocates, takes a lock or
# looks at the locale: each function its objects call is on the list below
# of async-signal-safe, locale-free ones (or is the library's own, or
# instrumentation a sanitizer or coverage build adds); a checked function
# of _FORTIFY_SOURCE (__memcpy_chk) counts as the function it checks.  A call to
# malloc(), localeconv(), wcrtomb(), snprintf() and the like fails it.
set -eu
lib=$1
allowed='__errno_location bcmp frexp frexpl ldexp ldexpl memchr memcmp memcpy memmove memset
strchr strchrnul strlen strnlen strerrordesc_np strerrorname_np _GLOBAL_OFFSET_TABLE_
__stack_chk_fail'
objs=0
bad=
for o in vsnprintf.c.o ptrext.c.o; do
	und=$(nm -u "$lib" 2>/dev/null | awk -v o="$o" '
		/^$/ { next }
		/:$/ { cur = substr($0, 1, length($0) - 1); next }
		cur == o && $1 == "U" { print $2 }')
	nm "$lib" 2>/dev/null | grep -q "^$o:" || { echo "$o is not in $lib" >&2; exit 1; }
	objs=$((objs + 1))
	for s in $und; do
		case $s in
		pk__* | __asan_* | __tsan_* | __ubsan_* | __sanitizer_* | __gcov_* | __llvm_*)
			continue ;;
		# _FORTIFY_SOURCE's checked functions: as safe as the one they
		# check (__memcpy_chk as memcpy; __snprintf_chk is not).
		__*_chk) s=${s#__} s=${s%_chk} ;;
		esac
		echo " $allowed " | tr '\n' ' ' | grep -q " $s " || bad="$bad $o:$s"
	done
done
if [ -n "$bad" ]; then
	echo "the formatter calls functions not known to be async-signal-safe and locale-free:" >&2
	echo "$bad" | tr ' ' '\n' | sed '/^$/d' >&2
	exit 1
fi
echo "formatter: $objs objects call only async-signal-safe, locale-free functions"
