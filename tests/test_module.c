// SPDX-License-Identifier: MIT
/*
 * test_module - modules (printk.h MODULES): records of PK_MODULE_REGISTER()'s
 * file and of a PK_MODULE_DECLARE() file carry the module's name, others
 * none; module levels drop records before anything is evaluated or stored;
 * pk_module_set_level() names and patterns, kept for modules registered
 * later (in a fresh process, so that the 32 kept patterns are this test's
 * own); PK_MODULES read before main(); continuations of dropped lines;
 * <printk/kernel.h> code in a module; every console format; the consoles'
 * module filter, also changed while other threads print; the store file
 * (also after SIGKILL) and pkmsg --module; deferred and eager formatting;
 * a PK_RECORD_MAX text in a module; and a store whose module prefixes are
 * hostile.
 *
 * Module "netio" is registered here at PK_INFO; module_other.c,
 * module_kernel.c and module_kdyn.c declare it, module_plain.c has none.
 * A child run of this program (TEST_MODULE_CHILD=...) checks what needs a
 * fresh process.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "console/rfc5424.h"
#include "format/format.h"
#include "store/store.h"
#include "printk/console.h"
#include "printk/dyndbg.h"
#include "printk/printk.h"
#include "printk/reader.h"
#include "testutil.h"

#include "module_test.h"

#ifndef PKMSG_PATH
#error "PKMSG_PATH must name the built pkmsg (tests/CMakeLists.txt)"
#endif

PK_MODULE_REGISTER(netio, PK_INFO);

#define COUNT(a)	(sizeof(a) / sizeof((a)[0]))
/* A child that takes longer than this has hung (a hang guard only). */
#define CHILD_MS	60000
#define SMALL_STORE	(64u << 10)

/* netio's level when main() began: what its constructor registered. */
static int netio_level_at_main;

/* Modules of this program besides netio, registered by hand in main(). */
static struct pk_module mod_db = { .name = "dbcache", .level = PK_DEBUG, .default_level = PK_DEBUG };
static struct pk_module mod_netstat = { .name = "netstat", .level = PK_DEBUG, .default_level = PK_DEBUG };
static struct pk_module mod_zz = { .name = "zzmod", .level = PK_DEBUG, .default_level = PK_DEBUG };

/* ---- fixture: the library with a capture console printing every level ---- */

static struct tu_capture *cap;
static struct pk_console *con;

static void start(enum pk_mode mode, unsigned flags, const char *path, size_t size)
{
	struct pk_config cfg;

	pk_config_init(&cfg);
	cfg.flags &= ~PK_CFG_EAGER;
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT | flags;
	cfg.mode = mode;
	cfg.buffer_size = size;
	cfg.buffer_path = path;
	cfg.console_loglevel = 8;
	assert_int_equal(pk_init(&cfg), 0);
	cap = tu_capture_new(0);
	con = pk_console_register(&tu_capture_ops, cap, 8);
	assert_non_null(con);
}

static void stop(void)
{
	pk_shutdown();
	if (cap)
		tu_capture_free(cap);
	cap = NULL;
	con = NULL;
}

/* Every case: netio and the hand-made modules at their registered levels. */
static void reset_levels(void)
{
	assert_int_equal(pk_module_set_level("netio", PK_INFO), 1);
	__atomic_store_n(&mod_db.level, PK_DEBUG, __ATOMIC_RELAXED);
	__atomic_store_n(&mod_netstat.level, PK_DEBUG, __ATOMIC_RELAXED);
	__atomic_store_n(&mod_zz.level, PK_DEBUG, __ATOMIC_RELAXED);
}

static int setup(void **state)
{
	(void)state;
	reset_levels();
	start(PK_MODE_HANDOFF, 0, NULL, 1 << 20);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	stop();
	return 0;
}

/* Cases that set up the library themselves (or not at all). */
static int setup_bare(void **state)
{
	(void)state;
	reset_levels();
	return 0;
}

static int teardown_bare(void **state)
{
	(void)state;
	if (cap)
		stop();
	return 0;
}

/* What the capture console printed (all of it flushed first; caller frees). */
static char *printed(void)
{
	assert_int_equal(pk_flush(10000), 0);
	return tu_capture_text(cap);
}

static uint64_t stored(void)
{
	struct pk_stats st;

	assert_int_equal(pk_stats_get(&st), 0);
	return st.stored;
}

/* ---- records read back ------------------------------------------------------ */

struct got {
	uint64_t seq;
	int level;
	unsigned flags;
	size_t len;
	bool has_module;
	char module[64];
	char text[PK_RECORD_MAX + 64];
};

/* Every record @r has now, into @out (at most @max; more fails). */
static int read_from(struct pk_reader *r, struct got *out, int max)
{
	struct pk_record rec;
	int n = 0, ret;

	assert_non_null(r);
	while ((ret = pk_reader_next(r, &rec)) == 1) {
		assert_true(n < max);
		memset(&out[n], 0, sizeof(out[n]));
		out[n].seq = rec.seq;
		out[n].level = rec.level;
		out[n].flags = rec.flags;
		out[n].len = rec.len;
		assert_true(rec.len < sizeof(out[n].text));
		memcpy(out[n].text, rec.text, rec.len);
		out[n].text[rec.len] = '\0';
		assert_int_equal(rec.text[rec.len], '\0');
		if (rec.module) {
			out[n].has_module = true;
			assert_true(strlen(rec.module) < sizeof(out[n].module));
			strcpy(out[n].module, rec.module);
		}
		n++;
	}
	assert_int_equal(ret, 0);
	pk_reader_close(r);
	return n;
}

/*
 * Where the records read back go: static, so that a failing case leaks
 * nothing.  One read at a time.
 */
static struct got got_buf[256];

/* This process's store, all of it. */
static struct got *read_live(int *n)
{
	*n = read_from(pk_reader_open(), got_buf, (int)COUNT(got_buf));
	return got_buf;
}

static struct got *read_file(const char *path, int *n)
{
	*n = read_from(pk_reader_open_file(path), got_buf, (int)COUNT(got_buf));
	return got_buf;
}

/* The one record whose text is @text: exactly one must be there. */
static const struct got *find(const struct got *g, int n, const char *text)
{
	const struct got *hit = NULL;
	int i;

	for (i = 0; i < n; i++) {
		if (!strcmp(g[i].text, text)) {
			if (hit)
				fail_msg("record \"%s\" stored twice", text);
			hit = &g[i];
		}
	}
	if (!hit)
		fail_msg("record \"%s\" not stored", text);
	return hit;
}

static bool stored_text(const struct got *g, int n, const char *needle)
{
	int i;

	for (i = 0; i < n; i++)
		if (strstr(g[i].text, needle))
			return true;
	return false;
}

#define assert_module(rec, name)                                                        \
	do {                                                                            \
		const struct got *r_ = (rec);                                           \
		if (!(name)) {                                                          \
			if (r_->has_module)                                             \
				fail_msg("\"%s\": module \"%s\", expected none", r_->text, \
					 r_->module);                                   \
		} else {                                                                \
			if (!r_->has_module)                                            \
				fail_msg("\"%s\": no module, expected \"%s\"", r_->text,   \
					 (const char *)(name));                         \
			assert_string_equal(r_->module, (name));                        \
		}                                                                       \
	} while (0)

/* ---- console text --------------------------------------------------------- */

/*
 * A human or syslog line's time stamp "[    1.234567] " (after @lead, e.g.
 * "<14>") must be well formed; returns what follows it.  Fails otherwise.
 */
static const char *after_stamp(const char *line, const char *lead)
{
	const char *p = line;
	size_t i;

	if (strncmp(p, lead, strlen(lead)))
		fail_msg("line does not start with \"%s\": %.80s", lead, line);
	p += strlen(lead);
	if (*p != '[')
		fail_msg("no time stamp: %.80s", line);
	for (p++; *p == ' '; p++)
		;
	if (*p < '0' || *p > '9')
		fail_msg("bad time stamp: %.80s", line);
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p != '.')
		fail_msg("bad time stamp: %.80s", line);
	for (i = 1; i <= 6; i++)
		if (p[i] < '0' || p[i] > '9')
			fail_msg("bad time stamp: %.80s", line);
	p += 7;
	if (p[0] != ']' || p[1] != ' ')
		fail_msg("bad time stamp: %.80s", line);
	return p + 2;
}

/*
 * Human (@lead "") or syslog (@lead "<N>") output with each line's time
 * stamp checked and taken out; lines that start with a space (a record's
 * later lines) are kept whole.  Caller frees.
 */
static char *unstamp(const char *text, const char *lead)
{
	char *out = malloc(strlen(text) + 1), *o = out;
	const char *line = text, *nl, *rest;

	assert_non_null(out);
	while (*line) {
		nl = strchr(line, '\n');
		if (!nl)
			fail_msg("unterminated line: %.80s", line);
		rest = line[0] == ' ' ? line : after_stamp(line, lead);
		memcpy(o, rest, (size_t)(nl + 1 - rest));
		o += nl + 1 - rest;
		line = nl + 1;
	}
	*o = '\0';
	return out;
}

/* kmsg output with seq and time taken out: "14,-;text" and " MODULE=x" lines. */
static char *unstamp_kmsg(const char *text)
{
	char *out = malloc(strlen(text) + 1), *o = out;
	const char *line = text, *nl, *c1, *c3, *semi;

	assert_non_null(out);
	while (*line) {
		nl = strchr(line, '\n');
		if (!nl)
			fail_msg("unterminated line: %.80s", line);
		/* A level macro's call site (test_srcloc checks those): left out. */
		if (!strncmp(line, " CODE_", 6)) {
			line = nl + 1;
			continue;
		}
		if (line[0] != ' ') {
			semi = memchr(line, ';', (size_t)(nl - line));
			c1 = semi ? memchr(line, ',', (size_t)(semi - line)) : NULL;
			c3 = c1 ? memchr(c1 + 1, ',', (size_t)(semi - c1 - 1)) : NULL;
			c3 = c3 ? memchr(c3 + 1, ',', (size_t)(semi - c3 - 1)) : NULL;
			if (!c3)
				fail_msg("not a kmsg line: %.80s", line);
			memcpy(o, line, (size_t)(c1 - line));
			o += c1 - line;
			line = c3;
			/* ",lane=L" after the flags, in a store of several lanes: left out. */
			if (!strncmp(line + 2, ",lane=", 6)) {
				memcpy(o, line, 2);
				o += 2;
				line = semi;
			}
		}
		memcpy(o, line, (size_t)(nl + 1 - line));
		o += nl + 1 - line;
		line = nl + 1;
	}
	*o = '\0';
	return out;
}

/* ---- registration, and records of each translation unit -------------------- */

static void test_registered_by_constructor(void **state)
{
	(void)state;
	/* Registered before main(), at the level PK_MODULE_REGISTER() gave. */
	assert_int_equal(netio_level_at_main, PK_INFO);
	assert_string_equal(pk__module_netio.name, "netio");
	assert_int_equal(pk__module_netio.default_level, PK_INFO);
	assert_int_equal(pk_module_get_level("netio"), PK_INFO);
	/* Registered once: a second registration of the same object is refused. */
	assert_int_equal(pk_module_register(&pk__module_netio), -EEXIST);
}

