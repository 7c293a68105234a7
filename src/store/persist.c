// SPDX-License-Identifier: MIT
/*
 * persist.c - the file-backed record store: creating, reopening and
 * validating store files, and telling whether a writer still has one open.
 *
 * FILE LAYOUT
 *
 * A store file is a store of lanes (lanes.h): N record-store regions
 * (ringbuf.h) of one size side by side, lane i at byte i * lane_size, N
 * from 1 to PK_LANES_MAX.  Each region is the 512-byte header (magic
 * "PPKRING1", format version, sizes and offsets, first seq, the lane's
 * place: lanes N and lane i, the reservation head and counters), the
 * descriptor ring, the data ring.  What belongs to the whole store lives
 * in lane 0's header only: the wall-clock time of CLOCK_MONOTONIC zero,
 * the pid of the process that last opened it exclusively, the generation
 * count, the count of joins and the waiters' futex.  Nothing is stored
 * outside the regions; the file size must equal N times lane 0's
 * total_size.  One lane is exactly the single ring of earlier formats.
 * The layout is versioned by PK_RING_VERSION: a file of another version
 * (in any lane) is refused (-EPROTO), never converted or overwritten.
 * Because every field is an offset or a count, never a pointer, the same
 * file may be mapped at any address by any number of processes.
 *
 * A new file gets its lanes from pk__lanes_for() (pk__persist_open_lanes:
 * the lanes wanted, 0 for the default policy; pk__persist_open: one), its
 * data shared out among them; an existing file keeps its own, whatever
 * is asked now.  Its size matches the buffer size asked when its lanes'
 * data rings add up to the data ring that size gives.
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
 *     file, repairs what dead writers left in every lane
 *     (pk__ring_recover) or clears every lane, updates lane 0's header,
 *     and downgrades to a read lock;
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
 * lanes' size, checked before mapping), so only a truncation while
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
 * Reopening continues the sequence numbers (each lane its own), as the
 * kernel's log does across dmesg runs.  PK_BUFFER_CLEAR starts afresh but
 * still continues the numbering: with no other writer alive, in every
 * lane first_seq and clear_seq move to seq_head, the counters are zeroed
 * and the rings wiped; with other writers alive only clear_seq moves (as
 * pkmsg -C).  The clear never invalidates a header, so a process killed
 * in the middle of it leaves a valid store.
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
 * Each lane's head_ts (ringbuf.h) is a floor for the timestamps of the
 * lane's next records: a record gets max(head_ts, its writer's clock).
 * After a reboot the clock starts again near zero and head_ts may be far
 * ahead of it; left so, every record would get the earlier boot's last
 * time, the same one, until the clock got there.  So an exclusive open
 * (no writer alive, none reserving) lowers to the current clock every
 * lane's head_ts that is more than PK_LANES_AHEAD_NS ahead of it (within
 * one boot it never is: lanes.h).  The records of the earlier boot stay as
 * they were, and the merged order (lanes.c) is by timestamp: it is exact
 * within one boot, and across a reboot it follows the records' times,
 * which restart, so the two boots' records interleave by uptime.  A
 * reader does not seal for a record that far ahead (lanes.c, ACROSS A
 * REBOOT), so no reader raises a head_ts back to the earlier boot's time.
 * A hostile file's head_ts is lowered the same way.
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
 * The file is untrusted.  Before anything but the headers is touched, the
 * file must be a regular file no larger than the largest region (a store
 * of lanes shares out a data ring of at most 512 MiB, PK__DATA_SIZE_MAX,
 * half the largest region's, so it is smaller even with 64 headers);
 * lane 0's header
 * (magic, version, geometry, offsets) must describe a region
 * (pk__ring_attach reads each field once) and name a lane count from 1 to
 * PK_LANES_MAX and itself as lane 0, and the file must be exactly that
 * many regions of its size; every other lane's header must be of this
 * version, describe a region of exactly lane 0's size and name the same
 * lane count and its own place.  In each lane the
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
 * by the reader (pk__ring_read).  A file shorter than its lanes is
 * reported as truncated.  The reader maps only the size it
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
#include "store/lanes.h"
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
 * The bounds of one lane's header (VALIDATION): 0, or -EINVAL with @why
 * naming them.  @lane: the lane, for the message of a store of @lanes > 1
 * (one lane's message names none, as before lanes).
 */
