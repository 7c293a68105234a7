// SPDX-License-Identifier: MIT
/*
 * Configuration that bends: pk_init() after lazy initialisation (mode,
 * consoles, loglevels, store adoption), runtime loglevels, consoles by
 * name, PK_CONSOLE options and quoting, and PK_BUFFER_SIZE.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "printk/console.h"
#include "printk/printk.h"
#include "printk/reader.h"
#include "testutil.h"

static void clear_env(void)
{
	unsetenv("PK_CONSOLE");
	unsetenv("PK_BUFFER");
	unsetenv("PK_BUFFER_SIZE");
	unsetenv("PK_MODE");
	unsetenv("PK_LOGLEVEL");
	unsetenv("PK_BUDGET_US");
}

static int setup(void **state)
{
	(void)state;
	clear_env();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	clear_env();
	return 0;
}

static void base_cfg(struct pk_config *cfg)
{
	pk_config_init(cfg);
	cfg->flags |= PK_CFG_NO_ATEXIT;
	cfg->buffer_size = 256 << 10;
}

static char *file_text(const char *path)
{
	char *t = tu_read_file(path, NULL);

	assert_non_null(t);
	return t;
}

/* A pk_printk() before pk_init() (lazy init), then pk_init() with another config. */
static void test_reinit_after_lazy(void **state)
{
	char *a = tu_tmp_path("cfg-lazy-a"), *b = tu_tmp_path("cfg-lazy-b"), spec[600], *t;
	struct pk_flush_stats fs;
	struct pk_config cfg;

	(void)state;
	snprintf(spec, sizeof(spec), "file:%s", a);
	setenv("PK_CONSOLE", spec, 1);
	assert_true(pk_err("before init\n") > 0);	/* initialises lazily */
	unsetenv("PK_CONSOLE");
	base_cfg(&cfg);
	snprintf(spec, sizeof(spec), "file:%s,fmt=json", b);
	cfg.consoles = spec;
	cfg.mode = PK_MODE_THREAD;
	cfg.console_loglevel = PK_WARNING;	/* err and worse */
	cfg.default_level = PK_ERR;
	assert_int_equal(pk_init(&cfg), 0);
	assert_int_equal(pk_get_loglevel(), PK_WARNING);
	pk_flush_stats_reset();
	pk_err("after init\n");
	pk_warn("filtered warning\n");
	pk_printk(PK_LEVEL_DEFAULT, "default level\n");
	assert_int_equal(pk_flush(10000), 0);
	/* Thread mode: printer threads printed, not the callers. */
	assert_int_equal(pk_flush_stats_get(&fs), 0);
	assert_true(fs.thread_records >= 2);
	assert_int_equal(fs.direct_records, 0);

	t = file_text(a);
	assert_int_equal(tu_count(t, "before init"), 1);
	assert_int_equal(tu_count(t, "after init"), 0);
	free(t);
	t = file_text(b);
	/* The new console prints the backlog, then the new records, as JSON. */
	assert_int_equal(tu_count(t, "\"text\":\"before init\""), 1);
	assert_int_equal(tu_count(t, "\"level\":3,"), 3);
	assert_int_equal(tu_count(t, "\"text\":\"after init\""), 1);
	assert_int_equal(tu_count(t, "\"text\":\"default level\""), 1);
	assert_int_equal(tu_count(t, "filtered"), 0);
	assert_true(strstr(t, "before init") < strstr(t, "after init"));
	free(t);
	unlink(a);
	unlink(b);
	free(a);
	free(b);
}

/*
 * pk_init() after lazy initialisation applies the handoff budget: a
 * caller that finds a backlog of slow writes passes the rest on once it
 * has printed for the budget, and never with no budget.
 */
