// SPDX-License-Identifier: MIT
/*
 * test_strip - compile-time stripping (PK_MAX_LEVEL).  strip_tu.c is built
 * with PK_MAX_LEVEL at PK_WARNING; every call above it must evaluate no
 * argument, store and print nothing, leave no format string in the
 * executable and register no dynamic debug site, while the calls at
 * PK_WARNING and above, and the forms that are never stripped, print.
 * This file itself is built without PK_MAX_LEVEL: nothing in it is
 * stripped, and its own dynamic debug site shows that the site count
 * would see one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "printk/console.h"
#include "printk/dyndbg.h"
#include "printk/printk.h"
#include "printk/reader.h"
#include "testutil.h"

#include "strip_tu.h"

#if !PK__ON_7
#error "without PK_MAX_LEVEL nothing is stripped"
#endif

static struct tu_capture *cap;

static int setup(void **state)
{
	struct pk_config cfg;

	(void)state;
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.buffer_size = 1 << 20;
	if (pk_init(&cfg))
		return -1;
	cap = tu_capture_new(0);
	/* Loglevel 8: the console prints every level, debug included. */
	if (!pk_console_register(&tu_capture_ops, cap, 8))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	tu_capture_free(cap);
	return 0;
}

/*
 * @text's marker, built at run time from its reverse through a volatile
 * pointer, so that the marker's bytes are in the executable only where
 * strip_tu.c put them.
 */
static void marker(char *buf, const char *reversed)
{
	const char *volatile src = reversed;
	size_t i, n = strlen(src);

	for (i = 0; i < n; i++)
		buf[i] = src[n - 1 - i];
	buf[n] = '\0';
}

/* Occurrences of @needle in @len bytes at @hay. */
static size_t count_bytes(const char *hay, size_t len, const char *needle)
{
	size_t n = 0, nl = strlen(needle);
	const char *p = hay, *end = hay + len, *q;

	while ((q = memmem(p, (size_t)(end - p), needle, nl))) {
		n++;
		p = q + nl;
	}
	return n;
}

/* Every record in the store, texts joined by newlines (caller frees). */
static char *store_text(void)
{
	struct pk_reader *r = pk_reader_open();
	struct pk_record rec;
	char *all = calloc(1, 1);
	size_t len = 0;
	int ret;

	assert_non_null(r);
	assert_non_null(all);
	while ((ret = pk_reader_next(r, &rec)) == 1) {
		all = realloc(all, len + rec.len + 2);
		assert_non_null(all);
		memcpy(all + len, rec.text, rec.len);
		len += rec.len;
		all[len++] = '\n';
		all[len] = '\0';
	}
	assert_int_equal(ret, 0);
	pk_reader_close(r);
	return all;
}

static void test_stripped_calls_do_nothing(void **state)
{
	struct strip_counts c = { 0, 0, 0 };
	char gone[32], kept[32];
	char *con, *store;

	(void)state;
	marker(gone, "enog-pirts");
	marker(kept, "tpek-pirts");
	strip_calls(&c);
	strip_in_statements(&c, 1);
	strip_in_statements(&c, 0);
	assert_int_equal(c.gone, 0);
	assert_int_equal(c.sum, 0);
	assert_int_equal(c.kept, STRIP_KEPT_ARGS);
	assert_int_equal(pk_flush(10000), 0);

	store = store_text();
	con = tu_capture_text(cap);
	assert_int_equal(tu_count(store, gone), 0);
	assert_int_equal(tu_count(con, gone), 0);
	assert_int_equal(tu_count(store, kept), STRIP_KEPT_LINES);
	assert_int_equal(tu_count(con, kept), STRIP_KEPT_LINES);
	/* The kept pr_* calls went through strip_tu.c's pr_fmt. */
	assert_int_equal(tu_count(con, "strip: strip-kept pr_"), 11);
	free(store);
	free(con);
}

static void test_never_stripped(void **state)
{
	int count = 0;
	char *con;

	(void)state;
	/* pk_printk(PK_INFO), printk(KERN_DEBUG), WARN(): all print. */
	assert_int_equal(strip_never_stripped(&count), 3);
	assert_int_equal(count, 3);
	assert_int_equal(pk_flush(10000), 0);
	con = tu_capture_text(cap);
	assert_int_equal(tu_count(con, "strip-kept pk_printk info 0"), 1);
	assert_int_equal(tu_count(con, "strip-kept printk debug 1"), 1);
	assert_int_equal(tu_count(con, "strip-kept warn 2"), 1);
	assert_int_equal(tu_count(con, "cut here"), 1);
	free(con);
}

static void test_no_strings_in_executable(void **state)
{
	char gone[32], kept[32];
	size_t len;
	char *exe;

	(void)state;
	marker(gone, "enog-pirts");
	marker(kept, "tpek-pirts");
	exe = tu_read_file("/proc/self/exe", &len);
	assert_non_null(exe);
	/* The search finds what strip_tu.c kept ... */
	assert_true(count_bytes(exe, len, kept) >= STRIP_KEPT_LINES);
	/* ... and not one format of a stripped call. */
	assert_int_equal(count_bytes(exe, len, gone), 0);
	free(exe);
}

static void own_site(void)
{
	pk_dyndbg("test_strip's own site\n");
}

static void test_no_dyndbg_sites(void **state)
{
	char gone[32], query[64];

	(void)state;
	marker(gone, "enog-pirts");
	snprintf(query, sizeof(query), "format %s =_", gone);
	own_site();
	/* A query counts the sites it matches: this file has one ... */
	assert_int_equal(pk_dyndbg_query("file test_strip.c =_"), 1);
	/* ... strip_tu.c has none: its pr_debug() and pk_dyndbg() are stripped. */
	assert_int_equal(pk_dyndbg_query("file strip_tu.c =_"), 0);
	assert_int_equal(pk_dyndbg_query(query), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stripped_calls_do_nothing),
		cmocka_unit_test(test_never_stripped),
		cmocka_unit_test(test_no_strings_in_executable),
		cmocka_unit_test(test_no_dyndbg_sites),
	};

	return TU_RUN_GROUP(tests, setup, teardown, argc, argv);
}
