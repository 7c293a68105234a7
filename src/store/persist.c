// SPDX-License-Identifier: MIT
/*
 * persist.c - the file-backed record store: creating, reopening and
 * validating store files, and telling whether a writer still has one open.
 *
 * FILE LAYOUT
 *
 * A store file is exactly one record-store region (ringbuf.h): the
 * 512-byte header (magic "PPKRING1", format version, sizes and offsets,
 * first seq, the wall-clock time of CLOCK_MONOTONIC zero, the pid of the
 * process that last opened it exclusively, a generation count, the shared
 * reservation heads and counters), the descriptor ring, the data ring.
 * Nothing is stored outside the region; the file size must equal the
 * header's total_size.  The layout is versioned by PK_RING_VERSION: a file
 * of another version is refused (-EPROTO), never converted or overwritten.
 * Because every field is an offset or a count, never a pointer, the same
 * file may be mapped at any address by any number of processes.
 *
 * OPENING FOR WRITING (pk__persist_open)
 *
 * Writers coordinate with open-file-description locks (F_OFD_SETLK) on the
 * whole file, which the kernel drops when the last descriptor of the open
 * file goes away, SIGKILL included:
 *
 *   - every process writing to the store holds a read lock for as long as
 *     it has it open (a fork()ed child shares its parent's);
 *   - a process opening the store first tries for the write lock without
 *     waiting.  If it gets it, no other writer is alive: it validates the
 *     file, repairs what dead writers left (pk__ring_recover) or clears
 *     it, updates the header, and downgrades to a read lock;
 *   - if the write lock is taken, other writers are alive: it waits for a
 *     read lock (which only waits out someone else's setup), validates
 *     the file and joins them without touching the header.  The ring is
 *     multi-producer across processes, since all its state is in the
 *     mapping, so several live processes may share one store.
 *
 * A new file is made whole before anyone can see it: it is created
 * unnamed (O_TMPFILE; a uniquely named temporary, O_EXCL, where
 * unsupported) in the directory the path walk ended in (below), through
 * that directory's descriptor, with mode 0600, which the umask may only
 * narrow,
 * sized with posix_fallocate (so that a full disk fails here, not as
 * SIGBUS inside pk_printk; a file size limit, RLIMIT_FSIZE, below the
 * store's size fails here too, with EFBIG and never SIGXFSZ: fsize.h),
 * formatted and locked, and only then linked at
 * its name in that same directory (linkat() relative to its descriptor,
 * never by the path again).  If the link finds the name taken, another
 * process won the
 * race and its file is opened instead.  A process killed while creating
 * leaves nothing, or a complete empty store.  An existing empty file
 * (touch(1)) is formatted, as it holds nothing to lose; anything else
 * that does not validate is refused with one line on stderr.  An
 * existing store has its blocks allocated (fill_holes()) before anything
 * is written into it: a sparse copy on a full filesystem is refused
 * (ENOSPC), where it would map fine and raise SIGBUS at the first store.
 *
 * OWNERSHIP (writers)
 *
 * A store holds whatever the program logs, so its path is walked one
 * component at a time (pathwalk.c), as a file console's is: a symlink
 * among the directories is followed only if the kernel's
 * protected_symlinks rule allows it (in a sticky world-writable directory,
 * only one owned by the effective uid or by the directory's owner), and
 * another user's directory in a sticky world-writable directory is not
 * entered.  Otherwise buffer_path "/tmp/app/store", where another user
 * made /tmp/app a link to a directory of their choice, would make a root
 * program create a root-owned file there.  The walk ends holding a
 * descriptor of the directory that holds the store; everything after it
 * (looking, opening, creating, linking) is relative to that descriptor.
 *
 * A writer then uses an existing file only if all of these hold, checked
 * on fstatat() of the name, without following, before anything is opened
 * (so that no device or FIFO is ever opened) and again, authoritatively,
 * on fstat() of what was opened:
 *
 *   - it is not a symbolic link (the open uses O_NOFOLLOW as well): another
 *     user's link in a sticky /tmp must not turn its target into a store,
 *     and no link of our own is followed either (name the file itself);
 *   - it is a regular file;
 *   - it is owned by the effective uid (root included: root does not
 *     adopt another user's file);
 *   - it is not writable by group or others (an ACL granting write to
 *     anyone else shows in the group bits, which hold the ACL mask);
 *   - it has one name only (st_nlink 1): where protected_hardlinks is off,
 *     another user can hard-link any file of ours (an empty one would be
 *     formatted) into a sticky /tmp under the store's name.  A store
 *     created without O_TMPFILE has two names for an instant (its
 *     temporary and its own); an opener that looks then is refused, says
 *     so and keeps records in memory.
 *
 * The ownership checks come before the lock, so that a lock another user
 * holds on a file we would refuse cannot make the writer wait.  A refusal
 * is one line on stderr naming the path and the rule; the caller
 * (pk_init) then keeps records in anonymous memory.
 *
 * Readers (pkmsg, pk_reader_open_file) are not bound by these rules: the
 * file is untrusted input to them anyway, and reading another user's store
 * that the kernel lets us read is what pkmsg is for.  A reader follows a
 * symlink only when it maps read-only; a writable reader (pkmsg -C, -w)
 * opens with O_NOFOLLOW, so no symlink ever leads it into writing.
 *
 * TRUNCATION UNDER A WRITER
 *
 * A writer's mapping never outgrows the file (the file size equals the
 * header's total_size, checked before mapping), so only a truncation while
 * mapped could raise SIGBUS in pk_printk.  Under the rules above nobody
 * else can: truncate(2) and ftruncate(2) need write access to the file,
 * which only its owner (the writer's own uid, who can also kill or ptrace
 * the writer) and root have, since the file is the writer's and neither
 * group nor others may write it.  The mode cannot have been wider when
 * someone else opened it: a store this library creates is 0600 from birth
 * (before its link makes it visible), and only the owner or root can chmod
 * it.  What remains are the owner's own mistakes (truncating the file by
 * hand, or widening its mode and letting another user open it for writing
 * before narrowing it again, which keeps that descriptor writable) and I/O
 * errors; those are not defended against: a SIGBUS handler is the
 * program's to install.  The library itself never shrinks a store file.
 *
 * Reopening continues the sequence numbers, as the kernel's log does
 * across dmesg runs.  PK_BUFFER_CLEAR starts afresh but still continues
 * the numbering: with no other writer alive, first_seq and clear_seq move
 * to seq_head, the counters are zeroed and the rings wiped; with other
 * writers alive only clear_seq moves (as pkmsg -C).  The clear never
 * invalidates the header, so a process killed in the middle of it leaves
 * a valid store.
 *
 * TIMESTAMPS ACROSS RESTARTS
 *
 * Records carry CLOCK_MONOTONIC time, which is system-wide: every process
 * of one boot shares it.  realtime_zero_ns (CLOCK_REALTIME minus
 * CLOCK_MONOTONIC) is recomputed at each exclusive open, so it describes
 * the clock of the records being written now; for records of earlier runs
 * in the same boot it is the same value up to NTP adjustments made since,
 * so their dates stay right.  Records written before a reboot carry the
 * previous boot's monotonic time: their uptime stamps stay what they were
 * and their dates (pkmsg -T) are wrong, as dmesg -T is after a suspend.
 * The generation count, bumped at each exclusive open, tells runs apart.
 *
 * LIVENESS (readers)
 *
 * A store is live while some process holds a read lock on it: a reader
 * asks with F_OFD_GETLK, which takes no lock and so never disturbs a
 * writer's open.  Live readers wait for records in progress; post-mortem
 * readers skip them.  Where locks are not supported, kill(creator_pid, 0)
 * is the fallback (fooled by pid reuse, hence only a fallback).
 *
 * VALIDATION
 *
 * The file is untrusted.  Before anything but the header is touched, the
 * file must be a regular file no larger than the largest region; the
 * header (magic, version, geometry, offsets) must describe a region of
 * exactly the file's size (pk__ring_attach reads each field once); the
 * sequence bounds must be ordered (first_seq <= clear_seq <= seq_head),
 * seq_head no higher than PK_RING_SEQ_LIMIT (2^62 below 2^64: no store
 * gets there, and beyond it the numbering could wrap) and lpos_head
 * 8-aligned.  A header that fails is refused like any invalid store, for
 * writers and readers alike, so that absurd bounds can neither make every
 * write fail nor send a reader round the whole seq space.  lpos_head may
 * hold any aligned value: data positions are compared by difference, so
 * they wrap harmlessly.  The waiters' lease (wait_until) is never trusted
 * further than a lease can run (ringbuf.c, lease_runs).  Descriptors are
 * not trusted either: pk__ring_recover(), run at every exclusive open,
 * makes each one consistent with the header, whatever seq it claims
 * (older, newer, or beyond seq_head).  Records are validated one by one
 * by the reader (pk__ring_read).  A file shorter than its header's
 * total_size is reported as truncated.  The reader maps only the size it
 * validated; a reader whose file is truncated while mapped gets SIGBUS,
 * which pkmsg catches (the owner's rules above bind writers, not readers).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/fsize.h"
#include "format/format.h"
#include "store/store.h"
#include "store/pathwalk.h"

/* Lock the whole file: F_RDLCK, F_WRLCK or F_UNLCK.  0 or -errno. */
static int ofd_lock(int fd, short type, bool wait)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = 0;
	fl.l_len = 0;
	while (fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

static int64_t realtime_zero_now(void)
{
	struct timespec mono, real;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	return ((int64_t)real.tv_sec - mono.tv_sec) * 1000000000ll +
	       ((int64_t)real.tv_nsec - mono.tv_nsec);
}

/* Room for any reason this file gives. */
#define WHY_MAX 256

/*
 * The one line a writer's failure prints: the path, the reason (@why, or
 * the errno's description), and what the library does instead.
 */
/*
 * The C library's words for a system call's -@err (pk_strerror() gives a
 * few errnos libprintk's own meaning: ENODEV from mmap() is not "libprintk
 * is not initialised").
 */
static const char *sys_reason(int err)
{
	const char *desc = err != INT_MIN ? strerrordesc_np(-err) : NULL;

	return desc ? desc : pk_strerror(err);
}

static int report(const char *path, int err, const char *why)
{
	fprintf(stderr, "libprintk: store %s: %s; records are kept in memory only\n", path,
		why && *why ? why : sys_reason(err));
	return err;
}

/* @what failed with the system's -@err: the line names both. */
static int report_sys(const char *path, int err, const char *what)
{
	fprintf(stderr, "libprintk: store %s: %s: %s; records are kept in memory only\n", path,
		what, sys_reason(err));
	return err;
}

/*
 * check_owner() - may a writer use the existing file described by @st?
 * The rules of "OWNERSHIP" above, in the order they are stated.
 *
 * Context: any thread.
 * Return: 0; -ELOOP a symlink; -EISDIR a directory; -EINVAL not a
 * regular file; -EPERM another owner, writable by group or others, or
 * more than one name.
 * @why names the rule that failed.
 */
static int check_owner(const struct stat *st, char *why, size_t n)
{
	if (S_ISLNK(st->st_mode)) {
		snprintf(why, n, "is a symbolic link; a store is never opened through one "
			 "(name the file itself)");
		return -ELOOP;
	}
	if (S_ISDIR(st->st_mode)) {
		snprintf(why, n, "is a directory; name a file in it");
		return -EISDIR;
	}
	if (!S_ISREG(st->st_mode)) {
		snprintf(why, n, "not a regular file");
		return -EINVAL;
	}
	if (st->st_uid != geteuid()) {
		snprintf(why, n, "owned by uid %u, not by this process's effective uid %u; "
			 "a store is used only by its owner", (unsigned)st->st_uid,
			 (unsigned)geteuid());
		return -EPERM;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, n, "writable by group or others (mode %04o); a store must be "
			 "writable by its owner only (chmod go-w)", (unsigned)(st->st_mode & 07777));
		return -EPERM;
	}
	if (st->st_nlink > 1) {
		snprintf(why, n, "has %lu hard links; a store has one name only (another user may "
			 "have linked a file of ours here)", (unsigned long)st->st_nlink);
		return -EPERM;
	}
	return 0;
}

