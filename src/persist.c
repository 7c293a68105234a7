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
 * unnamed (O_TMPFILE; a uniquely named temporary where unsupported),
 * sized with posix_fallocate (so that a full disk fails here, not as
 * SIGBUS inside pk_printk), formatted and locked, and only then linked at
 * its path.  If the link finds the path taken, another process won the
 * race and its file is opened instead.  A process killed while creating
 * leaves nothing, or a complete empty store.  An existing empty file
 * (touch(1)) is formatted, as it holds nothing to lose; anything else
 * that does not validate is refused with one line on stderr.
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
 * write fail nor send a reader round the whole seq space.  Descriptors
 * are not trusted either: pk__ring_recover(), run at every exclusive
 * open, makes each one consistent with the header.  Records are
 * validated one by one by the reader (pk__ring_read).  Truncating a file
 * while it is mapped is outside what the library can defend against
 * without a SIGBUS handler, which is the program's to install (pkmsg
 * does): the reader maps only the size it validated.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

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

static int report(const char *path, int err, const char *why)
{
	fprintf(stderr, "libprintk: store %s: %s\n", path, why ? why : pk_strerror(err));
	return err;
}

/**
 * validate() - check an untrusted mapped store of @size bytes.
 * @mem:  the mapping (at least @size bytes, @size >= PK_RING_HDR_SIZE)
 * @why:  set to a sentence naming the problem on failure
 *
 * Context: any thread.
 * Return: 0; -EPROTO for another format version; -EINVAL for anything
 * that is not a valid store.
 */
static int validate(void *mem, size_t size, struct pk_ring *ring, const char **why)
{
	const struct pk_ring_hdr *h = mem;
	uint64_t first, clear, head, lpos;
	int ret = pk__ring_attach(ring, mem, size);

	if (ret == -EPROTO) {
		*why = "store file has another format version";
		return ret;
	}
	if (ret < 0) {
		*why = h->magic != PK_RING_MAGIC ? "not a libprintk store (bad magic)"
						 : "corrupt store header (sizes or offsets)";
		return ret;
	}
	if (h->total_size != size) {
		*why = "file size does not match the store header (truncated or extended)";
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
		*why = "corrupt store header (sequence bounds)";
		return -EINVAL;
	}
	return 0;
}

/* Map @fd (a regular file of @size bytes) and validate it. */
static int map_validated(int fd, size_t size, bool writable, void **memp, struct pk_ring *ring,
			 const char **why)
{
	void *mem;
	int ret;

	if (size < PK_RING_HDR_SIZE) {
		*why = "file too short to be a libprintk store";
		return -EINVAL;
	}
	if (size > pk__ring_region_size(PK_RING_MAX_DATA_LOG2)) {
		*why = "file too large to be a libprintk store";
		return -EINVAL;
	}
	mem = mmap(NULL, size, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		ret = -errno;
		*why = NULL;
		return ret;
	}
	ret = validate(mem, size, ring, why);
	if (ret < 0) {
		munmap(mem, size);
		return ret;
	}
	*memp = mem;
	return 0;
}

