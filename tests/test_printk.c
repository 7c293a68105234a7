// SPDX-License-Identifier: MIT
/*
 * The front door through the public API: order and content, levels,
 * kernel prefixes, continuation, truncation, bad input, configuration.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "store/store.h"
#include "printk/console.h"
#include "printk/printk.h"
#include "printk/reader.h"
#include "testutil.h"

static int setup(void **state)
{
	struct pk_config cfg;

	(void)state;
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.buffer_size = 256 << 10;
	return pk_init(&cfg);
}

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	return 0;
}

/* Read everything stored so far. */
static int read_all(struct pk_record *recs, char texts[][PK_RECORD_MAX + 1], int max)
{
	struct pk_reader *r = pk_reader_open();
	int n = 0;

	assert_non_null(r);
	while (n < max && pk_reader_next(r, &recs[n]) == 1) {
		memcpy(texts[n], recs[n].text, recs[n].len + 1);
		recs[n].text = texts[n];
		n++;
	}
	pk_reader_close(r);
	return n;
}

static struct pk_record recs[64];
static char texts[64][PK_RECORD_MAX + 1];

static void test_order_single_thread(void **state)
{
	int i, n;

	(void)state;
	for (i = 0; i < 50; i++)
		assert_true(pk_printk(i % 8, "line %d of %s\n", i, "fifty") > 0);
	n = read_all(recs, texts, 64);
	assert_int_equal(n, 50);
	for (i = 0; i < 50; i++) {
		char want[64];

		snprintf(want, sizeof(want), "line %d of fifty", i);
		assert_string_equal(recs[i].text, want);
		assert_int_equal(recs[i].level, i % 8);
		assert_int_equal(recs[i].seq, (uint64_t)i);
		assert_int_equal(recs[i].flags, 0);
		if (i)
			assert_true(recs[i].ts_ns >= recs[i - 1].ts_ns);
	}
}

static void test_levels_and_prefixes(void **state)
{
	int n;

	(void)state;
	pk_err("macro err\n");
	pk_printk(PK_LEVEL_DEFAULT, PK_KERN_ERR "prefixed err\n");
	pk_printk(PK_LEVEL_DEFAULT, "no level\n");
	pk_printk(99, "bad level\n");
	pk_printk(-7, "negative level\n");
	pk_printk(PK_INFO, PK_SOH "2" "prefix wins\n");
	n = read_all(recs, texts, 64);
	assert_int_equal(n, 6);
	assert_int_equal(recs[0].level, PK_ERR);
	assert_int_equal(recs[1].level, PK_ERR);
	assert_string_equal(recs[1].text, "prefixed err");
	assert_int_equal(recs[2].level, PK_WARNING);	/* the default message level */
	assert_int_equal(recs[3].level, PK_WARNING);
	assert_int_equal(recs[4].level, PK_WARNING);
	assert_int_equal(recs[5].level, PK_CRIT);
	assert_string_equal(recs[5].text, "prefix wins");
}

static void test_continuation(void **state)
{
	int n;

	(void)state;
	pk_info("Probing");
	pk_cont(" bus 1");
	pk_cont(" ... ok\n");
	pk_cont("orphan\n");			/* no open record: flagged */
	pk_info("one");
	pk_printk(PK_LEVEL_DEFAULT, PK_KERN_CONT "two\n");
	n = read_all(recs, texts, 64);
	assert_int_equal(n, 3);
	assert_string_equal(recs[0].text, "Probing bus 1 ... ok");
	assert_int_equal(recs[0].level, PK_INFO);
	assert_false(recs[0].flags & PK_REC_CONT);
	assert_string_equal(recs[1].text, "orphan");
	assert_true(recs[1].flags & PK_REC_CONT);
	assert_string_equal(recs[2].text, "onetwo");
}

static void *other_thread(void *arg)
{
	(void)arg;
	pk_notice("from another thread\n");
	return NULL;
}

static void pk__test_store_other(void)
{
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
	pthread_join(t, NULL);
}

