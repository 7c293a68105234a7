// SPDX-License-Identifier: MIT
/*
 * Format safety: the formatter (pk__stbsp_vsnprintf, src/format/vsnprintf.c)
 * refuses %n in every spelling glibc's grammar or stb_sprintf's accepts,
 * without writing through the pointer, and counts padding past the
 * buffer's end instead of writing it, so a huge "%*d" costs what the
 * buffer costs.  pk_printk() refuses what the formatter refuses.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/format.h"
#include "store/store.h"
#include "printk/printk.h"
#include "printk/reader.h"
#include "testutil.h"

/* A call through a va_list, as pk_vprintk() makes it (no format checking). */
static int fmt(char *buf, int size, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = pk__stbsp_vsnprintf(buf, size, f, ap);
	va_end(ap);
	return n;
}

/*
 * Everything that can stand between '%' and the conversion character, in
 * glibc's grammar and in that of stb_sprintf, which the formatter was
 * before.  Every combination is a %n to one of the two, and is refused:
 * the formatter reads glibc's (where "1$" is a position and L and q are
 * lengths) and also refuses what stb_sprintf would have read as %n (its
 * flags $ and _, which glibc reads as a conversion it does not know).
 */
static const char *const flags[] = {
	"", "-", "+", " ", "#", "0", "'", "$", "$$", "$$$", "_", "-_", "'_", "$_",
	"-+ #'$_0", "+ #'$_", "_$'# +-0",
};
static const char *const widths[] = { "", "1", "7", "*", "2147483648", "99999999999999999999" };
static const char *const precs[] = { "", ".", ".0", ".5", ".*", ".2147483648" };
static const char *const lengths[] = {
	"", "hh", "h", "l", "ll", "j", "z", "t", "I", "I32", "I64", "L", "q",
};
/* C's positional forms (to stb_sprintf, "1$" was a width and '$' the conversion). */
static const char *const positions[] = { "", "1$", "2$", "1$*2$" };

#define SENTINEL 0xa5

static void test_percent_n_never_writes(void **state)
{
	unsigned char guard[64];
	char f[96], out[256];
	size_t a, b, c, d, e, i, combos = 0, refused = 0;
	int n, stars, *p = (int *)(void *)(guard + 16);

	(void)state;
	memset(guard, SENTINEL, sizeof(guard));
	for (a = 0; a < PK__ARRAY_SIZE(positions); a++)
	for (b = 0; b < PK__ARRAY_SIZE(flags); b++)
	for (c = 0; c < PK__ARRAY_SIZE(widths); c++)
	for (d = 0; d < PK__ARRAY_SIZE(precs); d++)
	for (e = 0; e < PK__ARRAY_SIZE(lengths); e++) {
		bool want_refused = true;

		snprintf(f, sizeof(f), "A%%%s%s%s%s%snZ", positions[a], flags[b], widths[c],
			 precs[d], lengths[e]);
		stars = (strchr(widths[c], '*') != NULL) + (strchr(precs[d], '*') != NULL);
		memset(out, 'x', sizeof(out));
		/* Each '*' takes an int (3); then come pointers to the guarded word. */
		if (stars == 2)
			n = fmt(out, (int)sizeof(out), f, 3, 3, p, p, p);
		else if (stars == 1)
			n = fmt(out, (int)sizeof(out), f, 3, p, p, p);
		else
			n = fmt(out, (int)sizeof(out), f, p, p, p);
		for (i = 0; i < sizeof(guard); i++)
			if (guard[i] != SENTINEL)
				fail_msg("\"%s\" wrote through the pointer", f);
		combos++;
		if (n < 0) {
			refused++;
			if (!want_refused)
				fail_msg("\"%s\" refused, but it holds no %%n", f);
			if (n != -1 || out[0] != '\0')
				fail_msg("\"%s\": refused with %d, buffer \"%.8s\"", f, n, out);
			continue;
		}
		if (want_refused)
			fail_msg("\"%s\" was not refused (returned %d: \"%s\")", f, n, out);
		/* Not a conversion: the 'n' is plain text, printed, and so is the rest. */
		if (n < 3 || (size_t)n >= sizeof(out) || strcmp(out + n - 2, "nZ") || out[0] != 'A')
			fail_msg("\"%s\" printed \"%s\" (%d)", f, out, n);
	}
	print_message("%zu spellings tried, %zu refused, none wrote\n", combos, refused);
	assert_int_equal(combos, PK__ARRAY_SIZE(positions) * PK__ARRAY_SIZE(flags) *
				 PK__ARRAY_SIZE(widths) * PK__ARRAY_SIZE(precs) *
				 PK__ARRAY_SIZE(lengths));
	assert_int_equal(refused, combos);
}

