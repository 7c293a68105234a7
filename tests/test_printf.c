// SPDX-License-Identifier: MIT
/*
 * printf fidelity: the formatter behind pk_printk() (pk__stbsp_vsnprintf)
 * against glibc's vsnprintf(), byte for byte and in the length returned,
 * over a corpus (every conversion, flag, width, precision and length, with
 * edge values) and over random formats (seeded: PK_TEST_SEED, else the
 * time; the seed is printed).  The buffer is the record's size unless a
 * case cuts it shorter; glibc's text is compared within it.
 *
 * Where the formatter differs from glibc on purpose (see src/format/vsnprintf.c)
 * the test says what it prints instead: %n, mixed or gapped positional
 * arguments, wide characters outside ASCII in the C locale.
 */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "format/format.h"
#include "store/store.h"
#include "printk/printk.h"
#include "printk/reader.h"
#include "testutil.h"

#define REC	(PK_RECORD_MAX + 2)	/* pk_vprintk()'s buffer */

static unsigned long compared, differed;
/* Deferred formatting: packed and formatted later, against formatting now. */
static unsigned long packed, unpackable, pack_differed;

static void show(const char *what, const char *s, int n)
{
	char esc[4 * 200 + 1];
	size_t k = 0;
	int i;

	for (i = 0; i < n && i < 200; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			esc[k++] = (char)c;
		else
			k += (size_t)sprintf(esc + k, "\\x%02x", c);
	}
	esc[k] = '\0';
	print_message("  %s (%d): \"%s\"%s\n", what, n, esc, n > 200 ? "..." : "");
}

/*
 * The same call packed (what pk_printk() stores for a line) and formatted
 * from the package (what a console or pkmsg prints) must give what the
 * formatter gave at the call (@want, @n): the same bytes in a buffer of
 * @size, and the same length, but that a string longer than a record is
 * copied only so far as a record can show it (both lengths then exceed
 * PK_RECORD_MAX).  A format the package cannot carry is counted.
 */
static void pack_check(int size, const char *f, va_list ap, const char *want, int n, int err)
{
	static unsigned char pkg[PK_RECORD_MAX];
	static char got[4096];
	int len, m, cut;
	va_list aq;

	va_copy(aq, ap);
	len = pk__vpack(pkg, sizeof(pkg), f, aq, 0, err);
	va_end(aq);
	if (len == -2) {
		unpackable++;
		return;
	}
	packed++;
	if (len == -1) {
		if (n == -1)
			return;
		m = -1;
	} else {
		memset(got, 0x5a, sizeof(got));
		m = pk__unpack(got, size, pkg, (size_t)len);
		cut = m < 0 ? 0 : (size > 0 ? (m < size - 1 ? m : size - 1) + 1 : 0);
		if (m >= 0 && (m == n || (m > PK_RECORD_MAX && n > PK_RECORD_MAX)) &&
		    !memcmp(got, want, (size_t)cut) && (size <= 0 || got[cut] == 0x5a || cut == size))
			return;
	}
	if (++pack_differed <= 40) {
		print_message("packed differs: format \"%s\", buffer %d, package %d bytes\n",
			      f, size, len);
		show("at the call", want, n < 0 ? 0 : (n < size ? n : size - 1));
		show("from the package", got, m < 0 ? 0 : (m < size ? m : size - 1));
		print_message("  returned %d, at the call %d\n", m, n);
	}
}

/*
 * Format with both into buffers of @size; count a difference.  glibc's
 * -1 (an invalid wide character) is reported as a difference too.
 */
static void vcheck(int size, const char *f, va_list ap)
{
	static char ours[4096], libc[4096];
	int n, m, err = errno, cut;
	va_list ap2;

	assert_true(size >= 0 && size <= (int)sizeof(ours));
	va_copy(ap2, ap);
	memset(ours, 0x5a, sizeof(ours));
	memset(libc, 0x5a, sizeof(libc));
	errno = err;
	n = pk__stbsp_vsnprintf(ours, size, f, ap);
	errno = err;
	m = vsnprintf(libc, (size_t)size, f, ap2);
	va_end(ap2);
	errno = err;
	compared++;
	pack_check(size, f, ap, ours, n, err);
	cut = m < 0 ? 0 : (size > 0 ? (m < size - 1 ? m : size - 1) + 1 : 0);
	if (m >= 0 && n == m && !memcmp(ours, libc, (size_t)cut) &&
	    (size <= 0 || ours[cut] == 0x5a || cut == size))
		return;
	if (++differed <= 40) {
		print_message("differs: format \"%s\", buffer %d\n", f, size);
		show("ours", ours, n < 0 ? 0 : (n < size ? n : size - 1));
		show("libc", libc, m < 0 ? 0 : (m < size ? m : size - 1));
		print_message("  returned %d, glibc %d\n", n, m);
	}
}

static void check_n(int size, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vcheck(size, f, ap);
	va_end(ap);
}

#define check(...) check_n(REC, __VA_ARGS__)

static void report(const char *what, unsigned long before_c, unsigned long before_d)
{
	print_message("%s: %lu compared, %lu differ\n", what, compared - before_c,
		      differed - before_d);
	print_message("%s: so far %lu packed and formatted later, %lu not packable, "
		      "%lu differ from formatting at the call\n", what, packed, unpackable,
		      pack_differed);
	assert_int_equal(pack_differed, 0);
}

/* A call through a va_list, as pk_vprintk() makes it. */
static int fmt(char *buf, int size, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = pk__stbsp_vsnprintf(buf, size, f, ap);
	va_end(ap);
	return n;
}

/* ---- the corpus ---- */

