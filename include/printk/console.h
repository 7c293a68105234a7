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

/*
 * A driver's operations.  ABI: the table ends in reserved callbacks that
 * must be NULL; define it with a designated initializer
 * (static const struct pk_console_ops ops = { .name = "x", .write = w })
 * so that they are.
 */
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
 *   journal        journald's native protocol (pk_console_journal_make()):
 *                  one entry of KEY=VALUE lines; a value holding a newline
 *                  or another control byte in the protocol's binary form
 *                  (KEY, newline, 64-bit little-endian length, the bytes).
 *                  Not escaped: journald stores the bytes and its readers
 *                  escape them.  For the journal console only.
 */
enum pk_format {
	PK_FMT_HUMAN,	/* "[    1.234567] text" */
	PK_FMT_KMSG,	/* "6,1234,1234567,-;text" as /dev/kmsg */
	PK_FMT_SYSLOG,	/* "<6>[    1.234567] text" as dmesg -F reads */
	PK_FMT_JSON,	/* one JSON object per line */
	PK_FMT_RAW,	/* the text alone, unescaped */
	PK_FMT_JOURNAL,	/* journald's native protocol: "PRIORITY=6\nMESSAGE=text\n..." */
};
#define PK_FMT_F_TID	0x100u	/* human: add "[T1234] " after the time */
/*
 * Human and syslog lines may also carry the facility and level, and a
 * wall-clock time:
 *   PK_FMT_F_LEVEL    "user  :err   : " before the time: the facility and
 *                     the level, as dmesg -x shows them.
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
/*
 * PK_FMT_F_LOC: human and syslog lines show the record's call site
 * (printk.h, SOURCE LOCATIONS) after the module: "file.c:42 func: ".
 * JSON and kmsg always carry it (members "file", "line", "func";
 * dictionary lines CODE_FILE=, CODE_LINE=, CODE_FUNC=).
 */
#define PK_FMT_F_LOC		0x4000u

/**
 * pk_console_register() - add a console.
 * @ops:      the driver's operations (see the driver contract above); must
 *            stay valid until release() has been called.
 * @ctx:      passed to every callback.
 * @loglevel: print records with level < @loglevel (0-8); < 0 follows the
 *            global console_loglevel (pk_set_loglevel()).
 *
 * The console is named ops->name ("console" if NULL; see
 * pk_console_find()) and prints in PK_FMT_HUMAN (pk_console_set_format()).
 * It starts at the oldest record of this run still stored, as a kernel
 * console registered late prints the log buffer's backlog (records that
 * earlier runs left in a persistent store are pkmsg's, not its), and the
 * backlog is printed at once.  Initialises the library first if needed.
 * At most PK_MAX_CONSOLES (16) consoles are registered at a time, those
 * of PK_CONSOLE included; an unregistered console's slot is free again.
 * Context: any thread, not from a signal handler.
 * Return: the console, or NULL with errno set: EINVAL for NULL @ops, no
 * write callback or @loglevel > 8; ENOSPC when PK_MAX_CONSOLES are
 * registered already; EAGAIN if, in thread mode, its printer thread could
 * not be started; ENOMEM; or the error of initialising the library.
 * Nothing is called on @ctx when it fails.
 */
struct pk_console *pk_console_register(const struct pk_console_ops *ops, void *ctx, int loglevel);

/**
 * pk_console_unregister() - remove a console.  Waits until no thread is
 * inside its write() (bounded: about 5 s; a write stuck for ever leaves
 * the console detached but not released), then calls release().
 * @con: a console returned by a register call or pk_console_find(); the
 *       handle is invalid after the call.
 * Context: any thread, not from a signal handler; not cancelled midway.
 * Return: 0, -EINVAL if @con is not registered, -EBUSY if a write stayed
 * stuck (the console is detached; release() is not called), -EDEADLK from
 * inside a console's write() (it would wait for itself).
 */
int pk_console_unregister(struct pk_console *con);

