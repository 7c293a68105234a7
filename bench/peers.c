// SPDX-License-Identifier: MIT
/*
 * peers.c - the loggers of the latency and crash tables: libprintk in each
 * mode (with its console filtered out by loglevel, so only the store path
 * runs, or printing to a file), spdlog (peers_spdlog.cpp), fprintf(3) to a
 * file, syslog(3) and an LTTng-UST tracepoint recorded by a session
 * (peers_lttng.c); and two reference rows, the message formatted into a
 * stack buffer and an empty call, which show what part of every row is the
 * formatter and what part is the harness's clock.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/printk.h>

#include "format/format.h"
#include "store/store.h"	/* pk__stbsp_vsnprintf(): the formatter pk_printk uses */
#include "peers.h"

/* libprintk arg: the mode, plus these */
#define PK_FILTERED	0x100	/* the console's loglevel filters the message out */
#define PK_NO_HANDLER	0x200	/* no crash handler, even in the crash table */
#define PK_EAGER_FMT	0x400	/* PK_CFG_EAGER: every message formatted at the call */

size_t pkb_peer_buffer_size;
unsigned long pkb_peer_records;
char pkb_peer_why[120];

void pkb_peer_size_store(unsigned long records)
{
	size_t want = (size_t)records * 256, size = PK_BUFFER_SIZE_DEFAULT;

	pkb_peer_records = records;

	while (size < want && size < PK_BUFFER_SIZE_MAX)
		size <<= 1;
	pkb_peer_buffer_size = size;
}

static int always(const struct pkb_logger *lg, char *why, size_t n)
{
	(void)lg;
	(void)why;
	(void)n;
	return 1;
}

/* ---- libprintk ---- */

static int pk_open(const struct pkb_logger *lg, const char *path, unsigned flags)
{
	struct pk_config cfg;
	struct pk_console_driver drv;
	int rc;

	pk_config_init(&cfg);
	cfg.buffer_path = NULL;
	if (pkb_peer_buffer_size)
		cfg.buffer_size = pkb_peer_buffer_size;
	cfg.mode = (enum pk_mode)(lg->arg & 0xff);
	cfg.console_loglevel = PK_DEBUG + 1;
	cfg.print_budget_us = PK_PRINT_BUDGET_UNBOUNDED;
	cfg.flags = PK_CFG_NO_CONSOLE;
	if (lg->arg & PK_EAGER_FMT)
		cfg.flags |= PK_CFG_EAGER;
	if ((flags & PKB_OPEN_CRASH) && !(lg->arg & PK_NO_HANDLER))
		cfg.flags |= PK_CFG_CRASH_HANDLER;
	cfg.consoles = NULL;
	rc = pk_init(&cfg);
	if (rc < 0)
		return rc;
	rc = pk_console_file_make(path, 0, &drv);
	if (rc < 0)
		return rc;
	if (!pk_console_register_driver(&drv, (lg->arg & PK_FILTERED) ? PK_WARNING : PK_DEBUG + 1))
		return -errno;
	return 0;
}

/*
 * The level macro, as programs call it: a call site packed at compile time
 * (printk.h, "STATIC PACKAGING"), formatted when printed.
 */
static void pk_log(long a, long b)
{
	pk_info(PKB_PEER_MSG "\n", a, b);
}

/* pk_printk() itself: the format read on every call to pack the arguments. */
static void pk_log_printk(long a, long b)
{
	pk_printk(PK_INFO, PKB_PEER_MSG "\n", a, b);
}

/*
 * The same line left open (no newline): formatted at the call, stored
 * OPEN, finalised by the next call's record.  A console that filters it
 * passes over it at once (ringbuf.c, FILTERED READING).
 */
static void pk_log_open(long a, long b)
{
	pk_info(PKB_PEER_MSG, a, b);
}

static void pk_close(void)
{
	pk_shutdown();
}

/* ---- spdlog ---- */

static int spdlog_open(const struct pkb_logger *lg, const char *path, unsigned flags)
{
	(void)flags;
	return pkb_spdlog_open(path, lg->arg);
}

/* ---- fprintf(3) to a file ---- */

static FILE *stdio_file;

static int stdio_open(const struct pkb_logger *lg, const char *path, unsigned flags)
{
	(void)lg;
	(void)flags;
	stdio_file = fopen(path, "w");
	return stdio_file ? 0 : -errno;
}

static void stdio_log(long a, long b)
{
	fprintf(stdio_file, PKB_PEER_MSG "\n", a, b);
}

static void stdio_close(void)
{
	fclose(stdio_file);
	stdio_file = NULL;
}

/* ---- references: the floor under every row ---- */

/* Nothing at all: what the harness's own clock reads cost per call. */
static __attribute__((noinline)) void timer_only_log(long a, long b)
{
	__asm__ volatile("" : : "r"(a), "r"(b) : "memory");
}

static __attribute__((noinline, format(printf, 1, 2))) int format_only(const char *fmt, ...)
{
	char buf[1024 + 64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = pk__stbsp_vsnprintf(buf, (int)sizeof(buf), fmt, ap);
	va_end(ap);
	__asm__ volatile("" : : "r"(buf) : "memory");
	return n;
}

/* The message formatted into a stack buffer by libprintk's formatter, as pk_printk does first. */
static void format_only_log(long a, long b)
{
	format_only(PKB_PEER_MSG, a, b);
}

static int nothing_open(const struct pkb_logger *lg, const char *path, unsigned flags)
{
	(void)lg;
	(void)path;
	(void)flags;
	return 0;
}

static void nothing_close(void)
{
}

/* ---- syslog(3) ---- */

/* A daemon is reachable when /dev/log accepts a datagram connection. */
static int syslog_available(const struct pkb_logger *lg, char *why, size_t n)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = "/dev/log" };
	int fd, rc;

	(void)lg;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, n, "socket: %s", strerror(errno));
		return 0;
	}
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (rc < 0)
		snprintf(why, n, "no syslog daemon (/dev/log: %s)", strerror(errno));
	close(fd);
	return rc == 0;
}