static void test_records_carry_module(void **state)
{
	struct got *g;
	int n, dummy = 0;

	(void)state;
	assert_int_equal(pk_module_set_level("netio", PK_DEBUG), 1);
	assert_true(pk_info("this info %d\n", 1) > 0);
	assert_true(pk_debug("this debug %d\n", 2) > 0);
	assert_true(pk_err("this err\n") > 0);
	assert_true(other_info(3) > 0);
	assert_true(other_debug(4, &dummy) > 0);
	assert_true(plain_info(5) > 0);
	assert_true(plain_debug(6, &dummy) > 0);
	assert_true(pk_printk(PK_INFO, "direct %d\n", 7) > 0);
	assert_true(pk_printk_mod(NULL, PK_INFO, "mod null %d\n", 8) > 0);
	assert_true(pk_printk_mod(&mod_db, PK_NOTICE, "by hand %d\n", 9) > 0);
	assert_true(pk_printk_mod(&pk__module_netio, PK_INFO, "explicit %d\n", 10) > 0);
	assert_int_equal(dummy, 2);
	g = read_live(&n);
	assert_int_equal(n, 11);
	assert_module(find(g, n, "this info 1"), "netio");
	assert_module(find(g, n, "this debug 2"), "netio");
	assert_module(find(g, n, "this err"), "netio");
	assert_module(find(g, n, "other info 3"), "netio");
	assert_module(find(g, n, "other debug 4 1"), "netio");
	assert_module(find(g, n, "plain info 5"), NULL);
	assert_module(find(g, n, "plain debug 6 2"), NULL);
	assert_module(find(g, n, "direct 7"), NULL);
	assert_module(find(g, n, "mod null 8"), NULL);
	assert_module(find(g, n, "by hand 9"), "dbcache");
	assert_module(find(g, n, "explicit 10"), "netio");
	/* The module takes nothing from the text or the level. */
	assert_int_equal(find(g, n, "this debug 2")->level, PK_DEBUG);
	assert_int_equal(find(g, n, "this err")->level, PK_ERR);
	assert_int_equal(find(g, n, "by hand 9")->level, PK_NOTICE);
	assert_int_equal(find(g, n, "this info 1")->len, strlen("this info 1"));
}

/* ---- levels ------------------------------------------------------------------ */

static int evals;
static int count(void)
{
	return ++evals;
}

static void test_level_drops(void **state)
{
	uint64_t before;
	struct got *g;
	int n, counter = 0;

	(void)state;
	assert_int_equal(pk_module_get_level("netio"), PK_INFO);
	/* pk_debug in netio at PK_INFO: not stored, 0, arguments not evaluated. */
	evals = 0;
	before = stored();
	assert_int_equal(pk_debug("dropped %d %d\n", count(), count()), 0);
	assert_int_equal(pk_debug("dropped plain\n"), 0);
	assert_int_equal(other_debug(1, &counter), 0);
	assert_int_equal(evals, 0);
	assert_int_equal(counter, 0);
	assert_int_equal(stored(), before);
	/* A level macro's own arguments are not evaluated either. */
	{
		int side = 0;

		assert_int_equal(pk_debug("side %d\n", side++), 0);
		assert_int_equal(side, 0);
	}
	/* pk_info is kept, its arguments evaluated once. */
	assert_true(pk_info("kept %d\n", count()) > 0);
	assert_int_equal(evals, 1);
	assert_int_equal(stored(), before + 1);
	/* No module: pk_debug is stored (the store keeps every level). */
	assert_true(plain_debug(2, &counter) > 0);
	assert_int_equal(counter, 1);
	assert_int_equal(stored(), before + 2);
	/* pk_printk_mod() applies the same rule, also to levels in the format. */
	assert_int_equal(pk_printk_mod(&pk__module_netio, PK_DEBUG, "mod debug\n"), 0);
	assert_int_equal(pk_printk_mod(&pk__module_netio, PK_LEVEL_DEFAULT, PK_SOH "7" "soh debug\n"),
			 0);
	assert_true(pk_printk_mod(&pk__module_netio, PK_LEVEL_DEFAULT, PK_SOH "6" "soh info\n") > 0);
	assert_true(pk_printk_mod(&pk__module_netio, PK_LEVEL_DEFAULT, "default level\n") > 0);
	assert_int_equal(stored(), before + 4);

	/* The boundary moves with the level. */
	assert_int_equal(pk_module_set_level("netio", PK_WARNING), 1);
	assert_int_equal(pk_module_get_level("netio"), PK_WARNING);
	assert_int_equal(pk_notice("notice at warning\n"), 0);
	assert_true(pk_warn("warn at warning\n") > 0);
	assert_int_equal(other_info(3), 0);
	assert_int_equal(stored(), before + 5);

	/* PK_MODULE_OFF: nothing, not even pk_emerg. */
	assert_int_equal(pk_module_set_level("netio", PK_MODULE_OFF), 1);
	assert_int_equal(pk_module_get_level("netio"), PK_MODULE_OFF);
	evals = 0;
	assert_int_equal(pk_emerg("emerg while off %d\n", count()), 0);
	assert_int_equal(pk_printk_mod(&pk__module_netio, PK_EMERG, "mod emerg off\n"), 0);
	assert_int_equal(evals, 0);
	assert_int_equal(stored(), before + 5);
	/* Other modules and code outside modules are unaffected. */
	assert_true(pk_printk_mod(&mod_db, PK_DEBUG, "db debug\n") > 0);
	assert_true(plain_info(4) > 0);
	assert_int_equal(stored(), before + 7);

	/* PK_DEBUG: everything. */
	assert_int_equal(pk_module_set_level("netio", PK_DEBUG), 1);
	assert_true(pk_debug("debug at debug %d\n", count()) > 0);
	assert_int_equal(evals, 1);
	assert_true(other_debug(5, &counter) > 0);
	assert_int_equal(counter, 2);
	assert_int_equal(stored(), before + 9);

	g = read_live(&n);
	assert_false(stored_text(g, n, "dropped"));
	assert_false(stored_text(g, n, "side"));
	assert_false(stored_text(g, n, "mod debug"));
	assert_false(stored_text(g, n, "soh debug"));
	assert_false(stored_text(g, n, "notice at warning"));
	assert_false(stored_text(g, n, "other info 3"));
	assert_false(stored_text(g, n, "off"));
	assert_module(find(g, n, "kept 1"), "netio");
	assert_module(find(g, n, "plain debug 2 1"), NULL);
	assert_int_equal(find(g, n, "soh info")->level, PK_INFO);
	assert_module(find(g, n, "soh info"), "netio");
	assert_module(find(g, n, "default level"), "netio");
	assert_module(find(g, n, "warn at warning"), "netio");
	assert_module(find(g, n, "db debug"), "dbcache");
	assert_module(find(g, n, "debug at debug 1"), "netio");
	assert_module(find(g, n, "other debug 5 2"), "netio");
}

struct listed {
	char names[16][40];
	int levels[16];
	int n;
	int stop_at;
};

static int list_cb(const char *name, int level, void *arg)
{
	struct listed *l = arg;

	if (l->n < 16) {
		snprintf(l->names[l->n], sizeof(l->names[0]), "%s", name);
		l->levels[l->n] = level;
	}
	l->n++;
	return l->stop_at && l->n == l->stop_at ? 1000 + l->n : 0;
}