/**
 * pk_console_set_format() - set @con's output format from its next record.
 * @con: a registered console.
 * @fmt: an enum pk_format, ORed with PK_FMT_F_TID, PK_FMT_F_LEVEL,
 *       PK_FMT_F_CTIME, PK_FMT_F_RFC3339.
 * Also takes the local UTC offset again (see PK_FMT_F_CTIME).
 * Context: any thread, not from a signal handler.
 * A console registered in PK_FMT_JOURNAL (pk_console_journal_make()) keeps
 * it, and no other console takes it.
 * Return: 0, or -EINVAL for a NULL @con, an unknown format or flag, or
 * a change to or from PK_FMT_JOURNAL.
 */
int pk_console_set_format(struct pk_console *con, unsigned fmt);

/**
 * pk_console_set_loglevel() - print on @con only records with a level
 * below @loglevel (0-8); < 0: follow the global loglevel (pk_set_loglevel()).
 * @con:      a registered console.
 * @loglevel: 0-8, or < 0.
 * Context: any thread, not from a signal handler.
 * Return: 0, or -EINVAL for a NULL @con or @loglevel > 8.
 */
int pk_console_set_loglevel(struct pk_console *con, int loglevel);

/**
 * pk_console_set_modules() - print on @con only records of the modules
 * @modules names (printk.h MODULES); the others are passed over and
 * counted in stats.skipped, as records below the loglevel are.
 * @con:     a registered console.
 * @modules: comma-separated module names or patterns ('*' any run, '?'
 *           any one character); "-" stands for records without a module.
 *           NULL or "" prints every record again.  At most 255 bytes of
 *           letters, digits, '_', '*', '?', ',' and '-'.
 * E.g. "netio,db*,-": netio's, those of modules starting "db", and those
 * without a module.
 * Context: any thread, not from a signal handler.  Printers see the new
 * filter from their next record on.
 * Return: 0, or -EINVAL for a NULL @con or a bad or too long @modules.
 */
int pk_console_set_modules(struct pk_console *con, const char *modules);

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
 * @con: a registered console, or NULL.
 * Context: any thread, async-signal-safe.
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
	/*
	 * Of dropped: records counted without knowing whether they were this
	 * process's or the console's level would print them (it fell more
	 * than its process's own-record table behind; pk_console(3)).
	 */
	uint64_t unattributed;
	uint64_t reserved[7];	/* zero: later counters */
};

/**
 * pk_console_stats_get() - read @con's counters.
 * @con: a registered console.
 * @st:  filled, reserved zeroed; st->name is @con's name, valid while
 *       @con is registered.  Each counter is read on its own (relaxed),
 *       not a snapshot of all at one instant.
 * The counters count since the console was registered.
 * Context: any thread, async-signal-safe, lock-free.
 * Return: 0, or -EINVAL for a NULL @con or @st.
 */
int pk_console_stats_get(struct pk_console *con, struct pk_console_stats *st);

/* ---- built-in drivers ---- */

/*
 * A driver instance: ops plus context, before it is registered.  The
 * *_make() constructors fill one (all of it: reserved zeroed);
 * pk_console_register_driver() registers it (the console then owns the
 * context and frees it through release()).  A made driver that is never
 * registered is freed by calling drv.ops->release(drv.ctx).
 */
struct pk_console_driver {
	const struct pk_console_ops *ops;
	void *ctx;
	unsigned format;	/* the output format the driver expects (PK_FMT_*) */
	uint64_t reserved[2];	/* zero: later fields */
};

/**
 * pk_console_fd_make() - a driver that write(2)s to a file descriptor.
 * @fd:  an open descriptor; it stays the caller's (not closed on release)
 *       and must stay open while the console is registered.
 * @out: filled with the driver (format PK_FMT_HUMAN).
 *
 * write() and write_atomic() are the same async-signal-safe write(2).  If
 * @fd is a pipe or socket (looked at once, here) whose reader goes away,
 * writes fail with EPIPE and count as write errors: the process gets no
 * SIGPIPE.  On a pipe that costs two sigprocmask calls per write in the
 * caller's thread (none in the library's printer threads).
 * Context: any thread, not from a signal handler (allocates).
 * Return: 0 with @out filled, or -EINVAL for @fd < 0 or a NULL @out,
 * -ENOMEM.
 */