/* %n after other conversions and text, and in the other entry points. */
static void test_percent_n_anywhere(void **state)
{
	char out[64], small[4];
	int x = 7;

	(void)state;
	memset(out, 'x', sizeof(out));
	assert_int_equal(fmt(out, (int)sizeof(out), "abc %d %s %%%n", 1, "two", &x), -1);
	assert_string_equal(out, "");
	assert_int_equal(fmt(out, (int)sizeof(out), "%n", &x), -1);
	assert_int_equal(fmt(small, (int)sizeof(small), "a long text first, then %n", &x), -1);
	assert_string_equal(small, "");
	/* Counting mode (no buffer) refuses too. */
	assert_int_equal(fmt(NULL, 0, "%5n", &x), -1);
	assert_int_equal(pk__stbsp_snprintf(out, (int)sizeof(out), "%s%n", "a", &x), -1);
	assert_int_equal(x, 7);
	/* "%%n" is text. */
	assert_int_equal(fmt(out, (int)sizeof(out), "%%n"), 2);
	assert_string_equal(out, "%n");
}

/* pk_printk refuses what the formatter refuses, and counts it. */
static void test_printk_refuses(void **state)
{
	static const char *const refused[] = {
		"%n", "%_n", "%-_n", "%I32n", "%I64n", "%In", "%'n", "%$n", "%$$_n", "%hhn",
		"%lln", "%zn", "%jn", "%tn", "%*.*n", "a%%%n", "%$1n", "%-+ #'$_0*.*I64n",
	};
	struct pk_config cfg;
	struct pk_stats st;
	uint64_t before;
	size_t i;
	int x = 5;

	(void)state;
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.buffer_size = 64 << 10;
	assert_int_equal(pk_init(&cfg), 0);
	assert_int_equal(pk_stats_get(&st), 0);
	before = st.refused;
	for (i = 0; i < PK__ARRAY_SIZE(refused); i++)
		if (pk_printk(PK_INFO, refused[i], 1, 1, &x) != -EINVAL)
			fail_msg("pk_printk(\"%s\") was not refused", refused[i]);
	assert_int_equal(x, 5);
	assert_int_equal(pk_stats_get(&st), 0);
	assert_int_equal(st.refused - before, PK__ARRAY_SIZE(refused));
	pk_shutdown();
}

/* Clamped widths and precisions write what C would, into a buffer this size. */
static void test_clamp_same_text(void **state)
{
	static const int ws[] = { 0, 1, 7, 100, 1023, 1024, 1025, 1026, 1027, 4096, 100000 };
	char ours[1026], libc[1026];
	size_t i;
	int n, m;

	(void)state;
	for (i = 0; i < PK__ARRAY_SIZE(ws); i++) {
		n = fmt(ours, (int)sizeof(ours), "<%*d|%-*d|%.*d|%.*s>", ws[i], 42, ws[i], -3, ws[i],
			7, ws[i], "string");
		m = snprintf(libc, sizeof(libc), "<%*d|%-*d|%.*d|%.*s>", ws[i], 42, ws[i], -3, ws[i],
			     7, ws[i], "string");
		assert_string_equal(ours, libc);
		/* Cut exactly when C's would be cut. */
		assert_int_equal(n >= (int)sizeof(ours), m >= (int)sizeof(libc));
		if (m < (int)sizeof(libc))
			assert_int_equal(n, m);
	}
	/* C's negative '*': '-' flag and the absolute value; no precision. */
	n = fmt(ours, (int)sizeof(ours), "[%*d][%.*s]", -5, 42, -1, "whole");
	assert_string_equal(ours, "[42   ][whole]");
	assert_int_equal(n, 14);
	n = fmt(ours, (int)sizeof(ours), "[%*d]", INT_MIN, 1);
	assert_int_equal(ours[0], '[');
	assert_int_equal(ours[1], '1');
	assert_int_equal(strspn(ours + 2, " "), sizeof(ours) - 3);
	assert_true(n >= (int)sizeof(ours));
	/* Digit strings past INT_MAX neither overflow nor lose the text (UBSan). */
	n = fmt(ours, 16, "%99999999999999999999d", 5);
	assert_string_equal(ours, "               ");
	assert_true(n >= 16);
	n = fmt(ours, 16, "%.99999999999999999999d", 5);
	assert_string_equal(ours, "000000000000000");
	n = fmt(ours, 16, "%.99999999999999999999f", 0.5);
	assert_string_equal(ours, "0.5000000000000");
	/* A hex float with a negative precision: none, not a shift by a negative. */
	n = fmt(ours, (int)sizeof(ours), "%.*a", -7, 1.0);
	assert_true(n > 0);
}