static int check_bounds(const struct pk_ring_hdr *h, unsigned lane, unsigned lanes, char *why,
			size_t n)
{
	uint64_t first, clear, head, lpos;
	char where[32] = "";

	/*
	 * Load order clear_seq, then seq_head: both only grow, so a live store
	 * passes.  Relaxed: values checked for plausibility only.
	 */
	first = h->first_seq;
	clear = atomic_load_explicit(&h->clear_seq, memory_order_relaxed);
	head = atomic_load_explicit(&h->seq_head, memory_order_relaxed);
	lpos = atomic_load_explicit(&h->lpos_head, memory_order_relaxed);
	if (first <= clear && clear <= head && head <= PK_RING_SEQ_LIMIT && !(lpos & 7))
		return 0;
	if (lanes > 1)
		snprintf(where, sizeof(where), " of lane %u", lane);
	snprintf(why, n, "corrupt store header%s (sequence bounds): first_seq %llu, "
		 "clear_seq %llu, seq_head %llu (at most %llu), lpos_head %llu", where,
		 (unsigned long long)first, (unsigned long long)clear, (unsigned long long)head,
		 (unsigned long long)PK_RING_SEQ_LIMIT, (unsigned long long)lpos);
	return -EINVAL;
}

/*
 * Lane @i (@i >= 1) of a store of @lanes lanes of @lane_size bytes each,
 * at @mem: its own header checked as lane 0's was, and against lane 0's.
 * Return: 0; -EPROTO another version; -EINVAL; @why says which.
 */
static int check_lane(void *mem, unsigned i, unsigned lanes, uint64_t lane_size, char *why,
		      size_t n)
{
	const volatile struct pk_ring_hdr *vh = mem;
	struct pk_ring view;
	uint64_t total;
	uint32_t version, l_lanes, l_lane;
	int ret;

	/* Each field read once: another process may change the file under us. */
	version = vh->version;
	ret = pk__ring_attach(&view, mem, (size_t)lane_size);
	if (ret == -EPROTO) {
		snprintf(why, n, "lane %u of the store file has format version %u, this libprintk "
			 "reads version %u (lane 0 has version %u): not one store", i,
			 (unsigned)version, PK_RING_VERSION, PK_RING_VERSION);
		return ret;
	}
	if (ret < 0) {
		snprintf(why, n, "%s of lane %u of %u (at byte %llu)",
			 vh->magic != PK_RING_MAGIC ? "bad magic at the header"
			 : "corrupt store header (sizes or offsets)", i, lanes,
			 (unsigned long long)i * lane_size);
		return ret;
	}
	total = vh->total_size;
	l_lanes = vh->lanes;
	l_lane = vh->lane;
	if (total != lane_size) {
		snprintf(why, n, "lane %u of the store is %llu bytes, lane 0 is %llu: the lanes of a "
			 "store are of one size", i, (unsigned long long)total,
			 (unsigned long long)lane_size);
		return -EINVAL;
	}
	if (l_lanes != lanes || l_lane != i) {
		snprintf(why, n, "lane %u of the store says it is lane %u of %u, lane 0 says the store "
			 "has %u lanes: lanes from different stores", i, (unsigned)l_lane,
			 (unsigned)l_lanes, lanes);
		return -EINVAL;
	}
	return check_bounds(view.h, i, lanes, why, n);
}

/*
 * validate() - check an untrusted mapped store of @size bytes.
 * @mem:  the mapping (at least @size bytes, @size >= PK_RING_HDR_SIZE)
 * @ls:   its lanes, attached, on success
 * @why:  set to a sentence naming the problem on failure (@n bytes)
 *
 * Context: any thread.
 * Return: 0; -EPROTO for another format version; -EINVAL for anything
 * that is not a valid store; pk__lanes_attach()'s other errors (a store
 * of lanes this build cannot read).
 */
