#!/bin/sh
# header_doc_check.sh INCLUDE: every function the public headers declare
# has a header comment (the nearest /** ... */ before it, naming it) with a
# Context: line (where and how it may be called) and a Return: line.
set -eu
inc=$1
awk '
FNR == 1 { comment = ""; incomment = 0 }
/^\/\*\*/ { incomment = 1; comment = "" }
incomment { comment = comment "\n" $0; if ($0 ~ /\*\//) incomment = 0; next }
/^[a-zA-Z_].*[ *]pk_[a-z0-9][a-z0-9_]*\(/ && !/^(static|#|typedef)/ && !/static/ {
	name = $0
	sub(/\(.*/, "", name)
	sub(/.*[ *]/, "", name)
	n++
	if (index(comment, name "()") == 0 && index(comment, name "(") == 0) {
		printf "%s: %s has no header comment of its own\n", FILENAME, name
		bad++
	} else if (comment !~ /\n \* Context: / || comment !~ /\n \* Return: /) {
		printf "%s: %s: its comment lacks Context: or Return:\n", FILENAME, name
		bad++
	}
}
END {
	if (bad) exit 1
	if (n < 40) { printf "only %d declarations found: the check is broken\n", n; exit 1 }
	printf "header comments: %d functions, each with Context: and Return:\n", n
}' "$inc"/printk/*.h