static const char *const int_flags[] = {
	"", "-", "+", " ", "#", "0", "'I", "+ ", "0-", "#0", "-#", "+0", " 0", "-+ #0'I",
};
static const char *const int_widths[] = { "", "1", "5", "30" };
static const char *const int_precs[] = { "", ".", ".0", ".4", ".25" };
static const char *const int_convs = "diuoxXbB";
static const long long int_values[] = {
	0, 1, -1, 7, 8, 42, -42, 127, 128, 255, 256, -128, -129, 32767, 32768, 65535, 65536,
	-32768, INT_MAX, INT_MIN, UINT_MAX, 1234567, -7654321, LLONG_MAX, LLONG_MIN,
	0x123456789abcdefLL, -0x123456789abcdefLL,
};

static void test_integers(void **state)
{
	static const char *const lens[] = { "", "hh", "h", "l", "ll", "j", "z", "Z", "t", "L", "q" };
	unsigned long c0 = compared, d0 = differed;
	size_t a, b, c, l, v;
	const char *cv;
	char f[64];

	(void)state;
	for (cv = int_convs; *cv; cv++)
	for (a = 0; a < PK__ARRAY_SIZE(int_flags); a++)
	for (b = 0; b < PK__ARRAY_SIZE(int_widths); b++)
	for (c = 0; c < PK__ARRAY_SIZE(int_precs); c++)
	for (l = 0; l < PK__ARRAY_SIZE(lens); l++) {
		snprintf(f, sizeof(f), "[%%%s%s%s%s%c]", int_flags[a], int_widths[b], int_precs[c],
			 lens[l], *cv);
		/* A third of the values in turn, for each format. */
		for (v = (a + b + c + l) % 3; v < PK__ARRAY_SIZE(int_values); v += 3) {
			if (l < 3)
				check(f, (int)int_values[v]);
			else
				check(f, int_values[v]);
		}
	}
	/* '*' widths and precisions, negative ones included. */
	for (cv = int_convs; *cv; cv++) {
		static const int stars[] = { -20, -5, -1, 0, 1, 3, 17 };

		for (a = 0; a < PK__ARRAY_SIZE(stars); a++)
		for (b = 0; b < PK__ARRAY_SIZE(stars); b++) {
			snprintf(f, sizeof(f), "[%%*.*%c|%%-*.*l%c|%%0*%c]", *cv, *cv, *cv);
			check(f, stars[a], stars[b], -77, stars[b], stars[a], 123456789012L,
			      stars[a], 99);
		}
	}
	report("integers", c0, d0);
	assert_int_equal(differed, d0);
}

static const double dbl_values[] = {
	0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 1.5, 2.5, 3.5, -2.5, 0.125, 0.05, 0.15, 0.25, 0.35,
	9.5, 99.5, 999.5, 9.9999995, 0.999999, 0.9999995, 1e-5, 1e-4, 123456.789, 1e6, 1e15,
	1e16, 1e17, 1e21, 1e22, 1e23, 3.141592653589793, 2.718281828459045, 1.0 / 3,
	123456789.0, 4503599627370496.5, 9007199254740993.0, 1e100, 1e300, 1e308, DBL_MAX,
	-DBL_MAX, DBL_MIN, 2.2250738585072009e-308, 4.9406564584124654e-324, 1e-300, 1e-320,
	DBL_EPSILON, 0x1.8p0, 0x1.08p0, 0x1.18p0, 0x1.fffffffffffffp0, 0x1.0000000000001p0,
	0x1.f8p-1022, 65536.0, 1099511627776.0, 5e-324, -5e-324,
};

static const char *const fp_flags[] = { "", "-", "+", " ", "#", "0", "'I", "+0", "-#", "# 0", "-+ #0'I" };
static const char *const fp_widths[] = { "", "8", "40" };
static const char *const fp_precs[] = { "", ".", ".0", ".1", ".3", ".17", ".60" };
static const char *const fp_convs = "eEfFgGaA";

static void test_doubles(void **state)
{
	double specials[] = { INFINITY, -INFINITY, NAN, -NAN };
	unsigned long c0 = compared, d0 = differed;
	size_t a, b, c, v;
	const char *cv;
	char f[64];

	(void)state;
	for (cv = fp_convs; *cv; cv++)
	for (a = 0; a < PK__ARRAY_SIZE(fp_flags); a++)
	for (b = 0; b < PK__ARRAY_SIZE(fp_widths); b++)
	for (c = 0; c < PK__ARRAY_SIZE(fp_precs); c++) {
		snprintf(f, sizeof(f), "[%%%s%s%s%c]", fp_flags[a], fp_widths[b], fp_precs[c], *cv);
		/* A quarter of the values in turn, for each format. */
		for (v = (a + b + c) % 4; v < PK__ARRAY_SIZE(dbl_values); v += 4) {
			check(f, dbl_values[v]);
			check(f, -dbl_values[v]);
		}
		for (v = 0; v < PK__ARRAY_SIZE(specials); v++)
			check(f, specials[v]);
	}
	/* Lengths that change nothing for a double. */
	check("%lf %hf %hhf %jf %zf %tf %le %lg %la", 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5);
	/* Every digit of the biggest and the smallest. */
	check("%.1100f", 4.9406564584124654e-324);
	check("%f", DBL_MAX);
	check("%.800e|%.800g|%#.800g", DBL_MIN, 0.1, 0.1);
	check("%.*f|%.*e|%*.*g", 300, 1e-300, 400, 1.0 / 3, 50, 20, 2.0 / 3);
	report("doubles", c0, d0);
	assert_int_equal(differed, d0);
}