int pk_console_fd_make(int fd, struct pk_console_driver *out);

/**
 * pk_console_file_make() - a driver that appends to the file at @path.
 * @path:  the log's path; a FIFO is allowed (see below).
 * @flags: PK_FILE_FSYNC (fsync() after each write) and PK_FILE_MODE(mode)
 *         (permission bits of a new file).
 * @out:   filled with the driver (format PK_FMT_HUMAN).
 *
 * The file is opened O_APPEND, O_CLOEXEC and O_NOCTTY.  A new file is
 * created (O_EXCL) with mode 0600, less the umask, unless @flags has
 * PK_FILE_MODE(mode); an existing one keeps its mode.  @path may be a
 * FIFO: -ENXIO if nobody has it open for reading, and as a pipe for
 * pk_console_fd_make() after that, except that writes never block: a
 * reader that stops reading costs write() a wait of at most 100 ms for
 * room, once per stall (no later write waits until one gets in), and
 * write_atomic() none; then the write is dropped and counted.
 *
 * Write errors (a full disk, a FIFO nobody reads, RLIMIT_FSIZE) are
 * counted as write errors, and the next write that gets in first ends the
 * line a failed write left unfinished (a newline), then writes "** N
 * printk messages dropped **" ({"dropped":N} after JSON records), N the
 * records lost.  A regular file is written with SIGXFSZ blocked in the
 * writing thread: past RLIMIT_FSIZE a write fails with -EFBIG instead of
 * killing the process (the signal it raised is taken back).
 *
 * In a sticky, world-writable directory such as /tmp (the kernel's
 * protected_symlinks and protected_regular rules, applied whatever the
 * system's settings, to every component of @path):
 *   - a symlink is followed only if it is owned by the effective uid or
 *     by the directory's owner;
 *   - an existing file (regular or FIFO) is opened, and a directory on
 *     the path entered, only if it is owned by the effective uid or by
 *     the directory's owner (another user could swap what lies inside);
 *   - a regular file with more than one hard link is never opened, even
 *     our own (it may be any file of ours, /etc/passwd for root).
 * The same rules hold in every directory other users or its group may
 * write, sticky or not (a /var/log-style root:syslog 0775): there anyone
 * who may write it can put a symlink or a file at the log's name, which
 * the console's reopen would otherwise follow or append to.  Elsewhere
 * symlinks and files are used whoever owns them.  A refusal says on
 * stderr which path, which component (escaped: a name may come from
 * another user's symlink) and which rule, and fails with -EACCES.  The
 * check and the open cannot be raced: each component is opened without
 * following and looked at through its descriptor.  The kernel's own
 * links in /proc (/dev/stderr, /proc/self/fd/N) are followed by it.
 *
 * The records are written rendered (PK_FMT_HUMAN unless set otherwise),
 * so control bytes are escaped; PK_FMT_RAW writes them as they are.  The
 * console notices a renamed or removed path by itself (see
 * pk_console_file_make_opts()).
 * Context: any thread, not from a signal handler (allocates).
 * Return: 0 with @out filled, or a negative errno: -EINVAL (a NULL or
 * empty @path, a NULL @out, unknown @flags), -EACCES (refused by the
 * rules above, or by the file's permissions), -ENXIO (a FIFO without a
 * reader), -ELOOP (more than 40 symlinks), -ENOENT, -ENOTDIR, -EISDIR,
 * -ENAMETOOLONG and the like from open(2), -ENOMEM.
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

/**
 * pk_console_file_make_opts() - pk_console_file_make() with options.
 * @path: as for pk_console_file_make().
 * @o:    the options (struct pk_file_opts, zero-initialised: reserved
 *        must be zero).
 * @out:  filled with the driver.
 *
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
 * console keeps writing the file it has and says so once on stderr; with
 * rotate_size, if the path no longer names that file (another user took
 * the name between a rotation's rename and its create, in a sticky
 * directory), the file it has grows to no more than rotate_size, what
 * does not fit is counted and reported in the next file, and the console
 * tries the path again at every check (once a second).
 * Context: any thread, not from a signal handler.
 * Return: as pk_console_file_make(); -EINVAL also for a NULL @o,
 * rotate_count > 999, mode bits outside 0777 or unknown @o->flags.
 */