/* Reserve the blocks of a new file so that a full disk fails here. */
static int reserve(int fd, size_t size)
{
	int err = posix_fallocate(fd, 0, (off_t)size);

	if (err == EOPNOTSUPP || err == EINVAL)
		err = ftruncate(fd, (off_t)size) < 0 ? errno : 0;
	return -err;
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

/* Open the existing store behind @fd for writing.  Consumes nothing. */
static int open_existing(const char *path, int fd, unsigned l2, size_t size, unsigned flags,
			 void **memp)
{
	struct pk_ring ring;
	const char *why = NULL;
	struct stat st;
	bool excl = true;
	void *mem;
	char msg[160];
	int ret;

	ret = ofd_lock(fd, F_WRLCK, false);
	if (ret == -EAGAIN || ret == -EACCES) {
		excl = false;
		ret = ofd_lock(fd, F_RDLCK, true);
	}
	if (ret < 0)
		return report(path, ret, "cannot lock the store file");
	if (fstat(fd, &st) < 0)
		return report(path, -errno, NULL);
	if (!S_ISREG(st.st_mode))
		return report(path, -EINVAL, "not a regular file");
	if (st.st_size == 0 && excl) {
		/* Empty (e.g. touch(1)): nothing to lose, make it a store. */
		ret = reserve(fd, size);
		if (ret < 0)
			return report(path, ret, NULL);
		mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (mem == MAP_FAILED)
			return report(path, -errno, NULL);
		format_new(mem, l2);
		goto done;
	}
	ret = map_validated(fd, (size_t)st.st_size, true, &mem, &ring, &why);
	if (ret < 0)
		return report(path, ret, why);
	if (ring.h->data_log2 != l2) {
		snprintf(msg, sizeof(msg),
			 "store holds a %zu-byte region, PK_BUFFER_SIZE asks for %zu; "
			 "remove the file or match its size", (size_t)st.st_size, size);
		munmap(mem, (size_t)st.st_size);
		return report(path, -EINVAL, msg);
	}
	if (excl)
		take_over(&ring, flags);
	else if (flags & PK_CFG_BUFFER_CLEAR)
		pk__ring_clear(&ring);
done:
	if (excl)
		ofd_lock(fd, F_RDLCK, false);	/* a downgrade never blocks */
	*memp = mem;
	return 0;
}

/* The directory part of @path into @buf. */
static void dir_of(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(buf, size, ".");
	else if (slash == path)
		snprintf(buf, size, "/");
	else
		snprintf(buf, size, "%.*s", (int)(slash - path), path);
}

/*
 * Create a new store at @path, complete before it becomes visible.
 * Return: 0 with *fdp and *memp set; -EEXIST if another process created
 * it first; another -errno.
 */
static int create_new(const char *path, unsigned l2, size_t size, void **memp, int *fdp)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 32], proc[64];
	static _Atomic unsigned tmp_count;
	bool named = false;
	void *mem;
	int fd, ret;

	dir_of(path, dir, sizeof(dir));
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	if (fd < 0) {
		/* Relaxed: only has to make names unique within the process. */
		snprintf(tmp, sizeof(tmp), "%s.%d.%u.tmp", path, (int)getpid(),
			 atomic_fetch_add_explicit(&tmp_count, 1, memory_order_relaxed));
		fd = open(tmp, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0644);
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
		ret = link(tmp, path) < 0 ? -errno : 0;
		unlink(tmp);
	} else {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		ret = linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
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
		unlink(tmp);
	close(fd);
	return ret;
}

int pk__persist_open(const struct pk_config *cfg, void **memp, size_t *sizep, int *fdp)
{
	const char *path = cfg->buffer_path;
	unsigned l2 = pk__ring_data_log2_for(cfg->buffer_size);
	size_t size;
	int fd, ret, tries;

	if (!path || !*path || !l2)
		return -EINVAL;
	size = pk__ring_region_size(l2);
	/* Each retry means another process created the file meanwhile. */
	for (tries = 0; tries < 16; tries++) {
		fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd >= 0) {
			ret = open_existing(path, fd, l2, size, cfg->flags, memp);
			if (ret < 0) {
				close(fd);
				return ret;
			}
			*sizep = size;
			*fdp = fd;
			return 0;
		}
		if (errno != ENOENT)
			return report(path, -errno, NULL);
		ret = create_new(path, l2, size, memp, fdp);
		if (ret == 0) {
			*sizep = size;
			return 0;
		}
		if (ret != -EEXIST)
			return report(path, ret, "cannot create the store file");
	}
	return report(path, -EAGAIN, "the store file keeps appearing and vanishing");
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
	const char *why;
	struct stat st;
	void *mem;
	int fd, ret;

	if (!path)
		return -EINVAL;
	/* O_NONBLOCK: a FIFO put in the store's place must not hang us. */
	fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		goto fail;
	}
	ret = map_validated(fd, (size_t)st.st_size, writable, &mem, &ring, &why);
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