static void test_long_doubles(void **state)
{
	static const long double values[] = {
		0.0L, 1.0L, 0.1L, 0.5L, 1.5L, 2.5L, 1.0L / 3, 3.14159265358979323846264338327950288L,
		1e-5L, 123456.789L, 1e18L, 1e19L, 1e20L, 18446744073709551615.0L, 0.3L, 1e100L,
		1e300L, 1e308L, 1e309L, 1e1000L, 1e4000L, 1e4931L, LDBL_MAX, 1e-300L, 1e-308L,
		1e-1000L, 1e-4000L, 1e-4931L, LDBL_MIN, LDBL_MIN / 3, LDBL_MIN / 1e10L,
		0x1p-16445L, 0x1.8p-16440L, LDBL_EPSILON, 0x1.fffffffffffffffep0L,
		0x1.0000000000000002p0L, 9.99999999999999999999e99L, 0x1.fp1023L, 0x1.fp1025L,
		0x1p-1074L, 0x1p-1075L, 0x1p-1100L, 0x1p-1200L,
	};
	static const char *const lens[] = { "L", "ll", "q" };
	unsigned long c0 = compared, d0 = differed;
	size_t a, b, c, v;
	const char *cv;
	char f[64];

	(void)state;
	for (cv = fp_convs; *cv; cv++)
	for (a = 0; a < PK__ARRAY_SIZE(fp_flags); a++)
	for (b = 0; b < PK__ARRAY_SIZE(fp_widths); b++)
	for (c = 0; c < PK__ARRAY_SIZE(fp_precs); c++) {
		snprintf(f, sizeof(f), "[%%%s%s%s%s%c]", fp_flags[a], fp_widths[b], fp_precs[c],
			 lens[(a + b + c) % 3], *cv);
		for (v = (a + b + c) % 4; v < PK__ARRAY_SIZE(values); v += 4) {
			check(f, values[v]);
			check(f, -values[v]);
		}
		check(f, (long double)INFINITY);
		check(f, -(long double)INFINITY);
		check(f, (long double)NAN);
		check(f, -(long double)NAN);
	}
	/* Digits beyond the record, cut; the big array's whole range. */
	check("%Lf", LDBL_MAX);
	check("%.5000Lf", 0x1p-16445L);
	check("%.5000Le|%.5000Lg", 0x1p-16445L, LDBL_MAX);
	check("%.20Lg %.4950Lf", 1e-4950L, 1e-4950L);
	check("%.9000Lf", -LDBL_MIN);
	report("long doubles", c0, d0);
	assert_int_equal(differed, d0);
}

static void test_strings_chars_pointers(void **state)
{
	static const char *const strs[] = { "", "a", "hello", "hello, world", "\x7f\xff\x80 bytes", NULL };
	static const char *const sfl[] = { "", "-", "0", "#", "+", " ", "'", "-0" };
	static const char *const sw[] = { "", "3", "10", "*" };
	static const char *const sp[] = { "", ".", ".0", ".2", ".5", ".6", ".7", ".*" };
	static const char *const slen[] = { "", "h", "hh" };
	static const void *const ptrs[] = {
		NULL, (void *)1, (void *)0x1234, (void *)0xdeadbeef, (void *)UINTPTR_MAX,
		(void *)0x7fffffffffffULL,
	};
	unsigned long c0 = compared, d0 = differed;
	size_t a, b, c, l, v;
	char f[64];

	(void)state;
	for (a = 0; a < PK__ARRAY_SIZE(sfl); a++)
	for (b = 0; b < PK__ARRAY_SIZE(sw); b++)
	for (c = 0; c < PK__ARRAY_SIZE(sp); c++)
	for (l = 0; l < PK__ARRAY_SIZE(slen); l++) {
		int nstar = (strchr(sw[b], '*') != NULL) + (strchr(sp[c], '*') != NULL);
		static const char *const cv[] = { "s", "c", "p" };
		size_t k;

		for (k = 0; k < 3; k++) {
			snprintf(f, sizeof(f), "[%%%s%s%s%s%s]", sfl[a], sw[b], sp[c], slen[l], cv[k]);
			for (v = 0; v < 6; v++) {
				int w = (int)v * 3 - 6, p = (int)v * 2 - 3;

				if (k == 0 && nstar == 0)
					check(f, strs[v]);
				else if (k == 0 && nstar == 1)
					check(f, sw[b][0] == '*' ? w : p, strs[v]);
				else if (k == 0)
					check(f, w, p, strs[v]);
				else if (k == 1 && nstar == 0)
					check(f, "aZ\x80\xff"[v % 4] & 0xff);
				else if (k == 1 && nstar == 1)
					check(f, sw[b][0] == '*' ? w : p, 'q');
				else if (k == 1)
					check(f, w, p, 0x141);
				else if (nstar == 0)
					check(f, ptrs[v]);
				else if (nstar == 1)
					check(f, sw[b][0] == '*' ? w : p, ptrs[v]);
				else
					check(f, w, p, ptrs[v]);
			}
		}
	}
	/* %c of 0 writes a NUL byte; precision stops at a NUL-less array's end. */
	check("a%cb%5cc%-3cd", 0, 0, 0);
	{
		/* (Not compared with glibc: ASan's vsnprintf interceptor reads past it.) */
		char arr[3] = { 'x', 'y', 'z' }, out[32];

		assert_int_equal(fmt(out, (int)sizeof(out), "[%.3s][%.2s][%.0s]", arr, arr, arr), 11);
		assert_string_equal(out, "[xyz][xy][]");
	}
	check("%%|%5%|%-5%|%.3%|% %|%+%|%#%|%0%");
	report("strings, characters, pointers", c0, d0);
	assert_int_equal(differed, d0);
}