/* Another record in between: the continuation becomes its own record. */
static void test_continuation_interrupted(void **state)
{
	int n;

	(void)state;
	pk_info("first half");
	pk__test_store_other();
	pk_cont(" second half\n");
	n = read_all(recs, texts, 64);
	assert_int_equal(n, 3);
	assert_string_equal(recs[0].text, "first half");
	assert_true(recs[0].flags & PK_REC_NOEOL);
	assert_string_equal(recs[1].text, "from another thread");
	assert_string_equal(recs[2].text, " second half");
	assert_true(recs[2].flags & PK_REC_CONT);
	assert_int_equal(recs[2].level, PK_INFO);
}

static void test_truncation(void **state)
{
	static char big[5000];
	struct pk_stats st;
	int n;

	(void)state;
	memset(big, 'q', sizeof(big) - 1);
	assert_int_equal(pk_info("%s\n", big), PK_RECORD_MAX);
	assert_int_equal(pk_info("%.*s\n", PK_RECORD_MAX, big), PK_RECORD_MAX);
	assert_int_equal(pk_info("%.*s", PK_RECORD_MAX + 1, big), PK_RECORD_MAX);
	n = read_all(recs, texts, 64);
	assert_int_equal(n, 3);
	assert_int_equal(recs[0].len, PK_RECORD_MAX);
	assert_true(recs[0].flags & PK_REC_TRUNC);
	assert_int_equal(recs[1].len, PK_RECORD_MAX);
	assert_false(recs[1].flags & PK_REC_TRUNC);	/* exactly the maximum, then EOL */
	assert_true(recs[2].flags & PK_REC_TRUNC);
	assert_int_equal(pk_stats_get(&st), 0);
	assert_int_equal(st.truncated, 2);
}

static void test_bad_input(void **state)
{
	struct pk_stats st;
	int x = 0, n;

	(void)state;
	assert_int_equal(pk_printk(PK_INFO, NULL), -EINVAL);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat"
#pragma GCC diagnostic ignored "-Wformat-security"
#ifndef __clang__
#pragma GCC diagnostic ignored "-Wformat-overflow"
#endif
	assert_int_equal(pk_printk(PK_INFO, "count%n\n", &x), -EINVAL);
	assert_int_equal(pk_printk(PK_INFO, "count%5hn\n", &x), -EINVAL);
	/*
	 * stb_sprintf's own flags and lengths, which a scan knowing only
	 * printf's let through: each would write through the pointer.  The
	 * formatter refuses them itself (all spellings: test_fmtsafe).
	 */
	{
		static const char *const sneaky[] = {
			"%_n", "%-_n", "%I32n", "%I64n", "%'n", "%$n", "%$$_n", "%$2n",
			"%hhn", "%lln", "%zn", "%jn", "%tn", "%In", "%-+ #0hn", "%*.*n", "a%%%n",
		};
		size_t i;

		for (i = 0; i < sizeof(sneaky) / sizeof(sneaky[0]); i++)
			if (pk_printk(PK_INFO, sneaky[i], 1, 1, &x) != -EINVAL)
				fail_msg("\"%s\" was not refused", sneaky[i]);
	}
	assert_true(pk_printk(PK_INFO, "%s\n", (char *)NULL) > 0);
#pragma GCC diagnostic pop
	assert_int_equal(x, 0);
	assert_true(pk_printk(PK_INFO, "100%% fine, %d%%\n", 5) > 0);
	assert_int_equal(pk_printk(PK_INFO, "%s", ""), 0);
	n = read_all(recs, texts, 64);
	assert_int_equal(n, 2);		/* the empty one is open: not yet readable */
	assert_string_equal(recs[0].text, "(null)");	/* glibc's spelling */
	assert_string_equal(recs[1].text, "100% fine, 5%");
	assert_int_equal(pk_stats_get(&st), 0);
	assert_int_equal(st.refused, 3 + 17);
	assert_null(pk_reader_open_file(NULL));
	assert_int_equal(pk_reader_next(NULL, &recs[0]), -EINVAL);
	assert_int_equal(pk_stats_get(NULL), -EINVAL);
}

