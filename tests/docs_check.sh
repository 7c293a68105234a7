#!/bin/sh
# SPDX-License-Identifier: MIT
# docs_check.sh PROJECT_DIR DYNDBG_HELPER - check that the docs say what the
# code does.  The docs are README.md, docs/*.md, the user guide
# (docs/guide/*.md), docs/man/* and the comments of include/printk/*.h.
#
#  1. Every man page renders with `groff -man -Tutf8 -ww -z` (all warnings
#     on) without a word on stderr.
#  2. Environment variables.  Every PK_ name the docs use is either defined
#     by the code (a macro, an enumerator, a CMake option) or read from the
#     environment by it; a variable that only the tests and scripts read is
#     not named in a man page.  Every variable that src/ or tools/ read
#     (getenv, secure_getenv) has its entry in the ENVIRONMENT section of
#     libprintk(7), and every variable the library reads is named in the
#     pk_config_init() comment of include/printk/printk.h and in the
#     pk_config_init() section of pk_init(3).
#  3. Sizes.  Each size the docs give for the early store (its text and
#     its records), the default store and the default store's data ring
#     is the one the code's #defines make (src/store/early.c,
#     src/store/ringbuf.h, include/printk/printk.h): a change on either
#     side fails here until the other follows.
#  4. Every PK_DYNDBG='...' example, as the man pages render it (and as the
#     Markdown docs write it), is accepted by the library, both in the
#     environment and by pk_dyndbg_exec() (DYNDBG_HELPER, docs_dyndbg.c).
#  5. Every relative link of the Markdown docs ([text](path), ![](path))
#     names a file or directory that exists.
#  6. Every sentence that gives this libprintk's store format version
#     names PK_RING_VERSION (src/store/ringbuf.h).
#  7. README.md is under 250 lines (the rest is the user guide).
#  8. Every CMake cache option PK_* has its row in docs/building.md.
#
# Exit status: 0 all good, 1 a check failed, 77 (skip) when groff (the
# groff-base package) or a C preprocessor is not installed.
set -u

if [ $# -ne 2 ]; then
	echo "usage: $0 PROJECT_DIR DYNDBG_HELPER" >&2
	exit 2
fi
proj=$(cd "$1" && pwd) || exit 1
helper=$2
mandir=$proj/docs/man
cpp=${CPP:-cpp}

if ! command -v groff >/dev/null 2>&1; then
	echo "docs_check: groff is not installed (Debian package groff-base); skipping"
	exit 77
fi
if ! command -v "$cpp" >/dev/null 2>&1; then
	echo "docs_check: no C preprocessor ($cpp); skipping"
	exit 77
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for s in 1 3 7; do
	ln -s "$mandir" "$tmp/man$s"
done

fail=0
bad() {
	echo "docs_check: $*"
	fail=1
}

# ---- 1. groff warnings, and the docs as text ----------------------------------

# The docs, one file each in $tmp/text: the man pages rendered as plain text
# (no bold, underline or overstrike), the Markdown as written, the comments
# of the public headers.  Each page is rendered once, every warning on; a
# .so link is rendered too (its target), but not kept as text.
mkdir "$tmp/text"
npages=0
for page in "$mandir"/*.[1-9]; do
	[ -f "$page" ] || continue
	npages=$((npages + 1))
	base=${page##*/}
	if ! (cd "$tmp" && LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -P-c -P-b -P-o -P-u \
		"man${base##*.}/$base" >"$tmp/text/$base" 2>"$tmp/err"); then
		bad "$base: groff failed"
	fi
	if [ -s "$tmp/err" ]; then
		bad "$base: groff -ww printed:"
		sed 's/^/    /' "$tmp/err"
	fi
	if grep -q '^\.so ' "$page"; then
		rm -f "$tmp/text/$base"
	fi
done
# The Markdown docs; the guide's pages keep a guide- prefix, so that a
# page named as one of docs/ is not overwritten.
mddocs() {
	for f in "$proj"/README.md "$proj"/docs/*.md "$proj"/docs/guide/*.md; do
		[ -f "$f" ] && echo "$f"
	done
}
nguide=0
for f in $(mddocs); do
	case $f in
	"$proj"/docs/guide/*) cp "$f" "$tmp/text/guide-${f##*/}"; nguide=$((nguide + 1)) ;;
	*) cp "$f" "$tmp/text/${f##*/}" ;;
	esac
