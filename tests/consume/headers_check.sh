#!/bin/sh
# headers_check.sh SRC: every public header compiles, alone and together,
# as C11 and C17 (gcc, clang) and as C++11, 14, 17 and 20 (g++, clang++),
# warning-free with -Wall -Wextra -pedantic, and the pk_ printing macros
# expand cleanly in each.
set -eu
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
checked=0
try() { # COMPILER LANG STD FILE
	command -v "$1" >/dev/null || return 0
	"$1" -x "$2" -std="$3" -Wall -Wextra -pedantic -Werror -I"$src/include" -c "$4" \
		-o "$tmp/out.o" || { echo "$1 -std=$3 failed on $4" >&2; exit 1; }
	checked=$((checked + 1))
}
headers=$(cd "$src/include/printk" && ls ./*.h | sed 's|^\./||; s|\.h$||')
for h in $headers all; do
	f=$tmp/$h.c
	if [ $h = all ]; then
		: >"$f"
		for g in $headers; do printf '#include <printk/%s.h>\n' "$g" >>"$f"; done
	else
		printf '#include <printk/%s.h>\n' $h >"$f"
	fi
	# pk_panic() must be known not to return, in either language.
	printf '#include <printk/printk.h>\nint f(int x);\nint f(int x) { if (x) return x; pk_panic("%%d", x); }\n' >>"$f"
	# The printing macros, with and without arguments after the format.
	printf 'int g(void);\nint g(void) { pk_info("plain\\n"); pk_err("%%d %%s\\n", 1, "x"); pk_cont("c\\n");\n\treturn pk_printk(PK_WARNING, "w\\n"); }\n' >>"$f"
	for std in c11 c17; do
		try gcc c $std "$f"
		try clang-14 c $std "$f"
	done
	for std in c++11 c++14 c++17 c++20; do
		try g++ c++ $std "$f"
		try clang++-14 c++ $std "$f"
	done
done
command -v g++ >/dev/null || { echo "g++ is not installed" >&2; exit 1; }
echo "headers: $checked compilations, all clean"
