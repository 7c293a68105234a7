/* SPDX-License-Identifier: MIT */
/*
 * Consoles: where stored records are printed.
 *
 * A console is a driver (an ops table and its context) plus what
 * libprintk keeps for it: its own next seq (a slow console never holds
 * back a fast one), a loglevel, an output format and counters.  Consoles
 * may be registered and unregistered at any time, concurrently with
 * pk_printk() on other threads.
 *
 * Driver contract:
 *   write()        normal context: called by exactly one thread at a time
 *                  (the console's owner).  Returns bytes written (a short
 *                  write is retried with the rest) or a negative errno.
 *                  A return above @len counts as @len: no driver can
 *                  inflate the byte counters.
 *   write_atomic() optional; called from emergency, panic and crash
 *                  contexts, possibly while another thread is stuck inside
 *                  write().  Must be async-signal-safe.
 *   release()      optional; called once after unregistering, when no
 *                  thread is inside write() any more.
 */
#ifndef PRINTK_CONSOLE_H
#define PRINTK_CONSOLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Building libprintk: what this header declares is its exported API. */
#if defined(PK_BUILDING_LIB) && defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

struct pk_console_ops {
	const char *name;
	long (*write)(void *ctx, const char *buf, size_t len);		/* normal context */
	long (*write_atomic)(void *ctx, const char *buf, size_t len);	/* optional, signal-safe */
	void (*release)(void *ctx);					/* optional */
	void (*reserved[4])(void);	/* NULL: later optional callbacks */
};

struct pk_console;

/* How many consoles may be registered at a time. */
#define PK_MAX_CONSOLES	16

/*
 * Output formats of a console (pk_console_set_format).  Every format but raw
 * escapes the text so that a log shown on a terminal (cat, tail -f) cannot
 * carry escape sequences, and so that no text forges a line:
 *   human, syslog  as dmesg: control bytes but TAB, DEL, UTF-8-encoded C1
 *                  controls and bytes that are not valid UTF-8 as \xNN
 *                  (ESC \x1b, CR \x0d, BEL \x07); valid UTF-8, TAB and
 *                  backslash as they are.  A newline in the text starts a
 *                  continuation line: indented by the prefix's width
 *                  (human); without "<PRI>", a '<' opening it as \x3c
 *                  (syslog, which dmesg -F reads as a continuation).
 *   kmsg           as /dev/kmsg: every byte outside 0x20-0x7e, and
 *                  backslash, as \xNN (newline \x0a; UTF-8 too).
 *   JSON           valid JSON: \n \r \t \" \\, other controls, DEL and
 *                  C1 controls as \u00NN, bytes not UTF-8 as \ufffd.
 *   raw            nothing is escaped: the text exactly as stored, for a
 *                  consumer that wants the bytes (never for a terminal).
 */
enum pk_format {
	PK_FMT_HUMAN,	/* "[    1.234567] text" */
	PK_FMT_KMSG,	/* "6,1234,1234567,-;text" as /dev/kmsg */
	PK_FMT_SYSLOG,	/* "<6>[    1.234567] text" as dmesg -F reads */
	PK_FMT_JSON,	/* one JSON object per line */
	PK_FMT_RAW,	/* the text alone, unescaped */
};
#define PK_FMT_F_TID	0x100u	/* human: add "[T1234] " after the time */
/*
 * Human and syslog lines may also carry the level and a wall-clock time:
 *   PK_FMT_F_LEVEL    "err   : " before the time, as dmesg -x shows it.
 *   PK_FMT_F_CTIME    "[Mon Jan  2 15:04:05 2006]" instead of the uptime,
 *                     in local time, as dmesg -T.
 *   PK_FMT_F_RFC3339  "[2006-01-02T15:04:05.123456+01:00]" instead of the
 *                     uptime (RFC 3339, local time with its offset); JSON
 *                     gets a "time" member of that form.
 * The wall-clock time is the record's monotonic time plus the offset
 * between the two clocks when it is printed (as dmesg -T); the local UTC
 * offset is taken in normal context (pk_init(), pk_console_set_format()),
 * so that printing stays async-signal-safe: a daylight-saving change shows
 * from the next of those calls.  CTIME wins over RFC3339 if both are set.
 */