static uint64_t deferrals_for_backlog(void)
{
	struct tu_capture *cap = tu_capture_new(500);	/* 0.5 ms a write */
	struct pk_console *con;
	struct pk_flush_stats fs;
	int i;

	pk_flush_stats_reset();
	for (i = 0; i < 200; i++)	/* a backlog, before the console exists */
		pk_info("backlog record %d\n", i);
	con = pk_console_register(&tu_capture_ops, cap, -1);
	assert_non_null(con);
	pk_info("the caller that finds the backlog\n");
	assert_int_equal(pk_flush(60000), 0);
	assert_int_equal(pk_flush_stats_get(&fs), 0);
	assert_int_equal(pk_console_unregister(con), 0);
	tu_capture_free(cap);
	return fs.budget_deferrals;
}

static void test_budget_after_lazy(void **state)
{
	struct pk_config cfg;

	(void)state;
	setenv("PK_CONSOLE", "", 1);		/* no console */
	setenv("PK_BUDGET_US", "2000", 1);
	assert_true(pk_info("before init\n") > 0);	/* initialises lazily */
	clear_env();
	base_cfg(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE;
	cfg.mode = PK_MODE_HANDOFF;
	cfg.print_budget_us = PK_PRINT_BUDGET_UNBOUNDED;
	assert_int_equal(pk_init(&cfg), 0);
	assert_int_equal(deferrals_for_backlog(), 0);
	cfg.print_budget_us = 2000;
	assert_int_equal(pk_init(&cfg), 0);
	assert_true(deferrals_for_backlog() >= 1);
}

/* A configured console replaced by one of the same name goes on where it was. */
static void test_same_console_continues(void **state)
{
	char *a = tu_tmp_path("cfg-same"), spec[600], *t;
	struct pk_config cfg;
	int i;

	(void)state;
	snprintf(spec, sizeof(spec), "file:%s", a);
	setenv("PK_CONSOLE", spec, 1);
	for (i = 0; i < 20; i++)
		pk_err("line %d\n", i);
	base_cfg(&cfg);
	assert_int_equal(pk_init(&cfg), 0);	/* PK_CONSOLE again: the same console */
	for (i = 20; i < 40; i++)
		pk_err("line %d\n", i);
	assert_int_equal(pk_flush(10000), 0);
	t = file_text(a);
	/* Every line once, in order: none printed twice across pk_init(). */
	assert_true(tu_tagged_in_order(t, "line", 40));
	assert_non_null(pk_console_find(spec));
	free(t);
	unlink(a);
	free(a);
}

/* pk_init() with a store file after lazy init in memory: the records move over. */
static void test_store_adopted(void **state)
{
	char *path = tu_tmp_path("cfg-store"), *t;
	struct tu_capture *cap = tu_capture_new(0);
	struct pk_reader *r;
	struct pk_record rec;
	struct pk_config cfg;
	struct pk_stats st;
	char want[64];
	int i, n = 0;

	(void)state;
	assert_non_null(pk_console_register(&tu_capture_ops, cap, -1));	/* lazy init */
	for (i = 0; i < 50; i++)
		pk_err("rec %d\n", i);
	base_cfg(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE;
	cfg.buffer_path = path;
	cfg.buffer_size = 128 << 10;
	assert_int_equal(pk_init(&cfg), 0);
	assert_int_equal(pk_stats_get(&st), 0);
	assert_int_equal(st.data_size, 64 << 10);
	for (i = 50; i < 60; i++)
		pk_err("rec %d\n", i);
	assert_int_equal(pk_flush(10000), 0);
	/* The program's own console stayed, and printed each record once. */
	t = tu_capture_text(cap);
	assert_true(tu_tagged_in_order(t, "rec", 60));
	free(t);
	/* The store file holds them all, in order, with their text. */
	r = pk_reader_open_file(path);
	assert_non_null(r);
	while (pk_reader_next(r, &rec) == 1) {
		snprintf(want, sizeof(want), "rec %d", n);
		if (rec.len == strlen(want) && !memcmp(rec.text, want, rec.len)) {
			assert_int_equal(rec.level, PK_ERR);
			n++;
		}
	}
	pk_reader_close(r);
	assert_int_equal(n, 60);
	pk_shutdown();
	tu_capture_free(cap);
	unlink(path);
	free(path);
}

/* A store that cannot be used keeps memory; a later good path is adopted. */
static void test_store_after_fallback(void **state)
{
	char *dir = tu_tmp_path("cfg-fbdir"), *path = tu_tmp_path("cfg-fbgood");
	struct pk_reader *r;
	struct pk_record rec;
	struct pk_config cfg;
	int n = 0;

	(void)state;
	assert_int_equal(mkdir(dir, 0700), 0);
	base_cfg(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE;
	cfg.buffer_path = dir;
	assert_int_equal(pk_init(&cfg), -EISDIR);	/* set up, in memory */
	pk_err("kept in memory\n");
	cfg.buffer_path = path;
	assert_int_equal(pk_init(&cfg), 0);
	pk_err("in the file\n");
	r = pk_reader_open_file(path);
	assert_non_null(r);
	while (pk_reader_next(r, &rec) == 1)
		n += (rec.len == 14 && !memcmp(rec.text, "kept in memory", 14)) ||
		     (rec.len == 11 && !memcmp(rec.text, "in the file", 11));
	pk_reader_close(r);
	assert_int_equal(n, 2);
	pk_shutdown();
	rmdir(dir);
	unlink(path);
	free(dir);
	free(path);
}

static void test_set_loglevel(void **state)
{
	struct tu_capture *cap = tu_capture_new(0);
	struct pk_config cfg;
	char *t;

	(void)state;
	base_cfg(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE;
	assert_int_equal(pk_init(&cfg), 0);
	assert_non_null(pk_console_register(&tu_capture_ops, cap, -1));
	assert_int_equal(pk_get_loglevel(), 7);
	assert_int_equal(pk_set_loglevel(9), -EINVAL);
	assert_int_equal(pk_set_loglevel(-1), -EINVAL);
	assert_int_equal(pk_set_loglevel(PK_ERR), 0);	/* crit and worse */
	assert_int_equal(pk_get_loglevel(), PK_ERR);
	pk_err("hidden err\n");
	pk_crit("shown crit\n");
	assert_int_equal(pk_set_loglevel(8), 0);
	pk_debug("shown debug\n");
	assert_int_equal(pk_flush(10000), 0);
	t = tu_capture_text(cap);
	assert_int_equal(tu_count(t, "hidden"), 0);
	assert_int_equal(tu_count(t, "shown crit"), 1);
	assert_int_equal(tu_count(t, "shown debug"), 1);
	free(t);
	pk_shutdown();
	tu_capture_free(cap);
}

/* Paths with ',', '@', '%' and '"', quoted and escaped; names; options. */
static void test_spec_quoting_and_names(void **state)
{
	char *dir = tu_tmp_path("cfg-q"), p1[600], p2[600], spec[2000], name[700], *t;
	struct pk_console *c;
	struct pk_config cfg;

	(void)state;
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(p1, sizeof(p1), "%s/a,b@c%%1 \"q\".log", dir);
	snprintf(p2, sizeof(p2), "%s/x,y@z%%2.log", dir);
	snprintf(spec, sizeof(spec),
		 "file:\"%s/a,b@c%%1 \\\"q\\\".log\"@crit,fmt=kmsg,name=quoted,"
		 "file:%s/x\\,y\\@z\\%%2.log",
		 dir, dir);
	base_cfg(&cfg);
	cfg.consoles = spec;
	assert_int_equal(pk_init(&cfg), 0);
	c = pk_console_find("quoted");
	assert_non_null(c);
	assert_string_equal(pk_console_name(c), "quoted");
	snprintf(name, sizeof(name), "file:%s", p2);
	assert_non_null(pk_console_find(name));
	assert_null(pk_console_find("file:/nowhere"));
	assert_int_equal(errno, ENOENT);
	pk_crit("crit %d\n", 1);
	pk_err("err %d\n", 2);	/* below the first console's @crit */
	assert_int_equal(pk_flush(10000), 0);
	t = file_text(p1);
	assert_int_equal(tu_count(t, ";crit 1"), 1);
	assert_int_equal(tu_count(t, "err 2"), 0);
	assert_true(!strncmp(t, "10,", 3));	/* kmsg: "PRI,seq,...": LOG_USER | crit */
	free(t);
	t = file_text(p2);
	assert_int_equal(tu_count(t, "] crit 1"), 1);
	assert_int_equal(tu_count(t, "] err 2"), 1);
	free(t);
	/* Its format and loglevel by the handle. */
	assert_int_equal(pk_console_set_format(c, PK_FMT_HUMAN | PK_FMT_F_LEVEL), 0);
	assert_int_equal(pk_console_set_format(c, 0x80000u), -EINVAL);
	assert_int_equal(pk_console_set_loglevel(c, 8), 0);
	pk_debug("debug now\n");
	assert_int_equal(pk_flush(10000), 0);
	t = file_text(p1);
	assert_int_equal(tu_count(t, "user  :debug : ["), 1);
	assert_int_equal(tu_count(t, "] debug now"), 1);
	free(t);
	pk_shutdown();
	unlink(p1);
	unlink(p2);
	rmdir(dir);
	free(dir);
}

static void test_spec_options(void **state)
{
	char *p = tu_tmp_path("cfg-opt"), spec[2000], path[700], *t, *l;
	struct tm tm;
	time_t now = time(NULL);
	struct stat sb;
	struct pk_config cfg;
	int year, mon, day, hh, mm, ss, us, n;
	char tz[16];
	mode_t um;

	(void)state;
	um = umask(022);
	snprintf(spec, sizeof(spec),
		 "file:%s.rfc,time=rfc3339,tid=on,level=on,"
		 "file:%s.ctime,time=ctime,"
		 "file:%s.mode,mode=0640,loglevel=err,"
		 "file:%s.bad,fmt=bogus,"
		 "fmt=json,"
		 "file:%s.rot,rotate=2k:2,fmt=raw,"
		 "file:%s.sys,fmt=syslog,"
		 "file:%s.hum,fmt=human,level=on",
		 p, p, p, p, p, p, p);
	base_cfg(&cfg);
	cfg.consoles = spec;
	assert_int_equal(pk_init(&cfg), 0);
	pk_crit("timed\n");
	for (n = 0; n < 100; n++)
		pk_crit("rotating record %03d with some text to fill\n", n);
	assert_int_equal(pk_flush(10000), 0);

	snprintf(path, sizeof(path), "%s.rfc", p);
	t = file_text(path);
	l = strstr(t, "user  :crit  : [");
	assert_non_null(l);
	assert_int_equal(sscanf(l, "user  :crit  : [%4d-%2d-%2dT%2d:%2d:%2d.%6d%6[-+:0-9]] [T",
				&year, &mon, &day, &hh, &mm, &ss, &us, tz), 8);
	localtime_r(&now, &tm);
	assert_int_equal(year, tm.tm_year + 1900);
	assert_true(mon >= 1 && mon <= 12 && day >= 1 && day <= 31 && hh < 24);
	assert_non_null(strstr(l, "] timed"));
	free(t);

	snprintf(path, sizeof(path), "%s.ctime", p);
	t = file_text(path);
	n = snprintf(tz, sizeof(tz), "%d]", tm.tm_year + 1900);
	assert_non_null(strstr(t, tz));
	assert_true(t[0] == '[' && strchr("MTWFS", t[1]));
	free(t);

	/* syslog: "<N>[uptime] text" (priority with the facility); human with the level. */
	snprintf(path, sizeof(path), "%s.sys", p);
	t = file_text(path);
	assert_true(sscanf(t, "<%d>[%*u.%*u] %15s", &n, tz) == 2);
	assert_int_equal(n % 8, PK_CRIT);
	assert_string_equal(tz, "timed");
	free(t);
	unlink(path);
	snprintf(path, sizeof(path), "%s.hum", p);
	t = file_text(path);
	assert_true(!strncmp(t, "user  :crit  : [", 16) && strstr(t, "] timed\n"));
	free(t);
	unlink(path);

	snprintf(path, sizeof(path), "%s.mode", p);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0640);
	unlink(path);

	/* A bad option refuses its console (and the option after it); no file made. */
	snprintf(path, sizeof(path), "%s.bad", p);
	assert_int_equal(access(path, F_OK), -1);

	/* Rotation at 2 KiB keeping two: the newest records are in the base file. */
	snprintf(path, sizeof(path), "%s.rot.1", p);
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s.rot", p);
	t = file_text(path);
	assert_int_equal(tu_count(t, "rotating record 099"), 1);
	assert_true(strlen(t) <= 2048);
	free(t);
	pk_shutdown();
	for (n = 0; n <= 3; n++) {
		snprintf(path, sizeof(path), n ? "%s.rot.%d" : "%s.rot", p, n);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s.rfc", p);
	unlink(path);
	snprintf(path, sizeof(path), "%s.ctime", p);
	unlink(path);
	umask(um);
	free(p);
}

/* pk_console_register_spec() counts what it registered; options need a console. */
static void test_spec_errors(void **state)
{
	struct pk_config cfg;

	(void)state;
	base_cfg(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE;
	assert_int_equal(pk_init(&cfg), 0);
	assert_int_equal(pk_console_register_spec("fmt=json"), 0);
	assert_int_equal(pk_console_register_spec("stderr,fmt=json,name=one,tid=maybe"), 0);
	assert_int_equal(pk_console_register_spec("file:\"/unterminated"), 0);
	assert_int_equal(pk_console_register_spec("stderr,mode=0640"), 0);	/* file only */
	assert_int_equal(pk_console_register_spec("stderr,fmt=raw,name=two,,stdout,name=three"),
			 2);
	assert_non_null(pk_console_find("two"));
	assert_non_null(pk_console_find("three"));
	assert_null(pk_console_find("one"));
}

static void test_buffer_size(void **state)
{
	struct pk_config cfg;
	struct pk_stats st;

	(void)state;
	setenv("PK_BUFFER_SIZE", "1m", 1);
	pk_config_init(&cfg);
	/* A 1 MiB data ring, a quarter for descriptors, 512 bytes of header. */
	assert_int_equal(cfg.buffer_size, (1u << 20) + (256u << 10) + 512);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	assert_int_equal(pk_init(&cfg), 0);
	assert_int_equal(pk_stats_get(&st), 0);
	assert_int_equal(st.data_size, 1u << 20);
	pk_shutdown();

	setenv("PK_BUFFER_SIZE", "100k", 1);	/* rounded up */
	pk_config_init(&cfg);
	assert_int_equal(cfg.buffer_size, (128u << 10) + (32u << 10) + 512);
	setenv("PK_BUFFER_SIZE", "512m", 1);
	pk_config_init(&cfg);
	assert_int_equal(cfg.buffer_size, (512u << 20) + (128u << 20) + 512);
	/* Refused: too large, too small, overflowing, malformed. */
	setenv("PK_BUFFER_SIZE", "513m", 1);
	pk_config_init(&cfg);
	assert_int_equal(cfg.buffer_size, PK_BUFFER_SIZE_DEFAULT);
	setenv("PK_BUFFER_SIZE", "8k", 1);
	pk_config_init(&cfg);
	assert_int_equal(cfg.buffer_size, PK_BUFFER_SIZE_DEFAULT);
	setenv("PK_BUFFER_SIZE", "18446744073709551617", 1);
	pk_config_init(&cfg);
	assert_int_equal(cfg.buffer_size, PK_BUFFER_SIZE_DEFAULT);
	setenv("PK_BUFFER_SIZE", "17179869184m", 1);
	pk_config_init(&cfg);
	assert_int_equal(cfg.buffer_size, PK_BUFFER_SIZE_DEFAULT);
	unsetenv("PK_BUFFER_SIZE");
}

/*
 * A reader of this process's store, open while pk_init() adopts another
 * store and then while pk_shutdown() releases it: every call says the
 * store is gone (-ENODEV) instead of reading unmapped memory.
 */
static void test_reader_outlives_store(void **state)
{
	struct pk_store_info info;
	struct pk_config cfg;
	struct pk_record rec;
	struct pk_reader *r;

	(void)state;
	pk_config_init(&cfg);
	cfg.consoles = "";
	cfg.buffer_size = 64 << 10;
	assert_int_equal(pk_init(&cfg), 0);
	assert_true(pk_info("before the switch\n") > 0);
	r = pk_reader_open();
	assert_non_null(r);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_memory_equal(rec.text, "before the switch", rec.len);

	cfg.buffer_size = 4 << 20;	/* another store: adopted, the old one unmapped */
	assert_int_equal(pk_init(&cfg), 0);
	assert_true(pk_info("after the switch\n") > 0);
	assert_int_equal(pk_reader_next(r, &rec), -ENODEV);
	assert_int_equal(pk_reader_wait(r, 10), -ENODEV);
	assert_int_equal(pk_reader_info(r, &info), -ENODEV);
	pk_reader_seek(r, 0);
	pk_reader_close(r);

	r = pk_reader_open();	/* a new reader sees the adopted store, records moved */
	assert_non_null(r);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_memory_equal(rec.text, "before the switch", rec.len);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_memory_equal(rec.text, "after the switch", rec.len);
	pk_shutdown();
	assert_int_equal(pk_reader_next(r, &rec), -ENODEV);
	assert_int_equal(pk_reader_info(r, &info), -ENODEV);
	pk_reader_close(r);
}

/*
 * In a child: pk_set_loglevel(3) before initialising, PK_LOGLEVEL as
 * @env says (NULL: unset), then pk_init(NULL) or pk_init() of a
 * configuration from pk_config_init().  Return: the loglevel then.
 */
static int loglevel_after(const char *env, bool with_cfg)
{
	int status;
	pid_t pid = tu_fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct pk_config cfg;

		if (env)
			setenv("PK_LOGLEVEL", env, 1);
		else
			unsetenv("PK_LOGLEVEL");
		if (pk_set_loglevel(3))
			_exit(100);
		pk_config_init(&cfg);
		cfg.flags |= PK_CFG_NO_CONSOLE;
		if (with_cfg ? pk_init(&cfg) : pk_init(NULL))
			_exit(101);
		_exit(pk_get_loglevel());
	}
	tu_waitpid(pid, &status, 30000, "the child");
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* PK_LOGLEVEL against an earlier pk_set_loglevel(): the same through both doors. */
static void test_loglevel_env_vs_set(void **state)
{
	(void)state;
	/* No PK_LOGLEVEL: the program's earlier choice stays. */
	assert_int_equal(loglevel_after(NULL, false), 3);
	assert_int_equal(loglevel_after(NULL, true), 3);
	/* PK_LOGLEVEL: the user's choice wins, in both. */
	assert_int_equal(loglevel_after("5", false), 5);
	assert_int_equal(loglevel_after("5", true), 5);
	assert_int_equal(loglevel_after("7", false), 7);
	assert_int_equal(loglevel_after("7", true), 7);
	/* A bad one is ignored: as if unset. */
	assert_int_equal(loglevel_after("loud", false), 3);
	assert_int_equal(loglevel_after("loud", true), 3);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reinit_after_lazy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_after_lazy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_console_continues, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_adopted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_after_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_loglevel, setup, teardown),
		cmocka_unit_test(test_loglevel_env_vs_set),
		cmocka_unit_test_setup_teardown(test_spec_quoting_and_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spec_options, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spec_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_buffer_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_outlives_store, setup, teardown),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