/* %m: strerror(errno) of the errno at the call, "Unknown error N" beyond. */
static void test_errno(void **state)
{
	static const int errs[] = { 0, EPERM, ENOENT, EINTR, EAGAIN, ENOMEM, EACCES, EINVAL,
				    ENOSPC, EPIPE, ERANGE, EILSEQ, EOVERFLOW, ENOTRECOVERABLE,
				    EHWPOISON, 134, 135, 200, 4095, 12345, INT_MAX, -1, -5,
				    INT_MIN };
	static const char *const forms[] = { "%m", "[%m]", "%.3m|", "%.0m|", "%30m|", "%-30m|",
					     "%#m|", "%#.2m|", "%-#12m|",
					     "%05m|", "%-+ #0'm|", "%hhm|", "%lm|", "%Lm|",
					     "%m %d %m", "%*m|", "%.*m|" };
	unsigned long c0 = compared, d0 = differed;
	char out[64];
	size_t i, k;
	int e;

	(void)state;
	for (i = 0; i < PK__ARRAY_SIZE(errs); i++) {
		for (k = 0; k < PK__ARRAY_SIZE(forms); k++) {
			errno = errs[i];
			check(forms[k], 12, 7);
		}
	}
	for (e = 0; e < 150; e++) {
		errno = e;
		check("<%m>");
	}
	report("%m", c0, d0);
	assert_int_equal(differed, d0);
	/* The formatter leaves errno alone. */
	errno = ERANGE;
	fmt(out, (int)sizeof(out), "%m %s %f", "x", 1.0);
	assert_int_equal(errno, ERANGE);
	assert_string_equal(out, "Numerical result out of range x 1.000000");
}

/* Conversions glibc does not know: printed back as glibc prints them. */
static void test_unknown(void **state)
{
	static const char *const forms[] = {
		"%y", "%5.3y", "%-+ #0'5.3hhy|", "%'I#y|", "%#Iy|", "%I5y", "%.y", "%05y", "% y",
		"%+ y", "%0-y", "%hld", "%lhd", "%Lhd", "%hLd", "%jzd", "%Z d", "%llld", "%hhhd",
		"%qqd", "%!", "%@%y", "%k%K%N%P%r%R%T%U%v%V%w%W%Y", "%12.7w|", "%.0y",
		"%$", "%0$d", "%-0$d", "%_", "%\x80", "%\xff|",
	};
	unsigned long c0 = compared, d0 = differed;
	size_t i;

	(void)state;
	for (i = 0; i < PK__ARRAY_SIZE(forms); i++)
		check(forms[i], 7, 8, 9);
	check("%*y|%.*y|%*.*y|%-*y|", 7, -3, 5, 6, -4, 9);
	check("%*5d|", 3, 4);
	/*
	 * glibc's slow path, from the first conversion its fast path does not
	 * take ('h' on e f g a c s p m, or an unknown one) on: a negative '*'
	 * width keeps the '0' flag (%f pads with zeros on the right, %a not at
	 * all), and L or q no longer make %s wide.
	 */
	check("%0*f|%0*hf|%0*d|%0*a|%0*e|%0*s|", -12, 1.0, -12, 2.0, -5, 3, -8, 4.0, -14, 5.0,
	      -4, "s");
	check("%0*a|%0*y|%0*a|%0*g|%0*Lf|", -12, 1.0, -8, -12, 2.0, -9, 3.0, -12, 4.0L);
	check("%0*f|%0*hc|%0*.*Le|", -12, 1.0, -6, 'c', -20, 3, 5.0L);
	check("[%Ls|%hs|%Ls|%qc]", L"wide", "h", "narrow", 'q');
	check("[%Lc|%hp|%Ls|%0*hm|%0*f]", (wint_t)'w', (void *)0x10, "narrow", -9, -11, 1.5);
	check("%1$0*2$f|%1$0*2$a|%1$0*2$e|%1$0*2$g|%3$0*2$s|", 1.0, -12, "s");
	report("unknown conversions", c0, d0);
	assert_int_equal(differed, d0);
}

static void test_positional(void **state)
{
	unsigned long c0 = compared, d0 = differed;
	char out[128];

	(void)state;
	check("%1$s", "one");
	check("%2$s %1$s", "one", "two");
	check("%1$d %1$d %1$x", 255);
	check("%3$s|%1$*2$d|%1$-*2$d|", 42, 6, "x");
	check("%1$.*2$f|%3$*4$.*2$e", 3.14159, 3, 2.5, 12);
	check("%1$lld %2$hhd %3$c %4$p %5$Lf %6$g %7$s %8$zu %9$jd %10$td %11$lc %12$ls",
	      1LL << 40, 300, 'c', (void *)0x10, 1.5L, 2.5, "s", (size_t)8, (intmax_t)9,
	      (ptrdiff_t)-10, (wint_t)'w', L"wide");
	check("%5$s %4$s %3$s %2$s %1$s", "a", "b", "c", "d", "e");
	check("%1$d%% %1$m %1$#x", 31);
	check("text %1$s%% more %1$5.2s", "abc");
	check("%1$y %1$d", 3);
	check("%1$*1$d|%1$.*1$d", 4);
	check("%1$'I+d|%1$-+ #010.5x", 77);
	/* 64 arguments, all used, backwards. */
	{
		char f64[64 * 6 + 1];
		size_t k = 0;
		int i;

		for (i = 64; i >= 1; i--)
			k += (size_t)sprintf(f64 + k, "%%%d$d ", i);
		check(f64, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
		      21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39,
		      40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58,
		      59, 60, 61, 62, 63, 64);
		/* 65: refused. */
		k = (size_t)sprintf(f64, "%%65$d ");
		assert_int_equal(fmt(out, (int)sizeof(out), f64, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
				     12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
				     28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
				     44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,
				     60, 61, 62, 63, 64, 65), -1);
	}
	/*
	 * Refused (glibc guesses, reads an int for the gap, or aborts under
	 * _FORTIFY_SOURCE): mixed forms, a gap, more than 64, one argument
	 * as two types of different sizes.
	 */
	assert_int_equal(fmt(out, (int)sizeof(out), "%1$s %s", "a", "b"), -1);
	assert_string_equal(out, "");
	assert_int_equal(fmt(out, (int)sizeof(out), "%s %1$s", "a", "b"), -1);
	assert_int_equal(fmt(out, (int)sizeof(out), "%1$*d", 1, 2), -1);
	assert_int_equal(fmt(out, (int)sizeof(out), "%*1$d", 1, 2), -1);
	assert_int_equal(fmt(out, (int)sizeof(out), "%1$.*d", 1, 2), -1);
	assert_int_equal(fmt(out, (int)sizeof(out), "%2$s", 1, "b"), -1);
	assert_int_equal(fmt(out, (int)sizeof(out), "%65$d", 1), -1);
	assert_int_equal(fmt(out, (int)sizeof(out), "%2147483647$d", 1), -1);
	assert_int_equal(fmt(out, (int)sizeof(out), "%99999999999$d", 1), -1);
	assert_int_equal(fmt(out, (int)sizeof(out), "%1$d %1$s", 1), -1);
	assert_int_equal(fmt(out, (int)sizeof(out), "%1$d %1$f", 1), -1);
	assert_int_equal(fmt(out, (int)sizeof(out), "x%1$n", out), -1);
	assert_string_equal(out, "");
	/* Same-size integer types may share an argument. */
	assert_int_equal(fmt(out, (int)sizeof(out), "%1$d %1$u %1$c %1$lc", 65), 9);
	assert_string_equal(out, "65 65 A A");
	/* Text before the first conversion, and an incomplete one at the end. */
	assert_int_equal(fmt(out, (int)sizeof(out), "ab %1$d cd%", 5), 7);
	assert_string_equal(out, "ab 5 cd");
	report("positional", c0, d0);
	assert_int_equal(differed, d0);
}