done
[ "$nguide" -gt 0 ] || bad "no page in docs/guide/: the user guide is gone"
for f in "$proj"/include/printk/*.h; do
	awk '/\/\*/ { c = 1 } c { line = $0; sub(/^[ \t]*\/?\*+\/?[ \t]?/, "", line); print line }
	     /\*\// { c = 0 }' "$f" >"$tmp/text/${f##*/}"
done

# ---- 2. environment variables -------------------------------------------------

# PK_ names the docs use; a name that ends in _ is a prefix (PK_CFG_*), and
# PK_XXX stands for any level.  The man pages' titles (.TH PK_INIT) are
# not names: the source pages are read without their .TH lines.
{
	cat $(mddocs) "$tmp"/text/*.h
	grep -hv '^\.TH ' "$mandir"/*.[1-9]
} | grep -o 'PK_[A-Z0-9_]*' | grep -v '_$' | grep -vx 'PK_X*' | sort -u >"$tmp/docnames"

# Names the code defines: every PK_ identifier in the C sources with the
# comments and strings taken out (the preprocessor drops the comments and
# leaves the macros unexpanded), and in the CMake files outside comments.
find "$proj/include" "$proj/src" "$proj/tools" "$proj/tests" "$proj/bench" "$proj/verify" \
	"$proj/examples" -name '*.[ch]' 2>/dev/null | xargs cat |
	"$cpp" -fpreprocessed -dD -P - 2>/dev/null |
	sed -e "s/'\\([^'\\\\]\\|\\\\.\\)*'/''/g" -e 's/"\([^"\\]\|\\.\)*"/""/g' |
	grep -o 'PK_[A-Z0-9_]*' | sort -u >"$tmp/defined"
find "$proj" -path "$proj/build*" -prune -o \( -name CMakeLists.txt -o -name '*.cmake' \) -print |
	xargs sed 's/#.*//' | grep -o 'PK_[A-Z0-9_]*' | sort -u >>"$tmp/defined"
sort -u -o "$tmp/defined" "$tmp/defined"

# Variables read from the environment: by the library (src/), by the
# tools (tools/), and by the tests, benchmarks and scripts.
getenvs() {
	find "$@" -name '*.[ch]' 2>/dev/null | xargs grep -ho 'getenv("PK_[A-Z0-9_]*")' |
		sed 's/.*("\(.*\)")/\1/' | sort -u
}
getenvs "$proj/src" >"$tmp/libvars"
getenvs "$proj/tools" >"$tmp/toolvars"
{
	getenvs "$proj/tests" "$proj/bench" "$proj/verify" "$proj/examples"
	find "$proj/scripts" "$proj/tests" "$proj/.ci" "$proj/bench" -type f 2>/dev/null |
		xargs grep -hoE '\$\{?PK_[A-Z0-9_]*|ENV\{PK_[A-Z0-9_]*' 2>/dev/null
	grep -hoE '\$\(?PK_[A-Z0-9_]*' "$proj/Makefile" 2>/dev/null
} | grep -o 'PK_[A-Z0-9_]*' | sort -u >"$tmp/testvars"
sort -u "$tmp/libvars" "$tmp/toolvars" >"$tmp/codevars"
if [ ! -s "$tmp/libvars" ]; then
	bad "found no getenv(\"PK_...\") in src/: nothing to check against"
fi

for n in $(cat "$tmp/docnames"); do
	grep -qxF "$n" "$tmp/defined" && continue
	grep -qxF "$n" "$tmp/codevars" && continue
	where=$(cd "$proj" && grep -lw -- "$n" README.md docs/*.md docs/guide/*.md docs/man/* \
		include/printk/*.h 2>/dev/null |
		tr '\n' ' ')
	if grep -qxF "$n" "$tmp/testvars"; then
		case $where in
		*docs/man/*) bad "$n: only the tests and scripts read it, yet man pages name it: $where" ;;
		esac
		continue
	fi
	bad "$n: named in $where but the code neither defines it nor reads it from the environment"
done

# libprintk(7) ENVIRONMENT: a ".TP" entry ".B NAME" for each variable.
awk '/^\.SH/ { on = ($2 == "ENVIRONMENT") } on' "$mandir/libprintk.7" >"$tmp/env7"
for v in $(cat "$tmp/codevars"); do
	grep -qx "\\.B $v" "$tmp/env7" ||
		bad "$v: read by the code, but libprintk(7) ENVIRONMENT has no entry \".B $v\""
done
# The library's variables, in the pk_config_init() comment and man page.
awk '/^\/\*\*/ { c = "" } { c = c $0 "\n" } /^void pk_config_init\(/ { printf "%s", c; exit }' \
	"$proj/include/printk/printk.h" >"$tmp/cfgcomment"
awk '/^\.S[HS]/ { on = ($0 ~ /^\.SS pk_config_init\(\)/) } on' "$mandir/pk_init.3" >"$tmp/cfgman"
for v in $(cat "$tmp/libvars"); do
	grep -qw -- "$v" "$tmp/cfgcomment" ||
		bad "$v: read by the library, not named in the pk_config_init() comment of printk.h"
	grep -qw -- "$v" "$tmp/cfgman" ||
		bad "$v: read by the library, not named in pk_init(3), section pk_config_init()"
done

# ---- 3. sizes -------------------------------------------------------------------

# define_of FILE NAME: the value of "#define NAME VALUE" in FILE, for the
# shell's arithmetic (unsigned suffixes and casts dropped).
define_of() {
	sed -n "s/^#define[ \t]*$2[ \t][ \t]*\([^/]*\).*/\1/p" "$1" | head -n 1 |
		sed -e 's/(size_t)//g' -e 's/\([0-9]\)[uUlL]*/\1/g' -e 's/[ \t]*$//'
}
num() {
	v=$(define_of "$1" "$2")
	case $v in
	"" | *[!0-9\ \(\)+*\<-]*) bad "cannot read #define $2 from ${1#"$proj"/}: \"$v\""; echo 0 ;;
	*) echo $(($v)) ;;
	esac
}
early_log2=$(num "$proj/src/store/early.c" EARLY_DATA_LOG2)
desc_shift=$(num "$proj/src/store/ringbuf.h" PK_RING_DESC_SHIFT)
hdr=$(num "$proj/src/store/ringbuf.h" PK_RING_HDR_SIZE)
store_default=$(num "$proj/include/printk/printk.h" PK_BUFFER_SIZE_DEFAULT)
early_text=$((1 << early_log2))
early_records=$((1 << (early_log2 - desc_shift)))
# The store's data ring: the largest power of two whose ring, descriptors
# (8 bytes for each 1 << PK_RING_DESC_SHIFT data bytes) and header fit.
ring_default=0
d=4096
while [ $d -le $store_default ] &&
	[ $((d + 8 * (d >> desc_shift) + hdr)) -le "$store_default" ]; do
	ring_default=$d
	d=$((d * 2))
done
echo "docs_check: the code: early store $early_text bytes of text, $early_records records;" \
	"default store $store_default bytes, data ring $ring_default bytes"

# The sizes the docs give, one a line: "FILE<TAB>what<TAB>N<TAB>unit<TAB>
# sentence", from the sentences that name them:
#  - within the 80 characters after "early store", "N KiB" (MiB, bytes)
#    of anything but a store or a ring is the early store's text, and
#    "N records at most" or "some N records" its records;
#  - after "default" (PK_BUFFER_SIZE_DEFAULT included) or "Unset", within
#    the next 80 characters of the sentence, the first "N MiB (data) ring"
#    (or "the data ring is N MiB") is the default data ring, and the first
#    "N MiB store" or "N bytes" (N >= 65536) the default store.
# "1.25 MiB" stands for any size that rounds to it.
for f in "$tmp"/text/*; do
	awk -v file="${f##*/}" '
		# A word the renderer hyphenated at the end of a line is joined again.
		{
			l = $0
			if (join) {
				sub(/^[ \t]+/, "", l)
				text = text l
			} else {
				text = text " " l
			}
			join = sub(/\342\200\220$/, "", text)
		}
		END {
			gsub(/[ \t]+/, " ", text)
			n = split(text, s, /\. /)
			for (i = 1; i <= n; i++) {
				early(s[i])
				defaults(s[i])
			}
		}
		function unit(u) {
			return u == "KiB" ? 1024 : u == "MiB" ? 1048576 : u == "GiB" ? 1073741824 : 1
		}
		function out(what, m, t,   num, u) {
			num = m; sub(/ ?[A-Za-z]+$/, "", num)
			u = m; sub(/^[0-9.]+ ?/, "", u)
			printf "%s\t%s\t%s\t%s\t%s\n", file, what, num, unit(u), t
		}
		function early(t,   rest, win, m, after, before) {
			rest = t
			while (match(rest, /[Ee]arly store/)) {
				rest = substr(rest, RSTART + RLENGTH)
				win = substr(rest, 1, 80)
				while (match(win, /[0-9]+(\.[0-9]+)? ?(KiB|MiB|GiB|bytes|records)/)) {
					m = substr(win, RSTART, RLENGTH)
					before = substr(win, 1, RSTART - 1)
					win = substr(win, RSTART + RLENGTH)
					after = substr(win, 1, 40)
					if (m ~ /records$/) {
						if (after ~ /^ at most/ || before ~ /some $/)
							out("early_records", m, t)
					} else if (after !~ /^ (anonymous |first |default )?(store|(data )?ring)/) {
						out("early_text", m, t)
					}
				}
			}
		}
		function defaults(t,   rest, win, m, after, ring, store, p) {
			rest = t
			while (match(rest, /[Dd]efault|DEFAULT|[Uu]nset/)) {
				rest = substr(rest, RSTART + RLENGTH)
				win = substr(rest, 1, 80)
				ring = store = 0
				while (match(win, /[0-9]+(\.[0-9]+)? ?(KiB|MiB|GiB|bytes)/)) {
					m = substr(win, RSTART, RLENGTH)
					p = substr(win, 1, RSTART - 1)
					win = substr(win, RSTART + RLENGTH)
					after = substr(win, 1, 40)
					if (after ~ /^ (data )?ring/ || p ~ /data ring is $/) {
						if (!ring++)
							out("ring", m, t)
					} else if (after ~ /^ (anonymous |first |default )?store/ ||
						   m ~ /bytes$/ && m + 0 >= 65536) {
						if (!store++)
							out("store", m, t)
					}
				}
			}
		}' "$f"
