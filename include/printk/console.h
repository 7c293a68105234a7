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

struct pk_console_ops {
	const char *name;
	long (*write)(void *ctx, const char *buf, size_t len);		/* normal context */
	long (*write_atomic)(void *ctx, const char *buf, size_t len);	/* optional, signal-safe */
	void (*release)(void *ctx);					/* optional */
};

struct pk_console;

/* Output formats of a console (pk_console_set_format). */
enum pk_format {
	PK_FMT_HUMAN,	/* "[    1.234567] text" */
	PK_FMT_KMSG,	/* "6,1234,1234567,-;text" as /dev/kmsg */
	PK_FMT_SYSLOG,	/* "<6>[    1.234567] text" as dmesg -F reads */
	PK_FMT_JSON,	/* one JSON object per line */
	PK_FMT_RAW,	/* the text alone */
};
#define PK_FMT_F_TID	0x100u	/* human: add "[T1234] " after the time */

/**
 * pk_console_register() - add a console.
 * @loglevel: print records with level < @loglevel; < 0 follows the global
 *            console_loglevel.
 * The console starts at the oldest record still stored, as a kernel
 * console registered late prints the log buffer's backlog.
 * Context: any thread, not from a signal handler.
 * Return: the console, or NULL with errno set (EINVAL for NULL ops or no
 * write callback, ENOMEM).
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

/* Set the output format; @fmt is an enum pk_format, ORed with PK_FMT_F_*. */
int pk_console_set_format(struct pk_console *con, unsigned fmt);
int pk_console_set_loglevel(struct pk_console *con, int loglevel);

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
 * file: O_APPEND to @path, created 0644; PK_FILE_FSYNC: fsync each write.
 * @path may be a FIFO: -ENXIO if nobody has it open for reading, and as a
 * pipe for pk_console_fd_make() after that.
 */
#define PK_FILE_FSYNC	0x1u
int pk_console_file_make(const char *path, unsigned flags, struct pk_console_driver *out);

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

#ifdef __cplusplus
}
#endif

#endif /* PRINTK_CONSOLE_H */