/* Cut at every buffer size, a zero-sized one included. */
static void test_cut(void **state)
{
	unsigned long c0 = compared, d0 = differed;
	int size;

	(void)state;
	for (size = 0; size <= 80; size++) {
		check_n(size, "%s|%+08.3d|%#x|%-6c|%e|%La|%p", "string", -42, 255, 'c', 1e-10,
			1.0L, (void *)0xabc);
		check_n(size, "%2$s %1$030.20f %3$ls", -1.0 / 7, "pos", L"wide");
		check_n(size, "%.60Lf|%g", 1e-40L, 1e300);
	}
	check_n(REC, "%1100d|", 5);
	check_n(REC, "%-2000s|", "left");
	check_n(REC, "%.3000d|", -5);
	check_n(REC, "%0*.*f|", 1500, 400, 2.0);
	check_n(REC, "%#.1500o %.1500a", 8, 1.0);
	report("cut at the buffer's end", c0, d0);
	assert_int_equal(differed, d0);
}

/* Wide characters: UTF-8 whatever the locale; glibc agrees in C.UTF-8. */
static void test_wide(void **state)
{
	static const wchar_t *const wstrs[] = {
		L"", L"ascii", L"h\u00e9llo", L"\u20ac\u00a3\u00a5", L"\U0001f600 smile",
		L"\u07ff\u0800\uffff\U00010000\U0010ffff", NULL,
	};
	static const char *const forms[] = {
		"[%ls]", "[%S]", "[%lls]", "[%10ls]", "[%-10ls]", "[%.1ls]", "[%.2ls]", "[%.3ls]",
		"[%.4ls]", "[%.5ls]", "[%.6ls]", "[%.7ls]", "[%.0ls]", "[%5.3ls]", "[%-8.4ls]",
	};
	static const wint_t wcs[] = { 'a', 0x7f, 0x80, 0xe9, 0x7ff, 0x800, 0x20ac, 0xd7ff,
				      0xe000, 0xfffd, 0xffff, 0x10000, 0x1f600, 0x10ffff };
	unsigned long c0 = compared, d0 = differed;
	char out[64];
	size_t i, k;

	(void)state;
	/* The C locale: ASCII as glibc; beyond ASCII, glibc fails and we write UTF-8. */
	check("[%ls|%lc|%C|%5lc|%-5lc|%.0lc|%S]", L"abc", (wint_t)'x', (wint_t)'y', (wint_t)'z',
	      (wint_t)'w', (wint_t)'v', L"S");
	/* j, z and t make %c and %s wide (glibc's is_long, on LP64); L and h do not. */
	check("[%jc|%zc|%tc|%js|%zs|%ts|%hs|%hhc]", (wint_t)'j', (wint_t)'z', (wint_t)'t',
	      L"js", L"zs", L"ts", "hs", 'h');
	/*
	 * L and q too, in glibc's fast path; after a conversion it does not
	 * know, and with positional arguments, they do not.
	 */
	check("[%Lc|%Ls|%qc|%qs]", (wint_t)'L', L"Ls", (wint_t)'q', L"qs");
	check("[%Lc|%y|%Ls|%qc|%qs]", (wint_t)'L', "Ls", 'q', "qs");
	check("[%1$Ls|%2$qc|%3$Lc]", "Ls", 'q', 'L');
	assert_int_equal(fmt(out, (int)sizeof(out), "%ls|%lc|%lc|%lc", L"h\u00e9", (wint_t)0x20ac,
			     (wint_t)0x1f600, (wint_t)0), 14);
	assert_memory_equal(out, "h\xc3\xa9|\xe2\x82\xac|\xf0\x9f\x98\x80|\0", 15);
	/* Not Unicode scalar values: U+FFFD (glibc fails, or writes 5 and 6 bytes). */
	assert_int_equal(fmt(out, (int)sizeof(out), "%lc|%lc|%lc|%ls", (wint_t)0xd800,
			     (wint_t)0x110000, (wint_t)0xffffffff, L"a\xdfff"), 16);
	assert_string_equal(out, "\xef\xbf\xbd|\xef\xbf\xbd|\xef\xbf\xbd|a\xef\xbf\xbd");
	assert_int_equal(fmt(out, (int)sizeof(out), "[%.3ls]", L"\x7fffffff"), 5);
	assert_string_equal(out, "[\xef\xbf\xbd]");

	if (!setlocale(LC_ALL, "C.UTF-8")) {
		report("wide (C locale only)", c0, d0);
		assert_int_equal(differed, d0);
		return;
	}
	for (i = 0; i < PK__ARRAY_SIZE(forms); i++)
		for (k = 0; k < PK__ARRAY_SIZE(wstrs); k++)
			check(forms[i], wstrs[k]);
	for (i = 0; i < PK__ARRAY_SIZE(wcs); i++) {
		check("[%lc|%C|%4lc|%-4lc|%llc|%.1lc]", wcs[i], wcs[i], wcs[i], wcs[i], wcs[i],
		      wcs[i]);
	}
	check("%lc", (wint_t)0);
	for (k = 0; k < 9; k++)
		check_n((int)k, "%ls", L"\u00e9\u20ac\U0001f600");
	setlocale(LC_ALL, "C");
	report("wide (C.UTF-8)", c0, d0);
	assert_int_equal(differed, d0);
}

