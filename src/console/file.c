// SPDX-License-Identifier: MIT
/*
 * file.c - console driver: append to a file, optionally fsync()ing each
 * write so that a power cut loses nothing already printed.  write(2) and
 * fsync(2) are async-signal-safe, so the same function is write_atomic.
 * The path may name a FIFO: opening it does not wait for a reader (no
 * reader: -ENXIO), and a reader that goes away gives -EPIPE, not SIGPIPE.
 *
 * Opening.  A program that runs as root may be told to log to a path in
 * /tmp, where any user can leave a symlink to /etc/shadow or a file of
 * their own, readable by them.  So the path is walked one component at a
 * time (pathwalk.c: symlinks on the way followed only by the kernel's
 * protected_symlinks rule, another user's directory in a sticky
 * world-writable directory not entered), and the last component is opened
 * in the directory the walk ends in, without following: a symlink there is
 * looked at and followed by the same rule (the kernel's own links in
 * /proc, such as /dev/stderr, excepted), and an existing file (regular or
 * FIFO) in a sticky world-writable directory is opened only if it belongs
 * to the effective uid or the directory's owner and, if regular, has one
 * link (protected_regular).  Each decision is taken on the object the
 * descriptor holds, so nothing can be swapped between the check and the
 * use.  A new file is created with O_EXCL, mode 0600 unless PK_FILE_MODE()
 * says otherwise (less the umask).  The descriptor is O_CLOEXEC and
 * O_NOCTTY.  A refusal is one line on stderr naming the path and the rule,
 * names escaped (\xNN).
 *
 * Rotation (pk_console_reopen(), pk_console_file_make_opts()).  The
 * console's descriptor number never changes: a new file is opened, then
 * dup3()ed over it.  So write_atomic(), which may run on another thread
 * while write() or pk_console_reopen() is reopening (a panic that took
 * the console over), always writes a valid descriptor, the old file or
 * the new one, never a number closed and reused by someone else.
 *
 * write() (never write_atomic(): no rotation work in an emergency or
 * panic) does the rest before it writes, at a record boundary only (the
 * previous write ended a line), so that no record is split between two
 * files:
 *   - at most once per pk__file_check_ns (a second), it compares the
 *     path's st_dev/st_ino with the descriptor's and reopens the path if
 *     they differ or it is gone (logrotate's "create"), and takes the
 *     file's size again (logrotate's "copytruncate": O_APPEND already puts
 *     the next write at the new end);
 *   - with rotate_size, when the write would take the file past it, it
 *     renames NAME.N-1 to NAME.N ... NAME to NAME.1 in the directory that
 *     holds the file (reached by the walk below, renameat() there), opens
 *     a new NAME and puts it under the descriptor.
 * pk_printk()'s handoff and legacy modes let a caller in a signal handler
 * print, so write() may run in one: all of this is syscalls on
 * memory the console owns (the walk's buffers live in its context; the
 * messages are formatted by the library's own formatter and written with
 * write(2)), with no malloc, no stdio and no lock that a writer waits for.
 * A reopen and a rotation exclude each other through @busy, a flag that
 * write() only tries (taken: it skips its check this time) and that
 * pk_console_reopen() waits for (bounded).
 *
 * Fork.  pk_console_reopen(NULL) walks the list of file consoles under
 * list_lock.  The library's fork sequence (console.c) takes list_lock
 * after the registry's lock (the order of unregistering, whose release
 * takes it) and gives it back in both processes: a fork never leaves the
 * child with the lock held by a thread that did not survive.  In the
 * child, @busy is cleared on every file console, since whoever held it
 * (a write() rotating, a pk_console_reopen() of one console) was another
 * thread (a fork() from a signal handler that interrupted this thread's
 * own rotation is the exception, as it is for any lock).
 *
 * Ordering.  LMM(file:A) (taking @busy, acquire) pairs with LMM(file:B)
 * (dropping it, release) of the previous holder: the walk buffers and
 * @last_err it used are seen complete by the next one.  LMM(file:C)
 * (@gen, release, after a reopen) pairs with LMM(file:D) (acquire, in
 * write()): a write() that sees the new generation takes the size of the
 * new file, never a stale one.  @kind is relaxed: only its value matters,
 * and it is set to the careful kind before the dup3() that may need it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>	/* renameat */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "console/consoles.h"
#include "format/format.h"
#include "store/store.h"
#include "store/pathwalk.h"
#include "printk/console.h"
#include "wfd.h"

