// SPDX-License-Identifier: MIT
/*
 * test_traps.c - what a program new to the library writes, and what it
 * must then get: levels given by name wherever a level is read, a
 * configuration of zeros that is the defaults, errors that name the
 * problem, and settings that outlive the first initialisation.
 *
 * Each case first runs what the newcomer ran: this program again as a
 * child (TEST_TRAP_CHILD=<name>) with the variables they set, its stdout
 * (what the program printed) and stderr (the console) checked.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/core.h"
#include "printk/console.h"
#include "printk/printk.h"
#include "printk/reader.h"
#include "testutil.h"

#define COUNT(a)	(sizeof(a) / sizeof((a)[0]))

/* Run this program as a child doing @child, with @vars (NULL-ended) set. */
static int run_child(const char *child, const char *const *vars, char **out, char **err)
{
	static const char *const pass[] = { "TMPDIR=", "ASAN_OPTIONS=", "UBSAN_OPTIONS=",
					    "TSAN_OPTIONS=", "LSAN_OPTIONS=", "PATH=" };
	extern char **environ;
	char self[4096], childvar[128];
	char *envp[24];
	const char *argv[] = { self, NULL };
	size_t k = 0, i;
	char **e;
	ssize_t len;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(len > 0);
	self[len] = '\0';
	snprintf(childvar, sizeof(childvar), "TEST_TRAP_CHILD=%s", child);
	envp[k++] = childvar;
	for (; vars && *vars && k < 12; vars++)
		envp[k++] = (char *)*vars;
	for (e = environ; *e; e++)
		for (i = 0; i < COUNT(pass); i++)
			if (!strncmp(*e, pass[i], strlen(pass[i])) && k < COUNT(envp) - 1)
				envp[k++] = *e;
	envp[k] = NULL;
	return tu_run(argv, envp, out, err);
}

/* Run @child with @vars; it must exit 0.  Its stdout and stderr (caller frees). */
static void child_ok(const char *child, const char *const *vars, char **out, char **err)
{
	int rc = run_child(child, vars, out, err);

	if (rc)
		fail_msg("child %s exited %d:\n%s%s", child, rc, *out, *err);
}

/* ---- the children: what the newcomer wrote ---------------------------------------- */

static struct pk_module mod_m = { .name = "m", .level = PK_INFO, .default_level = PK_INFO };

/* Logs at several levels, plain and in module m. */
static int child_levels(void)
{
	if (pk_module_register(&mod_m))
		return 10;
	pk_printk(PK_ERR, "plain err\n");
	pk_printk(PK_WARNING, "plain warn\n");
	pk_printk(PK_INFO, "plain info\n");
	pk_printk_mod(&mod_m, PK_WARNING, "m warn\n");
	pk_printk_mod(&mod_m, PK_INFO, "m info\n");
	pk_flush(10000);
	return 0;
}

/* struct pk_config c = { 0 }; pk_init(&c); as docs/building.md "ABI" allows. */
static int child_zero(void)
{
	struct pk_config c = { 0 };
	struct pk_reader *r;
	struct pk_record rec;
	int rc, level = -1;

	rc = pk_init(&c);
	printf("init=%d\n", rc);
	pk_info("zero info\n");
	pk_printk(PK_LEVEL_DEFAULT, "zero nolevel\n");
	pk_flush(10000);
	r = pk_reader_open();
	if (!r)
		return 11;
	while (pk_reader_next(r, &rec) == 1)
		if (rec.len >= 12 && !memcmp(rec.text, "zero nolevel", 12))
			level = rec.level;
	pk_reader_close(r);
	printf("nolevel=%d loglevel=%d budget=%u facility=%d\n", level, pk_get_loglevel(),
	       pk__g.cfg.print_budget_us, atomic_load(&pk__g.facility));
	return 0;
}

/* Set a loglevel, then log: the first call initialises the library. */
static int child_settings(void)
{
	struct pk_stats st;

	printf("set=%d\n", pk_set_loglevel(PK_WARNING));
	pk_info("settings info\n");
	pk_err("settings err\n");
	pk_flush(10000);
	printf("loglevel=%d\n", pk_get_loglevel());
	if (pk_stats_get(&st))
		return 12;
	printf("consoles_failed=%llu\n", (unsigned long long)st.consoles_failed);
	return 0;
}

/* Only logs: the consoles come from PK_CONSOLE. */
static int child_log(void)
{
	struct pk_stats st;

	pk_err("log err\n");
	pk_flush(10000);
	if (pk_stats_get(&st))
		return 12;
	printf("consoles_failed=%llu\n", (unsigned long long)st.consoles_failed);
	return 0;
}

/* ---- 1. levels: names everywhere, one meaning ------------------------------------- */