/*
 * validate() - check an untrusted mapped store of @size bytes.
 * @mem:  the mapping (at least @size bytes, @size >= PK_RING_HDR_SIZE)
 * @why:  set to a sentence naming the problem on failure (@n bytes)
 *
 * Context: any thread.
 * Return: 0; -EPROTO for another format version; -EINVAL for anything
 * that is not a valid store.
 */
static int validate(void *mem, size_t size, struct pk_ring *ring, char *why, size_t n)
{
	const volatile struct pk_ring_hdr *vh = mem;
	const struct pk_ring_hdr *h = mem;
	struct pk_ring scratch;
	uint64_t first, clear, head, lpos, total;
	int ret = pk__ring_attach(ring, mem, size);

	if (ret == -EPROTO) {
		snprintf(why, n, "store file has format version %u, this libprintk reads version %u%s",
			 (unsigned)vh->version, PK_RING_VERSION,
			 vh->version < PK_RING_VERSION
			 ? " (written by an older libprintk)" : "");
		return ret;
	}
	total = vh->total_size;
	if (ret < 0) {
		/*
		 * A header that would be valid for a file of its total_size,
		 * but the file is shorter: say so.  The attach reads only
		 * the header, never the rings it would describe.
		 */
		if (h->magic == PK_RING_MAGIC && total > size &&
		    pk__ring_attach(&scratch, mem, (size_t)total) == 0)
			snprintf(why, n, "store file is truncated: %zu bytes, its header describes %llu",
				 size, (unsigned long long)total);
		else
			snprintf(why, n, "%s", h->magic != PK_RING_MAGIC
				 ? "not a libprintk store (bad magic)"
				 : "corrupt store header (sizes or offsets)");
		return ret;
	}
	if (total != size) {
		snprintf(why, n, "file size does not match the store header: %zu bytes, the header "
			 "describes %llu", size, (unsigned long long)total);
		return -EINVAL;
	}
	/*
	 * Load order clear_seq, then seq_head: both only grow, so a live store
	 * passes.  Relaxed: values checked for plausibility only.
	 */
	first = h->first_seq;
	clear = atomic_load_explicit(&h->clear_seq, memory_order_relaxed);
	head = atomic_load_explicit(&h->seq_head, memory_order_relaxed);
	lpos = atomic_load_explicit(&h->lpos_head, memory_order_relaxed);
	if (first > clear || clear > head || head > PK_RING_SEQ_LIMIT || (lpos & 7)) {
		snprintf(why, n, "corrupt store header (sequence bounds): first_seq %llu, "
			 "clear_seq %llu, seq_head %llu (at most %llu), lpos_head %llu",
			 (unsigned long long)first, (unsigned long long)clear,
			 (unsigned long long)head, (unsigned long long)PK_RING_SEQ_LIMIT,
			 (unsigned long long)lpos);
		return -EINVAL;
	}
	return 0;
}