#define LMM(label)
#define MODE_SET	PK_FILE_MODE(0)
#define FLAGS_KNOWN	(PK_FILE_FSYNC | PK_FILE_MODE(0777))
#define MAX_ROTATE	999u
#define REOPEN_WAIT_MS	2000	/* pk_console_reopen() waits this long for a rotation */
#define FIFO_WAIT_MS	100	/* write() waits this long for a FIFO's reader to make room */

_Atomic uint64_t pk__file_check_ns = 1000000000u;

struct file_ctx {
	int fd;			/* fixed: a reopen dup3()s over it */
	_Atomic int kind;	/* enum pk__wfd_kind of what @fd holds now */
	unsigned flags;		/* PK_FILE_FSYNC */
	mode_t mode;		/* of a new file */
	unsigned rotate_count;
	uint64_t rotate_size;	/* 0: no rotation */
	struct file_ctx *next;	/* all file consoles (list_lock) */

	/* Whoever holds @busy. */
	_Atomic int busy;
	int last_err;		/* the failure said on stderr last; 0 after a success */
	bool quiet;		/* a refusal by a rule is not said (said already) */
	struct pk__walk walk;	/* after an open: the directory that holds the file */

	/* write() alone (the console's owner). */
	uint64_t next_check_ns;
	uint64_t next_rotate_ns;/* after a failed rotation: not before */
	uint64_t size;		/* of the file, as far as write() knows */
	unsigned seen_gen;
	bool midline;		/* the last write did not end a line */
	bool held_off;		/* rotated away, the new file refused: bounded */
	bool said_held_off;	/* ... and said so */

	/* write() and write_atomic() (one at a time but after a panic's takeover). */
	uint64_t missed;	/* writes failed since the last success, not yet reported */
	bool torn;		/* a failed write left a line unfinished in the file */
	bool json;		/* the records written are JSON objects */
	bool stalled;		/* a FIFO's reader did not make room: no wait until it does */
	char note[64];		/* the drop notice being written */

	_Atomic unsigned gen;	/* bumped by each reopen */
	char path[];
};

/* Every file driver made and not yet released, for pk_console_reopen(NULL). */
static struct file_ctx *all_files;
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;

/* A message on stderr; async-signal-safe (no stdio, no malloc). */
__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = pk__stbsp_vsnprintf(msg, (int)sizeof(msg), fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	if ((size_t)n >= sizeof(msg)) {
		n = (int)sizeof(msg) - 1;
		msg[n - 1] = '\n';
	}
	while (write(STDERR_FILENO, msg, (size_t)n) < 0 && errno == EINTR)
		;
}