static void test_module_level_by_name(void **state)
{
	static const char *const vars[] = { "PK_MODULES=m=warn", "PK_LOGLEVEL=debug", NULL };
	static const char *const upper[] = { "PK_MODULES=m=WARNING", "PK_LOGLEVEL=8", NULL };
	char *out, *err;

	(void)state;
	/* PK_MODULES='m=warn' was refused ("expected pattern=0-7 or pattern=off"). */
	child_ok("levels", vars, &out, &err);
	assert_null(strstr(err, "ignoring PK_MODULES"));
	assert_int_equal(tu_count(err, "m: m warn"), 1);
	assert_int_equal(tu_count(err, "m: m info"), 0);
	free(out);
	free(err);
	child_ok("levels", upper, &out, &err);
	assert_null(strstr(err, "ignoring PK_MODULES"));
	assert_int_equal(tu_count(err, "m: m warn"), 1);
	assert_int_equal(tu_count(err, "m: m info"), 0);
	free(out);
	free(err);
}

static void test_module_level_refused_names_levels(void **state)
{
	static const char *const vars[] = { "PK_MODULES=m=loud", NULL };
	char *out, *err;

	(void)state;
	child_ok("levels", vars, &out, &err);
	assert_non_null(strstr(err, "ignoring PK_MODULES entry \"m=loud\": expected pattern=LEVEL "
				    "with LEVEL 0-7 or a level name (emerg, alert, crit, err, warn, "
				    "notice, info, debug) or off"));
	free(out);
	free(err);
}

/* A name means that level and more severe, wherever it is given. */
static void test_name_same_everywhere(void **state)
{
	static const char *const loglevel[] = { "PK_LOGLEVEL=warn", NULL };
	static const char *const console[] = { "PK_CONSOLE=stderr@warning", NULL };
	static const char *const option[] = { "PK_CONSOLE=stderr,loglevel=WARN", NULL };
	static const char *const number[] = { "PK_LOGLEVEL=4", NULL };
	static const char *const *const named[] = { loglevel, console, option };
	char *out, *err;
	size_t i;

	(void)state;
	for (i = 0; i < COUNT(named); i++) {
		child_ok("levels", named[i], &out, &err);
		if (tu_count(err, "plain err") != 1 || tu_count(err, "plain warn") != 1 ||
		    tu_count(err, "plain info") != 0)
			fail_msg("%s: warn is not warnings and worse:\n%s", named[i][0], err);
		free(out);
		free(err);
	}
	/* A number is a console loglevel, as the kernel's: 4 prints 0-3. */
	child_ok("levels", number, &out, &err);
	assert_int_equal(tu_count(err, "plain err"), 1);
	assert_int_equal(tu_count(err, "plain warn"), 0);
	free(out);
	free(err);
}