static void test_level_api(void **state)
{
	struct pk_module m = { .name = "tmpmod", .level = PK_NOTICE, .default_level = PK_NOTICE };
	struct pk_module max31 = { .name = "m234567890123456789012345678901", .level = PK_ERR, .default_level = PK_ERR };
	struct pk_module bad = { .name = "", .level = PK_INFO, .default_level = PK_INFO };
	struct listed l;
	char name32[33];
	int i;

	(void)state;
	/* An exact name: the number of modules set. */
	assert_int_equal(pk_module_set_level("netio", PK_NOTICE), 1);
	assert_int_equal(pk_module_get_level("netio"), PK_NOTICE);
	assert_int_equal(pk_module_set_level("nosuchmodule", PK_NOTICE), 0);
	assert_int_equal(pk_module_get_level("nosuchmodule"), -ENOENT);
	assert_int_equal(pk_module_get_level("netio_"), -ENOENT);
	assert_int_equal(pk_module_get_level("neti"), -ENOENT);
	assert_int_equal(pk_module_get_level(NULL), -EINVAL);

	/* Bad patterns and levels: -EINVAL, nothing changed. */
	memset(name32, 'a', 32);
	name32[32] = '\0';
	assert_int_equal(pk_module_set_level(NULL, PK_INFO), -EINVAL);
	assert_int_equal(pk_module_set_level("", PK_INFO), -EINVAL);
	assert_int_equal(pk_module_set_level(name32, PK_INFO), -EINVAL);
	assert_int_equal(pk_module_set_level("a-b", PK_INFO), -EINVAL);
	assert_int_equal(pk_module_set_level("net io", PK_INFO), -EINVAL);
	assert_int_equal(pk_module_set_level("net.io", PK_INFO), -EINVAL);
	assert_int_equal(pk_module_set_level("netio,", PK_INFO), -EINVAL);
	assert_int_equal(pk_module_set_level("netio", -2), -EINVAL);
	assert_int_equal(pk_module_set_level("netio", 8), -EINVAL);
	assert_int_equal(pk_module_set_level("*", 8), -EINVAL);
	assert_int_equal(pk_module_get_level("netio"), PK_NOTICE);
	assert_int_equal(pk_module_get_level("dbcache"), PK_DEBUG);

	/* Registration: names and levels checked, twice refused. */
	assert_int_equal(pk_module_register(NULL), -EINVAL);
	assert_int_equal(pk_module_register(&bad), -EINVAL);		/* empty */
	bad.name = name32;
	assert_int_equal(pk_module_register(&bad), -EINVAL);		/* 32 characters */
	bad.name = "a-b";
	assert_int_equal(pk_module_register(&bad), -EINVAL);
	bad.name = "a*";
	assert_int_equal(pk_module_register(&bad), -EINVAL);		/* a pattern is no name */
	bad.name = NULL;
	assert_int_equal(pk_module_register(&bad), -EINVAL);
	bad.name = "badlevel";
	bad.level = bad.default_level = 8;
	assert_int_equal(pk_module_register(&bad), -EINVAL);
	bad.level = bad.default_level = -2;
	assert_int_equal(pk_module_register(&bad), -EINVAL);
	assert_int_equal(pk_module_get_level("badlevel"), -ENOENT);

	assert_int_equal(pk_module_register(&max31), 0);
	assert_int_equal(pk_module_get_level(max31.name), PK_ERR);
	assert_int_equal(pk_module_register(&m), 0);
	assert_int_equal(pk_module_register(&m), -EEXIST);
	assert_int_equal(pk_module_get_level("tmpmod"), PK_NOTICE);
	assert_int_equal(pk_module_set_level("tmpmod", PK_CRIT), 1);
	assert_int_equal(pk_module_get_level("tmpmod"), PK_CRIT);
	assert_int_equal(m.level, PK_CRIT);
	assert_int_equal(m.default_level, PK_NOTICE);

	/* Listed in registration order: netio (constructor) first, tmpmod last. */
	memset(&l, 0, sizeof(l));
	i = pk_module_list_cb(list_cb, &l);
	assert_int_equal(i, l.n);
	assert_true(l.n >= 6 && l.n <= 16);
	assert_string_equal(l.names[0], "netio");
	assert_int_equal(l.levels[0], PK_NOTICE);
	assert_string_equal(l.names[l.n - 1], "tmpmod");
	assert_int_equal(l.levels[l.n - 1], PK_CRIT);
	assert_string_equal(l.names[l.n - 2], max31.name);
	/* A callback that stops the walk: its value is returned. */
	memset(&l, 0, sizeof(l));
	l.stop_at = 2;
	assert_int_equal(pk_module_list_cb(list_cb, &l), 1002);
	assert_int_equal(l.n, 2);
	assert_int_equal(pk_module_list_cb(NULL, NULL), -EINVAL);

	assert_true(pk_printk_mod(&m, PK_CRIT, "tmpmod record\n") > 0);
	assert_int_equal(pk_printk_mod(&m, PK_ERR, "tmpmod dropped\n"), 0);
	/* Unregistered: unknown again; twice, or never registered, is ignored. */
	pk_module_unregister(&m);
	assert_int_equal(pk_module_get_level("tmpmod"), -ENOENT);
	pk_module_unregister(&m);
	pk_module_unregister(&bad);
	pk_module_unregister(NULL);
	assert_int_equal(pk_module_set_level("tmpmod", PK_INFO), 0);
	memset(&l, 0, sizeof(l));
	pk_module_list_cb(list_cb, &l);
	assert_string_equal(l.names[l.n - 1], max31.name);
	pk_module_unregister(&max31);
	assert_int_equal(pk_module_get_level(max31.name), -ENOENT);
	/* And may register again (the list's tail was fixed up). */
	assert_int_equal(pk_module_register(&m), 0);
	memset(&l, 0, sizeof(l));
	pk_module_list_cb(list_cb, &l);
	assert_string_equal(l.names[l.n - 1], "tmpmod");
	/* "tmpmod" was kept as a pattern at PK_INFO: registering applies it. */
	assert_int_equal(pk_module_get_level("tmpmod"), PK_INFO);
	pk_module_unregister(&m);
	assert_int_equal(pk_module_get_level("tmpmod"), -ENOENT);
	assert_int_equal(pk_module_get_level("netio"), PK_NOTICE);
	/* A module used without registering: its level and name all the same. */
	{
		struct pk_module loose = { .name = "loose", .level = PK_WARNING,
					   .default_level = PK_WARNING };
		const struct got *r;
		struct got *g;
		int n;

		assert_true(pk_printk_mod(&loose, PK_WARNING, "loose record\n") > 0);
		assert_int_equal(pk_printk_mod(&loose, PK_NOTICE, "loose dropped\n"), 0);
		assert_int_equal(pk_module_get_level("loose"), -ENOENT);
		g = read_live(&n);
		/* Records keep the name of a module unregistered since. */
		r = find(g, n, "tmpmod record");
		assert_module(r, "tmpmod");
		assert_int_equal(r->level, PK_CRIT);
		assert_module(find(g, n, "loose record"), "loose");
		assert_false(stored_text(g, n, "dropped"));
	}
}

/* ---- continuations ---------------------------------------------------------- */

static void test_cont(void **state)
{
	uint64_t before;
	struct got *g;
	char *out, *u;
	int n;

	(void)state;
	/* A line netio's level dropped takes its continuations with it. */
	before = stored();
	assert_int_equal(pk_debug("dropped open"), 0);
	assert_int_equal(pk_cont(" dropped cont"), 0);
	assert_int_equal(other_cont(" dropped other"), 0);
	assert_int_equal(pk_cont(" dropped end\n"), 0);
	assert_int_equal(stored(), before);
	/* ... also one that pk_printk_mod() dropped, and continued outside the module. */
	assert_int_equal(pk_printk_mod(&pk__module_netio, PK_DEBUG, "mod dropped"), 0);
	assert_int_equal(pk_printk(PK_LEVEL_CONT, " cont without module\n"), 0);
	assert_int_equal(stored(), before);

	/* A kept open line: continuations extend it; the prefix is shown once. */
	assert_true(pk_info("kept open") > 0);
	assert_true(pk_cont(" +a") > 0);
	assert_true(other_cont(" +b") > 0);
	assert_true(pk_cont(" +end\n") > 0);
	/* A new kept line after a dropped one is not dropped by it. */
	assert_int_equal(pk_debug("dropped again"), 0);
	assert_true(pk_info("fresh") > 0);
	assert_true(pk_cont(" tail\n") > 0);
	/*
	 * A complete line dropped between an open line and its continuation
	 * (another file's, say) leaves the open line as it was: the
	 * continuation is kept and joins it.
	 */
	assert_true(pk_info("value:") > 0);
	assert_int_equal(other_debug(1, &(int){ 0 }), 0);
	assert_true(pk_cont(" 42\n") > 0);
	/* Outside modules: unchanged. */
	assert_true(plain_info(1) > 0);
	out = printed();
	u = unstamp(out, "");
	assert_string_equal(u, "netio: kept open +a +b +end\n"
			       "netio: fresh tail\n"
			       "netio: value: 42\n"
			       "plain info 1\n");
	assert_int_equal(tu_count(out, "netio: "), 3);
	free(u);
	free(out);
	g = read_live(&n);
	assert_int_equal(n, 4);
	assert_module(find(g, n, "kept open +a +b +end"), "netio");
	assert_int_equal(find(g, n, "kept open +a +b +end")->flags & PK_REC_CONT, 0);
	assert_module(find(g, n, "fresh tail"), "netio");
	assert_false(stored_text(g, n, "dropped"));
	assert_false(stored_text(g, n, "cont without"));
}

/*
 * A continuation from code outside the module, of a netio line the
 * watcher may have finalised meanwhile (about 50 ms after it was stored):
 * joined or not, its text belongs to a netio record; and the other way
 * round for a plain line continued by netio's code.
 */
static void test_cont_unjoined(void **state)
{
	struct got *g;
	int n, i, seen = 0;

	(void)state;
	assert_true(pk_info("netio line") > 0);
	usleep(200000);
	assert_true(plain_cont(" plain tail\n") > 0);
	assert_true(plain_open(1) > 0);
	usleep(200000);
	assert_true(pk_cont(" netio tail\n") > 0);
	g = read_live(&n);
	for (i = 0; i < n; i++) {
		if (strstr(g[i].text, "plain tail")) {
			assert_module(&g[i], "netio");
			seen++;
		}
		if (strstr(g[i].text, "netio tail")) {
			assert_module(&g[i], NULL);
			seen++;
		}
	}
	assert_int_equal(seen, 2);
}

/* ---- <printk/kernel.h> -------------------------------------------------------- */

static void test_kernel_h(void **state)
{
	uint64_t before;
	struct got *g;
	char *out, *u;
	int n;

	(void)state;
	before = stored();
	assert_true(kern_info(1) > 0);
	assert_int_equal(kern_debug(2), 0);		/* netio at PK_INFO */
	assert_true(kern_printk_default(3) > 0);	/* the default level, PK_WARNING */
	assert_int_equal(stored(), before + 2);
	assert_int_equal(pk_module_set_level("netio", PK_DEBUG), 1);
	assert_true(kern_debug(4) > 0);
	assert_int_equal(pk_module_set_level("netio", PK_ERR), 1);
	assert_int_equal(kern_info(5), 0);
	assert_int_equal(kern_printk_default(6), 0);
	assert_int_equal(kern_open(7), 0);	/* an open line dropped ... */
	assert_int_equal(kern_cont(" cont of nothing\n"), 0);	/* ... takes its pr_cont */
	assert_int_equal(stored(), before + 3);
	out = printed();
	u = unstamp(out, "");
	assert_string_equal(u, "netio: kern info 1\n"
			       "netio: kern default 3\n"
			       "netio: kern debug 4\n");
	free(u);
	free(out);
	g = read_live(&n);
	assert_int_equal(n, 3);
	assert_module(find(g, n, "kern info 1"), "netio");
	assert_int_equal(find(g, n, "kern info 1")->level, PK_INFO);
	assert_module(find(g, n, "kern default 3"), "netio");
	assert_int_equal(find(g, n, "kern default 3")->level, PK_WARNING);
	assert_module(find(g, n, "kern debug 4"), "netio");
	assert_int_equal(find(g, n, "kern debug 4")->level, PK_DEBUG);
}

/*
 * pr_debug() as a dynamic debug site (kernel.h's default) in a module's
 * file: enabled (DEBUG), it is stored at PK_DEBUG whatever the module's
 * level (the site's own switch is the more specific one, as the kernel's
 * enabled pr_debug() prints at KERN_DEBUG), carries the module, and its
 * dynamic debug module is the module's name.
 */
static void test_kernel_h_dyndbg(void **state)
{
	const struct got *r;
	uint64_t before;
	struct got *g;
	int n;

	(void)state;
	before = stored();
	assert_true(kdyn_info(1) > 0);
	kdyn_debug(2);				/* netio at PK_INFO: stored all the same */
	assert_int_equal(pk_module_set_level("netio", PK_DEBUG), 1);
	kdyn_debug(3);
	g = read_live(&n);
	assert_module(find(g, n, "kdyn info 1"), "netio");
	r = find(g, n, "kdyn debug 2");
	if (!r->has_module)
		fail_msg("pr_debug() (a dynamic debug site) in module netio: no module");
	assert_module(r, "netio");
	assert_int_equal(r->level, PK_DEBUG);
	assert_module(find(g, n, "kdyn debug 3"), "netio");
	assert_int_equal(stored(), before + 3);
	/* Switched off by its module's name, the site stores nothing. */
	assert_int_equal(pk_dyndbg_exec("module netio file module_kdyn.c -p", NULL, 0), 1);
	kdyn_debug(4);
	assert_int_equal(stored(), before + 3);
	assert_int_equal(pk_dyndbg_exec("module netio file module_kdyn.c +p", NULL, 0), 1);
}

/* ---- console formats --------------------------------------------------------- */