/* Open the last component w->name in w->dfd for appending, creating it. */
static int open_last(struct pk__walk *w, mode_t mode, bool *again)
{
	const int fl = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK;
	struct stat dir, st;
	int fd, lfd, ret;

	*again = false;
	fd = openat(w->dfd, w->name, fl | O_CREAT | O_EXCL, mode);
	if (fd >= 0)
		return fd;
	if (errno != EEXIST)
		return -errno;
	fd = openat(w->dfd, w->name, fl);
	if (fd >= 0) {
		if (fstat(w->dfd, &dir) < 0 || fstat(fd, &st) < 0) {
			ret = -errno;
			close(fd);
			return ret;
		}
		if (!pk__walk_owner_ok(w, w->name, &dir, &st)) {
			close(fd);
			return -EACCES;
		}
		return fd;
	}
	if (errno == ENOENT) {	/* removed since */
		*again = ++w->links <= PK__WALK_MAX_LINKS;
		return -ENOENT;
	}
	if (errno != ELOOP)
		return -errno;
	/* A symlink: the kernel's own in /proc, else look at it. */
	if (pk__walk_in_procfs(w->dfd))
		return (fd = openat(w->dfd, w->name, fl & ~O_NOFOLLOW)) < 0 ? -errno : fd;
	lfd = openat(w->dfd, w->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (lfd < 0)
		return -errno;
	ret = pk__walk_follow(w, lfd, w->name);
	close(lfd);
	*again = !ret;
	return ret;
}

/*
 * Open @path as this file's header describes, with @w's buffers (no
 * malloc: write() reopens with them).  On success @w->dfd stays open on
 * the directory that holds the file and @w->name is its name there: the
 * caller ends with pk__walk_end().
 * Return: the descriptor, or a negative errno (-EACCES with @w->why set:
 * a rule refused it).
 */
static int open_log(struct pk__walk *w, const char *path, mode_t mode)
{
	bool again;
	int ret;

	ret = pk__walk_begin(w, path);
	while (!ret && !(ret = pk__walk_parent(w))) {
		ret = open_last(w, mode, &again);
		if (!again) {
			if (ret >= 0)
				return ret;	/* w->dfd holds it, as w->name */
			break;
		}
		ret = 0;
	}
	pk__walk_end(w);
	return ret;
}

/*
 * open_log() for writing: blocking writes to a file (O_NONBLOCK is for the
 * open: a FIFO without a reader fails at once); a FIFO stays non-blocking,
 * so that a reader that stops reading costs a bounded wait (file_put()).
 */
static int file_open(struct file_ctx *f)
{
	struct pk__walk *w = &f->walk;
	int fd = open_log(w, f->path, f->mode);
	struct stat st;

	if (fd == -EACCES && w->why[0] && !f->quiet)
		say("libprintk: file console \"%s\": %s\n",
		    pk__walk_escape(w->tmp, sizeof(w->tmp), f->path), w->why);
	if (fd >= 0 && !(fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)))
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* ---- reopening and rotating (the header's "Rotation") ---- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool busy_try(struct file_ctx *f)
{
	/* LMM(file:A) pairs with LMM(file:B) in busy_end() */
	return !atomic_exchange_explicit(&f->busy, 1, memory_order_acquire);
}

static void busy_end(struct file_ctx *f)
{
	/* LMM(file:B) pairs with LMM(file:A) in busy_try() */
	atomic_store_explicit(&f->busy, 0, memory_order_release);
}

/* Say once (until the next success) that @what failed with @err. */
static void report(struct file_ctx *f, const char *what, int err)
{
	if (err == f->last_err)
		return;
	f->last_err = err;
	say("libprintk: file console \"%s\": %s failed: %s; it goes on writing the file it has "
	    "open\n", f->path, what, pk_strerror(err));
}

/*
 * Put @fd (just opened) under the console's descriptor and close it.
 * Busy held.  Return: 0 or a negative errno (@fd closed either way).
 */
static int swap_fd(struct file_ctx *f, int fd)
{
	enum pk__wfd_kind kind = pk__wfd_kind(fd);
	int ret = 0;

	/* A write_atomic() racing with dup3() may meet either file: be careful for both. */
	if (kind != PK_WFD_PLAIN)
		atomic_store_explicit(&f->kind, PK_WFD_PIPE, memory_order_relaxed);
	if (dup3(fd, f->fd, O_CLOEXEC) < 0)
		ret = -errno;
	else
		atomic_store_explicit(&f->kind, kind, memory_order_relaxed);
	close(fd);
	/* LMM(file:C) pairs with LMM(file:D) in resync() */
	atomic_fetch_add_explicit(&f->gen, 1, memory_order_release);
	return ret;
}

/* Open the path again and put it under the descriptor.  Busy held. */
static int reopen_locked(struct file_ctx *f, bool quiet)
{
	int fd;

	f->quiet = quiet;
	fd = file_open(f);
	pk__walk_end(&f->walk);
	return fd < 0 ? fd : swap_fd(f, fd);
}

/* "NAME.N" into @buf (NAME_MAX + 1 bytes); false if too long. */
static bool numbered(char *buf, const char *name, unsigned n)
{
	int len = pk__stbsp_snprintf(buf, NAME_MAX + 1, "%s.%u", name, n);

	return len > 0 && len <= NAME_MAX;
}

/*
 * Size rotation, busy held: NAME.N-1 -> NAME.N ... NAME -> NAME.1 (or
 * NAME removed when no old file is kept) in the directory that holds the
 * file, then a new NAME.  If the path no longer names our file, someone
 * else rotated it: only reopen.
 */
static int rotate_locked(struct file_ctx *f)
{
	struct pk__walk *w = &f->walk;
	char from[NAME_MAX + 1], to[NAME_MAX + 1];
	struct stat cur, ours;
	unsigned i;
	int fd, ret = 0;

	f->quiet = f->last_err != 0;
	fd = file_open(f);
	if (fd < 0)
		return fd;
	if (fstat(fd, &cur) < 0 || fstat(f->fd, &ours) < 0) {
		ret = -errno;
		goto out;
	}
	if (cur.st_dev != ours.st_dev || cur.st_ino != ours.st_ino) {
		pk__walk_end(w);
		return swap_fd(f, fd);
	}
	if (!S_ISREG(cur.st_mode))
		goto out;	/* a FIFO, a device: nothing to rotate */
	if (!numbered(to, w->name, f->rotate_count ? f->rotate_count : 1)) {
		ret = -ENAMETOOLONG;
		goto out;
	}
	for (i = f->rotate_count; i > 1; i--) {
		numbered(from, w->name, i - 1);
		numbered(to, w->name, i);
		if (renameat(w->dfd, from, w->dfd, to) < 0 && errno != ENOENT) {
			ret = -errno;
			goto out;
		}
	}
	if (f->rotate_count) {
		numbered(to, w->name, 1);
		ret = renameat(w->dfd, w->name, w->dfd, to);
	} else {
		ret = unlinkat(w->dfd, w->name, 0);
	}
	if (ret < 0) {
		ret = -errno;
		goto out;
	}
	close(fd);
	pk__walk_end(w);
	ret = reopen_locked(f, f->quiet);
	/* Renamed away, and the name taken (another user, in between): bounded. */
	if (ret < 0)
		f->held_off = true;
	return ret;
out:
	close(fd);
	pk__walk_end(w);
	return ret;
}

/* Has the path been renamed or removed from under the descriptor? */
static bool moved(struct file_ctx *f, uint64_t *size)
{
	struct stat ps, fs;

	if (fstat(f->fd, &fs) < 0)
		return false;
	*size = (uint64_t)fs.st_size;
	if (stat(f->path, &ps) < 0)
		return errno == ENOENT;
	return ps.st_dev != fs.st_dev || ps.st_ino != fs.st_ino;
}

/* A reopen since write() last looked: take the new file's size. */
static void resync(struct file_ctx *f)
{
	/* LMM(file:D) pairs with LMM(file:C) in swap_fd() */
	unsigned gen = atomic_load_explicit(&f->gen, memory_order_acquire);
	struct stat st;

	if (gen != f->seen_gen && fstat(f->fd, &st) == 0) {
		f->seen_gen = gen;
		f->size = (uint64_t)st.st_size;
		f->held_off = false;	/* a new file under the path */
		f->said_held_off = false;
	}
}

static bool rotation_due(const struct file_ctx *f, size_t len, uint64_t now)
{
	return f->rotate_size && f->size && f->size + len > f->rotate_size &&
	       now >= f->next_rotate_ns;
}

/* write(), before writing @len bytes at a record boundary. */
static void maintain(struct file_ctx *f, size_t len)
{
	uint64_t now = mono_ns(), every = atomic_load_explicit(&pk__file_check_ns,
								 memory_order_relaxed);
	bool check;
	int ret;

	resync(f);
	check = now >= f->next_check_ns;
	if ((!check && !rotation_due(f, len, now)) || !busy_try(f))
		return;
	if (check) {
		f->next_check_ns = now + every;
		if (moved(f, &f->size)) {
			ret = reopen_locked(f, f->last_err != 0);
			if (ret < 0) {
				/* The same bound as after our own rotation (below). */
				f->held_off = f->rotate_size != 0;
				if (!f->held_off)
					report(f, "reopening the renamed or removed path", ret);
			} else {
				f->last_err = 0;
			}
			resync(f);
		}
	}
	if (rotation_due(f, len, now)) {
		ret = rotate_locked(f);
		if (ret < 0) {
			if (!f->held_off)
				report(f, "rotating", ret);
			f->next_rotate_ns = now + every;	/* not again for every record */
		} else {
			f->last_err = 0;
		}
		resync(f);
	}
	if (f->held_off && !f->said_held_off) {
		f->said_held_off = true;
		f->last_err = -EACCES;	/* the refusals of the retries are not said */
		say("libprintk: file console \"%s\": the path no longer names the file it writes "
		    "and cannot be opened again (said above); it tries again every check and, "
		    "meanwhile, lets the file it has grow to no more than %llu bytes, counting "
		    "the records it drops\n",
		    pk__walk_escape(f->walk.tmp, sizeof(f->walk.tmp), f->path),
		    (unsigned long long)f->rotate_size);
	}
	busy_end(f);
}

/*
 * One write(2) of the console's descriptor (and its fsync(), with
 * PK_FILE_FSYNC: a failed fsync() is @sync_err, the bytes were written).
 * A FIFO whose reader makes no room: with @may_wait (write()) wait up to
 * FIFO_WAIT_MS for it, once per stall (until a write succeeds again, later
 * writes do not wait); then -ETIMEDOUT.  Never -EAGAIN, which the console
 * would retry at once.
 */
static long put(struct file_ctx *f, const char *buf, size_t len, bool may_wait, int *sync_err)
{
	struct pollfd pfd = { .fd = f->fd, .events = POLLOUT };
	uint64_t deadline = 0, now;
	ssize_t n;

	for (;;) {
		n = pk__wfd_write(f->fd, atomic_load_explicit(&f->kind, memory_order_relaxed),
				  buf, len);
		if (n >= 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		now = mono_ns();
		if (!deadline)
			deadline = now + FIFO_WAIT_MS * 1000000ull;
		if (!may_wait || f->stalled || now >= deadline) {
			f->stalled = true;
			return -ETIMEDOUT;
		}
		/* POLLERR (the reader left) too: the write then fails with EPIPE. */
		if (poll(&pfd, 1, (int)((deadline - now + 999999) / 1000000)) < 0 && errno != EINTR)
			return -errno;
	}
	f->stalled = false;
	if ((f->flags & PK_FILE_FSYNC) && fsync(f->fd) < 0)
		*sync_err = -errno;
	return n;
}

/* Bytes @n of @buf went into the file. */
static void wrote(struct file_ctx *f, const char *buf, size_t n)
{
	if (!n)
		return;
	if (!f->midline)
		f->json = buf[0] == '{';
	f->size += (uint64_t)n;
	f->midline = buf[n - 1] != '\n';
}

/*
 * After failed writes, before the next record: end the line a failed
 * write left unfinished, then say how many writes were lost.  Return: 0,
 * or the error that kept the notice out (it is tried again next time).
 */
static long notice(struct file_ctx *f, bool may_wait)
{
	size_t len = 0;
	int sync_err = 0, n;
	long w;

	if (f->torn)
		f->note[len++] = '\n';
	n = pk__stbsp_snprintf(f->note + len, (int)(sizeof(f->note) - len),
			       f->json ? "{\"dropped\":%llu}\n" : "** %llu printk messages dropped **\n",
			       (unsigned long long)f->missed);
	if (n <= 0 || (size_t)n >= sizeof(f->note) - len)
		return -EOVERFLOW;	/* cannot happen: 20 digits fit */
	len += (size_t)n;
	w = put(f, f->note, len, may_wait, &sync_err);
	if (w < 0)
		return w;
	wrote(f, f->note, (size_t)w);
	if ((size_t)w < len) {
		f->torn = f->midline;
		return -EIO;	/* a short write: the file is full again */
	}
	f->missed = 0;
	f->torn = false;
	return 0;
}

/*
 * Write a part of a record (the console retries the rest of a short
 * write).  A failed write is counted; what it leaves unfinished is ended
 * and the count said in the file before the next record that gets in.
 */
static long file_put(struct file_ctx *f, const char *buf, size_t len, bool may_wait)
{
	uint64_t stood;
	int sync_err = 0;
	long n;

	if (f->missed || f->torn) {
		n = notice(f, may_wait);
		if (n < 0)
			goto lost;
	}
	n = put(f, buf, len, may_wait, &sync_err);
	if (n < 0)
		goto lost;
	wrote(f, buf, (size_t)n);
	return sync_err ? sync_err : n;
lost:
	/* A notice of the console's own stands for its N records. */
	stood = f->midline ? 0 : pk__wfd_notice_count(buf, len);
	f->missed += stood ? stood : 1;
	f->torn = f->midline;
	return n;
}

/* Normal context (the console's owner): checks, rotates, then writes. */
static long file_write(void *ctx, const char *buf, size_t len)
{
	struct file_ctx *f = ctx;

	if (!f->midline) {
		maintain(f, len);
		/* Rotated away and the new file refused: the old one grows no more. */
		if (f->held_off && f->size && f->size + len > f->rotate_size) {
			uint64_t stood = pk__wfd_notice_count(buf, len);

			f->missed += stood ? stood : 1;
			return -EFBIG;
		}
	}
	return file_put(f, buf, len, true);
}

/* Emergency, panic, crash: the file open now, whatever its size; no wait. */
static long file_write_atomic(void *ctx, const char *buf, size_t len)
{
	return file_put(ctx, buf, len, false);
}

static void file_release(void *ctx)
{
	struct file_ctx *f = ctx, **pp;

	pthread_mutex_lock(&list_lock);
	for (pp = &all_files; *pp; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	}
	pthread_mutex_unlock(&list_lock);
	close(f->fd);
	free(f);
}

static const struct pk_console_ops file_ops = {
	.name = "file",
	.write = file_write,
	.write_atomic = file_write_atomic,
	.release = file_release,
};

static int file_make(const char *path, mode_t mode, const struct pk_file_opts *o,
		     struct pk_console_driver *out)
{
	struct file_ctx *f;
	size_t plen = strlen(path);
	struct stat st;
	int fd;

	f = calloc(1, sizeof(*f) + plen + 1);
	if (!f)
		return -ENOMEM;
	memcpy(f->path, path, plen + 1);
	f->mode = mode;
	pk__walk_init(&f->walk);
	f->walk.shared_dirs = true;	/* a log's directory others may write: the rules */
	fd = file_open(f);
	pk__walk_end(&f->walk);
	if (fd < 0) {
		free(f);
		return fd;
	}
	f->fd = fd;
	atomic_init(&f->kind, pk__wfd_kind(fd));
	f->flags = o->flags & PK_FILE_FSYNC;
	f->rotate_size = o->rotate_size;
	f->rotate_count = o->rotate_count;
	f->size = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	f->next_check_ns = mono_ns() + atomic_load_explicit(&pk__file_check_ns,
							    memory_order_relaxed);
	pthread_mutex_lock(&list_lock);
	f->next = all_files;
	all_files = f;
	pthread_mutex_unlock(&list_lock);
	memset(out, 0, sizeof(*out));
	out->ops = &file_ops;
	out->format = PK_FMT_HUMAN;
	out->ctx = f;
	return 0;
}

int pk_console_file_make_opts(const char *path, const struct pk_file_opts *o,
			      struct pk_console_driver *out)
{
	if (!path || !*path || !o || !out || (o->flags & ~PK_FILE_FSYNC) || (o->mode & ~0777u) ||
	    o->rotate_count > MAX_ROTATE)
		return -EINVAL;
	return file_make(path, o->mode ? o->mode : 0600, o, out);
}

int pk_console_file_make(const char *path, unsigned flags, struct pk_console_driver *out)
{
	struct pk_file_opts o = { .flags = flags & PK_FILE_FSYNC };
	mode_t mode = 0600;

	if (!path || !*path || !out || (flags & ~FLAGS_KNOWN) ||
	    (!(flags & MODE_SET) && (flags & PK_FILE_MODE(0777) & ~MODE_SET)))
		return -EINVAL;
	if (flags & MODE_SET)
		mode = (flags & PK_FILE_MODE(0777) & ~MODE_SET) / (PK_FILE_MODE(1) & ~MODE_SET);
	return file_make(path, mode, &o, out);
}

/* ---- fork (the header's "Fork"; called by console.c's fork sequence) ---- */

void pk__file_atfork_prepare(void)
{
	pthread_mutex_lock(&list_lock);
}

void pk__file_atfork_parent(void)
{
	pthread_mutex_unlock(&list_lock);
}

void pk__file_atfork_child(void)
{
	struct file_ctx *f;

	pthread_mutex_init(&list_lock, NULL);
	/* Relaxed: the child's only thread is the one running this. */
	for (f = all_files; f; f = f->next)
		atomic_store_explicit(&f->busy, 0, memory_order_relaxed);
}

/* pk_console_reopen() of one: waits (bounded) for a rotation in progress. */
static int reopen_ctx(struct file_ctx *f)
{
	const struct timespec ms = { 0, 1000000 };
	int ret, waited = 0;

	while (!busy_try(f)) {
		if (++waited > REOPEN_WAIT_MS)
			return -EBUSY;
		nanosleep(&ms, NULL);
	}
	ret = reopen_locked(f, false);
	if (!ret)
		f->last_err = 0;
	busy_end(f);
	return ret;
}

int pk_console_reopen(struct pk_console *con)
{
	struct pk_console *c;
	struct file_ctx *f;
	int i, ret = 0, r;

	if (!con) {
		pthread_mutex_lock(&list_lock);
		for (f = all_files; f; f = f->next) {
			r = reopen_ctx(f);
			if (r < 0 && !ret)
				ret = r;
		}
		pthread_mutex_unlock(&list_lock);
		return ret;
	}
	ret = -EINVAL;
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = pk__con_get(i);
		if (!c)
			continue;
		if (c == con && c->ops == &file_ops)
			ret = reopen_ctx(c->ctx);
		pk__con_put(i);
	}
	return ret;
}