#define PK_FMT_F_LEVEL		0x800u
#define PK_FMT_F_CTIME		0x1000u
#define PK_FMT_F_RFC3339	0x2000u

/**
 * pk_console_register() - add a console.
 * @loglevel: print records with level < @loglevel; < 0 follows the global
 *            console_loglevel.
 * The console starts at the oldest record still stored, as a kernel
 * console registered late prints the log buffer's backlog.
 * Context: any thread, not from a signal handler.
 * At most PK_MAX_CONSOLES (16) consoles are registered at a time, those
 * of PK_CONSOLE included; an unregistered console's slot is free again.
 * Return: the console, or NULL with errno set: EINVAL for NULL ops or no
 * write callback, ENOSPC when PK_MAX_CONSOLES are registered already,
 * ENOMEM.
 */
struct pk_console *pk_console_register(const struct pk_console_ops *ops, void *ctx, int loglevel);

/**
 * pk_console_unregister() - remove a console.  Waits until no thread is
 * inside its write() (bounded: a write stuck for ever leaves the console
 * detached but not released), then calls release().
 * Context: any thread, not from a signal handler; not cancelled midway.
 * Return: 0, -EINVAL if @con is not registered, -EBUSY if a write stayed
 * stuck (the console is detached; release() is not called), -EDEADLK from
 * inside a console's write() (it would wait for itself).
 */
int pk_console_unregister(struct pk_console *con);

/**
 * pk_console_set_format() - set @con's output format from its next record.
 * @fmt: an enum pk_format, ORed with PK_FMT_F_TID, PK_FMT_F_LEVEL,
 *       PK_FMT_F_CTIME, PK_FMT_F_RFC3339.
 * Also takes the local UTC offset again (see PK_FMT_F_CTIME).
 * Context: any thread, not from a signal handler.
 * Return: 0, or -EINVAL for a NULL @con or an unknown format or flag.
 */
int pk_console_set_format(struct pk_console *con, unsigned fmt);

/**
 * pk_console_set_loglevel() - print on @con only records with a level
 * below @loglevel (0-8); < 0: follow the global loglevel (pk_set_loglevel()).
 * Context: any thread, not from a signal handler.
 * Return: 0, or -EINVAL for a NULL @con or @loglevel > 8.
 */
int pk_console_set_loglevel(struct pk_console *con, int loglevel);

/**
 * pk_console_find() - the registered console named @name.
 *
 * Every console has a name: a PK_CONSOLE (or pk_config.consoles, or
 * pk_console_register_spec()) entry is named by its option name=NAME, or
 * else by the entry itself as written, unquoted and without its @LEVEL,
 * %RATE and options ("stderr", "fd:3", "file:/var/log/app.log",
 * "syslog", "net:[::1]:6666"); a console registered by
 * pk_console_register() or pk_console_register_driver() by its ops->name
 * ("console" if NULL).  Names need not be unique: the first registered
 * (lowest slot) is returned.  The handle stays valid until the console is
 * unregistered: pk_console_unregister(), pk_shutdown(), or pk_init()
 * replacing the configured consoles.
 * Context: any thread, not from a signal handler.
 * Return: the console, or NULL with errno set: ENOENT if none has that
 * name, EINVAL for a NULL @name.
 */
struct pk_console *pk_console_find(const char *name);

/**
 * pk_console_name() - @con's name (see pk_console_find()).
 * Context: any thread.
 * Return: a string valid as long as @con is registered; "" for NULL.
 */
const char *pk_console_name(const struct pk_console *con);