static void test_format_human(void **state)
{
	char *out, *u, want[512];
	const char *two, *bol;
	size_t col;

	(void)state;
	assert_true(pk_info("human %d\n", 1) > 0);
	assert_true(pk_printk(PK_INFO, "no module %d\n", 2) > 0);
	assert_true(plain_info(3) > 0);
	assert_true(other_info(4) > 0);
	assert_true(pk_printk_mod(&mod_db, PK_ERR, "db err\n") > 0);
	assert_true(pk_info("two\nlines\n") > 0);
	out = printed();
	/* The later line of a record is indented under its text, past the module. */
	two = strstr(out, "] netio: two\n");
	assert_non_null(two);
	for (bol = two; bol > out && bol[-1] != '\n'; bol--)
		;
	col = (size_t)(two + strlen("] netio: ") - bol);
	assert_true(col < 64);
	snprintf(want, sizeof(want), "netio: human 1\n"
				     "no module 2\n"
				     "plain info 3\n"
				     "netio: other info 4\n"
				     "dbcache: db err\n"
				     "netio: two\n"
				     "%*slines\n", (int)col, "");
	u = unstamp(out, "");
	assert_string_equal(u, want);
	assert_int_equal(tu_count(out, "netio: "), 3);
	free(u);
	free(out);

	/* With the thread id: "[T1234] " comes before the module. */
	tu_capture_clear(cap);
	assert_int_equal(pk_console_set_format(con, PK_FMT_HUMAN | PK_FMT_F_TID), 0);
	assert_true(pk_info("with tid\n") > 0);
	assert_true(pk_printk(PK_INFO, "tid none\n") > 0);
	out = printed();
	snprintf(want, sizeof(want), "[T%ld] netio: with tid\n[T%ld] tid none\n",
		 (long)syscall(SYS_gettid), (long)syscall(SYS_gettid));
	u = unstamp(out, "");
	assert_string_equal(u, want);
	free(u);
	free(out);
}

static void test_format_syslog_kmsg_json(void **state)
{
	struct pk__rfc5424_id id = { .facility = -1, .pid = 1 };
	char *out, *u, want[256], msg[PK_RFC5424_MSG_MAX + 1];
	const char *line, *nl;
	size_t m;
	int pid = (int)getpid();
	long tid = (long)syscall(SYS_gettid);

	(void)state;
	assert_int_equal(pk_console_set_format(con, PK_FMT_SYSLOG), 0);
	assert_true(pk_info("syslog %d\n", 1) > 0);
	assert_true(pk_printk(PK_ERR, "syslog none\n") > 0);
	out = printed();
	/* user.info, then user.err */
	assert_int_equal(tu_count(out, "\n"), 2);
	nl = strchr(out, '\n');
	assert_memory_equal(after_stamp(out, "<14>"), "netio: syslog 1\n", 16);
	assert_string_equal(after_stamp(nl + 1, "<11>"), "syslog none\n");
	free(out);

	tu_capture_clear(cap);
	assert_int_equal(pk_console_set_format(con, PK_FMT_KMSG), 0);
	assert_true(pk_info("kmsg %d\n", 1) > 0);
	assert_true(pk_printk(PK_INFO, "kmsg none\n") > 0);
	assert_true(pk_printk_mod(&mod_db, PK_WARNING, "kmsg db\\x\n") > 0);
	out = printed();
	u = unstamp_kmsg(out);
	assert_string_equal(u, "14,-;kmsg 1\n"
			       " MODULE=netio\n"
			       "14,-;kmsg none\n"
			       "12,-;kmsg db\\x5cx\n"
			       " MODULE=dbcache\n");
	free(u);
	free(out);

	tu_capture_clear(cap);
	assert_int_equal(pk_console_set_format(con, PK_FMT_JSON), 0);
	assert_true(pk_info("json %d\n", 1) > 0);
	assert_true(pk_printk(PK_INFO, "json none\n") > 0);
	out = printed();
	assert_int_equal(tu_count(out, "\n"), 2);
	/* The module, then the level macro's call site (test_srcloc), then the text. */
	snprintf(want, sizeof(want),
		 "\"level\":6,\"facility\":1,\"pid\":%d,\"tid\":%ld,\"module\":\"netio\","
		 "\"file\":\"%s\",", pid, tid, __FILE__);
	assert_int_equal(tu_count(out, want), 1);
	assert_int_equal(tu_count(out, "\"func\":\"test_format_syslog_kmsg_json\","
				  "\"text\":\"json 1\"}\n"), 1);
	snprintf(want, sizeof(want),
		 "\"level\":6,\"facility\":1,\"pid\":%d,\"tid\":%ld,\"text\":\"json none\"}\n", pid,
		 tid);
	assert_int_equal(tu_count(out, want), 1);
	assert_int_equal(tu_count(out, "\"module\""), 1);

	/* RFC 5424 (syslog+udp and friends render the JSON line): MSGID is the module. */
	pk__rfc5424_id_names(&id, "h", "app");
	line = out;
	nl = strchr(line, '\n');
	m = pk__rfc5424_render(&id, line, (size_t)(nl + 1 - line), msg, sizeof(msg) - 1);
	msg[m] = '\0';
	snprintf(want, sizeof(want), " h app %d netio [printk@32473 ", pid);
	assert_non_null(strstr(msg, want));
	assert_true(m > 8 && !strcmp(msg + m - 8, "] json 1"));
	line = nl + 1;
	nl = strchr(line, '\n');
	m = pk__rfc5424_render(&id, line, (size_t)(nl + 1 - line), msg, sizeof(msg) - 1);
	msg[m] = '\0';
	snprintf(want, sizeof(want), " h app %d - [printk@32473 ", pid);
	assert_non_null(strstr(msg, want));
	free(out);
}

/* ---- the consoles' module filter --------------------------------------------- */

/* One record of each kind, tagged @tag. */
static void emit_each(const char *tag)
{
	assert_true(pk_info("%s netio\n", tag) > 0);
	assert_true(pk_printk(PK_INFO, "%s none\n", tag) > 0);
	assert_true(pk_printk_mod(&mod_db, PK_INFO, "%s dbcache\n", tag) > 0);
	assert_true(pk_printk_mod(&mod_netstat, PK_INFO, "%s netstat\n", tag) > 0);
}

static uint64_t skipped_of(struct pk_console *c)
{
	struct pk_console_stats st;

	assert_int_equal(pk_console_stats_get(c, &st), 0);
	return st.skipped;
}

/* Set @filter (expecting @ret), print one of each, compare with @want. */
static void filter_case(const char *filter, int ret, const char *want, unsigned filtered)
{
	uint64_t before;
	char *out, *u;

	tu_capture_clear(cap);
	before = skipped_of(con);
	assert_int_equal(pk_console_set_modules(con, filter), ret);
	emit_each("f");
	out = printed();
	u = unstamp(out, "");
	if (strcmp(u, want))
		fail_msg("filter \"%s\": printed\n%s\nexpected\n%s", filter ? filter : "(null)", u,
			 want);
	assert_int_equal(skipped_of(con) - before, filtered);
	free(u);
	free(out);
}

#define ALL	"netio: f netio\nf none\ndbcache: f dbcache\nnetstat: f netstat\n"

static void test_console_filter(void **state)
{
	struct tu_capture *cap2 = tu_capture_new(0);
	struct pk_console *con2;
	char long_ok[256], too_long[257];
	char *out;

	(void)state;
	con2 = pk_console_register(&tu_capture_ops, cap2, 8);
	assert_non_null(con2);
	filter_case(NULL, 0, ALL, 0);
	filter_case("netio", 0, "netio: f netio\n", 3);
	filter_case("-", 0, "f none\n", 3);
	filter_case("net*,-", 0, "netio: f netio\nf none\nnetstat: f netstat\n", 1);
	filter_case("net*", 0, "netio: f netio\nnetstat: f netstat\n", 2);
	filter_case("db?ache,netio", 0, "netio: f netio\ndbcache: f dbcache\n", 2);
	filter_case("*", 0, "netio: f netio\ndbcache: f dbcache\nnetstat: f netstat\n", 1);
	filter_case("*,-", 0, ALL, 0);
	filter_case("nomatch", 0, "", 4);
	filter_case("", 0, ALL, 0);
	filter_case("NETIO", 0, "", 4);		/* names are case-sensitive */
	filter_case(NULL, 0, ALL, 0);
	/* A bad filter is refused and the one in force stays. */
	filter_case("netio", 0, "netio: f netio\n", 3);
	filter_case("net io", -EINVAL, "netio: f netio\n", 3);
	filter_case("netio\n", -EINVAL, "netio: f netio\n", 3);
	filter_case("net.io", -EINVAL, "netio: f netio\n", 3);
	filter_case("netio=7", -EINVAL, "netio: f netio\n", 3);
	memset(too_long, 'a', 256);
	too_long[256] = '\0';
	memcpy(too_long, "dbcache,", 8);
	filter_case(too_long, -EINVAL, "netio: f netio\n", 3);
	/* 255 bytes are allowed. */
	memset(long_ok, 'b', 255);
	long_ok[255] = '\0';
	memcpy(long_ok, "dbcache,", 8);
	filter_case(long_ok, 0, "dbcache: f dbcache\n", 3);
	memcpy(long_ok + 255 - 7, ",netio", 7);
	assert_int_equal(strlen(long_ok), 254);
	filter_case(long_ok, 0, "netio: f netio\ndbcache: f dbcache\n", 2);
	assert_int_equal(pk_console_set_modules(NULL, "netio"), -EINVAL);
	assert_int_equal(pk_console_set_modules(NULL, NULL), -EINVAL);
	/* The other console was never filtered. */
	assert_int_equal(pk_flush(10000), 0);
	out = tu_capture_text(cap2);
	assert_int_equal(tu_count(out, "] netio: f netio\n"), 20);
	assert_int_equal(tu_count(out, "] f none\n"), 20);
	assert_int_equal(tu_count(out, "] dbcache: f dbcache\n"), 20);
	assert_int_equal(tu_count(out, "] netstat: f netstat\n"), 20);
	assert_int_equal(skipped_of(con2), 0);
	free(out);
	assert_int_equal(pk_console_unregister(con2), 0);
	tu_capture_free(cap2);
}

/*
 * Filters changed on one thread while others print.  Every filter of the
 * cycle leaves out module zzmod and takes netio: zzmod is never printed,
 * every line printed is one of the lines written, whole, and printed +
 * filtered + lost adds up to what was stored.
 */
#define STRESS_WRITERS	3

static atomic_int stress_stop;

static void *stress_writer(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg, i;
	unsigned n = tu_scaled(tu_sanitized_thread() ? 1500 : 4000);

	for (i = 0; i < n; i++) {
		switch (i % 4) {
		case 0: TU_CHECK(pk_info("stress %u %u\n", w, i) > 0); break;
		case 1: TU_CHECK(pk_printk(PK_INFO, "stress %u %u\n", w, i) > 0); break;
		case 2: TU_CHECK(pk_printk_mod(&mod_db, PK_INFO, "stress %u %u\n", w, i) > 0); break;
		case 3: TU_CHECK(pk_printk_mod(&mod_zz, PK_INFO, "stress %u %u\n", w, i) > 0); break;
		}
	}
	return NULL;
}