/*
 * The checks of a store image of @size bytes at @mem (a file's mapping,
 * or a copy in memory) beyond its size: validate(), and for a writer the
 * seq limit.  @magic: the image's first 8 bytes where it is too short to
 * be mapped (NULL: unknown), for the message.
 */
static int check_size(size_t size, const uint64_t *magic, char *why, size_t n)
{
	if (size < PK_RING_HDR_SIZE) {
		if (magic && *magic == PK_RING_MAGIC)
			snprintf(why, n, "store file is truncated: %zu bytes, shorter than its "
				 "header", size);
		else
			snprintf(why, n, "file too short to be a libprintk store");
		return -EINVAL;
	}
	if (size > pk__ring_region_size(PK_RING_MAX_DATA_LOG2)) {
		snprintf(why, n, "file too large to be a libprintk store");
		return -EINVAL;
	}
	return 0;
}

static int check_mapped(void *mem, size_t size, bool writable, struct pk_ring *ring, char *why,
			size_t n)
{
	int ret = validate(mem, size, ring, why, n);

	if (ret == 0 && writable &&
	    atomic_load_explicit(&ring->h->seq_head, memory_order_relaxed) > PK_RING_SEQ_WRITE_LIMIT) {
		/*
		 * Readable, but a writer would soon carry seq_head past what
		 * any reader accepts (PK_RING_SEQ_LIMIT): no real store gets
		 * here (2^61 records), a crafted header does.  Relaxed: a
		 * plausibility check, like validate()'s.
		 */
		snprintf(why, n, "seq_head %llu is past %llu, too near the limit to write to; "
			 "remove the file",
			 (unsigned long long)atomic_load_explicit(&ring->h->seq_head,
								  memory_order_relaxed),
			 (unsigned long long)PK_RING_SEQ_WRITE_LIMIT);
		ret = -EINVAL;
	}
	return ret;
}