int pk_console_file_make_opts(const char *path, const struct pk_file_opts *o,
			      struct pk_console_driver *out);

/**
 * pk_console_reopen() - open a file console's path again now, by the same
 * rules as when it was made, for logrotate's postrotate script (which
 * typically signals the program: call this from the main loop, not from
 * the signal handler).  Records printed before the call went to the old
 * file, those after to the new one; none is lost or split between them.
 * @con: a console returned by pk_console_register_driver() for a file
 *       driver; NULL: every file driver made and not yet released, those
 *       wrapped in another driver (throttle) included.
 * Context: any thread, not from a signal handler.
 * Return: 0; -EINVAL if @con is not a registered file console (a throttled
 * one included: use NULL); -EBUSY if a rotation of that console stayed in
 * progress for 2 s; else the open's negative errno (for NULL the first
 * failure, after trying all), and that console keeps writing its old file.
 */
int pk_console_reopen(struct pk_console *con);

/**
 * pk_console_throttle_make() - a driver that makes @inner behave like a
 * serial line of @bytes_per_sec (115200 baud is 11520 B/s).
 * @inner:         a made driver; taken over on success (released with the
 *                 throttle), still the caller's on failure.
 * @bytes_per_sec: the line's rate, > 0.
 * @out:           filled with the driver (may be @inner itself); its
 *                 format is @inner's.
 *
 * A write of N bytes returns no earlier than N / @bytes_per_sec seconds
 * after it started (and after the previous write's line time ran out).
 * write_atomic() paces the same way (with clock_nanosleep(),
 * async-signal-safe) and exists only if @inner has one.
 * Context: any thread, not from a signal handler (allocates).
 * Return: 0 with @out filled; -EINVAL for a NULL @inner, @out or
 * inner->ops, no write callback, or a zero rate; -ENOMEM.
 */
int pk_console_throttle_make(const struct pk_console_driver *inner, unsigned long bytes_per_sec,
			     struct pk_console_driver *out);

/**
 * pk_console_syslog_make() - a driver that sends each record to a syslog
 * daemon's datagram socket as one datagram, as syslog(3) does,
 * "<PRI>IDENT[PID]: text", the level and facility taken from the record
 * (RFC 3164 without time and host, which the daemon adds).  A newline in
 * the text goes into the datagram as "\x0a" (the rendering's escape for
 * every other control byte): no text makes a daemon show a line the
 * program did not log.
 * @socket_path: the daemon's Unix socket; NULL: /dev/log.
 * @ident:       the tag; NULL: the program's name.  Cut at 63 bytes.
 * @out:         filled with the driver (format PK_FMT_SYSLOG).
 *
 * Talks to the socket itself instead of calling syslog(3), which takes a
 * lock: write() and write_atomic() are the same async-signal-safe send()
 * (never SIGPIPE).  A daemon whose queue is full costs write() a wait of
 * at most 100 ms for room, once per stall (no later send waits until one
 * succeeds), and write_atomic() none; a datagram not sent is counted as a
 * write error and the next one sent is preceded by "<12>IDENT[PID]: **
 * N printk messages dropped **".  A record longer than about 2 KiB is
 * cut.  Reconnects once per record if the daemon restarted.  The socket is
 * connected here, so the daemon must be listening.
 * Context: any thread, not from a signal handler (allocates).
 * Return: 0 with @out filled; -EINVAL for a NULL @out or a socket path of
 * 108 bytes or more; -ENOMEM; the error of socket(2) or connect(2)
 * (-ENOENT, -ECONNREFUSED: no daemon listening; -EACCES).
 */
int pk_console_syslog_make(const char *socket_path, const char *ident,
			   struct pk_console_driver *out);