done >"$tmp/sizes"

while IFS="	" read -r file what num unit sentence; do
	case $what in
	early_text) want=$early_text ;;
	early_records) want=$early_records unit=1 ;;
	ring) want=$ring_default ;;
	store) want=$store_default ;;
	*) continue ;;
	esac
	# "1.25 MiB" stands for what rounds to it; "1 MiB" is exact.
	ok=$(awk -v n="$num" -v u="$unit" -v w="$want" 'BEGIN {
		d = index(n, ".") ? length(n) - index(n, ".") : 0
		print (d ? sprintf("%.*f", d, w / u) + 0 == n + 0 : w == n * u) ? 1 : 0 }')
	if [ "$ok" != 1 ]; then
		case $what in
		early_text) label="the early store's text is $early_text bytes" ;;
		early_records) label="the early store holds $early_records records at most" ;;
		ring) label="the default store's data ring is $ring_default bytes" ;;
		store) label="the default store is $store_default bytes" ;;
		esac
		case $unit in 1024) u=" KiB" ;; 1048576) u=" MiB" ;; 1073741824) u=" GiB" ;; *) u="" ;; esac
		bad "$file: says $num$u, but $label (#defines): \"$(echo "$sentence" | cut -c1-160)...\""
	fi
done <"$tmp/sizes"
for what in early_text ring store; do
	grep -q "	$what	" "$tmp/sizes" ||
		bad "no doc gives the size of $what: has the wording of every sentence changed?"