struct pk_console_stats {
	const char *name;
	uint64_t next_seq;	/* the next record it will print */
	uint64_t records;	/* records handed to the driver (printed) */
	uint64_t notices;	/* "** N printk messages dropped **" lines written */
	uint64_t bytes;		/* bytes written */
	uint64_t dropped;	/* records it lost (overwritten before printed) */
	uint64_t skipped;	/* filtered: below its loglevel, or another process's */
	uint64_t write_errors;
	uint64_t busy_ns;	/* time spent inside write() */
	uint64_t reserved[8];	/* zero: later counters */
};
int pk_console_stats_get(struct pk_console *con, struct pk_console_stats *st);

/* ---- built-in drivers ---- */

/*
 * A driver instance: ops plus context, before it is registered.  The
 * *_make() constructors fill one; pk_console_register_driver() registers
 * it (the console then owns the context and frees it through release()).
 */
struct pk_console_driver {
	const struct pk_console_ops *ops;
	void *ctx;
	unsigned format;	/* the output format the driver expects (PK_FMT_*) */
	uint64_t reserved[2];	/* zero: later fields */
};

/*
 * fd: write(2) to a file descriptor (not closed on release).  If it is a
 * pipe or socket (looked at once, here) whose reader goes away, writes
 * fail with EPIPE and count as write errors: the process gets no SIGPIPE.
 * On a pipe that costs two sigprocmask calls per write in the caller's
 * thread (none in the library's printer threads).
 */
int pk_console_fd_make(int fd, struct pk_console_driver *out);

/*
 * file: O_APPEND to @path (O_CLOEXEC).  A new file is created with mode
 * 0600, less the umask, unless @flags has PK_FILE_MODE(mode); an existing
 * one keeps its mode.  PK_FILE_FSYNC: fsync each write.  @path may be a
 * FIFO: -ENXIO if nobody has it open for reading, and as a pipe for
 * pk_console_fd_make() after that.
 *
 * In a sticky, world-writable directory such as /tmp, a symlink is
 * followed, and an existing file opened, only if it is owned by the
 * effective uid or by the directory's owner (the kernel's
 * protected_symlinks and protected_regular rules, applied whatever the
 * system's settings, to every component of @path); otherwise the call
 * says on stderr which path, object and rule, and fails with -EACCES.
 * The check and the open cannot be raced: each component is opened
 * without following and looked at through its descriptor.  The kernel's
 * own links in /proc (/dev/stderr, /proc/self/fd/N) are followed by it.
 *
 * The records are written rendered (PK_FMT_HUMAN unless set otherwise),
 * so control bytes are escaped; PK_FMT_RAW writes them as they are.
 * Return: 0 with @out filled, or a negative errno: -EINVAL (bad
 * arguments or flags), -EACCES (refused by the rules above, or by the
 * file's permissions), -ENXIO (a FIFO without a reader), -ELOOP,
 * -ENOENT, -EISDIR, -ENAMETOOLONG and the like from open(2), -ENOMEM.
 */
#define PK_FILE_FSYNC	0x1u
#define PK_FILE_MODE(mode)	(0x10000u | ((unsigned)(mode) & 0777u) << 20)
int pk_console_file_make(const char *path, unsigned flags, struct pk_console_driver *out);

/*
 * File console options (pk_console_file_make_opts()).  Zero-initialise it
 * and set what you need; all zero is pk_console_file_make(path, 0).
 *   mode          permission bits of a newly created log (0: 0600), less
 *                 the umask; an existing file keeps its mode.
 *   rotate_size   0: no rotation.  Else, before a write would make the file
 *                 larger than this many bytes, rename PATH.N-1 to PATH.N
 *                 ... PATH to PATH.1, keeping rotate_count old files
 *                 (PATH.1 the newest), and start a new PATH.  A single
 *                 record larger than rotate_size is written whole.
 *   rotate_count  old files kept (at most 999); 0 with rotate_size: the
 *                 full file is removed and a new one started.
 *   flags         PK_FILE_FSYNC.
 */