/**
 * pk_console_journal_make() - a driver that sends each record to
 * systemd-journald in its native protocol, as one journal entry:
 * MESSAGE, PRIORITY, SYSLOG_FACILITY, SYSLOG_IDENTIFIER, SYSLOG_PID, TID,
 * PRINTK_SEQ (the record's sequence number), PRINTK_MODULE (its module, if any),
 * CODE_FILE, CODE_LINE and CODE_FUNC (when the record knows its call
 * site), and the record's fields (pk_printk_fields()) under their keys.
 * @socket_path: journald's datagram socket; NULL:
 *               /run/systemd/journal/socket.
 * @ident:       SYSLOG_IDENTIFIER; NULL: the program's name.  Cut at 63
 *               bytes, control bytes as '_'.
 * @out:         filled with the driver (format PK_FMT_JOURNAL, which
 *               pk_console_set_format() refuses to change; a write that
 *               is not an entry, as the crash report, is sent as the
 *               MESSAGE of an entry at PRIORITY=4).
 *
 * A value with a newline or another control byte goes in the protocol's
 * binary form, so a multi-line message stays one entry.  A field key
 * journald would refuse (a store file may hold any) is raised to upper
 * case, other bytes as '_'; one still not valid, or naming a field the
 * entry sets itself, is left out, and the entry says how many in
 * PRINTK_FIELDS_SKIPPED.  An entry larger than the socket takes as a datagram
 * goes through a sealed memfd, as sd-journal sends it.  write() and
 * write_atomic() are the same async-signal-safe, non-blocking send (never
 * SIGPIPE): an entry journald has no room for is dropped at once, counted
 * as a write error, and the next entry sent is preceded by one saying
 * "** N printk messages dropped **" with PRINTK_DROPPED=N.  Reconnects once
 * per entry if journald restarted.  The socket is connected here, so
 * journald must be listening.
 * Context: any thread, not from a signal handler (allocates).
 * Return: 0 with @out filled; -EINVAL for a NULL @out or an empty socket
 * path or one of 108 bytes or more; -ENOMEM; the error of socket(2) or
 * connect(2) (-ENOENT, -ECONNREFUSED: no journald listening; -EACCES).
 */
int pk_console_journal_make(const char *socket_path, const char *ident,
			    struct pk_console_driver *out);

/**
 * pk_console_net_make() - a driver that sends each console write as one
 * UDP datagram to @host:@port, as Linux's netconsole.
 * @host: a numeric IPv4 or IPv6 address, or a name (getaddrinfo(), the
 *        first address), resolved on a thread of the driver's, never in
 *        the caller: the driver is made at once, a failed lookup is
 *        tried again after 1 s, doubling up to a minute, for as long as
 *        the console lives, and until the name resolves each write is
 *        counted as lost (reported in-band, below).  A child forked
 *        before then does not resolve it.
 * @port: 1-65535.
 * @out:  filled with the driver (format PK_FMT_HUMAN).
 *
 * A datagram carries at most 1400 bytes: a longer write goes out as
 * several, each after the first starting with "ncfrag=OFFSET/TOTAL "
 * (bytes of the write), so that no datagram but a record's first starts
 * with the record's text (escaped bytes cannot place a forged header at
 * the start of one).  Sends are non-blocking on a connected socket: a
 * dead or unreachable peer costs a counted write error, never a stall,
 * never SIGPIPE; a full socket buffer costs write() a wait of at most
 * 100 ms once per stall (no later send waits until one succeeds) and
 * write_atomic() none.  A write not sent is counted, and the next
 * datagram sent is preceded by "** N printk messages dropped **".
 * Context: any thread, not from a signal handler (allocates, may start a
 * thread).
 * Return: 0 with @out filled; -EINVAL for a NULL or empty @host, a port
 * outside 1-65535 or a NULL @out; -ENOMEM; -EAGAIN (no thread to resolve
 * a name); for a numeric address, the error of socket(2) or connect(2).
 */
int pk_console_net_make(const char *host, unsigned port, struct pk_console_driver *out);