done

# ---- 4. PK_DYNDBG examples --------------------------------------------------------

if [ ! -x "$helper" ]; then
	bad "no helper program $helper"
else
	# The examples as a reader sees them: rendered pages, Markdown as is.
	grep -ho "PK_DYNDBG='[^']*'" "$tmp"/text/* | sort -u |
		sed "s/^PK_DYNDBG='//; s/'\$//" >"$tmp/dyndbg"
	[ -s "$tmp/dyndbg" ] || bad "found no PK_DYNDBG='...' example in the docs"
	while IFS= read -r q; do
		out=$(env PK_DYNDBG="$q" PK_CONSOLE= "$helper" 2>&1) ||
			bad "PK_DYNDBG='$q': the program failed: $out"
		# A query for a file or function the helper lacks matches no
		# site and is warned about; only a refused query is wrong here.
		out=$(printf '%s\n' "$out" | grep -v 'matches no site' || true)
		[ -z "$out" ] || bad "PK_DYNDBG='$q' (as the docs show it) was refused: $out"
		out=$(env -u PK_DYNDBG PK_CONSOLE= "$helper" "$q" 2>&1) ||
			bad "pk_dyndbg_exec(\"$q\") refused it: $out"
	done <"$tmp/dyndbg"
fi

# ---- 6. the store format version ---------------------------------------------

# Each sentence that gives this libprintk's store format version ("a format
# version, N in this libprintk", "this libprintk's, N", "this libprintk
# reads version N", "written by this version (store format N") names
# PK_RING_VERSION (src/store/ringbuf.h).  Older versions named as history
# ("came with format 4") are not this check's business.
version=$(num "$proj/src/store/ringbuf.h" PK_RING_VERSION)
nversions=0
for f in "$tmp"/text/*; do
	# One line, a word the renderer hyphenated at a line's end joined again.
	sed -e ':a' -e 'N' -e '$!ba' -e 's/\xe2\x80\x90\n[[:space:]]*//g' -e 's/\n/ /g' "$f" |
		tr -s ' \t' '  ' |
		grep -oE "format version,? [0-9]+ in this libprintk|this libprintk'?s?,? [0-9]+[;,.]|this libprintk reads version [0-9]+|written by this version \(store format [0-9]+" |
		while IFS= read -r m; do
			n=$(printf '%s\n' "$m" | grep -oE '[0-9]+' | tail -n 1)
			echo "${f##*/}	$n	$m"
		done
