// SPDX-License-Identifier: MIT
/*
 * runtime_config.c - changing consoles while the program runs: add one
 * from a PK_CONSOLE-style spec, add a debug log, change its format and
 * loglevel, and remove it again.
 *
 *   ./printk_runtime_config DIR      (writes DIR/app.log and DIR/debug.log)
 *
 * The program starts with the default console (stderr, or what PK_CONSOLE
 * says), as every libprintk program does.  Then, as a daemon would after
 * reading its configuration file:
 *
 *   1. pk_console_register_spec("file:DIR/app.log@notice"): a log file
 *      that gets notices and worse.  The spec is PK_CONSOLE's syntax.
 *   2. An operator turns debugging on: a second file console, made with
 *      pk_console_file_make() so that we hold its handle, printing every
 *      level, with thread ids (PK_FMT_F_TID).
 *   3. pk_console_set_format(): the debug log switches to JSON Lines for
 *      a log shipper.
 *   4. pk_console_set_loglevel(): the debug log keeps warnings and worse.
 *   5. pk_console_unregister(): debugging off, the file is closed.
 *
 * Two rules show here:
 *  - A console registered late starts at the oldest record still stored,
 *    as a kernel console prints the log buffer's backlog: the debug log
 *    gets the debug lines from startup too, stored before it existed.
 *  - A console's loglevel and format apply when a record is printed, not
 *    when it is stored.  pk_flush() before a change makes sure that what
 *    was logged before it is printed under the old setting.
 */
#include <printk/console.h>
#include <printk/printk.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>

static int fail(const char *what, int err)
{
	fprintf(stderr, "%s: %s\n", what, pk_strerror(err));
	return 1;
}

int main(int argc, char **argv)
{
	char spec[PATH_MAX + 32], path[PATH_MAX];
	struct pk_console_driver drv;
	struct pk_console *dbg;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	/* The default console, from PK_CONSOLE or stderr. */
	ret = pk_init(NULL);
	if (ret < 0)
		return fail("pk_init", ret);
	pk_info("startup: listening on port 8080\n");
	pk_debug("startup: 12 routes loaded\n");

	/* 1. A log file for notices and worse, in PK_CONSOLE's syntax. */
	snprintf(spec, sizeof(spec), "file:%s/app.log@notice", argv[1]);
	ret = pk_console_register_spec(spec);
	if (ret != 1)
		return fail("pk_console_register_spec", ret < 0 ? ret : -EINVAL);
	pk_notice("running: configuration loaded\n");
	pk_info("running: request served\n");
	pk_warn("running: cache 90%% full\n");

	/* 2. Debugging on: a file console for every level, with thread ids. */
	snprintf(path, sizeof(path), "%s/debug.log", argv[1]);
	ret = pk_console_file_make(path, 0, &drv);
	if (ret < 0)
		return fail(path, ret);
	drv.format = PK_FMT_HUMAN | PK_FMT_F_TID;
	dbg = pk_console_register_driver(&drv, PK_DEBUG + 1);	/* level < 8: all */
	if (!dbg)
		return fail("pk_console_register_driver", -errno);
	pk_debug("debug-on: request 17: parsed 3 headers\n");
	pk_info("debug-on: request 17 served\n");

	/* 3. The same console, now as JSON Lines. */
	pk_flush(5000);		/* what came before stays human-readable */
	ret = pk_console_set_format(dbg, PK_FMT_JSON);
	if (ret < 0)
		return fail("pk_console_set_format", ret);
	pk_debug("json: request 18: parsed 5 headers\n");
	pk_info("json: request 18 served\n");

	/* 4. Quieter: warnings and worse only. */
	pk_flush(5000);
	ret = pk_console_set_loglevel(dbg, PK_WARNING + 1);
	if (ret < 0)
		return fail("pk_console_set_loglevel", ret);
	pk_info("quiet: request 19 served\n");
	pk_warn("quiet: request 19 slow (2 s)\n");

	/* 5. Debugging off: flush, then unregister (closes the file). */
	pk_flush(5000);
	ret = pk_console_unregister(dbg);
	if (ret < 0)
		return fail("pk_console_unregister", ret);
	pk_warn("after: debug log closed\n");

	return pk_flush(5000) == 0 ? 0 : 1;
}