/*
 * Ours on @ws (an array that ends at a guard page) against glibc on the
 * same characters NUL-terminated (@ref): glibc reads up to the precision
 * in wide characters (wcsnlen()), past such an array, though the text
 * does not depend on them.  Return: the length ours returned.
 */
static int check_guarded(const char *f, int prec, const wchar_t *ws, const wchar_t *ref)
{
	static char ours[256], libc[256];
	int n, m;

	memset(ours, 0x5a, sizeof(ours));
	memset(libc, 0x5a, sizeof(libc));
	n = fmt(ours, (int)sizeof(ours), f, prec, ws);
	m = snprintf(libc, sizeof(libc), f, prec, ref);
	compared++;
	if (m < 0 || n != m || memcmp(ours, libc, (size_t)m + 1)) {
		if (++differed <= 40) {
			print_message("differs: format \"%s\", precision %d\n", f, prec);
			show("ours", ours, n < 0 ? 0 : n);
			show("libc", libc, m < 0 ? 0 : m);
			print_message("  returned %d, glibc %d\n", n, m);
		}
	}
	return n;
}

/*
 * %.Nls reads no character past those it prints: each array below ends
 * where a PROT_NONE page begins, unterminated, and every precision up to
 * its whole length in UTF-8 prints what glibc prints.  %.0ls reads
 * nothing: its pointer is to the PROT_NONE page itself.
 */
static void test_wide_guard(void **state)
{
	static const wchar_t *const wstrs[] = {
		L"abc", L"\u00e9\u00e8", L"\u20ac\u00a3\u20ac", L"\U0001f600\U0001f601",
		L"a\u00e9\u20ac\U0001f600b", L"\U0010ffff\u0800\u07ff\x7f",
	};
	static const char *const forms[] = { "[%.*ls]", "[%12.*ls]", "[%-12.*ls]", "[%.*S]" };
	long page = sysconf(_SC_PAGESIZE);
	unsigned long c0 = compared, d0 = differed, runs = 0;
	bool utf8 = setlocale(LC_ALL, "C.UTF-8") != NULL;
	char *map, out[64];
	size_t i, len, bytes;
	int f, n;

	(void)state;
	map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	assert_true(map != MAP_FAILED);
	assert_int_equal(mprotect(map + page, (size_t)page, PROT_NONE), 0);
	for (i = 0; i < PK__ARRAY_SIZE(wstrs); i++) {
		wchar_t *ws;

		len = wcslen(wstrs[i]);
		ws = (wchar_t *)(void *)(map + page) - len;	/* no terminator: the guard */
		memcpy(ws, wstrs[i], len * sizeof(wchar_t));
		bytes = (size_t)fmt(out, (int)sizeof(out), "%ls", wstrs[i]);
		for (n = 0; n <= (int)bytes; n++) {
			for (f = 0; f < (int)PK__ARRAY_SIZE(forms); f++) {
				/* In the C locale glibc fails beyond ASCII: ours alone then. */
				if (utf8 || i == 0)
					check_guarded(forms[f], n, ws, wstrs[i]);
				else
					assert_true(fmt(out, (int)sizeof(out), forms[f], n, ws) >= 0);
				runs++;
			}
		}
		/* The whole array: the precision used up exactly. */
		assert_int_equal(fmt(out, (int)sizeof(out), "%.*ls", (int)bytes, ws), (int)bytes);
	}
	/* %.0ls and a pointer to a page that cannot be read: nothing is read. */
	for (f = 0; f < (int)PK__ARRAY_SIZE(forms); f++) {
		check_guarded(forms[f], 0, (const wchar_t *)(void *)(map + page), L"unread");
		runs++;
	}
	assert_int_equal(fmt(out, (int)sizeof(out), "[%.0ls|%4.0S]", map + page, map + page), 7);
	assert_string_equal(out, "[|    ]");
	runs++;
	setlocale(LC_ALL, "C");
	munmap(map, (size_t)page * 2);
	print_message("wide at a guard page: %lu formats, %s\n", runs,
		      utf8 ? "compared with glibc in C.UTF-8" : "C.UTF-8 missing: ASCII compared");
	report("wide at a guard page", c0, d0);
	assert_int_equal(differed, d0);
}