/* INT_MAX widths and precisions cost what the buffer costs. */
static void test_clamp_cost(void **state)
{
	char buf[PK_RECORD_MAX + 2];
	uint64_t t0, ns;
	int i, n;

	(void)state;
	t0 = tu_now_ns();
	for (i = 0; i < 100; i++) {
		n = fmt(buf, (int)sizeof(buf), "%*d%-*d%.*d%0*.*f%*s", INT_MAX, 1, INT_MAX, 2,
			INT_MAX, 3, INT_MAX, INT_MAX, 1.5, INT_MAX, "s");
		assert_true(n >= (int)sizeof(buf));
		assert_int_equal(strspn(buf, " "), sizeof(buf) - 1);
	}
	ns = tu_now_ns() - t0;
	print_message("100 calls with five INT_MAX fields: %.3f ms\n", (double)ns / 1e6);
	/* A hang bound, not a timing assertion: unclamped, this is seconds or more. */
	assert_true(ns < 2000ull * 1000000ull);
}

/*
 * A '%' at the end of the format: no read past the terminating NUL.  The
 * format ends at the end of a page whose next page is inaccessible, so a
 * read past it faults (ASan does not watch the formatter's word-at-a-time
 * scan, as in the original stb_sprintf).
 */
static void test_trailing_percent(void **state)
{
	static const char *const tails[] = { "%", "%-", "%5", "%5.", "%.*", "%l", "%hh", "%I6",
					     "%I3", "%$_'", "%-+ #'$_012.*I64" };
	long page = sysconf(_SC_PAGESIZE);
	char out[64], *pages, *f;
	size_t i, len;
	int n;

	(void)state;
	pages = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	assert_true(pages != MAP_FAILED);
	assert_int_equal(mprotect(pages + page, (size_t)page, PROT_NONE), 0);
	for (i = 0; i < PK__ARRAY_SIZE(tails); i++) {
		len = strlen(tails[i]) + 2;
		f = pages + page - (len + 1);		/* its NUL is the page's last byte */
		memcpy(f, "ab", 2);
		memcpy(f + 2, tails[i], len - 1);
		memset(out, 'x', sizeof(out));
		n = fmt(out, (int)sizeof(out), f, 4, 4);
		assert_true(n >= 2);
		assert_memory_equal(out, "ab", 2);
		assert_int_equal(out[n], '\0');
	}
	munmap(pages, (size_t)page * 2);
	/* A zero-sized buffer is not written at all (not even buf[-1]). */
	f = malloc(2);
	assert_non_null(f);
	memcpy(f, "qr", 2);
	assert_int_equal(pk__stbsp_snprintf(f + 1, 0, "%d", 12345), 5);
	assert_memory_equal(f, "qr", 2);
	free(f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percent_n_never_writes),
		cmocka_unit_test(test_percent_n_anywhere),
		cmocka_unit_test(test_printk_refuses),
		cmocka_unit_test(test_clamp_same_text),
		cmocka_unit_test(test_clamp_cost),
		cmocka_unit_test(test_trailing_percent),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