static int syslog_open(const struct pkb_logger *lg, const char *path, unsigned flags)
{
	(void)lg;
	(void)path;
	(void)flags;
	openlog("pkbench", LOG_NDELAY, LOG_USER);
	return 0;
}

static void syslog_log(long a, long b)
{
	syslog(LOG_INFO, PKB_PEER_MSG, a, b);
}

static void syslog_close(void)
{
	closelog();
}

/* ---- LTTng-UST (peers_lttng.c) ---- */

#ifndef PKB_HAVE_LTTNG
static int lttng_missing(const struct pkb_logger *lg, char *why, size_t n)
{
	(void)lg;
	snprintf(why, n, "built without LTTng-UST (liblttng-ust-dev 2.13 or later not found)");
	return 0;
}
#define pkb_lttng_available	lttng_missing
#define pkb_lttng_open		NULL
#define pkb_lttng_log		NULL
#define pkb_lttng_close		NULL
#define pkb_lttng_count		NULL
#endif

#define PK_LOGGER(n, w, a, t) \
	{ .name = n, .where = w, .arg = a, .tables = t, .available = always, \
	  .open = pk_open, .log = pk_log, .close = pk_close }

const struct pkb_logger pkb_loggers[] = {
	PK_LOGGER("libprintk legacy", "store only", PK_MODE_LEGACY | PK_FILTERED, PKB_IN_LATENCY),
	PK_LOGGER("libprintk handoff", "store only", PK_MODE_HANDOFF | PK_FILTERED, PKB_IN_LATENCY),
	PK_LOGGER("libprintk thread", "store only", PK_MODE_THREAD | PK_FILTERED, PKB_IN_LATENCY),
	{ .name = "libprintk handoff", .where = "store, pk_printk()",
	  .arg = PK_MODE_HANDOFF | PK_FILTERED, .tables = PKB_IN_LATENCY, .available = always,
	  .open = pk_open, .log = pk_log_printk, .close = pk_close },
	PK_LOGGER("libprintk handoff", "store, eager", PK_MODE_HANDOFF | PK_FILTERED | PK_EAGER_FMT,
		  PKB_IN_LATENCY),
	{ .name = "libprintk legacy", .where = "store, open line",
	  .arg = PK_MODE_LEGACY | PK_FILTERED, .tables = PKB_IN_LATENCY, .available = always,
	  .open = pk_open, .log = pk_log_open, .close = pk_close },
	{ .name = "libprintk handoff", .where = "store, open line",
	  .arg = PK_MODE_HANDOFF | PK_FILTERED, .tables = PKB_IN_LATENCY, .available = always,
	  .open = pk_open, .log = pk_log_open, .close = pk_close },
	{ .name = "libprintk thread", .where = "store, open line",
	  .arg = PK_MODE_THREAD | PK_FILTERED, .tables = PKB_IN_LATENCY, .available = always,
	  .open = pk_open, .log = pk_log_open, .close = pk_close },
	PK_LOGGER("libprintk legacy", "file", PK_MODE_LEGACY, PKB_IN_LATENCY | PKB_IN_CRASH),
	PK_LOGGER("libprintk handoff", "file", PK_MODE_HANDOFF, PKB_IN_LATENCY | PKB_IN_CRASH),
	PK_LOGGER("libprintk thread", "file", PK_MODE_THREAD, PKB_IN_LATENCY | PKB_IN_CRASH),
	PK_LOGGER("libprintk thread, no handler", "file", PK_MODE_THREAD | PK_NO_HANDLER,
		  PKB_IN_CRASH),
	{ .name = "spdlog async", .where = "file", .arg = 1, .tables = PKB_IN_LATENCY | PKB_IN_CRASH,
	  .available = always, .open = spdlog_open, .log = pkb_spdlog_log, .close = pkb_spdlog_close },
	{ .name = "spdlog sync", .where = "file", .arg = 0, .tables = PKB_IN_LATENCY | PKB_IN_CRASH,
	  .available = always, .open = spdlog_open, .log = pkb_spdlog_log, .close = pkb_spdlog_close },
	{ .name = "fprintf", .where = "file", .tables = PKB_IN_LATENCY | PKB_IN_CRASH,
	  .available = always, .open = stdio_open, .log = stdio_log, .close = stdio_close },
	{ .name = "syslog(3)", .where = "syslog daemon", .tables = PKB_IN_LATENCY,
	  .available = syslog_available, .open = syslog_open, .log = syslog_log,
	  .close = syslog_close },
	{ .name = "lttng-ust tracepoint (recording)", .where = "lttng trace",
	  .tables = PKB_IN_LATENCY, .available = pkb_lttng_available, .open = pkb_lttng_open,
	  .log = pkb_lttng_log, .close = pkb_lttng_close, .count = pkb_lttng_count },
	{ .name = "(format only)", .where = "reference", .tables = PKB_IN_LATENCY,
	  .available = always, .open = nothing_open, .log = format_only_log,
	  .close = nothing_close },
	{ .name = "(timer only)", .where = "reference", .tables = PKB_IN_LATENCY,
	  .available = always, .open = nothing_open, .log = timer_only_log,
	  .close = nothing_close },
};

const int pkb_nloggers = (int)(sizeof(pkb_loggers) / sizeof(pkb_loggers[0]));