/* ---- random formats ---- */

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned pick(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static const char *pick_str(const char *const *v, size_t n)
{
	return v[pick((unsigned)n)];
}

enum rclass { R_INT, R_LL, R_DBL, R_LDBL, R_STR, R_PTR, R_CHR, R_WSTR, R_NONE, R_COUNT };

static double rnd_double(void)
{
	uint64_t bits;
	double d;

	switch (pick(4)) {
	case 0:
		bits = rnd();			/* anything: NaNs, subnormals, huge */
		memcpy(&d, &bits, sizeof(d));
		return d;
	case 1:
		return dbl_values[pick(PK__ARRAY_SIZE(dbl_values))];
	case 2:
		return (double)(int64_t)rnd() / (double)(1 << pick(30));
	default:
		return ldexp((double)(rnd() >> 11), (int)pick(200) - 100);
	}
}

static long double rnd_ldouble(void)
{
	long double m = (long double)rnd() + 0.5L;	/* 64 random bits */

	switch (pick(4)) {
	case 0:
		return ldexpl(m, (int)pick(32900) - 16500);	/* the whole range */
	case 1:
		return (long double)rnd_double();
	case 2:
		return ldexpl(m, (int)pick(200) - 120);
	default:
		return -ldexpl((long double)(rnd() >> pick(64)), (int)pick(100) - 50);
	}
}

static void random_one(char *f, size_t fsize, int *size)
{
	static const char *const texts[] = { "", "", "x", "<", "text ", "a%%b", "\t" };
	static const char *const ilen[] = { "", "", "hh", "h" };
	static const char *const llen[] = { "l", "ll", "j", "z", "Z", "t", "L", "q" };
	static const char *const dlen[] = { "", "", "l", "h" };
	static const char *const ldlen[] = { "L", "ll", "q" };
	static const char *const icv[] = { "d", "i", "u", "o", "x", "X", "b", "B" };
	static const char *const fcv[] = { "e", "E", "f", "F", "g", "G", "a", "A" };
	static const char *const strs[] = { "", "s", "short", "a longer string here", NULL };
	static const wchar_t *const wstrs[] = { L"", L"w", L"wide string", NULL };
	enum rclass cls = (enum rclass)pick(R_COUNT);
	char flags[8], width[16], prec[16];
	int nf = (int)pick(4), i, wstar = 0, pstar = 0, w = 0, p = 0;
	const char *len = "", *cv = "d";
	size_t k;

	for (i = 0; i < nf; i++)
		flags[i] = "-+ #0'I"[pick(7)];
	flags[nf] = '\0';
	switch (pick(6)) {
	case 0: case 1: width[0] = '\0'; break;
	case 2: snprintf(width, sizeof(width), "%u", 1 + pick(9)); break;
	case 3: snprintf(width, sizeof(width), "%u", 1 + pick(60)); break;
	case 4: snprintf(width, sizeof(width), "%u", 1 + pick(1500)); break;
	default: strcpy(width, "*"); wstar = 1; w = (int)pick(81) - 40; break;
	}
	switch (pick(7)) {
	case 0: case 1: prec[0] = '\0'; break;
	case 2: strcpy(prec, "."); break;
	case 3: snprintf(prec, sizeof(prec), ".%u", pick(10)); break;
	case 4: snprintf(prec, sizeof(prec), ".%u", pick(70)); break;
	case 5: snprintf(prec, sizeof(prec), ".%u", pick(1200)); break;
	default: strcpy(prec, ".*"); pstar = 1; p = (int)pick(81) - 20; break;
	}
	switch (cls) {
	case R_INT:	len = pick_str(ilen, 4); cv = pick_str(icv, 8); break;
	case R_LL:	len = pick_str(llen, 8); cv = pick_str(icv, 8); break;
	case R_DBL:	len = pick_str(dlen, 4); cv = pick_str(fcv, 8); break;
	case R_LDBL:	len = pick_str(ldlen, 3); cv = pick_str(fcv, 8); break;
	case R_STR:	cv = "s"; break;
	case R_PTR:	cv = "p"; break;
	case R_CHR:	cv = "c"; break;
	case R_WSTR:	cv = pick(2) ? "ls" : "S"; break;
	default:	cv = pick_str((const char *const[]){ "%", "m", "y" }, 3); break;
	}
	if (cls >= R_STR && cls <= R_CHR)
		len = pick_str(ilen, 4);
	snprintf(f, fsize, "%s%%%s%s%s%s%s%s", pick_str(texts, PK__ARRAY_SIZE(texts)), flags, width,
		 prec, len, cv, pick_str(texts, PK__ARRAY_SIZE(texts)));
	*size = pick(8) ? REC : (int)pick(40);
	errno = (int)pick(140);

#define RCALL(...)								\
	do {									\
		if (wstar && pstar)						\
			check_n(*size, f, w, p, __VA_ARGS__);			\
		else if (wstar)							\
			check_n(*size, f, w, __VA_ARGS__);			\
		else if (pstar)							\
			check_n(*size, f, p, __VA_ARGS__);			\
		else								\
			check_n(*size, f, __VA_ARGS__);				\
	} while (0)

	switch (cls) {
	case R_INT:	RCALL((int)(rnd() >> pick(64))); break;
	case R_LL:	RCALL((long long)(rnd() >> pick(64))); break;
	case R_DBL:	RCALL(rnd_double()); break;
	case R_LDBL:	RCALL(rnd_ldouble()); break;
	case R_STR:	RCALL(strs[pick(5)]); break;
	case R_PTR:	RCALL(pick(5) ? (void *)(uintptr_t)(rnd() >> pick(64)) : NULL); break;
	case R_CHR:	RCALL((int)pick(256)); break;
	case R_WSTR:	k = pick(4); RCALL(wstrs[k]); break;
	default:	RCALL(0); break;
	}
#undef RCALL
}

static void test_random(void **state)
{
	unsigned long c0 = compared, d0 = differed;
	const char *env = getenv("PK_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	unsigned i, n = tu_scaled(5000);
	char f[128];
	int size;

	(void)state;
	print_message("random formats: seed %llu (PK_TEST_SEED=%llu repeats it)\n",
		      (unsigned long long)seed, (unsigned long long)seed);
	rng = seed * 0x9e3779b97f4a7c15ull + 1;
	for (i = 0; i < n; i++)
		random_one(f, sizeof(f), &size);
	report("random", c0, d0);
	assert_int_equal(differed, d0);
}

/*
 * pk_printk() end to end: the record holds glibc's text cut at
 * PK_RECORD_MAX, and %m the errno of the call although the call is the
 * one that initialises the library.  Runs first, before anything inits.
 */
static void test_printk_record(void **state)
{
	char want[PK_RECORD_MAX * 2], got[PK_RECORD_MAX + 1];
	struct pk_reader *r;
	struct pk_record rec;
	int i, n;

	(void)state;
	setenv("PK_CONSOLE", "", 1);		/* lazy init: no console */
	errno = EACCES;
	n = pk_printk(PK_INFO, "%m|%2$s %1$'d|%3$.3La|%4$p|%5$ls\n", 1234567, "two", 1.0L,
		      (void *)0, L"w");
	assert_int_equal(errno, EACCES);
	assert_true(n > 0);
	errno = ENOENT;
	pk_printk(PK_INFO, "%0*d|%s", 2000, 7, "cut");
	errno = EPIPE;
	n = pk_printk(PK_INFO, "x%m%n", &i);
	assert_int_equal(n, -EINVAL);
	assert_int_equal(errno, EPIPE);
	pk_flush(1000);

	r = pk_reader_open();
	assert_non_null(r);
	for (i = 0; i < 2; i++) {
		assert_int_equal(pk_reader_next(r, &rec), 1);
		memcpy(got, rec.text, rec.len);
		got[rec.len] = '\0';
		if (i == 0) {
			snprintf(want, sizeof(want), "%s|%s %'d|%.3La|%p|%ls", strerror(EACCES), "two",
				 1234567, 1.0L, (void *)0, L"w");
		} else {
			snprintf(want, sizeof(want), "%0*d|%s", 2000, 7, "cut");
			want[PK_RECORD_MAX] = '\0';
			assert_true(rec.flags & PK_REC_TRUNC);
		}
		assert_string_equal(got, want);
	}
	assert_int_equal(pk_reader_next(r, &rec), 0);
	pk_reader_close(r);
	pk_shutdown();
}

/*
 * Lines stored as packages and printed by a reader: the text is what the
 * formatter gives at the call, with the caller's errno for %m, strings
 * copied at the call (changed after it), and nothing formatted at the call
 * (stats.eager unchanged).  Formats a package cannot carry are formatted
 * at the call and counted.
 */
static void test_printk_deferred(void **state)
{
	char want[PK_RECORD_MAX * 2], got[PK_RECORD_MAX + 1], str[16] = "before";
	const char *volatile none = NULL;
	struct pk_stats st0, st1;
	struct pk_reader *r;
	struct pk_record rec;
	uint64_t from;
	int i;

	(void)state;
	setenv("PK_CONSOLE", "", 1);		/* no console */
	assert_int_equal(pk_init(NULL), 0);
	assert_int_equal(pk_stats_get(&st0), 0);
	from = st0.next_seq;
	errno = EACCES;
	assert_true(pk_printk(PK_INFO, "%m|%s|%'d|%.3La|%p|%lc|%-6.2s|%*.*e|%%|%hhx\n", str,
			      1234567, 1.0L, (void *)str, (wint_t)0x57, "abc", 12, 3, -0.0,
			      (unsigned char)0xab) > 0);
	strcpy(str, "after");
	assert_true(pk_printk(PK_INFO, "%s and %.3s and %s\n", none, "abcdef", "") > 0);
	assert_int_equal(pk_stats_get(&st1), 0);
	assert_int_equal(st1.eager, st0.eager);		/* both deferred */
	/* Not packable: formatted at the call, and counted. */
	assert_true(pk_printk(PK_INFO, "%2$s %1$s\n", "b", "a") > 0);
	assert_true(pk_printk(PK_INFO, "%ls\n", L"wide") > 0);
	assert_true(pk_printk(PK_INFO, "no newline: %s", "open") > 0);	/* may end its line */
	/* An open line that ends in a character of its format is packed. */
	assert_true(pk_printk(PK_INFO, "no newline: %s.", "open") > 0);
	assert_int_equal(pk_stats_get(&st1), 0);
	assert_int_equal(st1.eager, st0.eager + 3);
	pk_flush(1000);

	r = pk_reader_open();
	assert_non_null(r);
	pk_reader_seek(r, from);
	for (i = 0; i < 6; i++) {
		assert_int_equal(pk_reader_next(r, &rec), 1);
		memcpy(got, rec.text, rec.len);
		got[rec.len] = '\0';
		switch (i) {
		case 0:
			errno = EACCES;
			snprintf(want, sizeof(want), "%m|%s|%'d|%.3La|%p|%lc|%-6.2s|%*.*e|%%|%hhx",
				 "before", 1234567, 1.0L, (void *)str, (wint_t)0x57, "abc", 12, 3,
				 -0.0, (unsigned char)0xab);
			break;
		case 1:
			snprintf(want, sizeof(want), "(null) and abc and ");
			break;
		case 2:
			snprintf(want, sizeof(want), "a b");
			break;
		case 3:
			snprintf(want, sizeof(want), "wide");
			break;
		case 4:
			snprintf(want, sizeof(want), "no newline: open");
			break;
		default:
			snprintf(want, sizeof(want), "no newline: open.");
			break;
		}
		assert_string_equal(got, want);
		/* The open lines were finalised by the next record, the flush: complete. */
		assert_int_equal(rec.flags & PK_REC_TRUNC, 0);
		assert_int_equal(rec.flags & PK_REC_NOEOL, i >= 4 ? PK_REC_NOEOL : 0);
	}
	pk_reader_close(r);
	pk_shutdown();
}

static int summary(void **state)
{
	(void)state;
	print_message("in all: %lu comparisons with glibc, %lu differ\n", compared, differed);
	print_message("in all: %lu packed and formatted later, %lu not packable, %lu differ\n",
		      packed, unpackable, pack_differed);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_printk_record),
		cmocka_unit_test(test_printk_deferred),
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_doubles),
		cmocka_unit_test(test_long_doubles),
		cmocka_unit_test(test_strings_chars_pointers),
		cmocka_unit_test(test_errno),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_positional),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_wide),
		cmocka_unit_test(test_wide_guard),
		cmocka_unit_test(test_random),
	};

	return TU_RUN_GROUP(tests, NULL, summary, argc, argv);
}