struct pk_file_opts {
	unsigned mode;
	uint64_t rotate_size;
	unsigned rotate_count;
	unsigned flags;
	uint64_t reserved[4];	/* zero: later options */
};

/*
 * pk_console_file_make_opts() - pk_console_file_make() with options.
 * Every file console, this one or pk_console_file_make()'s, also notices
 * by itself that its path was renamed or removed (logrotate's "create"
 * mode): at most once a second, before a normal write(), it compares the
 * path's device and inode with those of the file it holds open and, if
 * they differ, opens the path again by the same rules as the first time
 * (a new file is created with @o->mode).  logrotate's "copytruncate" needs
 * nothing: the file is opened O_APPEND, so the next write lands at the new
 * end.  Neither check nor rotation ever happens in write_atomic(), the
 * path used by emergencies, panic and the crash handler: there the file
 * open at the time is written, whatever its size.  If an open fails, the
 * console keeps writing the file it has and says so once on stderr.
 * Context: any thread, not from a signal handler.
 * Return: as pk_console_file_make(); -EINVAL also for rotate_count > 999
 * or unknown @o->flags.
 */
int pk_console_file_make_opts(const char *path, const struct pk_file_opts *o,
			      struct pk_console_driver *out);

/*
 * pk_console_reopen() - open a file console's path again now, by the same
 * rules as when it was made, for logrotate's postrotate script (which
 * typically signals the program: call this from the main loop, not from
 * the signal handler).  Records printed before the call went to the old
 * file, those after to the new one; none is lost or split between them.
 * @con: a console returned by pk_console_register_driver() for a file
 *       driver; NULL: every registered file console, and every file
 *       console wrapped in another driver (throttle) too.
 * Context: any thread, not from a signal handler.
 * Return: 0; -EINVAL if @con is not a registered file console; else the
 * open's negative errno (for NULL the first failure, after trying all),
 * and that console keeps writing its old file.
 */
int pk_console_reopen(struct pk_console *con);

/*
 * throttle: make @inner behave like a serial line of @bytes_per_sec
 * (115200 baud is 11520 B/s).  Takes over @inner.
 */
int pk_console_throttle_make(const struct pk_console_driver *inner, unsigned long bytes_per_sec,
			     struct pk_console_driver *out);

/*
 * syslog: one datagram per line to a syslog daemon's socket (@socket_path,
 * NULL: /dev/log) as "<PRI>IDENT[PID]: text", the level and facility
 * taken from the record.  Talks to the socket itself instead of calling
 * syslog(3), which takes a lock: safe in a signal handler.  @ident: NULL
 * for the program's name.  Reconnects once if the daemon restarted.
 */
int pk_console_syslog_make(const char *socket_path, const char *ident,
			   struct pk_console_driver *out);

/*
 * netconsole: each console write as one UDP datagram to @host:@port (a
 * numeric IPv4 or IPv6 address, or a name resolved now).  Never blocks: a
 * dead or unreachable peer costs a counted write error, never a stall.
 */
int pk_console_net_make(const char *host, unsigned port, struct pk_console_driver *out);

struct pk_console *pk_console_register_driver(const struct pk_console_driver *drv, int loglevel);

/*
 * pk_console_register_spec() - register consoles from PK_CONSOLE syntax:
 * a comma-separated list of stderr, stdout, fd:N, file:PATH, syslog,
 * syslog:SOCKET, net:HOST:PORT (net:[::1]:6666 for IPv6), each optionally
 * followed by @LEVEL (a digit as console_loglevel, or a level name meaning
 * that level and worse) and/or %BYTES_PER_SEC (throttle).
 * A bad entry is reported on stderr and skipped; the others are kept.
 * Return: the number of consoles registered, or a negative errno.
 */
int pk_console_register_spec(const char *spec);

#if defined(PK_BUILDING_LIB) && defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* PRINTK_CONSOLE_H */