/* Map @fd (a regular file of @size bytes) and validate it. */
static int map_validated(int fd, size_t size, bool writable, void **memp, struct pk_ring *ring,
			 char *why, size_t n)
{
	uint64_t magic = 0;
	bool have_magic;
	void *mem;
	int ret;

	have_magic = size < PK_RING_HDR_SIZE && size >= sizeof(magic) &&
		     pread(fd, &magic, sizeof(magic), 0) == sizeof(magic);
	ret = check_size(size, have_magic ? &magic : NULL, why, n);
	if (ret < 0)
		return ret;
	mem = mmap(NULL, size, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		ret = -errno;
		why[0] = '\0';
		return ret;
	}
	ret = check_mapped(mem, size, writable, ring, why, n);
	if (ret < 0) {
		munmap(mem, size);
		return ret;
	}
	*memp = mem;
	return 0;
}

/*
 * Reserve the blocks of a new file so that a full disk fails here.
 * Beyond RLIMIT_FSIZE both calls fail with EFBIG and would also raise
 * SIGXFSZ, which kills the process: it is held off (fsize.h).
 */
static int reserve(int fd, size_t size)
{
	struct pk__fsize_hold hold;
	int err;

	pk__fsize_hold(&hold);
	err = posix_fallocate(fd, 0, (off_t)size);
	if (err == EOPNOTSUPP || err == EINVAL)
		err = ftruncate(fd, (off_t)size) < 0 ? errno : 0;
	pk__fsize_release(&hold);
	return -err;
}