done >"$tmp/versions"
while IFS='	' read -r file n m; do
	nversions=$((nversions + 1))
	[ "$n" = "$version" ] ||
		bad "$file: \"$m\": the store format version is $version (PK_RING_VERSION)"
done <"$tmp/versions"
[ -z "${PK_DOCS_CHECK_VERBOSE:-}" ] || cat "$tmp/versions"
[ "$nversions" -gt 0 ] ||
	bad "no doc gives this libprintk's store format version: has the wording changed?"

# ---- 7. the README is for the first five minutes -----------------------------

nreadme=$(wc -l <"$proj/README.md")
[ "$nreadme" -lt 250 ] ||
	bad "README.md has $nreadme lines: keep it under 250, the rest in docs/guide/"

# ---- 8. every CMake option in docs/building.md ------------------------------

# The cache options of the build (option(PK_...), set(PK_... CACHE ...)),
# each with its row in the options table of docs/building.md.
find "$proj" -name CMakeLists.txt -not -path "$proj/build*" | sort | xargs awk '
	/^[ \t]*(option|set)\(PK_[A-Z0-9_]+/ { stmt = ""; collecting = 1 }
	collecting {
		stmt = stmt " " $0
		if (index($0, ")")) {
			collecting = 0
			match(stmt, /PK_[A-Z0-9_]+/)
			if (stmt ~ /option\(/ || stmt ~ / CACHE /) print substr(stmt, RSTART, RLENGTH)
		}
	}' | sort -u >"$tmp/cmakeopts"
[ -s "$tmp/cmakeopts" ] || bad "found no PK_ option in the CMakeLists.txt files"
while read -r o; do
	grep -q "^| \`$o\` |" "$proj/docs/building.md" ||
		bad "docs/building.md: the CMake option $o has no row in its options table"
done <"$tmp/cmakeopts"

# ---- 5. links ---------------------------------------------------------------------

# Inline links and images whose target is not a URL or an anchor alone;
# "path#anchor" is checked for its path.
nlinks=0
for f in $(mddocs); do
	dir=${f%/*}
	for l in $(grep -o '!\{0,1\}\[[^]]*\]([^) ]*)' "$f" | sed 's/.*](\(.*\))$/\1/'); do
		case $l in
		*://* | mailto:* | '#'*) continue ;;
		esac
		nlinks=$((nlinks + 1))
		[ -e "$dir/${l%%#*}" ] || bad "${f#"$proj"/}: link to $l: no such file"
	done
done
[ "$nlinks" -gt 0 ] || bad "found no relative link in the Markdown docs"

if [ "$fail" -ne 0 ]; then
	echo "docs_check: FAILED ($npages pages)"
	exit 1
fi
echo "docs_check: ok: $npages pages clean; $(wc -l <"$tmp/codevars") variables and" \
	"$(wc -l <"$tmp/sizes") sizes, $nversions format versions and $(wc -l <"$tmp/cmakeopts")" \
	"CMake options agree with the code; $(wc -l <"$tmp/dyndbg") PK_DYNDBG" \
	"examples accepted; $nlinks links of $(mddocs | wc -l) Markdown files resolve"
exit 0