/**
 * pk_console_netext_make() - Linux's extended netconsole: each record as
 * one UDP datagram to @host:@port in the /dev/kmsg format,
 * "6,seq,usec,-;text\n" (PK_FMT_KMSG, escaped as /dev/kmsg escapes).
 * @host, @port: as for pk_console_net_make().
 * @out:  filled with the driver (format PK_FMT_KMSG).
 *
 * A record over 1000 bytes goes out as fragments of at most 1000 bytes,
 * each with the record's header and ",ncfrag=OFFSET/TOTAL" before the ';'
 * (OFFSET and TOTAL in bytes of the text after the header, its newline
 * included), as Linux's netconsole sends them.  If a fragment after the
 * first cannot be sent, the rest of that record is not sent.  Sends are
 * non-blocking and async-signal-safe: the console prints at a crash.
 * Context: any thread, not from a signal handler (allocates, may start a
 * thread).
 * Return: 0 with @out filled; -EINVAL for a NULL or empty @host, a port
 * outside 1-65535 or a NULL @out; -ENOMEM; -EAGAIN (no thread to resolve
 * a name); for a numeric address, the error of socket(2) or connect(2).
 */
int pk_console_netext_make(const char *host, unsigned port, struct pk_console_driver *out);

/**
 * pk_console_register_driver() - register a made driver as a console.
 * @drv:      a driver filled by a *_make() constructor (or by hand: ops,
 *            ctx and format, reserved zeroed).
 * @loglevel: as for pk_console_register().
 *
 * As pk_console_register(), but the console prints in drv->format and
 * owns drv->ctx: it is released (drv->ops->release) when the console is
 * unregistered, and also at once if the registration fails, so the
 * driver is consumed either way.
 * Context: any thread, not from a signal handler.
 * Return: the console, or NULL with errno set: EINVAL for a NULL @drv or
 * drv->ops, and the errors of pk_console_register().
 */
struct pk_console *pk_console_register_driver(const struct pk_console_driver *drv, int loglevel);

/**
 * pk_console_register_spec() - register consoles from PK_CONSOLE syntax.
 * @spec: a comma-separated list of entries, stderr, stdout, fd:N,
 *        file:PATH, syslog, syslog:SOCKET, journal, journal:SOCKET,
 *        net:HOST:PORT (net:[::1]:6666
 *        for IPv6), each optionally followed by @LEVEL (a digit as
 *        console_loglevel, or a level name meaning that level and worse)
 *        and/or %BYTES_PER_SEC (throttle), then by its options
 *        (fmt=, tid=, level=, time=, loglevel=, rate=, name=, and for
 *        file: mode= and rotate=), with quoting for any path: the grammar
 *        is documented at pk_config_init().
 *
 * A bad entry (or option) is reported on stderr, naming it, and that
 * console is skipped; the others are registered.  Unlike the consoles of
 * PK_CONSOLE or pk_config.consoles, these are the program's: pk_init()
 * does not replace them, and an unusable list does not fall back to
 * stderr.
 * Context: any thread, not from a signal handler (allocates, opens files).
 * Return: the number of consoles registered (0 if none could be), or
 * -EINVAL for a NULL @spec, or the error of initialising the library,
 * which a first call does as pk_printk() would: pk_init()'s errors,
 * -EAGAIN while another thread's initialisation has not finished (or from
 * inside this thread's own), -ENODEV if it failed meanwhile.
 */
int pk_console_register_spec(const char *spec);