/* The one parser, on its two scales. */
static void test_level_parser(void **state)
{
	static const struct {
		const char *s;
		int level, loglevel;
	} cases[] = {
		{ "0", 0, 0 }, { "7", 7, 7 }, { "8", -1, 8 }, { "emerg", 0, 1 },
		{ "err", 3, 4 }, { "error", 3, 4 }, { "ERROR", 3, 4 }, { "warn", 4, 5 },
		{ "warning", 4, 5 }, { "notice", 5, 6 }, { "info", 6, 7 }, { "debug", 7, 8 },
		{ "verbose", -1, -1 }, { "warnx", -1, -1 }, { "", -1, -1 }, { "off", -1, -1 },
		{ "9", -1, -1 }, { "-1", -1, -1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < COUNT(cases); i++) {
		int l = pk__level_parse(cases[i].s, strlen(cases[i].s), PK__LEVEL);
		int ll = pk__level_parse(cases[i].s, strlen(cases[i].s), PK__LOGLEVEL);

		if (l != cases[i].level || ll != cases[i].loglevel)
			fail_msg("\"%s\": level %d loglevel %d", cases[i].s, l, ll);
	}
	/* A length, not a NUL: "warn" out of "warnings". */
	assert_int_equal(pk__level_parse("warnings", 4, PK__LEVEL), PK_WARNING);
}

/* ---- 2. a zero-filled configuration is the defaults ------------------------------ */

static void test_zero_config(void **state)
{
	static const char *const env[] = { "PK_LOGLEVEL=debug", NULL };
	char *out, *err;

	(void)state;
	/* Was: pk_init() 0 or -EINVAL, nothing printed, a record without a level <0>. */
	child_ok("zero", NULL, &out, &err);
	assert_string_equal(out, "init=0\nnolevel=4 loglevel=7 budget=20000 facility=1\n");
	assert_int_equal(tu_count(err, "zero info"), 1);
	assert_int_equal(tu_count(err, "zero nolevel"), 1);
	free(out);
	free(err);
	/* A configuration given reads no environment: PK_LOGLEVEL is pk_config_init()'s. */
	child_ok("zero", env, &out, &err);
	assert_string_equal(out, "init=0\nnolevel=4 loglevel=7 budget=20000 facility=1\n");
	free(out);
	free(err);
}

static int setup(void **state)
{
	(void)state;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	return 0;
}

/* PK_CFG_ZERO and PK_PRINT_BUDGET_UNBOUNDED: the zeros that are not defaults. */
static void test_zero_explicit(void **state)
{
	struct pk_config c = { .console_loglevel = PK_CFG_ZERO, .default_level = PK_CFG_ZERO,
			       .facility = PK_CFG_ZERO,
			       .print_budget_us = PK_PRINT_BUDGET_UNBOUNDED,
			       .flags = PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT };
	struct pk_config d = { .flags = PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT };
	struct pk_config bad = { .console_loglevel = -2 };
	struct pk_reader *r;
	struct pk_record rec;
	int level = -1;

	(void)state;
	assert_int_equal(pk_init(&bad), -EINVAL);
	assert_int_equal(pk_init(&c), 0);
	assert_int_equal(pk_get_loglevel(), 0);
	assert_int_equal(pk__g.cfg.print_budget_us, 0);
	assert_int_equal(atomic_load(&pk__g.facility), 0);
	pk_printk(PK_LEVEL_DEFAULT, "explicit emerg\n");
	r = pk_reader_open();
	assert_non_null(r);
	while (pk_reader_next(r, &rec) == 1)
		if (rec.len >= 14 && !memcmp(rec.text, "explicit emerg", 14))
			level = rec.level;
	pk_reader_close(r);
	assert_int_equal(level, PK_EMERG);
	/* Applied again with zeros: the defaults come back. */
	assert_int_equal(pk_init(&d), 0);
	assert_int_equal(pk_get_loglevel(), 7);
	assert_int_equal(pk__g.cfg.print_budget_us, PK_PRINT_BUDGET_DEFAULT_US);
	assert_int_equal(atomic_load(&pk__g.facility), 1);
	/* The environment's 0s are the explicit ones. */
	setenv("PK_LOGLEVEL", "0", 1);
	setenv("PK_BUDGET_US", "0", 1);
	pk_config_init(&d);
	unsetenv("PK_LOGLEVEL");
	unsetenv("PK_BUDGET_US");
	assert_int_equal(d.console_loglevel, PK_CFG_ZERO);
	assert_int_equal(d.print_budget_us, PK_PRINT_BUDGET_UNBOUNDED);
}

/* ---- 3. errors that name the problem ---------------------------------------------- */

static void test_console_errors_named(void **state)
{
	static const char *const fmt[] = { "PK_CONSOLE=stderr,fmt=jsn", NULL };
	static const char *const lvl[] = { "PK_CONSOLE=stderr@verbose", NULL };
	static const char *const opt[] = { "PK_CONSOLE=stderr,colour=on,stdout", NULL };
	static const char *const ent[] = { "PK_CONSOLE=stdrr,stderr", NULL };
	char *out, *err;

	(void)state;
	/* Was: ignoring "stderr,fmt=jsn": Invalid argument */
	child_ok("log", fmt, &out, &err);
	assert_non_null(strstr(err, "libprintk: PK_CONSOLE: ignoring \"stderr,fmt=jsn\": "
				    "unknown format \"jsn\" (expected human, kmsg, syslog, json or raw)"));
	free(out);
	free(err);
	child_ok("log", lvl, &out, &err);
	assert_non_null(strstr(err, "libprintk: PK_CONSOLE: ignoring \"stderr@verbose\": "
				    "unknown level \"verbose\" (expected 0-8 or a level name (emerg, "
				    "alert, crit, err, warn, notice, info, debug), see libprintk(7))"));
	free(out);
	free(err);
	child_ok("log", opt, &out, &err);
	assert_non_null(strstr(err, "ignoring \"stderr,colour=on\": unknown option \"colour\""));
	free(out);
	free(err);
	child_ok("log", ent, &out, &err);
	assert_non_null(strstr(err, "ignoring \"stdrr\": not a console (expected stderr, stdout,"));
	assert_int_equal(tu_count(err, "log err"), 1);
	free(out);
	free(err);
}

/* Not from the environment: labelled by where the list came from. */
static void test_console_errors_by_source(void **state)
{
	struct pk_config c = { .consoles = "stdout,time=later", .flags = PK_CFG_NO_ATEXIT };
	struct tu_grab g;
	char *msg;

	(void)state;
	unsetenv("PK_CONSOLE");
	tu_grab_start(&g);
	assert_int_equal(pk_init(&c), 0);
	assert_int_equal(pk_console_register_spec("stderr,fmt=jsn"), 0);
	msg = tu_grab_end(&g);
	assert_non_null(strstr(msg, "libprintk: pk_config.consoles: ignoring \"stdout,time=later\": "
				    "unknown time \"later\" (expected uptime, ctime or rfc3339)"));
	assert_non_null(strstr(msg, "libprintk: pk_console_register_spec(): ignoring "
				    "\"stderr,fmt=jsn\": unknown format \"jsn\""));
	assert_null(strstr(msg, "PK_CONSOLE"));
	free(msg);
}

/* pk_strerror() says what a code means for every call that returns it. */
static void test_strerror_true(void **state)
{
	(void)state;
	/* Was: "busy: another thread is panicking; ..." for pk_init()'s store switch. */
	assert_non_null(strstr(pk_strerror(-EBUSY), "pk_printk(): another thread is panicking"));
	assert_non_null(strstr(pk_strerror(-EBUSY), "pk_init()"));
	assert_non_null(strstr(pk_strerror(-EBUSY), "pk_console_unregister()"));
	/* pk_flush(): not a connection. */
	assert_non_null(strstr(pk_strerror(-ETIMEDOUT), "pk_flush(): a console had not caught up"));
	assert_null(strstr(pk_strerror(-EAGAIN), "busy initialising"));
	assert_null(strstr(pk_strerror(-EALREADY), "already initialised"));
	assert_string_equal(pk_strerror(-ENOENT), "No such file or directory");
}

/* ---- 4. settings that outlive the first initialisation ---------------------------- */

static void test_loglevel_before_first_log(void **state)
{
	char *out, *err;

	(void)state;
	/* Was: set=0, then loglevel=7 and "settings info" printed. */
	child_ok("settings", NULL, &out, &err);
	assert_string_equal(out, "set=0\nloglevel=4\nconsoles_failed=0\n");
	assert_int_equal(tu_count(err, "settings info"), 0);
	assert_int_equal(tu_count(err, "settings err"), 1);
	free(out);
	free(err);
}

/* A configuration that names a loglevel wins; one that leaves it 0 does not. */
static void test_loglevel_config_wins_when_set(void **state)
{
	struct pk_config c = { .flags = PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT };

	(void)state;
	assert_int_equal(pk_set_loglevel(3), 0);
	assert_int_equal(pk_init(&c), 0);
	assert_int_equal(pk_get_loglevel(), 3);
	c.console_loglevel = 6;
	assert_int_equal(pk_init(&c), 0);
	assert_int_equal(pk_get_loglevel(), 6);
	/*
	 * The 7 pk_config_init() writes without PK_LOGLEVEL is the default,
	 * as 0 is: the loglevel stays (as pk_init(NULL) keeps it).
	 */
	pk_config_init(&c);
	c.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	assert_int_equal(pk_init(&c), 0);
	assert_int_equal(pk_get_loglevel(), 6);
}

static void test_file_console_failure_known(void **state)
{
	static const char *const vars[] = {
		"PK_CONSOLE=file:/nonexistent-libprintk-dir/app.log,stderr", NULL };
	char *out, *err;

	(void)state;
	/* Was: "No such file or directory" on stderr, and nothing the program could ask. */
	child_ok("log", vars, &out, &err);
	assert_string_equal(out, "consoles_failed=1\n");
	assert_non_null(strstr(err, "ignoring \"file:/nonexistent-libprintk-dir/app.log\": "
				    "No such file or directory"));
	assert_int_equal(tu_count(err, "log err"), 1);
	free(out);
	free(err);
}

int main(int argc, char **argv)
{
	const char *child = getenv("TEST_TRAP_CHILD");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_module_level_by_name),
		cmocka_unit_test(test_module_level_refused_names_levels),
		cmocka_unit_test(test_name_same_everywhere),
		cmocka_unit_test(test_level_parser),
		cmocka_unit_test(test_zero_config),
		cmocka_unit_test_setup_teardown(test_zero_explicit, setup, teardown),
		cmocka_unit_test(test_console_errors_named),
		cmocka_unit_test_setup_teardown(test_console_errors_by_source, setup, teardown),
		cmocka_unit_test(test_strerror_true),
		cmocka_unit_test(test_loglevel_before_first_log),
		cmocka_unit_test_setup_teardown(test_loglevel_config_wins_when_set, setup,
						teardown),
		cmocka_unit_test(test_file_console_failure_known),
	};

	if (child) {
		setvbuf(stdout, NULL, _IOLBF, 0);
		if (!strcmp(child, "levels"))
			return child_levels();
		if (!strcmp(child, "zero"))
			return child_zero();
		if (!strcmp(child, "settings"))
			return child_settings();
		if (!strcmp(child, "log"))
			return child_log();
		return 99;
	}
	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