static void test_stats(void **state)
{
	struct pk_stats st;
	int i;

	(void)state;
	for (i = 0; i < 10; i++)
		pk_info("stat %d\n", i);
	assert_int_equal(pk_stats_get(&st), 0);
	assert_int_equal(st.stored, 10);
	assert_int_equal(st.next_seq, 10);
	assert_int_equal(st.overwritten, 0);
	assert_int_equal(st.lost, 0);
	/* Overrun the 256 KiB store. */
	for (i = 0; i < 20000; i++)
		pk_info("filler record number %d with some text to take room\n", i);
	assert_int_equal(pk_stats_get(&st), 0);
	assert_int_equal(st.stored, 20010);
	assert_true(st.overwritten > 10000);
	assert_int_equal(st.oldest_seq - st.first_seq, st.overwritten);
}

static void test_init_twice_and_reinit(void **state)
{
	struct pk_config cfg;

	(void)state;
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE;
	assert_int_equal(pk_init(&cfg), 0);	/* applied to the running library */
	pk_shutdown();
	cfg.buffer_size = 10;
	assert_int_equal(pk_init(&cfg), -EINVAL);
	cfg.buffer_size = PK_BUFFER_SIZE_DEFAULT;
	cfg.mode = (enum pk_mode)7;
	assert_int_equal(pk_init(&cfg), -EINVAL);
	cfg.mode = PK_MODE_HANDOFF;
	cfg.console_loglevel = 9;
	assert_int_equal(pk_init(&cfg), -EINVAL);
	cfg.console_loglevel = 7;
	cfg.flags |= PK_CFG_NO_ATEXIT;
	assert_int_equal(pk_init(&cfg), 0);
}

static void test_config_env(void **state)
{
	struct pk_config cfg;

	(void)state;
	setenv("PK_MODE", "legacy", 1);
	setenv("PK_LOGLEVEL", "3", 1);
	setenv("PK_BUFFER_SIZE", "64k", 1);
	setenv("PK_BUDGET_US", "500", 1);
	pk_config_init(&cfg);
	assert_int_equal(cfg.mode, PK_MODE_LEGACY);
	assert_int_equal(cfg.console_loglevel, 3);
	/* A 64 KiB data ring, its descriptors (a quarter) and the header. */
	assert_int_equal(cfg.buffer_size, (64 << 10) + (16 << 10) + 512);
	assert_int_equal(cfg.print_budget_us, 500);
	/* Malformed values keep the defaults (and say so on stderr). */
	setenv("PK_MODE", "turbo", 1);
	setenv("PK_LOGLEVEL", "loud", 1);
	setenv("PK_BUFFER_SIZE", "12x", 1);
	setenv("PK_BUDGET_US", "-1", 1);
	pk_config_init(&cfg);
	assert_int_equal(cfg.mode, PK_MODE_HANDOFF);
	assert_int_equal(cfg.console_loglevel, 7);
	assert_int_equal(cfg.buffer_size, PK_BUFFER_SIZE_DEFAULT);
	assert_int_equal(cfg.print_budget_us, PK_PRINT_BUDGET_DEFAULT_US);
	/* Sizes that wrapped when shifted: 2^54 k is 2^64 bytes, "1m" mod 2^64 before. */
	setenv("PK_BUFFER_SIZE", "18014398509483008k", 1);
	pk_config_init(&cfg);
	assert_int_equal(cfg.buffer_size, PK_BUFFER_SIZE_DEFAULT);
	setenv("PK_BUFFER_SIZE", "17179869184m", 1);
	pk_config_init(&cfg);
	assert_int_equal(cfg.buffer_size, PK_BUFFER_SIZE_DEFAULT);
	setenv("PK_BUFFER_SIZE", "2g", 1);
	pk_config_init(&cfg);
	assert_int_equal(cfg.buffer_size, PK_BUFFER_SIZE_DEFAULT);
	setenv("PK_LOGLEVEL", "debug", 1);
	pk_config_init(&cfg);
	assert_int_equal(cfg.console_loglevel, PK_DEBUG + 1);	/* debug and worse */
	unsetenv("PK_MODE");
	unsetenv("PK_LOGLEVEL");
	unsetenv("PK_BUFFER_SIZE");
	unsetenv("PK_BUDGET_US");
}