static void *stress_setter(void *arg)
{
	static char longest[256];
	const char *filters[] = { "netio", "netio,dbcache", "net*,-", "-,netio", longest,
				  "n?tio,db*", "netio,d*" };
	unsigned long *changes = arg;
	size_t i = 0;

	memset(longest, 'q', 255);
	memcpy(longest, "netio,", 6);
	memcpy(longest + 255 - 10, ",dbcache,-", 10);
	while (!atomic_load(&stress_stop)) {
		TU_CHECK(pk_console_set_modules(con, filters[i++ % COUNT(filters)]) == 0);
		(*changes)++;
		sched_yield();	/* a busy setter, not a spinning one */
	}
	return NULL;
}

/* One run in @mode; returns how many zzmod records were printed. */
static unsigned run_stress(enum pk_mode mode)
{
	pthread_t writers[STRESS_WRITERS], setter;
	struct pk_console_stats st;
	uint64_t before_stored, printed_lines = 0;
	unsigned long changes = 0;
	char *out, *line, *nl;
	const char *rest;
	unsigned w, i, kind, zz = 0, bad = 0;
	unsigned n = tu_scaled(tu_sanitized_thread() ? 1500 : 4000);
	char want[64], tail;

	start(mode, 0, NULL, 16 << 20);
	assert_int_equal(pk_console_set_modules(con, "netio"), 0);
	before_stored = stored();
	atomic_store(&stress_stop, 0);
	assert_int_equal(pthread_create(&setter, NULL, stress_setter, &changes), 0);
	for (w = 0; w < STRESS_WRITERS; w++)
		assert_int_equal(pthread_create(&writers[w], NULL, stress_writer,
						(void *)(uintptr_t)w), 0);
	for (w = 0; w < STRESS_WRITERS; w++)
		pthread_join(writers[w], NULL);
	assert_int_equal(pk_flush(60000), 0);
	atomic_store(&stress_stop, 1);
	pthread_join(setter, NULL);
	assert_int_equal(stored() - before_stored, (uint64_t)STRESS_WRITERS * n);
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	out = tu_capture_text(cap);
	for (line = out; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		assert_non_null(nl);
		*nl = '\0';
		printed_lines++;
		if (strstr(line, "zzmod")) {
			zz++;
			continue;
		}
		rest = after_stamp(line, "");
		kind = 1;			/* no module */
		if (!strncmp(rest, "netio: ", 7)) {
			rest += 7;
			kind = 0;
		} else if (!strncmp(rest, "dbcache: ", 9)) {
			rest += 9;
			kind = 2;
		}
		if (sscanf(rest, "stress %u %u%c", &w, &i, &tail) != 2 || w >= STRESS_WRITERS ||
		    i >= n || i % 4 != kind) {
			if (bad++ < 5)
				print_message("garbage line: \"%s\"\n", line);
			continue;
		}
		snprintf(want, sizeof(want), "stress %u %u", w, i);
		if (strcmp(rest, want) && bad++ < 5)
			print_message("wrong line: \"%s\"\n", line);
	}
	print_message("%s: %lu filter changes, %llu lines printed, %llu filtered, %llu lost\n",
		      mode == PK_MODE_THREAD ? "thread" : "handoff", changes,
		      (unsigned long long)printed_lines, (unsigned long long)st.skipped,
		      (unsigned long long)st.dropped);
	assert_int_equal(bad, 0);
	assert_int_equal(st.records, printed_lines);
	assert_int_equal(st.records + st.skipped + st.dropped, (uint64_t)STRESS_WRITERS * n);
	assert_true(printed_lines >= (uint64_t)STRESS_WRITERS * n / 4);	/* netio's are always taken */
	free(out);
	stop();
	return zz;
}

static void test_filter_concurrent(void **state)
{
	unsigned zz_handoff, zz_thread;

	(void)state;
	zz_handoff = run_stress(PK_MODE_HANDOFF);
	zz_thread = run_stress(PK_MODE_THREAD);
	if (zz_handoff || zz_thread)
		fail_msg("records of zzmod printed, which no filter in force took: %u (handoff), "
			 "%u (thread)", zz_handoff, zz_thread);
}

/* ---- the store file, pkmsg ---------------------------------------------------- */

static void write_module_store(const char *path)
{
	start(PK_MODE_HANDOFF, 0, path, SMALL_STORE);
	assert_true(pk_info("file netio %d\n", 1) > 0);
	assert_true(pk_printk(PK_INFO, "file none %d\n", 2) > 0);
	assert_true(other_info(3) > 0);
	assert_true(pk_printk_mod(&mod_db, PK_WARNING, "file db %d\n", 4) > 0);
	assert_int_equal(pk_debug("file dropped\n"), 0);
	assert_true(pk_warn("file two\nlines\n") > 0);
	stop();
}

static void test_store_file(void **state)
{
	char *path = tu_tmp_path("module-store");
	struct got *g;
	int n;

	(void)state;
	write_module_store(path);
	g = read_file(path, &n);
	assert_int_equal(n, 5);
	assert_string_equal(g[0].text, "file netio 1");
	assert_module(&g[0], "netio");
	assert_string_equal(g[1].text, "file none 2");
	assert_module(&g[1], NULL);
	assert_string_equal(g[2].text, "other info 3");
	assert_module(&g[2], "netio");
	assert_string_equal(g[3].text, "file db 4");
	assert_module(&g[3], "dbcache");
	assert_int_equal(g[3].level, PK_WARNING);
	assert_string_equal(g[4].text, "file two\nlines");
	assert_module(&g[4], "netio");
	unlink(path);
	free(path);
}

