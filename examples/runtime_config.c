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
 * reading its configuration file and later on an operator's request:
 *
 *   1. pk_console_register_spec(): a log file for notices and worse, in
 *      PK_CONSOLE's syntax, its path quoted so that it may hold any
 *      character, named "app".
 *   2. Debugging on: a second file console for every level, with thread
 *      ids, named "debug"; pk_console_find() gives its handle.  And
 *      pk_set_loglevel() makes the consoles that follow the global
 *      loglevel (stderr here) print debug lines too.
 *   3. pk_console_set_format(): the debug log switches to JSON Lines for
 *      a log shipper; the global loglevel goes back to its default.
 *   4. pk_console_set_loglevel(): the debug log keeps warnings and worse.
 *   5. pk_console_unregister(): debugging off, the file is closed.
 *
 * Two rules show here:
 *  - A console registered late starts at the oldest record still stored,
 *    as a kernel console prints the log buffer's backlog: the debug log
 *    gets the debug line from startup too, stored before it existed.
 *  - A loglevel or format applies when a record is printed, not when it
 *    is stored.  pk_flush() before a change makes sure that what was
 *    logged before it is printed under the old setting (in thread mode a
 *    printer thread may not have got to it yet).
 */
#include <printk/console.h>
#include <printk/printk.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *what, int err)
{
	fprintf(stderr, "%s: %s\n", what, pk_strerror(err));
	return 1;
}

/*
 * A file: entry of PK_CONSOLE's syntax for @path, followed by @rest: the
 * path in double quotes, with '"' and '\\' escaped, so that a ',' '@' or
 * '%' in it is not taken for the syntax's.  Return: 0, -ENAMETOOLONG.
 */
static int file_entry(char *out, size_t size, const char *path, const char *rest)
{
	size_t n = 6;

	if (size < 8)
		return -ENAMETOOLONG;
	memcpy(out, "file:\"", n);
	for (; *path; path++) {
		if (n + 2 >= size)
			return -ENAMETOOLONG;
		if (*path == '"' || *path == '\\')
			out[n++] = '\\';
		out[n++] = *path;
	}
	if ((size_t)snprintf(out + n, size - n, "\"%s", rest) >= size - n)
		return -ENAMETOOLONG;
	return 0;
}

int main(int argc, char **argv)
{
	char spec[2 * PATH_MAX + 64], path[PATH_MAX];
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

	/* 1. A log file for notices and worse, named "app". */
	snprintf(path, sizeof(path), "%s/app.log", argv[1]);
	ret = file_entry(spec, sizeof(spec), path, "@notice,name=app");
	if (ret < 0)
		return fail(path, ret);
	ret = pk_console_register_spec(spec);
	if (ret != 1)
		return fail("pk_console_register_spec", ret < 0 ? ret : -EINVAL);
	pk_notice("running: configuration loaded\n");
	pk_info("running: request served\n");
	pk_warn("running: cache 90%% full\n");

	/*
	 * 2. Debugging on: a file console for every level (@debug: debug and
	 * worse), with thread ids; and debug lines on stderr too.
	 */
	snprintf(path, sizeof(path), "%s/debug.log", argv[1]);
	ret = file_entry(spec, sizeof(spec), path, "@debug,name=debug,tid=on");
	if (ret < 0)
		return fail(path, ret);
	ret = pk_console_register_spec(spec);
	if (ret != 1)
		return fail("pk_console_register_spec", ret < 0 ? ret : -EINVAL);
	dbg = pk_console_find("debug");
	if (!dbg)
		return fail("pk_console_find", -errno);
	pk_flush(5000);			/* startup's debug line stays off stderr */
	ret = pk_set_loglevel(PK_DEBUG + 1);
	if (ret < 0)
		return fail("pk_set_loglevel", ret);
	pk_debug("debug-on: request 17: parsed 3 headers\n");
	pk_info("debug-on: request 17 served\n");

	/* 3. The debug log as JSON Lines; stderr back to the default level. */
	pk_flush(5000);		/* what came before stays human-readable */
	ret = pk_console_set_format(dbg, PK_FMT_JSON);
	if (ret < 0)
		return fail("pk_console_set_format", ret);
	pk_set_loglevel(PK_DEBUG);	/* 7: everything but debug */
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