/* stderr into a fresh file until stderr_end(), which returns what was written. */
static int saved_stderr = -1;
static char *stderr_path;

static void stderr_begin(void)
{
	int fd;

	stderr_path = tu_tmp_path("stderr");
	fd = open(stderr_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	fflush(stderr);
	saved_stderr = dup(STDERR_FILENO);
	assert_true(saved_stderr >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
}

static char *stderr_end(void)
{
	char *text;

	fflush(stderr);
	assert_int_equal(dup2(saved_stderr, STDERR_FILENO), STDERR_FILENO);
	close(saved_stderr);
	text = tu_read_file(stderr_path, NULL);
	assert_non_null(text);
	unlink(stderr_path);
	free(stderr_path);
	return text;
}

/* Level names match whole, never by prefix; the message names the value. */
static void test_level_names_exact(void **state)
{
	static const struct {
		const char *name;
		int level;	/* -1: refused */
	} cases[] = {
		{ "0", 0 }, { "8", 8 }, { "emerg", 1 }, { "ALERT", 2 }, { "crit", 3 }, { "err", 4 },
		{ "error", 4 }, { "warn", 5 }, { "Warning", 5 }, { "notice", 6 }, { "info", 7 },
		{ "debug", 8 }, { "errorsXYZ", -1 }, { "infox", -1 }, { "inf", -1 }, { "e", -1 },
		{ "9", -1 }, { "08", -1 }, { "", -1 }, { "err ", -1 }, { " err", -1 },
		{ "warnings", -1 }, { "debugger", -1 }, { "-1", -1 },
	};
	struct pk_config cfg;
	size_t i;
	char *msg;
	int lvl;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		lvl = -5;
		if (pk__parse_level(cases[i].name, &lvl) != (cases[i].level < 0 ? -EINVAL : 0) ||
		    (cases[i].level >= 0 && lvl != cases[i].level))
			fail_msg("level \"%s\": got %d", cases[i].name, lvl);
	}
	/* Through the environment and PK_CONSOLE: refused, named, defaults kept. */
	setenv("PK_LOGLEVEL", "infox", 1);
	setenv("PK_BUDGET_US", "99999999999999999999999", 1);
	stderr_begin();
	pk_config_init(&cfg);
	msg = stderr_end();
	assert_int_equal(cfg.console_loglevel, 7);
	assert_int_equal(cfg.print_budget_us, PK_PRINT_BUDGET_DEFAULT_US);
	assert_non_null(strstr(msg, "libprintk: ignoring PK_LOGLEVEL=\"infox\": expected "));
	assert_non_null(strstr(msg, "libprintk: ignoring PK_BUDGET_US=\"99999999999999999999999\""));
	free(msg);
	/* Digits only: no sign, no space, no suffix. */
	{
		static const char *const budgets[] = { " 5", "5 ", "+5", "-0", "5us", "60000001" };

		for (i = 0; i < sizeof(budgets) / sizeof(budgets[0]); i++) {
			setenv("PK_BUDGET_US", budgets[i], 1);
			stderr_begin();
			pk_config_init(&cfg);
			msg = stderr_end();
			if (cfg.print_budget_us != PK_PRINT_BUDGET_DEFAULT_US || !strstr(msg, budgets[i]))
				fail_msg("PK_BUDGET_US=\"%s\" taken as %u (%s)", budgets[i],
					 cfg.print_budget_us, msg);
			free(msg);
		}
	}
	unsetenv("PK_LOGLEVEL");
	setenv("PK_BUDGET_US", "60000000", 1);
	pk_config_init(&cfg);
	assert_int_equal(cfg.print_budget_us, 60000000);
	unsetenv("PK_BUDGET_US");
	assert_int_equal(setup(NULL), 0);
	stderr_begin();
	assert_int_equal(pk_console_register_spec("stderr@errorsXYZ,stdout@infox"), 0);
	msg = stderr_end();
	assert_non_null(strstr(msg, "ignoring \"stderr@errorsXYZ\""));
	assert_non_null(strstr(msg, "ignoring \"stdout@infox\""));
	free(msg);
	teardown(NULL);
}

/*
 * A PK_CONSOLE with no usable entry prints to stderr, after one warning
 * that names each bad entry once; nothing more is said per call.
 */
static void test_console_fallback(void **state)
{
	char *msg;
	int i;

	(void)state;
	setenv("PK_CONSOLE", "bogus,file:,stderr@infox", 1);
	stderr_begin();
	for (i = 0; i < 10; i++)
		assert_true(pk_printk(PK_ERR, "fallback line %d\n", i) > 0);
	assert_int_equal(pk_flush(5000), 0);
	pk_shutdown();
	msg = stderr_end();
	unsetenv("PK_CONSOLE");
	assert_int_equal(tu_count(msg, "libprintk:"), 4);
	assert_int_equal(tu_count(msg, "\"bogus\""), 1);
	assert_int_equal(tu_count(msg, "\"file:\""), 1);
	assert_int_equal(tu_count(msg, "\"stderr@infox\""), 1);
	assert_int_equal(tu_count(msg, "libprintk: PK_CONSOLE=\"bogus,file:,stderr@infox\" has no "
				       "usable console; printing to stderr"), 1);
	assert_true(tu_tagged_in_order(msg, "fallback line", 10));
	free(msg);
	/* An empty PK_CONSOLE asks for no console: nothing is said or printed. */
	setenv("PK_CONSOLE", "", 1);
	stderr_begin();
	assert_true(pk_printk(PK_ERR, "unheard\n") > 0);
	assert_int_equal(pk_flush(5000), 0);
	pk_shutdown();
	msg = stderr_end();
	unsetenv("PK_CONSOLE");
	assert_string_equal(msg, "");
	free(msg);
}

static void test_strerror(void **state)
{
	(void)state;
	static const int own[] = { ENOBUFS, EAGAIN, EALREADY, ENODEV, EPROTO, EBUSY, EPIPE,
				   ETIMEDOUT };
	size_t k;
	int e;

	assert_string_equal(pk_strerror(-EINVAL), "Invalid argument");
	assert_string_equal(pk_strerror(0), "success");
	/* Every errno the C library knows has words, its own unless libprintk gives it a meaning. */
	for (e = 1; e < 200; e++) {
		bool mine = false;

		for (k = 0; k < sizeof(own) / sizeof(own[0]); k++)
			mine |= own[k] == e;
		if (!strerrordesc_np(e))
			continue;
		assert_string_equal(pk_strerror(-e), pk_strerror(e));
		if (mine)
			assert_string_not_equal(pk_strerror(-e), strerrordesc_np(e));
		else
			assert_string_equal(pk_strerror(-e), strerrordesc_np(e));
	}
	assert_string_equal(pk_strerror(-12345), "unknown error");
	/* Errors libprintk has no words of its own for: the C library's. */
	assert_string_equal(pk_strerror(-EISDIR), "Is a directory");
	assert_string_equal(pk_strerror(-ENAMETOOLONG), "File name too long");
	assert_string_equal(pk_strerror(EFBIG), "File too large");
}

static void test_lazy_init(void **state)
{
	struct pk_stats st;

	(void)state;
	pk_shutdown();
	assert_int_equal(pk_stats_get(&st), -ENODEV);
	setenv("PK_CONSOLE", "", 1);
	assert_true(pk_info("lazily\n") > 0);
	unsetenv("PK_CONSOLE");
	assert_int_equal(pk_stats_get(&st), 0);
	assert_int_equal(st.stored, 1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_order_single_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_levels_and_prefixes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_continuation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_continuation_interrupted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_init_twice_and_reinit, setup, teardown),
		cmocka_unit_test(test_config_env),
		cmocka_unit_test(test_level_names_exact),
		cmocka_unit_test(test_console_fallback),
		cmocka_unit_test(test_strerror),
		cmocka_unit_test_setup_teardown(test_lazy_init, setup, teardown),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