static void test_store_after_sigkill(void **state)
{
	char *path = tu_tmp_path("module-kill");
	int ready[2], status, n;
	struct got *g;
	pid_t pid;
	char c;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pk_config cfg;

		close(ready[0]);
		pk_config_init(&cfg);
		cfg.buffer_path = path;
		cfg.buffer_size = SMALL_STORE;
		/* Thread mode without consoles: no thread (ThreadSanitizer after fork). */
		cfg.mode = PK_MODE_THREAD;
		cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
		if (pk_init(&cfg))
			_exit(1);
		if (pk_info("killed netio %d\n", 1) <= 0 || pk_printk(PK_INFO, "killed none\n") <= 0 ||
		    other_info(2) <= 0 || pk_debug("killed dropped\n") != 0 ||
		    pk_printk_mod(&mod_db, PK_ERR, "killed db\n") <= 0 ||
		    pk_info("killed open %d", 3) <= 0)	/* no newline: left open */
			_exit(2);
		if (write(ready[1], "k", 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (poll(&(struct pollfd){ ready[0], POLLIN, 0 }, 1, CHILD_MS) != 1 ||
	    read(ready[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		tu_waitpid(pid, &status, CHILD_MS, "module store writer");
		fail_msg("the writer failed (status %d)", status);
	}
	close(ready[0]);
	kill(pid, SIGKILL);
	tu_waitpid(pid, &status, CHILD_MS, "module store writer");
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	g = read_file(path, &n);
	assert_int_equal(n, 5);
	assert_string_equal(g[0].text, "killed netio 1");
	assert_module(&g[0], "netio");
	assert_string_equal(g[1].text, "killed none");
	assert_module(&g[1], NULL);
	assert_string_equal(g[2].text, "other info 2");
	assert_module(&g[2], "netio");
	assert_string_equal(g[3].text, "killed db");
	assert_module(&g[3], "dbcache");
	assert_string_equal(g[4].text, "killed open 3");	/* the open record, post-mortem */
	assert_module(&g[4], "netio");
	unlink(path);
	free(path);
}

#define PKMSG(rc, out, ...)                                                             \
	({                                                                              \
		const char *const argv_[] = { PKMSG_PATH, __VA_ARGS__, NULL };          \
		char *e_;                                                               \
		int r_ = tu_run(argv_, NULL, &(out), &e_);                            \
		if (r_ != (rc))                                                         \
			fail_msg("pkmsg exited %d, expected %d: %s", r_, (rc), e_);     \
		e_;                                                                     \
	})

/*
 * pkmsg -F @path --module @modules prints @want (time stamps taken out; an
 * "@" in @want stands for the indent of a record's later line: as wide as
 * the stamp and "netio: ").
 */
static void pkmsg_expect(const char *path, const char *modules, const char *want)
{
	char *out, *err, *u, full[512];
	size_t k = 0, col = 0;
	const char *w;

	err = PKMSG(0, out, "-F", path, "--module", modules);
	if (*out)
		col = (size_t)(after_stamp(out, "") - out) + strlen("netio: ");
	for (w = want; *w && k + col + 1 < sizeof(full); w++) {
		if (*w == '@') {
			memset(full + k, ' ', col);
			k += col;
		} else {
			full[k++] = *w;
		}
	}
	full[k] = '\0';
	u = unstamp(out, "");
	if (strcmp(u, full))
		fail_msg("pkmsg --module %s printed\n%s\nexpected\n%s", modules, u, full);
	free(u);
	free(out);
	free(err);
}

static void test_pkmsg_module(void **state)
{
	char *path = tu_tmp_path("module-pkmsg"), *out, *err, *u;
	char indent[64];
	const char *two;

	(void)state;
	write_module_store(path);
	/* Every record; the second line of the last indented past "netio: ". */
	err = PKMSG(0, out, "-F", path);
	two = strstr(out, "] netio: file two\n");
	assert_non_null(two);
	{
		const char *bol = two;

		while (bol > out && bol[-1] != '\n')
			bol--;
		memset(indent, ' ', sizeof(indent));
		snprintf(indent + (two + 9 - bol), sizeof(indent) - (size_t)(two + 9 - bol),
			 "lines\n");
		assert_string_equal(strchr(two, '\n') + 1, indent);
	}
	u = unstamp(out, "");
	free(out);
	free(err);
	two = strstr(u, "netio: file two\n");
	assert_non_null(two);
	assert_int_equal(strncmp(u, "netio: file netio 1\n"
				    "file none 2\n"
				    "netio: other info 3\n"
				    "dbcache: file db 4\n"
				    "netio: file two\n", strlen(u) - strlen(two) + 16), 0);
	free(u);
	pkmsg_expect(path, "netio", "netio: file netio 1\nnetio: other info 3\nnetio: file two\n@lines\n");
	pkmsg_expect(path, "-", "file none 2\n");
	pkmsg_expect(path, "db*,-", "file none 2\ndbcache: file db 4\n");
	pkmsg_expect(path, "n?tio", "netio: file netio 1\nnetio: other info 3\nnetio: file two\n@lines\n");
	pkmsg_expect(path, "nomatch", "");
	/* The other formats carry it too. */
	err = PKMSG(0, out, "--json", "--module", "dbcache", "-F", path);
	assert_int_equal(tu_count(out, "\n"), 1);
	assert_int_equal(tu_count(out, "\"module\":\"dbcache\",\"text\":\"file db 4\"}\n"), 1);
	free(out);
	free(err);
	err = PKMSG(0, out, "--raw", "--module", "netio", "-F", path);
	u = unstamp_kmsg(out);
	assert_string_equal(u, "14,-;file netio 1\n MODULE=netio\n"
			       "14,-;other info 3\n MODULE=netio\n"
			       "12,-;file two\\x0alines\n MODULE=netio\n");
	free(u);
	free(out);
	free(err);
	/* A bad list: exit 2, said on stderr, nothing printed. */
	err = PKMSG(2, out, "--module", "net io", "-F", path);
	assert_string_equal(out, "");
	assert_non_null(strstr(err, "net io"));
	free(out);
	free(err);
	err = PKMSG(2, out, "--module", "", "-F", path);
	assert_string_equal(out, "");
	free(out);
	free(err);
	err = PKMSG(2, out, "--module", "netio=7", "-F", path);
	free(out);
	free(err);
	{
		char big[300];

		memset(big, 'a', 256);
		big[256] = '\0';
		err = PKMSG(2, out, "--module", big, "-F", path);
		free(out);
		free(err);
	}
	unlink(path);
	free(path);
}

/* ---- deferred and eager -------------------------------------------------------- */

static void module_corpus(void)
{
	int dummy = 0;

	pk_info("deferred %d %s %u\n", -1, "str", 42u);
	pk_info("%s\n", "only a string");
	pk_info("no args\n");
	pk_printk_mod(&mod_db, PK_NOTICE, "db %d %lld\n", -5, 1LL << 40);
	pk_printk(PK_INFO, "plain %d\n", 3);
	pk_info("open %d", 4);
	pk_cont(" joined %s\n", "here");
	other_info(5);
	other_debug(6, &dummy);		/* dropped at PK_INFO */
	plain_debug(7, &dummy);
	pk_warn("multi\nline %d\n", 8);
	errno = ENOENT;
	pk_info("errno %m\n");
	pk_info("pct 100%% %5s|\n", "r");
	kern_info(9);
	pk_printk_mod(&pk__module_netio, PK_LEVEL_DEFAULT, PK_SOH "3" "soh %d\n", 10);
}

static char *run_module_corpus(unsigned flags, uint64_t *eager)
{
	struct pk_stats st;
	char *text;

	start(PK_MODE_HANDOFF, flags, NULL, 1 << 20);
	assert_int_equal(pk_console_set_format(con, PK_FMT_KMSG), 0);
	module_corpus();
	assert_int_equal(pk_flush(10000), 0);
	assert_int_equal(pk_stats_get(&st), 0);
	*eager = st.eager;
	text = tu_capture_text(cap);
	stop();
	return text;
}

static void test_deferred_and_eager(void **state)
{
	static const char want[] = "14,-;deferred -1 str 42\n MODULE=netio\n"
				   "14,-;only a string\n MODULE=netio\n"
				   "14,-;no args\n MODULE=netio\n"
				   "13,-;db -5 1099511627776\n MODULE=dbcache\n"
				   "14,-;plain 3\n"
				   "14,-;open 4 joined here\n MODULE=netio\n"
				   "14,-;other info 5\n MODULE=netio\n"
				   "15,-;plain debug 7 1\n"	/* other_debug() evaluated nothing */
				   "12,-;multi\\x0aline 8\n MODULE=netio\n"
				   "14,-;errno No such file or directory\n MODULE=netio\n"
				   "14,-;pct 100%     r|\n MODULE=netio\n"
				   "14,-;kern info 9\n MODULE=netio\n"
				   "11,-;soh 10\n MODULE=netio\n";
	uint64_t n_deferred, n_eager;
	char *deferred, *eager, *ud, *ue;

	(void)state;
	deferred = run_module_corpus(0, &n_deferred);
	eager = run_module_corpus(PK_CFG_EAGER, &n_eager);
	ud = unstamp_kmsg(deferred);
	ue = unstamp_kmsg(eager);
	assert_string_equal(ud, want);
	assert_string_equal(ue, want);
	/* The first run did defer module records; the second formatted all at the call. */
	print_message("formatted at the call: deferred run %llu, eager run %llu\n",
		      (unsigned long long)n_deferred, (unsigned long long)n_eager);
	assert_true(n_deferred + 8 <= n_eager);
	free(ud);
	free(ue);
	free(deferred);
	free(eager);
}

/* ---- PK_RECORD_MAX ------------------------------------------------------------- */

/* A text of PK_RECORD_MAX + @extra bytes: @mark, then @fill. */
static char *max_text(char mark, char fill, size_t extra)
{
	static char bufs[8][PK_RECORD_MAX + 4];
	static unsigned k;
	char *t = bufs[k++ % 8];

	memset(t, fill, PK_RECORD_MAX + extra);
	t[0] = mark;
	t[PK_RECORD_MAX + extra] = '\0';
	return t;
}

/* The record of text @text, cut to @len. */
static const struct got *find_cut(const struct got *g, int n, const char *text, size_t len)
{
	char want[PK_RECORD_MAX + 4];

	memcpy(want, text, len);
	want[len] = '\0';
	return find(g, n, want);
}

static void check_max(unsigned flags)
{
	static struct pk_module long_name = { .name = "m234567890123456789012345678901",
					      .level = PK_DEBUG, .default_level = PK_DEBUG };
	const char *netio_max = max_text('N', 'x', 0), *plain_max = max_text('P', 'x', 0),
		   *long_max = max_text('L', 'x', 0), *open_max = max_text('O', 'x', 0),
		   *cont_max = max_text('C', 'x', 0), *netio_over = max_text('n', 'y', 1),
		   *plain_over = max_text('p', 'y', 1), *pack_max = max_text('K', 'z', 0);
	struct pk_stats st0, st1;
	const struct got *r;
	struct got *g;
	char *out;
	int n;

	start(PK_MODE_HANDOFF, flags, NULL, 1 << 20);
	assert_int_equal(pk_stats_get(&st0), 0);
	/* Exactly PK_RECORD_MAX text bytes: whole, in netio as without a module. */
	assert_true(pk_info("%s\n", netio_max) > 0);
	assert_true(pk_printk(PK_INFO, "%s\n", plain_max) > 0);
	assert_true(pk_printk_mod(&long_name, PK_INFO, "%s\n", long_max) > 0);
	/* A format alone (deferred unless eager). */
	{
		char fmt[PK_RECORD_MAX + 2];

		memcpy(fmt, pack_max, PK_RECORD_MAX);
		fmt[PK_RECORD_MAX] = '\n';
		fmt[PK_RECORD_MAX + 1] = '\0';
		assert_true(pk_printk_mod(&pk__module_netio, PK_INFO, fmt, 0) > 0);
	}
	/* Left open, then ended by the next record. */
	assert_true(pk_printk_mod(&pk__module_netio, PK_INFO, "%s", open_max) > 0);
	/* Built from an open line and a continuation up to the maximum. */
	assert_true(pk_info("%.*s", 1000, cont_max) > 0);
	assert_true(pk_cont("%s\n", cont_max + 1000) > 0);
	/* One more byte: cut, flagged. */
	assert_true(pk_info("%s\n", netio_over) > 0);
	assert_true(pk_printk(PK_INFO, "%s\n", plain_over) > 0);
	assert_int_equal(pk_stats_get(&st1), 0);
	assert_int_equal(st1.truncated - st0.truncated, 2);
	/* Short formats, long texts (deferred: cut when formatted, unless eager). */
	assert_true(pk_info("%1024d\n", 8) > 0);
	assert_true(pk_info("%1025d\n", 9) > 0);
	out = printed();
	g = read_live(&n);
	assert_int_equal(n, 10);
	{
		char want[PK_RECORD_MAX + 2];

		snprintf(want, sizeof(want), "%1024d", 8);
		r = find(g, n, want);
		assert_module(r, "netio");
		assert_int_equal(r->flags & PK_REC_TRUNC, 0);
		memset(want, ' ', PK_RECORD_MAX);	/* "%1025d" cut: 1024 spaces */
		want[PK_RECORD_MAX] = '\0';
		r = find(g, n, want);
		assert_module(r, "netio");
		assert_int_equal(r->len, PK_RECORD_MAX);
		assert_true(r->flags & PK_REC_TRUNC);
	}
	r = find(g, n, netio_max);
	assert_module(r, "netio");
	assert_int_equal(r->len, PK_RECORD_MAX);
	assert_int_equal(r->flags & PK_REC_TRUNC, 0);
	r = find(g, n, plain_max);
	assert_module(r, NULL);
	assert_int_equal(r->flags & PK_REC_TRUNC, 0);
	r = find(g, n, long_max);
	assert_module(r, long_name.name);
	assert_int_equal(r->flags & PK_REC_TRUNC, 0);
	r = find(g, n, pack_max);
	assert_module(r, "netio");
	assert_int_equal(r->flags & PK_REC_TRUNC, 0);
	r = find(g, n, open_max);
	assert_module(r, "netio");
	assert_int_equal(r->flags & PK_REC_TRUNC, 0);
	r = find(g, n, cont_max);
	assert_module(r, "netio");
	assert_int_equal(r->flags & (PK_REC_TRUNC | PK_REC_CONT), 0);
	r = find_cut(g, n, netio_over, PK_RECORD_MAX);
	assert_module(r, "netio");
	assert_int_equal(r->len, PK_RECORD_MAX);
	assert_true(r->flags & PK_REC_TRUNC);
	r = find_cut(g, n, plain_over, PK_RECORD_MAX);
	assert_module(r, NULL);
	assert_true(r->flags & PK_REC_TRUNC);
	/* The console shows them whole too, behind the module. */
	{
		char line[PK_RECORD_MAX + 64];

		snprintf(line, sizeof(line), "] netio: %s\n", netio_max);
		assert_int_equal(tu_count(out, line), 1);
		snprintf(line, sizeof(line), "] %s: %s\n", long_name.name, long_max);
		assert_int_equal(tu_count(out, line), 1);
		snprintf(line, sizeof(line), "] netio: %s\n", cont_max);
		assert_int_equal(tu_count(out, line), 1);
		snprintf(line, sizeof(line), "] netio: %.*s\n", PK_RECORD_MAX, netio_over);
		assert_int_equal(tu_count(out, line), 1);
	}
	free(out);
	stop();
}

static void test_record_max(void **state)
{
	(void)state;
	check_max(0);
	check_max(PK_CFG_EAGER);
}

/* ---- a hostile store -------------------------------------------------------------- */

struct crafted {
	const char *text;
	size_t len;
	uint16_t flags;
};

static void test_hostile_prefix(void **state)
{
	static char big[PK_RING_TEXT_MAX + 1], bigmod[PK_RING_TEXT_MAX + 1];
	char *path = tu_tmp_path("module-hostile");
	struct crafted c[] = {
		{ "\x00" "len zero", 9, PK__REC_MODULE },
		{ "\x20" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa rest", 38, PK__REC_MODULE },	/* 32 */
		{ "\x1f" "short", 6, PK__REC_MODULE },		/* beyond the text */
		{ "\x05" "net", 4, PK__REC_MODULE },		/* one beyond */
		{ "\x03" "a b text", 9, PK__REC_MODULE },
		{ "\x03" "a\nb text", 9, PK__REC_MODULE },
		{ "\x04" "ne\xffo text", 10, PK__REC_MODULE },
		{ "\x05" "ne/io text", 11, PK__REC_MODULE },
		{ "\x05" "ne:io text", 11, PK__REC_MODULE },
		{ "\x01", 1, PK__REC_MODULE },			/* the length byte alone */
		{ "", 0, PK__REC_MODULE },			/* nothing at all */
		{ "\x05" "netio", 6, PK__REC_MODULE },		/* a module, empty text */
		{ "\x05" "netio" "good text", 15, PK__REC_MODULE },
		{ "\x05" "netio" "no flag", 13, 0 },		/* a prefix, not flagged */
		{ big, PK_RING_TEXT_MAX, 0 },			/* too long without a prefix */
		{ bigmod, PK_RING_TEXT_MAX, PK__REC_MODULE },	/* too long with one */
	};
	struct pk_ring ring;
	struct stat st;
	struct got *g;
	char *out, *err;
	void *mem;
	size_t i;
	int fd, n;

	(void)state;
	memset(big, 'b', PK_RING_TEXT_MAX);
	memcpy(bigmod, "\x05" "netio", 6);
	memset(bigmod + 6, 'm', PK_RING_TEXT_MAX - 6);
	/* A store file made by the library, then records written into it by hand. */
	start(PK_MODE_THREAD, 0, path, SMALL_STORE);
	stop();
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(mem != MAP_FAILED);
	assert_int_equal(pk__ring_attach(&ring, mem, (size_t)st.st_size), 0);
	for (i = 0; i < COUNT(c); i++) {
		struct pk_ring_meta m = { .ts_ns = tu_now_ns(), .pid = (uint32_t)getpid(),
					  .tid = 7, .level = PK_INFO, .facility = 1,
					  .flags = c[i].flags };

		assert_int_equal(pk__ring_write(&ring, &m, c[i].text, (uint32_t)c[i].len, false,
						NULL), 0);
	}
	munmap(mem, (size_t)st.st_size);
	close(fd);

	g = read_file(path, &n);
	assert_int_equal(n, (int)COUNT(c));
	/* A prefix that is not one stays in the text, all of it: nothing is lost. */
	for (i = 0; i < 11; i++) {
		if (g[i].len != c[i].len || memcmp(g[i].text, c[i].text, c[i].len))
			fail_msg("crafted record %zu: text changed (%zu bytes, expected %zu)", i,
				 g[i].len, c[i].len);
		assert_module(&g[i], NULL);
		assert_int_equal(g[i].flags & PK_REC_TRUNC, 0);
	}
	assert_module(&g[11], "netio");
	assert_int_equal(g[11].len, 0);
	assert_module(&g[12], "netio");
	assert_string_equal(g[12].text, "good text");
	assert_module(&g[13], NULL);
	assert_int_equal(g[13].len, 13);
	assert_memory_equal(g[13].text, "\x05netiono flag", 13);
	/* Longer than PK_RECORD_MAX without a prefix: cut and flagged, as stored. */
	assert_module(&g[14], NULL);
	assert_int_equal(g[14].len, PK_RECORD_MAX);
	assert_true(g[14].flags & PK_REC_TRUNC);
	assert_memory_equal(g[14].text, big, PK_RECORD_MAX);
	/* With a prefix: the module, then the text cut to PK_RECORD_MAX. */
	assert_module(&g[15], "netio");
	assert_int_equal(g[15].len, PK_RECORD_MAX);
	assert_true(g[15].flags & PK_REC_TRUNC);
	assert_memory_equal(g[15].text, bigmod + 6, PK_RECORD_MAX);

	/* pkmsg reads it too: the bad prefixes shown escaped, as text. */
	err = PKMSG(0, out, "--module", "-", "-F", path);
	/* 0-10, 13 and 14; "a\nb" is two lines. */
	assert_int_equal(tu_count(out, "\n"), 11 + 2 + 1);
	assert_non_null(strstr(out, "] \\x00len zero\n"));
	assert_non_null(strstr(out, "] \\x03a b text\n"));
	assert_non_null(strstr(out, "] \\x05ne/io text\n"));
	assert_non_null(strstr(out, "] \\x05netiono flag\n"));
	assert_null(strstr(out, "netio: "));
	free(out);
	free(err);
	err = PKMSG(0, out, "--module", "netio", "-F", path);
	assert_int_equal(tu_count(out, "] netio: "), 3);
	assert_int_equal(tu_count(out, "] netio: good text\n"), 1);
	free(out);
	free(err);
	unlink(path);
	free(path);
}

/* ---- a fresh process: PK_MODULES, and the patterns kept -------------------------- */

/* Run this program as a child with TEST_MODULE_CHILD=@child (and PK_MODULES=@modules). */
static int run_self(const char *child, const char *modules, const char *arg, char **out,
		    char **err)
{
	static const char *const pass[] = { "TMPDIR=", "ASAN_OPTIONS=", "UBSAN_OPTIONS=",
					    "TSAN_OPTIONS=", "LSAN_OPTIONS=", "PATH=" };
	extern char **environ;
	char self[4096], childvar[128], modvar[1024], *envp[16];
	const char *argv[] = { self, arg, NULL };
	size_t k = 0, i;
	char **e;
	ssize_t len;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(len > 0);
	self[len] = '\0';
	snprintf(childvar, sizeof(childvar), "TEST_MODULE_CHILD=%s", child);
	envp[k++] = childvar;
	if (modules) {
		snprintf(modvar, sizeof(modvar), "PK_MODULES=%s", modules);
		envp[k++] = modvar;
	}
	for (e = environ; *e; e++)
		for (i = 0; i < COUNT(pass); i++)
			if (!strncmp(*e, pass[i], strlen(pass[i])) && k < COUNT(envp) - 1)
				envp[k++] = *e;
	envp[k] = NULL;
	return tu_run(argv, envp, out, err);
}

#define BAD_ENTRIES	{ "bad-name=3", "x=9", "=2", "nolevel", \
			  "toolongpatternxxxxxxxxxxxxxxxxxx=1", "y=", "z=07", "q=offx" }

/* The child: netio's level before main(), then modules registered later. */
static int child_env(void)
{
	static struct pk_module dbc = { .name = "dbcache", .level = PK_INFO, .default_level = PK_INFO };
	static struct pk_module late = { .name = "latecomer", .level = PK_INFO, .default_level = PK_INFO };
	static struct pk_module w = { .name = "w", .level = PK_INFO, .default_level = PK_INFO };
	static struct pk_module reread = { .name = "reread", .level = PK_INFO, .default_level = PK_INFO };
	static struct pk_module other = { .name = "other", .level = PK_NOTICE, .default_level = PK_NOTICE };
	struct pk_config cfg;

	printf("netio=%d\n", netio_level_at_main);
	if (pk_module_register(&dbc) || pk_module_register(&late) || pk_module_register(&w) ||
	    pk_module_register(&other))
		return 10;
	printf("dbcache=%d latecomer=%d w=%d other=%d\n", pk_module_get_level("dbcache"),
	       pk_module_get_level("latecomer"), pk_module_get_level("w"),
	       pk_module_get_level("other"));
	/* Read once: a change of the variable now does nothing. */
	setenv("PK_MODULES", "reread=0", 1);
	if (pk_module_register(&reread))
		return 11;
	printf("reread=%d\n", pk_module_get_level("reread"));
	fflush(stdout);
	/* What the levels let through, on a stderr console. */
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_ATEXIT;
	cfg.consoles = "stderr";
	cfg.console_loglevel = 8;
	if (pk_init(&cfg))
		return 12;
	pk_debug("env debug %d\n", 1);
	pk_printk_mod(&dbc, PK_EMERG, "env db emerg\n");
	pk_printk_mod(&late, PK_CRIT, "env late crit\n");
	pk_printk_mod(&late, PK_ERR, "env late err\n");
	pk_flush(10000);
	pk_shutdown();
	return 0;
}

static void test_env_modules(void **state)
{
	static const char *const bad[] = BAD_ENTRIES;
	char modules[512], want[128], *out, *err;
	size_t i;
	int rc;

	(void)state;
	snprintf(modules, sizeof(modules), "netio=7,%s,db*=off,%s,%s,%s,,late*=2,%s,%s,%s,w=off,%s",
		 bad[0], bad[1], bad[2], bad[3], bad[4], bad[5], bad[6], bad[7]);
	rc = run_self("env", modules, NULL, &out, &err);
	if (rc)
		fail_msg("child exited %d: %s%s", rc, out, err);
	assert_string_equal(out, "netio=7\n"
				 "dbcache=-1 latecomer=2 w=-1 other=5\n"
				 "reread=6\n");
	/* Each malformed entry said once on stderr, naming it; the others applied. */
	for (i = 0; i < COUNT(bad); i++) {
		snprintf(want, sizeof(want), "\"%s\"", bad[i]);
		if (tu_count(err, want) != 1)
			fail_msg("malformed PK_MODULES entry %s not reported once:\n%s", want, err);
	}
	assert_int_equal(tu_count(err, "PK_MODULES"), COUNT(bad));
	assert_int_equal(tu_count(err, "] netio: env debug 1\n"), 1);
	assert_int_equal(tu_count(err, "] latecomer: env late crit\n"), 1);
	assert_null(strstr(err, "env db emerg"));
	assert_null(strstr(err, "env late err"));
	free(out);
	free(err);

	/* Without PK_MODULES: the registered level. */
	rc = run_self("env", NULL, NULL, &out, &err);
	if (rc)
		fail_msg("child exited %d: %s%s", rc, out, err);
	assert_string_equal(out, "netio=6\n"
				 "dbcache=6 latecomer=6 w=6 other=5\n"
				 "reread=6\n");
	assert_null(strstr(err, "PK_MODULES"));
	assert_int_equal(tu_count(err, "] netio: env debug"), 0);
	assert_int_equal(tu_count(err, "] dbcache: env db emerg\n"), 1);
	assert_int_equal(tu_count(err, "] latecomer: env late err\n"), 1);
	free(out);
	free(err);
}

/*
 * The child: records stored from a signal handler before the library is
 * set up go to the static early store, with their module, and keep it when
 * they move into the store at pk_init().  Prints each record read back as
 * "module|len|flags|text" (text cut at 40 bytes).
 */
static void early_handler(int sig)
{
	int dummy = 0;

	(void)sig;
	pk_info("early netio %d\n", 1);
	pk_debug("early dropped %d\n", 2);
	pk_printk(PK_INFO, "early none %d\n", 3);
	other_debug(4, &dummy);
	pk_printk_mod(&mod_db, PK_ERR, "early db %d\n", 5);
	pk_info("%s\n", max_text('E', 'e', 0));
	pk_info("%s\n", max_text('F', 'f', 1));
}

static int child_early(void)
{
	struct pk_config cfg;
	struct pk_reader *r;
	struct pk_record rec;

	if (pk_module_register(&mod_db))
		return 10;
	signal(SIGUSR1, early_handler);
	raise(SIGUSR1);
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_ATEXIT;
	cfg.consoles = "stderr";
	cfg.console_loglevel = 8;
	if (pk_init(&cfg))
		return 11;
	r = pk_reader_open();
	if (!r)
		return 12;
	while (pk_reader_next(r, &rec) == 1)
		printf("%s|%zu|%u|%.40s\n", rec.module ? rec.module : "-", rec.len,
		       rec.flags & (PK_REC_TRUNC | PK_REC_CONT), rec.text);
	pk_reader_close(r);
	fflush(stdout);
	pk_flush(10000);
	pk_shutdown();
	return 0;
}

static void test_early_store(void **state)
{
	char *out, *err;
	int rc;

	(void)state;
	rc = run_self("early", NULL, NULL, &out, &err);
	if (rc)
		fail_msg("child exited %d: %s%s", rc, out, err);
	assert_string_equal(out, "netio|13|0|early netio 1\n"
				 "-|12|0|early none 3\n"
				 "dbcache|10|0|early db 5\n"
				 "netio|1024|0|Eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee\n"
				 "netio|1024|2|Ffffffffffffffffffffffffffffffffffffffff\n");
	assert_int_equal(tu_count(err, "] netio: early netio 1\n"), 1);
	assert_int_equal(tu_count(err, "] early none 3\n"), 1);
	assert_int_equal(tu_count(err, "] dbcache: early db 5\n"), 1);
	assert_null(strstr(err, "dropped"));
	assert_null(strstr(err, "other debug"));
	free(out);
	free(err);
}

/* The patterns kept, in a child whose table is empty at the start. */
static void child_patterns(void **state)
{
#define MOD(v, n, l) static struct pk_module v = { .name = n, .level = l, .default_level = l }
	MOD(netstat, "netstat", PK_INFO);
	MOD(db1, "db1", PK_INFO);
	MOD(db22, "db22", PK_INFO);
	MOD(dbcache, "dbcache", PK_INFO);
	MOD(latecomer, "latecomer", PK_INFO);
	MOD(lwx, "lwx", PK_INFO);
	MOD(lwy, "lwy", PK_INFO);
	MOD(rpx_before, "rpx", PK_INFO);
	MOD(rpx_after, "rpx", PK_INFO);
	MOD(twin, "netio", PK_ERR);
	MOD(full1, "full1", PK_INFO);
	MOD(full2, "full2", PK_INFO);
	char pat[32];
	int i, used;

	(void)state;
	assert_int_equal(pk_module_get_level("netio"), PK_INFO);
	assert_int_equal(pk_module_register(&netstat), 0);
	assert_int_equal(pk_module_register(&db1), 0);
	assert_int_equal(pk_module_register(&db22), 0);
	assert_int_equal(pk_module_register(&dbcache), 0);
	/* '*': netio and netstat; '?': one character. */
	assert_int_equal(pk_module_set_level("net*", PK_DEBUG), 2);		/* 1 */
	assert_int_equal(pk_module_get_level("netio"), PK_DEBUG);
	assert_int_equal(pk_module_get_level("netstat"), PK_DEBUG);
	assert_int_equal(pk_module_set_level("db?", PK_ERR), 1);		/* 2 */
	assert_int_equal(pk_module_get_level("db1"), PK_ERR);
	assert_int_equal(pk_module_get_level("db22"), PK_INFO);
	assert_int_equal(pk_module_get_level("dbcache"), PK_INFO);
	assert_int_equal(pk_module_set_level("db??", PK_CRIT), 1);		/* 3 */
	assert_int_equal(pk_module_get_level("db22"), PK_CRIT);
	assert_int_equal(pk_module_set_level("d*e", PK_ALERT), 1);		/* 4 */
	assert_int_equal(pk_module_get_level("dbcache"), PK_ALERT);
	assert_int_equal(pk_module_set_level("*", PK_NOTICE), 5);		/* 5 */
	assert_int_equal(pk_module_get_level("db1"), PK_NOTICE);
	assert_int_equal(pk_module_set_level("*o", PK_WARNING), 1);		/* 6 */
	assert_int_equal(pk_module_get_level("netio"), PK_WARNING);
	assert_int_equal(pk_module_set_level("n*t*", PK_WARNING), 2);		/* 7 */
	assert_int_equal(pk_module_set_level("?", PK_WARNING), 0);		/* 8 */

	/* A pattern set before a module registers applies when it does. */
	assert_int_equal(pk_module_set_level("late*", PK_CRIT), 0);		/* 9 */
	assert_int_equal(pk_module_register(&latecomer), 0);
	assert_int_equal(pk_module_get_level("latecomer"), PK_CRIT);
	assert_int_equal(latecomer.default_level, PK_INFO);
	/* The last pattern that matches wins. */
	assert_int_equal(pk_module_set_level("lw*", PK_ALERT), 0);		/* 10 */
	assert_int_equal(pk_module_set_level("lwx", PK_ERR), 0);		/* 11 */
	assert_int_equal(pk_module_register(&lwx), 0);
	assert_int_equal(pk_module_register(&lwy), 0);
	assert_int_equal(pk_module_get_level("lwx"), PK_ERR);
	assert_int_equal(pk_module_get_level("lwy"), PK_ALERT);
	/*
	 * The same pattern again replaces its level, and counts as given last:
	 * a module registered after the calls gets what one registered before
	 * them ended with.
	 */
	assert_int_equal(pk_module_register(&rpx_before), 0);
	assert_int_equal(pk_module_set_level("rp*", PK_ERR), 1);		/* 12 */
	assert_int_equal(pk_module_set_level("rpx", PK_DEBUG), 1);		/* 13 */
	assert_int_equal(pk_module_set_level("rp*", PK_NOTICE), 1);		/* 12 again */
	assert_int_equal(pk_module_get_level("rpx"), PK_NOTICE);
	pk_module_unregister(&rpx_before);
	assert_int_equal(pk_module_register(&rpx_after), 0);
	assert_int_equal(pk_module_get_level("rpx"), PK_NOTICE);
	assert_int_equal(rpx_after.level, PK_NOTICE);
	/* Two modules of one name: both set, get_level gives the first. */
	assert_int_equal(pk_module_register(&twin), 0);
	assert_int_equal(twin.level, PK_WARNING);	/* "*o", then "n*t*" */
	assert_int_equal(pk_module_set_level("netio", PK_EMERG), 2);		/* 14 */
	assert_int_equal(twin.level, PK_EMERG);
	assert_int_equal(pk__module_netio.level, PK_EMERG);
	__atomic_store_n(&twin.level, PK_ALERT, __ATOMIC_RELAXED);
	assert_int_equal(pk_module_get_level("netio"), PK_EMERG);	/* the first */
	pk_module_unregister(&twin);
	assert_int_equal(pk_module_get_level("netio"), PK_EMERG);

	/* 32 patterns are kept; the 33rd distinct one is refused. */
	used = 14;
	for (i = used; i < 32; i++) {
		snprintf(pat, sizeof(pat), "fill%d", i);
		assert_int_equal(pk_module_set_level(pat, PK_INFO), 0);
	}
	assert_int_equal(pk_module_set_level("fill99", PK_INFO), -ENOSPC);
	/* Refused as a pattern, but the modules registered now are set. */
	assert_int_equal(pk_module_set_level("dbcache", PK_DEBUG), -ENOSPC);
	assert_int_equal(pk_module_get_level("dbcache"), PK_DEBUG);
	/* ... and not kept for later ones. */
	assert_int_equal(pk_module_set_level("full?", PK_CRIT), -ENOSPC);
	assert_int_equal(pk_module_register(&full1), 0);
	assert_int_equal(pk_module_get_level("full1"), PK_NOTICE);	/* "*" of before */
	/* A pattern kept already is not new: it may change. */
	assert_int_equal(pk_module_set_level("fill20", PK_ERR), 0);
	/* netio netstat db1 db22 dbcache latecomer lwx lwy rpx full1 */
	assert_int_equal(pk_module_set_level("*", PK_DEBUG), 10);
	assert_int_equal(pk_module_register(&full2), 0);
	assert_int_equal(pk_module_get_level("full2"), PK_DEBUG);
	/* Bad input is still -EINVAL, not -ENOSPC. */
	assert_int_equal(pk_module_set_level("a-b", PK_INFO), -EINVAL);
	assert_int_equal(pk_module_set_level("fill20", 8), -EINVAL);
#undef MOD
}

static void test_patterns_fresh_process(void **state)
{
	char *out, *err;
	int rc;

	(void)state;
	rc = run_self("patterns", NULL, "child_patterns", &out, &err);
	if (rc)
		fail_msg("child_patterns failed (exit %d):\n%s%s", rc, out, err);
	assert_non_null(strstr(out, "child_patterns"));
	free(out);
	free(err);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_registered_by_constructor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_records_carry_module, setup, teardown),
		cmocka_unit_test_setup_teardown(test_level_drops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_level_api, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cont, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cont_unjoined, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_h, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_h_dyndbg, setup, teardown),
		cmocka_unit_test_setup_teardown(test_format_human, setup, teardown),
		cmocka_unit_test_setup_teardown(test_format_syslog_kmsg_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_console_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filter_concurrent, setup_bare, teardown_bare),
		cmocka_unit_test_setup_teardown(test_store_file, setup_bare, teardown_bare),
		cmocka_unit_test_setup_teardown(test_store_after_sigkill, setup_bare, teardown_bare),
		cmocka_unit_test_setup_teardown(test_pkmsg_module, setup_bare, teardown_bare),
		cmocka_unit_test_setup_teardown(test_deferred_and_eager, setup_bare, teardown_bare),
		cmocka_unit_test_setup_teardown(test_record_max, setup_bare, teardown_bare),
		cmocka_unit_test_setup_teardown(test_hostile_prefix, setup_bare, teardown_bare),
		cmocka_unit_test_setup_teardown(test_env_modules, setup_bare, teardown_bare),
		cmocka_unit_test_setup_teardown(test_early_store, setup_bare, teardown_bare),
		cmocka_unit_test_setup_teardown(test_patterns_fresh_process, setup_bare,
						teardown_bare),
	};
	const struct CMUnitTest child_tests[] = {
		cmocka_unit_test(child_patterns),
	};
	const char *child = getenv("TEST_MODULE_CHILD");

	netio_level_at_main = pk_module_get_level("netio");
	if (child && !strcmp(child, "env"))
		return child_env();
	if (child && !strcmp(child, "early"))
		return child_early();
	if (child && !strcmp(child, "patterns"))
		return TU_RUN_GROUP(child_tests, NULL, NULL, argc, argv);
	if (pk_module_register(&mod_db) || pk_module_register(&mod_netstat) ||
	    pk_module_register(&mod_zz)) {
		fprintf(stderr, "test_module: registering the hand-made modules failed\n");
		return 1;
	}
	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
