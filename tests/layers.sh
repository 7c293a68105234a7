#!/bin/sh
# SPDX-License-Identifier: MIT
#
# layers.sh SRCDIR OBJECT...: every call and every #include between the wings
# of src/ points down (docs/design.md, "Layout").
#
#   kernel/ 7 > printk.c, init.c (front) 6 > flush/ 5 > console/ 4 > store/ 3
#           > format/ 2 > core/ 1
#
# A file's wing is its first folder under src/; a file directly in src/ is
# the front door.  Calls: the object files of printk_obj (OBJECT..., or
# all those under one directory; the path of each below "printk_obj.dir/"
# is its source's path under src/), read with nm: a name a file uses (undefined in it) must be defined in its
# own wing or a lower one.  Includes: each #include "X" of a file under
# SRCDIR, X looked up beside the file, then under SRCDIR, must name a file
# of its own wing or a lower one.  Since every edge between two wings goes
# strictly down, there is no circle of calls or includes through files of
# different wings.  A folder that is no known wing is an error too.
#
# Prints each up-call and up-include, then their count; exit status 1 if
# there is any.
#
# layers.sh --self-test CC: build a small tree with one up-call and one
# up-include with CC and check that both are named and the status is 1.
set -eu

wing_of() {	# a path relative to src/
	case $1 in */*) echo "${1%%/*}" ;; *) echo front ;; esac
}

if [ "${1:-}" = --self-test ]; then
	cc=$2
	t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
	mkdir -p "$t/src/core" "$t/src/flush" "$t/obj/printk_obj.dir/core" "$t/obj/printk_obj.dir/flush"
	printf '#include "flush/b.h"\nint pk__a(void) { return pk__b(); }\n' >"$t/src/core/a.c"
	printf 'int pk__b(void);\n' >"$t/src/flush/b.h"
	printf '#include "core/c.h"\nint pk__b(void) { return pk__c(); }\n' >"$t/src/flush/b.c"
	printf 'int pk__c(void);\n' >"$t/src/core/c.h"
	printf '#include "c.h"\nint pk__c(void) { return 1; }\n' >"$t/src/core/c.c"
	for f in core/a.c flush/b.c core/c.c; do
		"$cc" -I"$t/src" -c "$t/src/$f" -o "$t/obj/printk_obj.dir/$f.o"
	done
	status=0
	sh "$0" "$t/src" "$t/obj" >"$t/out" 2>&1 || status=$?
	cat "$t/out"
	[ "$status" = 1 ] || { echo "self-test: exit status $status, not 1" >&2; exit 1; }
	grep -qxF 'up-call: core/a.c (core) uses pk__b from flush/b.c (flush)' "$t/out" ||
		{ echo "self-test: the up-call is not named" >&2; exit 1; }
	grep -qxF 'up-include: core/a.c (core) includes flush/b.h (flush)' "$t/out" ||
		{ echo "self-test: the up-include is not named" >&2; exit 1; }
	if [ "$(grep -c '^up-' "$t/out")" != 2 ]; then
		echo "self-test: a call or include that points down was reported" >&2; exit 1
	fi
	echo "self-test: passed"
	exit 0
fi

srcdir=$(cd "$1" && pwd -P)
shift
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
: >"$tmp/def"; : >"$tmp/undef"; : >"$tmp/bad"

if [ $# = 1 ] && [ -d "$1" ]; then
	find "$1" -path '*printk_obj.dir/*' -name '*.o' | sort >"$tmp/objs"
else
	for o in "$@"; do echo "$o"; done >"$tmp/objs"
fi
[ -s "$tmp/objs" ] || { echo "layers.sh: no objects of printk_obj given" >&2; exit 2; }
while read -r o; do
	rel=${o#*printk_obj.dir/}; rel=${rel%.o}
	w=$(wing_of "$rel")
	nm -g --defined-only "$o" | awk -v f="$rel" -v w="$w" 'NF == 3 { print $3, f, w }' >>"$tmp/def"
	nm -u "$o" | awk -v f="$rel" -v w="$w" '{ print $NF, f, w }' >>"$tmp/undef"
done <"$tmp/objs"
sort -k1,1 "$tmp/def" >"$tmp/def.s"; sort -k1,1 "$tmp/undef" >"$tmp/undef.s"
join "$tmp/undef.s" "$tmp/def.s" >"$tmp/calls"	# name user uwing definer dwing
awk '
function rank(w) {
	return (w == "kernel") * 7 + (w == "front") * 6 + (w == "flush") * 5 + (w == "console") * 4 + (w == "store") * 3 + (w == "format") * 2 + (w == "core") * 1
}
$3 != $5 {
	if (!rank($3)) print "unknown wing: " $2 " (" $3 ")"
	else if (!rank($5)) print "unknown wing: " $4 " (" $5 ")"
	else if (rank($5) > rank($3)) print "up-call: " $2 " (" $3 ") uses " $1 " from " $4 " (" $5 ")"
}' "$tmp/calls" >>"$tmp/bad"

# Includes: "file included" pairs, each resolved beside the file, then under src/.
(cd "$srcdir" && find . -name '*.[ch]' | sed 's|^\./||' | sort) >"$tmp/srcs"
while read -r f; do
	dir=$(dirname "$f")
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$srcdir/$f" |
	while read -r inc; do
		if [ -f "$srcdir/$dir/$inc" ]; then
			echo "$f $(realpath -m --relative-to="$srcdir" "$srcdir/$dir/$inc")"
		elif [ -f "$srcdir/$inc" ]; then
			echo "$f $inc"
		fi	# else not a file of src/ (include/printk/...)
	done
done <"$tmp/srcs" >"$tmp/incs"
awk '
function rank(w) {
	return (w == "kernel") * 7 + (w == "front") * 6 + (w == "flush") * 5 + (w == "console") * 4 + (w == "store") * 3 + (w == "format") * 2 + (w == "core") * 1
}
function wing(p) { return index(p, "/") ? substr(p, 1, index(p, "/") - 1) : "front" }
{
	w = wing($1); tw = wing($2)
	if (w == tw) next
	if (!rank(w) || !rank(tw)) print "unknown wing: " $1 " (" w ") includes " $2 " (" tw ")"
	else if (rank(tw) > rank(w)) print "up-include: " $1 " (" w ") includes " $2 " (" tw ")"
}' "$tmp/incs" >>"$tmp/bad"

sort -u "$tmp/bad" >"$tmp/bad.s"
cat "$tmp/bad.s"
n=$(wc -l <"$tmp/bad.s")
echo "layers: $n up-calls and up-includes between wings"
[ "$n" = 0 ]
