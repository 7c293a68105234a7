#!/bin/sh
# SPDX-License-Identifier: MIT
# man_check.sh PROJECT_DIR LIBPATH - check the man pages in PROJECT_DIR/docs/man.
#
#  1. Every public symbol the shared library LIBPATH exports (nm -D names
#     matching ^pk_[a-zA-Z0-9]; pk__ names are internal) has a page
#     docs/man/NAME.3, and the page that `man NAME` shows (following one
#     .so link) lists NAME in its NAME section.
#  2. Every name in the NAME section of a section-3 page has its
#     docs/man/NAME.3, so that `man NAME` finds it (macros included).
#  3. Every page's .TH names its file, and `man --warnings -E UTF-8 -l PAGE`
#     prints no warning (.so links are resolved as they will be once
#     installed: man3/X.3 next to man1/ and man7/).
#
# Exit status: 0 all good, 1 a check failed, 77 (skip) when man (the
# man-db package) or nm (binutils) is not installed.
set -u

if [ $# -ne 2 ]; then
	echo "usage: $0 PROJECT_DIR LIBPATH" >&2
	exit 2
fi
proj=$1
lib=$2
mandir=$proj/docs/man

if ! command -v man >/dev/null 2>&1; then
	echo "man_check: man is not installed (Debian package man-db, with groff-base); skipping"
	exit 77
fi
if ! command -v nm >/dev/null 2>&1; then
	echo "man_check: nm is not installed (Debian package binutils); skipping"
	exit 77
fi
if [ ! -d "$mandir" ] || [ ! -r "$lib" ]; then
	echo "man_check: no $mandir or no library $lib" >&2
	exit 1
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# Installed layout: each section directory holds that section's pages; the
# source directory holds them all, so each link may point at it.
for s in 1 3 7; do
	ln -s "$(cd "$mandir" && pwd)" "$tmp/man$s"
done

fail=0
bad() {
	echo "man_check: $*"
	fail=1
}

# so_target PAGE: the page a .so link PAGE points at (empty if none).
so_target() {
	sed -n '/^\.so /{s/^\.so *//p;q;}' "$1"
}

# names_of PAGE: the names listed in PAGE's NAME section, one a line.
names_of() {
	awk '
		/^\.SH/ { if (in_name) exit; if ($2 == "NAME") in_name = 1; next }
		in_name && !/^\.\\"/ { text = text " " $0 }
		END {
			sub(/\\-.*/, "", text)
			gsub(/\\f[BIRP]/, "", text)
			gsub(/\\&/, "", text)
			n = split(text, w, /[ ,]+/)
			for (i = 1; i <= n; i++)
				if (w[i] != "")
					print w[i]
		}' "$1"
}

# 1. every exported public symbol has its page, which names it.
syms=$(nm -D --defined-only "$lib" | awk '{ sub(/@.*/, "", $NF); print $NF }' |
	grep -E '^pk_[a-zA-Z0-9]' | sort -u)
if [ -z "$syms" ]; then
	bad "$lib exports no pk_ symbol: nothing to check against"
fi
nsyms=0
for sym in $syms; do
	nsyms=$((nsyms + 1))
	page=$mandir/$sym.3
	if [ ! -f "$page" ]; then
		bad "$sym: exported by the library but there is no docs/man/$sym.3"
		continue
	fi
	target=$(so_target "$page")
	if [ -n "$target" ]; then
		page=$mandir/${target##*/}
		if [ ! -f "$page" ]; then
			bad "$sym.3: .so $target, which does not exist"
			continue
		fi
	fi
	if ! names_of "$page" | grep -qx "$sym"; then
		bad "$sym: not listed in the NAME section of ${page##*/}"
	fi
done

# 2 and 3: every page.
npages=0
for page in "$mandir"/*.[1-9]; do
	[ -f "$page" ] || continue
	npages=$((npages + 1))
	base=${page##*/}
	sec=${base##*.}
	name=${base%.*}
	if [ -z "$(so_target "$page")" ]; then
		th=$(sed -n 's/^\.TH  *\([^ ]*\)  *\([^ ]*\).*/\1 \2/p' "$page" | head -n 1)
		upper=$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]')
		if [ "$th" != "$upper $sec" ]; then
			bad "$base: .TH says \"$th\", expected \"$upper $sec\""
		fi
		names=$(names_of "$page")
		if [ -z "$names" ]; then
			bad "$base: empty or missing NAME section"
		fi
		if [ "$sec" = 3 ]; then
			for n in $names; do
				[ -f "$mandir/$n.3" ] || bad "$base: names $n, but there is no docs/man/$n.3"
			done
		fi
	fi
	# man exits 0 on groff warnings: what counts is what it prints.
	# C.UTF-8 always exists: a LANG naming a missing locale would make man warn.
	if ! (cd "$tmp" && LC_ALL=C.UTF-8 MANWIDTH=80 \
		man --warnings -E UTF-8 -l "man$sec/$base" >/dev/null 2>"$tmp/err"); then
		bad "$base: man failed"
	fi
	if [ -s "$tmp/err" ]; then
		bad "$base: man --warnings printed:"
		sed 's/^/    /' "$tmp/err"
	fi
done

if [ "$fail" -ne 0 ]; then
	echo "man_check: FAILED ($nsyms exported symbols, $npages pages)"
	exit 1
fi
echo "man_check: ok: $nsyms exported symbols documented, $npages pages clean"
exit 0