static int validate(void *mem, size_t size, struct pk_lanes *ls, char *why, size_t n)
{
	const volatile struct pk_ring_hdr *vh = mem;
	const struct pk_ring_hdr *h = mem;
	struct pk_ring lane0, scratch;
	uint64_t total, want;
	uint32_t lanes, lane, i;
	int ret = pk__ring_attach(&lane0, mem, size);

	if (ret == -EPROTO) {
		snprintf(why, n, "store file has format version %u, this libprintk reads version %u%s",
			 (unsigned)vh->version, PK_RING_VERSION,
			 vh->version < PK_RING_VERSION
			 ? " (written by an older libprintk)" : "");
		return ret;
	}
	/* Each read once: what was checked is what the messages and sizes use. */
	total = vh->total_size;
	lanes = vh->lanes;
	lane = vh->lane;
	/* The store's size as lane 0 describes it (its lanes, if plausible). */
	want = lanes >= 1 && lanes <= PK_LANES_MAX ? lanes * total : total;
	if (ret < 0) {
		/*
		 * A header that would be valid for a file of its total_size,
		 * but the file is shorter: say so.  The attach reads only
		 * the header, never the rings it would describe.
		 */
		if (h->magic == PK_RING_MAGIC && total > size &&
		    pk__ring_attach(&scratch, mem, (size_t)total) == 0)
			snprintf(why, n, "store file is truncated: %zu bytes, its header describes %llu",
				 size, (unsigned long long)want);
		else
			snprintf(why, n, "%s", h->magic != PK_RING_MAGIC
				 ? "not a libprintk store (bad magic)"
				 : "corrupt store header (sizes or offsets)");
		return ret;
	}
	if (lanes < 1 || lanes > PK_LANES_MAX) {
		snprintf(why, n, "corrupt store header: %u lanes (a store has 1 to %u)",
			 (unsigned)lanes, PK_LANES_MAX);
		return -EINVAL;
	}
	if (lane != 0) {
		snprintf(why, n, "the store file begins with lane %u of %u, not lane 0: not a whole "
			 "store", (unsigned)lane, (unsigned)lanes);
		return -EINVAL;
	}
	if (want != size) {
		if (want > size)
			snprintf(why, n, "store file is truncated: %zu bytes, its header describes %llu%s",
				 size, (unsigned long long)want, lanes > 1 ? " (its lanes)" : "");
		else
			snprintf(why, n, "file size does not match the store header: %zu bytes, the "
				 "header describes %llu%s", size, (unsigned long long)want,
				 lanes > 1 ? " (its lanes)" : "");
		return -EINVAL;
	}
	ret = check_bounds(lane0.h, 0, lanes, why, n);
	for (i = 1; i < lanes && ret == 0; i++)
		ret = check_lane((char *)mem + (size_t)i * total, i, lanes, total, why, n);
	if (ret < 0)
		return ret;
	/*
	 * The views, built from headers read again: one changed since must
	 * still describe exactly this file, or it is refused.
	 */
	ret = pk__lanes_attach(ls, mem, size);
	if (ret == 0 && (size_t)ls->n * ls->lane_size != size)
		ret = -EINVAL;
	if (ret == -ENOTSUP)	/* a build whose lanes' order has no 16-byte head */
		snprintf(why, n, "a store of %u lanes; this libprintk reads stores of one lane only "
			 "(built without a 16-byte compare-and-swap)", (unsigned)lanes);
	else if (ret < 0)
		snprintf(why, n, "corrupt store header (its lanes changed while being checked)");
	return ret;
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

static int check_mapped(void *mem, size_t size, bool writable, struct pk_lanes *ls, char *why,
			size_t n)
{
	int ret = validate(mem, size, ls, why, n);
	uint64_t head;
	unsigned i;

	for (i = 0; ret == 0 && writable && i < ls->n; i++) {
		/*
		 * Readable, but a writer would soon carry seq_head past what
		 * any reader accepts (PK_RING_SEQ_LIMIT): no real store gets
		 * here (2^61 records), a crafted header does.  Relaxed: a
		 * plausibility check, like validate()'s.
		 */
		head = atomic_load_explicit(&ls->lane[i].h->seq_head, memory_order_relaxed);
		if (head <= PK_RING_SEQ_WRITE_LIMIT)
			continue;
		if (ls->n > 1)
			snprintf(why, n, "seq_head %llu of lane %u is past %llu, too near the limit to "
				 "write to; remove the file", (unsigned long long)head, i,
				 (unsigned long long)PK_RING_SEQ_WRITE_LIMIT);
		else
			snprintf(why, n, "seq_head %llu is past %llu, too near the limit to write to; "
				 "remove the file", (unsigned long long)head,
				 (unsigned long long)PK_RING_SEQ_WRITE_LIMIT);
		ret = -EINVAL;
	}
	return ret;
}

/* Map @fd (a regular file of @size bytes) and validate it. */
static int map_validated(int fd, size_t size, bool writable, void **memp, struct pk_lanes *ls,
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
	ret = check_mapped(mem, size, writable, ls, why, n);
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
 * Start a lane afresh with no other writer alive, continuing the
 * numbering.  Each step leaves a valid header, so a kill in between is
 * harmless (the next exclusive open's pk__ring_recover() finishes the
 * descriptors).
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

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * A lane's head_ts far ahead of the clock: an earlier boot's (TIMESTAMPS
 * ACROSS RESTARTS), lowered to @now.  No writer runs (the caller holds
 * the write lock), so nothing reserves meanwhile.  A live reader may seal
 * the lane at the same time: its seal is a compare-and-swap of the whole
 * head word, which fails if this store comes between its load and its
 * swap (it then reads the word again); and it does not seal for a record
 * this far ahead (lanes.c, ACROSS A REBOOT).  Relaxed: nothing else is
 * published with it.
 */
static void head_ts_lower(struct pk_ring *ring, uint64_t now)
{
	uint64_t t = atomic_load_explicit(&ring->h->head_ts, memory_order_relaxed);

	if (t > now && t - now > PK_LANES_AHEAD_NS)
		atomic_store_explicit(&ring->h->head_ts, now, memory_order_relaxed);
}

/*
 * Make this process the store's current (exclusive) opener: every lane
 * recovered (or cleared) and its head brought to this boot's clock; the
 * store-wide fields in lane 0's header.
 */
static void take_over(struct pk_lanes *ls, unsigned flags)
{
	struct pk_ring_hdr *h = ls->lane[0].h;
	uint64_t now = mono_now();
	unsigned i;

	for (i = 0; i < ls->n; i++) {
		if (flags & PK_CFG_BUFFER_CLEAR)
			clear_store(&ls->lane[i]);
		else
			pk__ring_recover(&ls->lane[i]);
		head_ts_lower(&ls->lane[i], now);
	}
	h->realtime_zero_ns = realtime_zero_now();
	h->creator_pid = (int32_t)getpid();
	h->generation++;
}

/*
 * Format a new store file of @lanes lanes whose data rings are 1 <<
 * @lane_l2 bytes; its creation is its first exclusive open.
 */
static void format_new(void *mem, unsigned lanes, unsigned lane_l2)
{
	pk__lanes_format(mem, lanes, lane_l2, 0);
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

/*
 * The message for a valid store whose data rings add up to 1 << @l2
 * bytes (0: to no power of two), not what was asked.
 */
static void other_size(unsigned l2, size_t file_size, size_t asked, char *why, size_t n)
{
	size_t lo = l2 ? pk__ring_region_size(l2) : 1, hi = l2 ? pk__ring_region_size(l2 + 1) - 1 : 0;
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
 * The store a writer asks for: its data ring (the buffer size's, 1 <<
 * l2 bytes in all), and for a new file its lanes, each one's data ring
 * and the file's size.
 */
struct want {
	unsigned l2;
	unsigned lanes;
	unsigned lane_l2;
	size_t size;
	size_t asked;		/* the buffer size asked for (for messages) */
};

/*
 * The data of the lanes of @ls together, as log2 of bytes: 0 if it is no
 * power of two (a lane count that is none), which no buffer size asks for.
 */
static unsigned lanes_data_log2(const struct pk_lanes *ls)
{
	unsigned l2 = (unsigned)__builtin_ctzll(ls->lane[0].data_size);

	return ls->n & (ls->n - 1) ? 0 : l2 + (unsigned)__builtin_ctz(ls->n);
}

/*
 * Open the existing store behind @fd for writing.  Consumes nothing.
 * An existing store keeps its lanes; @w's are for an empty file only.
 * Return: 0 with *@memp and *@sizep (the file's size) set; -errno.
 */
static int open_existing(const char *path, int fd, const struct want *w, unsigned flags,
			 void **memp, size_t *sizep)
{
	struct pk_lanes ls;
	char why[WHY_MAX];
	struct stat st;
	bool excl = true;
	void *mem;
	unsigned i;
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
		ret = reserve(fd, w->size);
		if (ret < 0) {
			reserve_why(ret, w->size, why, sizeof(why));
			return report(path, ret, why);
		}
		mem = mmap(NULL, w->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (mem == MAP_FAILED)
			return report(path, -errno, NULL);
		format_new(mem, w->lanes, w->lane_l2);
		*sizep = w->size;
		goto done;
	}
	ret = map_validated(fd, (size_t)st.st_size, true, &mem, &ls, why, sizeof(why));
	if (ret < 0)
		return report(path, ret, why);
	/* The views' sizes, which attach derived from the headers it validated. */
	if (lanes_data_log2(&ls) != w->l2) {
		other_size(lanes_data_log2(&ls), (size_t)st.st_size, w->asked, why, sizeof(why));
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
		take_over(&ls, flags);
	} else {
		/* The processes already writing count their losses from now on. */
		atomic_fetch_add_explicit(&ls.lane[0].h->joins, 1, memory_order_seq_cst);
		for (i = 0; i < ls.n && (flags & PK_CFG_BUFFER_CLEAR); i++)
			pk__ring_clear(&ls.lane[i]);
	}
	*sizep = (size_t)st.st_size;
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
static int create_new(int dfd, const char *name, const struct want *w, void **memp, int *fdp)
{
	size_t size = w->size;
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
	format_new(mem, w->lanes, w->lane_l2);
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
		   const struct want *want, void **memp, size_t *sizep, int *fdp)
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
			ret = open_existing(path, fd, want, cfg->flags, memp, sizep);
			if (ret < 0) {
				close(fd);
				return ret;
			}
			*fdp = fd;
			return 0;
		}
		if (errno != ENOENT)
			return report(path, -errno, NULL);
		ret = create_new(w->dfd, w->name, want, memp, fdp);
		if (ret == 0) {
			*sizep = want->size;
			return 0;
		}
		if (ret == -EFBIG || ret == -ENOSPC || ret == -EDQUOT) {
			reserve_why(ret, want->size, why, sizeof(why));
			return report(path, ret, why);
		}
		if (ret != -EEXIST)
			return report_sys(path, ret, "cannot create the store file");
	}
	return report(path, -EAGAIN, "the store file keeps appearing and vanishing");
}

int pk__persist_open_lanes(const struct pk_config *cfg, unsigned lanes, void **memp,
			   size_t *sizep, int *fdp)
{
	const char *path = cfg->buffer_path;
	struct want want = { .l2 = pk__ring_data_log2_for(cfg->buffer_size),
			     .asked = cfg->buffer_size };
	struct pk__walk w;
	size_t size = 0;
	int ret;

	if (!path || !*path || !want.l2)
		return -EINVAL;
	want.lanes = pk__lanes_for(lanes, want.l2, &want.lane_l2);
	want.size = pk__lanes_region_size(want.lanes, want.lane_l2);
	pk__walk_init(&w);
	ret = pk__walk_begin(&w, path);
	if (!ret)
		ret = pk__walk_parent(&w);
	if (ret < 0)
		ret = report_walk(path, &w, ret);
	else
		ret = open_in(path, &w, cfg, &want, memp, &size, fdp);
	pk__walk_end(&w);
	if (ret == 0)
		*sizep = size;
	return ret;
}

int pk__persist_open(const struct pk_config *cfg, void **memp, size_t *sizep, int *fdp)
{
	return pk__persist_open_lanes(cfg, 1, memp, sizep, fdp);
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

/* pk__persist_map_file(), and the reason of a refusal in @why (@n bytes; "" if none). */
static int map_file(const char *path, bool writable, void **memp, size_t *sizep, int *fdp,
		    bool *live, char *why, size_t n)
{
	struct pk_lanes ls;
	struct stat pre, st;
	void *mem;
	int fd, ret;

	why[0] = '\0';
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
	ret = map_validated(fd, (size_t)st.st_size, writable, &mem, &ls, why, n);
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

int pk__persist_map_file(const char *path, bool writable, void **memp, size_t *sizep, int *fdp,
			 bool *live)
{
	char why[WHY_MAX];

	return map_file(path, writable, memp, sizep, fdp, live, why, sizeof(why));
}

int pk__persist_explain(const char *path, char *why, size_t n)
{
	void *mem;
	size_t size;
	bool live;
	int fd, ret;

	if (!why || !n)
		return -EINVAL;
	ret = map_file(path, false, &mem, &size, &fd, &live, why, n);
	if (ret == 0)
		pk__persist_close(mem, size, fd);
	return ret;
}

int pk__persist_map_reader(const char *path, void **memp, size_t *sizep, bool *live)
{
	int fd, ret = pk__persist_map_file(path, false, memp, sizep, &fd, live);

	if (ret == 0)
		close(fd);
	return ret;
}

int pk__persist_check_image(void *mem, size_t size, bool writable, struct pk_lanes *ls)
{
	char why[WHY_MAX];
	uint64_t magic;
	int ret;

	if (size >= sizeof(magic))
		memcpy(&magic, mem, sizeof(magic));
	ret = check_size(size, size >= sizeof(magic) ? &magic : NULL, why, sizeof(why));
	if (ret == 0)
		ret = check_mapped(mem, size, writable, ls, why, sizeof(why));
	return ret;
}

void pk__persist_take_over(struct pk_lanes *ls, unsigned flags)
{
	take_over(ls, flags);
}