/* The words for reserve()'s failure -@err for a store of @size bytes. */
static void reserve_why(int err, size_t size, char *why, size_t n)
{
	struct rlimit rl;

	if (err == -EFBIG && getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		snprintf(why, n, "the store needs %zu bytes, more than the file size limit "
			 "(RLIMIT_FSIZE, ulimit -f) of %llu bytes allows", size,
			 (unsigned long long)rl.rlim_cur);
	else
		snprintf(why, n, "cannot reserve the store's %zu bytes: %s", size,
			 sys_reason(err));
}

/*
 * Allocate whatever blocks an existing store of @size bytes lacks: a
 * sparse copy (cp --sparse=always) maps fine and raises SIGBUS at the
 * first store into a hole the filesystem has no room for.  fallocate()
 * of mode 0 changes no byte: allocated ranges stay as they are, a hole
 * becomes the zeros it reads as, so writers already mapping the file
 * are not disturbed.  posix_fallocate()'s fallback where the filesystem
 * has no fallocate() writes a zero byte into each block that reads zero,
 * harmless only while no other writer is alive (@excl); with writers
 * alive, such a file is used as it is.  The file has its size already,
 * so RLIMIT_FSIZE is never met here.
 */
static int fill_holes(int fd, size_t size, bool excl)
{
	int err;

	if (excl)
		return -posix_fallocate(fd, 0, (off_t)size);
	while ((err = fallocate(fd, 0, 0, (off_t)size) < 0 ? errno : 0) == EINTR)
		;
	return err == EOPNOTSUPP || err == ENOSYS ? 0 : -err;
}

/*
 * Start afresh with no other writer alive, continuing the numbering.
 * Each step leaves a valid header, so a kill in between is harmless
 * (the next exclusive open's pk__ring_recover() finishes the descriptors).
 */
static void clear_store(struct pk_ring *ring)
{
	struct pk_ring_hdr *h = ring->h;

	pk__ring_restart(ring);
	/* Relaxed: no writer runs; readers treat counters as statistics. */
	atomic_store_explicit(&h->lost, 0, memory_order_relaxed);
	atomic_store_explicit(&h->reserve_failed, 0, memory_order_relaxed);
	atomic_store_explicit(&h->truncated, 0, memory_order_relaxed);
	atomic_store_explicit(&h->refused, 0, memory_order_relaxed);
}

/* Make this process the store's current (exclusive) opener. */
static void take_over(struct pk_ring *ring, unsigned flags)
{
	struct pk_ring_hdr *h = ring->h;

	if (flags & PK_CFG_BUFFER_CLEAR)
		clear_store(ring);
	else
		pk__ring_recover(ring);
	h->realtime_zero_ns = realtime_zero_now();
	h->creator_pid = (int32_t)getpid();
	h->generation++;
}

/* Format a new store file; its creation is its first exclusive open. */
static void format_new(void *mem, unsigned l2)
{
	pk__ring_format(mem, l2, 0);
	((struct pk_ring_hdr *)mem)->generation = 1;
}

/*
 * How the caller asked for @bytes: "PK_BUFFER_SIZE=4m" when that is where
 * the size came from, so that the message names what the user wrote.
 */
static void asked_size(size_t bytes, char *buf, size_t n)
{
	const char *v = secure_getenv("PK_BUFFER_SIZE");
	size_t sz;

	/* PK_BUFFER_SIZE names the data ring; pk_config_init() made it a store size. */
	if (v && pk__parse_size(v, &sz) == 0 &&
	    (sz == bytes || (sz >= PK_BUFFER_SIZE_MIN && sz <= PK__DATA_SIZE_MAX &&
			     pk__store_size_for(sz) == bytes)))
		snprintf(buf, n, "PK_BUFFER_SIZE=%.40s", v);
	else
		snprintf(buf, n, "a buffer size of %zu bytes", bytes);
}

/* The message for a valid store whose data ring is 1 << @l2, not what was asked. */
static void other_size(unsigned l2, size_t file_size, size_t asked, char *why, size_t n)
{
	size_t lo = pk__ring_region_size(l2), hi = pk__ring_region_size(l2 + 1) - 1;
	char want[64];

	/* The buffer sizes that open this store: those that give the same ring. */
	if (lo < PK_BUFFER_SIZE_MIN)
		lo = PK_BUFFER_SIZE_MIN;
	if (hi > PK_BUFFER_SIZE_MAX)
		hi = PK_BUFFER_SIZE_MAX;
	asked_size(asked, want, sizeof(want));
	if (lo <= hi)
		snprintf(why, n, "%s does not match this %zu-byte store, which a buffer size "
			 "from %zu to %zu bytes opens; remove the file or use such a size",
			 want, file_size, lo, hi);
	else
		snprintf(why, n, "%s does not match this %zu-byte store, which no buffer size "
			 "opens; remove the file", want, file_size);
}

/*
 * Open the existing store behind @fd for writing.  Consumes nothing.
 * @asked: the buffer size the caller asked for (for messages).
 */
static int open_existing(const char *path, int fd, unsigned l2, size_t size, size_t asked,
			 unsigned flags, void **memp)
{
	struct pk_ring ring;
	char why[WHY_MAX];
	struct stat st;
	bool excl = true;
	void *mem;
	int ret;

	/* Before the lock: another user's lock must not make us wait. */
	if (fstat(fd, &st) < 0)
		return report(path, -errno, NULL);
	ret = check_owner(&st, why, sizeof(why));
	if (ret < 0)
		return report(path, ret, why);
	ret = ofd_lock(fd, F_WRLCK, false);
	if (ret == -EAGAIN || ret == -EACCES) {
		excl = false;
		ret = ofd_lock(fd, F_RDLCK, true);
	}
	if (ret < 0)
		return report_sys(path, ret, "cannot lock the store file");
	/* The size again: only what the lock now protects counts. */
	if (fstat(fd, &st) < 0)
		return report(path, -errno, NULL);
	if (st.st_size == 0 && excl) {
		/* Empty (e.g. touch(1)): nothing to lose, make it a store. */
		ret = reserve(fd, size);
		if (ret < 0) {
			reserve_why(ret, size, why, sizeof(why));
			return report(path, ret, why);
		}
		mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (mem == MAP_FAILED)
			return report(path, -errno, NULL);
		format_new(mem, l2);
		goto done;
	}
	ret = map_validated(fd, (size_t)st.st_size, true, &mem, &ring, why, sizeof(why));
	if (ret < 0)
		return report(path, ret, why);
	/* The view's size, which attach derived from the header it validated. */
	if (ring.data_size != 1ull << l2) {
		other_size((unsigned)__builtin_ctzll(ring.data_size), (size_t)st.st_size, asked,
			   why, sizeof(why));
		munmap(mem, (size_t)st.st_size);
		return report(path, -EINVAL, why);
	}
	/* Before anything is written into the mapping. */
	ret = fill_holes(fd, (size_t)st.st_size, excl);
	if (ret < 0) {
		long long holes = (long long)st.st_size - (long long)st.st_blocks * 512;

		snprintf(why, sizeof(why), "cannot allocate the blocks of this store file%s: %s%s",
			 holes > 0 ? " (it is sparse)" : "", sys_reason(ret),
			 ret == -ENOSPC ? "; free some space or remove the file" : "");
		munmap(mem, (size_t)st.st_size);
		return report(path, ret, why);
	}
	if (excl) {
		take_over(&ring, flags);
	} else {
		/* The processes already writing count their losses from now on. */
		atomic_fetch_add_explicit(&ring.h->joins, 1, memory_order_seq_cst);
		if (flags & PK_CFG_BUFFER_CLEAR)
			pk__ring_clear(&ring);
	}
done:
	if (excl)
		ofd_lock(fd, F_RDLCK, false);	/* a downgrade never blocks */
	*memp = mem;
	return 0;
}

/*
 * Create a new store named @name in the directory @dfd, complete before
 * it becomes visible.
 * Return: 0 with *fdp and *memp set; -EEXIST if another process created
 * it first; another -errno.
 */
static int create_new(int dfd, const char *name, unsigned l2, size_t size, void **memp,
		      int *fdp)
{
	char tmp[NAME_MAX + 1], proc[64];
	static _Atomic unsigned tmp_count;
	bool named = false;
	void *mem;
	int fd, ret;

	fd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		/* Relaxed: only has to make names unique within the process. */
		snprintf(tmp, sizeof(tmp), "%.200s.%d.%u.tmp", name, (int)getpid(),
			 atomic_fetch_add_explicit(&tmp_count, 1, memory_order_relaxed));
		fd = openat(dfd, tmp, O_CREAT | O_EXCL | O_NOFOLLOW | O_RDWR | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		named = true;
	}
	ret = reserve(fd, size);
	if (ret < 0)
		goto fail;
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		ret = -errno;
		goto fail;
	}
	format_new(mem, l2);
	/* Nobody else can reach the file yet: this cannot fail for a conflict. */
	ret = ofd_lock(fd, F_WRLCK, false);
	if (ret < 0)
		goto fail_unmap;
	if (named) {
		ret = linkat(dfd, tmp, dfd, name, 0) < 0 ? -errno : 0;
		unlinkat(dfd, tmp, 0);
	} else {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		ret = linkat(AT_FDCWD, proc, dfd, name, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
	}
	if (ret < 0)
		goto fail_unmap;
	ofd_lock(fd, F_RDLCK, false);
	*memp = mem;
	*fdp = fd;
	return 0;

fail_unmap:
	munmap(mem, size);
fail:
	if (named && ret != -EEXIST)
		unlinkat(dfd, tmp, 0);
	close(fd);
	return ret;
}

/*
 * The open of an existing store @name in @dfd failed with @err: a symlink
 * put there since we looked (O_NOFOLLOW says ELOOP) gets the rule's words.
 */
static int report_open(const char *path, int dfd, const char *name, int err)
{
	char why[WHY_MAX];
	struct stat st;

	if (err == -ELOOP && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    check_owner(&st, why, sizeof(why)) == -ELOOP)
		return report(path, err, why);
	return report(path, err, NULL);
}

/* The walk to the store's directory failed with @err. */
static int report_walk(const char *path, const struct pk__walk *w, int err)
{
	if (w->why[0])
		return report(path, err, w->why);	/* a rule refused a component */
	if (err == -ENOENT)
		return report_sys(path, err, "cannot create the store file");
	if (err == -EISDIR)
		return report(path, err, "is a directory; name a file in it");
	return report(path, err, NULL);
}

/*
 * Open or create the store named @w->name in the directory @w->dfd.
 * Each retry means another process created or removed the file meanwhile.
 */
static int open_in(const char *path, const struct pk__walk *w, const struct pk_config *cfg,
		   unsigned l2, size_t size, void **memp, int *fdp)
{
	char why[WHY_MAX];
	struct stat st;
	int fd, ret, tries;

	for (tries = 0; tries < 16; tries++) {
		/*
		 * Look before opening, so that a device, a FIFO or another
		 * user's file is never opened at all; open_existing() checks
		 * again what was opened, which is what counts.
		 */
		if (fstatat(w->dfd, w->name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			ret = check_owner(&st, why, sizeof(why));
			if (ret < 0)
				return report(path, ret, why);
			fd = openat(w->dfd, w->name,
				    O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
			if (fd < 0) {
				if (errno == ENOENT)
					continue;
				return report_open(path, w->dfd, w->name, -errno);
			}
			ret = open_existing(path, fd, l2, size, cfg->buffer_size, cfg->flags, memp);
			if (ret < 0) {
				close(fd);
				return ret;
			}
			*fdp = fd;
			return 0;
		}
		if (errno != ENOENT)
			return report(path, -errno, NULL);
		ret = create_new(w->dfd, w->name, l2, size, memp, fdp);
		if (ret == 0)
			return 0;
		if (ret == -EFBIG || ret == -ENOSPC || ret == -EDQUOT) {
			reserve_why(ret, size, why, sizeof(why));
			return report(path, ret, why);
		}
		if (ret != -EEXIST)
			return report_sys(path, ret, "cannot create the store file");
	}
	return report(path, -EAGAIN, "the store file keeps appearing and vanishing");
}

int pk__persist_open(const struct pk_config *cfg, void **memp, size_t *sizep, int *fdp)
{
	const char *path = cfg->buffer_path;
	unsigned l2 = pk__ring_data_log2_for(cfg->buffer_size);
	struct pk__walk w;
	size_t size;
	int ret;

	if (!path || !*path || !l2)
		return -EINVAL;
	size = pk__ring_region_size(l2);
	pk__walk_init(&w);
	ret = pk__walk_begin(&w, path);
	if (!ret)
		ret = pk__walk_parent(&w);
	if (ret < 0)
		ret = report_walk(path, &w, ret);
	else
		ret = open_in(path, &w, cfg, l2, size, memp, fdp);
	pk__walk_end(&w);
	if (ret == 0)
		*sizep = size;
	return ret;
}

void pk__persist_close(void *mem, size_t size, int fd)
{
	if (mem)
		munmap(mem, size);
	if (fd >= 0)
		close(fd);	/* drops our read lock: the store is no longer live */
}

bool pk__persist_live(int fd, const void *mem)
{
	const struct pk_ring_hdr *h = mem;
	struct flock fl;
	pid_t pid;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(fd, F_OFD_GETLK, &fl) == 0)
		return fl.l_type != F_UNLCK;
	/* No lock support here: ask whether the last opener still runs. */
	pid = (pid_t)h->creator_pid;
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

int pk__persist_map_file(const char *path, bool writable, void **memp, size_t *sizep, int *fdp,
			 bool *live)
{
	struct pk_ring ring;
	char why[WHY_MAX];
	struct stat pre, st;
	void *mem;
	int fd, ret;

	if (!path)
		return -EINVAL;
	/*
	 * Looked at before it is opened: opening is itself an act on a
	 * device or a FIFO (a tape rewinds, a FIFO's writer goes on), so
	 * what is not a regular file is refused unopened, behind a symlink
	 * too.  Read-only, a symlink is followed like cat(1) (stat);
	 * writable, never (see "OWNERSHIP"): the name itself (lstat), a
	 * symlink being ELOOP, as O_NOFOLLOW says.
	 */
	if ((writable ? lstat(path, &pre) : stat(path, &pre)) < 0)
		return -errno;
	if (writable && S_ISLNK(pre.st_mode))
		return -ELOOP;
	if (!S_ISREG(pre.st_mode))
		return -EINVAL;
	/*
	 * The name may be replaced between the look and the open: O_NONBLOCK
	 * so that a FIFO put in its place cannot hang us, O_NOCTTY so that a
	 * terminal is not made ours, and fstat() confirms that the file
	 * opened is the one looked at (else -EAGAIN: try again).
	 */
	fd = open(path, (writable ? O_RDWR | O_NOFOLLOW : O_RDONLY) | O_CLOEXEC | O_NOCTTY |
			O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_dev != pre.st_dev || st.st_ino != pre.st_ino) {
		ret = S_ISREG(st.st_mode) ? -EAGAIN : -EINVAL;
		goto fail;
	}
	ret = map_validated(fd, (size_t)st.st_size, writable, &mem, &ring, why, sizeof(why));
	if (ret < 0)
		goto fail;
	*live = pk__persist_live(fd, mem);
	*memp = mem;
	*sizep = (size_t)st.st_size;
	*fdp = fd;
	return 0;
fail:
	close(fd);
	return ret;
}

int pk__persist_map_reader(const char *path, void **memp, size_t *sizep, bool *live)
{
	int fd, ret = pk__persist_map_file(path, false, memp, sizep, &fd, live);

	if (ret == 0)
		close(fd);
	return ret;
}

int pk__persist_check_image(void *mem, size_t size, bool writable, struct pk_ring *ring)
{
	char why[WHY_MAX];
	uint64_t magic;
	int ret;

	if (size >= sizeof(magic))
		memcpy(&magic, mem, sizeof(magic));
	ret = check_size(size, size >= sizeof(magic) ? &magic : NULL, why, sizeof(why));
	if (ret == 0)
		ret = check_mapped(mem, size, writable, ring, why, sizeof(why));
	return ret;
}

void pk__persist_take_over(struct pk_ring *ring, unsigned flags)
{
	take_over(ring, flags);
}