/*
 * RFC 5424 syslog over a network or a local socket (pk_console_rfc5424_make()).
 * Zero-initialise and set what you need.
 *   transport   PK_SYSLOG_UNIX (datagrams to a socket path), PK_SYSLOG_UDP,
 *               PK_SYSLOG_TCP (RFC 6587 octet counting), PK_SYSLOG_RELP
 *               (RELP through librelp: acknowledged, at-least-once).
 *   host        UDP, TCP, RELP: a numeric IPv4 or IPv6 address, or a name
 *               (UDP, TCP: resolved on a thread of the driver's, retried
 *               until it resolves, as pk_console_net_make() says; TCP
 *               queues meanwhile, UDP counts what it drops; RELP:
 *               resolved once, in pk_console_rfc5424_make()); unix: the
 *               socket's path (NULL: /dev/log).
 *   port        UDP, TCP, RELP: 0 is 514.
 *   facility    LOG_USER, LOG_LOCAL0 ... of <syslog.h> (the facility
 *               shifted left by 3); 0: each record's own (pk_config.facility).
 *   hostname    HOSTNAME field; NULL: gethostname().  app_name: APP-NAME;
 *               NULL: the program's name.  Bytes outside printable ASCII
 *               become '_'; cut at 255 and 48 bytes.
 *   connect_timeout_ms  TCP, RELP: a connection attempt is abandoned after
 *               this (0: 1000; RELP rounds up to whole seconds).  Attempts
 *               never block the caller: TCP's go on in the background of
 *               later writes, RELP's in the driver's sender thread.
 *   retry_max_ms  TCP, RELP: after a failed attempt or a lost connection
 *               the next waits 100 ms, doubling up to this (0: 5000).
 *   queue_size  TCP, RELP: bytes of messages kept while the receiver is
 *               slow, connecting or down, sent in order once it takes them
 *               (0: 256 KiB; at least 8204, RELP 16400).
 *   flags       PK_RFC5424_BOM: a UTF-8 BOM before each text (RFC 5424
 *               says SHOULD; most receivers keep it as three bytes).
 */
#define PK_SYSLOG_UNIX	1
#define PK_SYSLOG_UDP	2
#define PK_SYSLOG_TCP	3
#define PK_SYSLOG_RELP	4
#define PK_RFC5424_BOM	0x1u
struct pk_rfc5424_opts {
	int transport;
	const char *host;
	unsigned port;
	int facility;
	const char *hostname;
	const char *app_name;
	unsigned connect_timeout_ms;
	unsigned retry_max_ms;
	size_t queue_size;
	unsigned flags;
	uint64_t reserved[4];	/* zero: later options */
};

/**
 * pk_console_rfc5424_make() - a syslog console sending RFC 5424 messages:
 *   <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID - [printk@32473 seq="S" tid="T"] TEXT
 * PRI from the facility and the record's level; TIMESTAMP the record's
 * wall-clock time, RFC 3339 with microseconds and the local UTC offset;
 * PROCID the storing process; TEXT UTF-8 (bytes that are not UTF-8 are
 * U+FFFD), cut at a character boundary to fit 8192 bytes a message.
 * The console renders records as PK_FMT_JSON | PK_FMT_F_RFC3339 for the
 * driver, which builds the message from that; do not change its format.
 * No write ever blocks: sockets are non-blocking and TCP connects in the
 * background, queues while down and reconnects with backoff.  A message
 * that cannot be sent or queued is counted as a write error of the
 * console and reported in-band, before the next one sent, as
 * "[printk@32473 dropped="N"] ** N printk messages dropped **" at warning
 * level.  At a crash (write_atomic) unix and UDP send; TCP sends if it is
 * connected; RELP prints nothing.
 * RELP: write() queues the message (a bounded queue, async-signal-safe)
 * and a sender thread of the driver's own hands it to librelp.  Each
 * message is acknowledged by the receiver; after a lost connection librelp
 * sends again what was not acknowledged, so every message queued arrives
 * at least once (a duplicate keeps its seq= for the receiver to drop).
 * Unregistering waits a few seconds for the queue to drain.
 * A host name (UDP, TCP, RELP) is resolved on a thread of the driver's,
 * never in the caller, and retried after a failure for as long as the
 * console lives; TCP and RELP queue meanwhile, UDP counts.
 * Context: any thread, not from a signal handler (allocates, may start a
 * thread).
 * Return: 0 with @out filled; -EINVAL (bad options, a unix path too long),
 * -ENOMEM, -EAGAIN (no thread to resolve a name), -EPROTONOSUPPORT
 * (RELP in a libprintk built without it, or librelp.so.0, which the first
 * RELP console loads, could not be loaded: said on stderr), or the errno of
 * socket(2)/connect(2) for UDP, of pthread_create(3) for RELP.
 */
int pk_console_rfc5424_make(const struct pk_rfc5424_opts *o, struct pk_console_driver *out);

#if defined(PK_BUILDING_LIB) && defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* PRINTK_CONSOLE_H */
