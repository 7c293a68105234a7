/* SPDX-License-Identifier: MIT */
/*
 * Readers of a libprintk record store: this process's own, or a persistent
 * store file written by another (possibly dead) process.
 *
 * Readers are lockless and never disturb writers.  Each reader has its own
 * position; any number may run at once, concurrently with any number of
 * writers.  One reader is not itself thread-safe: use it from one thread
 * at a time (or lock around it).  Every record a reader returns has been validated after it was
 * copied; records that were overwritten while being read, or never
 * committed, are skipped and show up as a jump in seq.
 *
 * A store is a set of lanes (one per CPU, or one), fixed when it is
 * created; each lane numbers its records with its own gapless seqs.  A
 * reader merges the lanes into one order, by timestamp, then lane, then
 * seq: each thread's records in the order it stored them.  A record's
 * seq counts within its lane (pk_record.lane), so a jump in seq means
 * lost records of that lane (pk_reader_tell_lane()); a position in the
 * whole store is a cursor (pk_reader_cursor()).  A store of one lane is
 * read exactly as before lanes: one seq for all.
 */
#ifndef PRINTK_READER_H
#define PRINTK_READER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Building libprintk: what this header declares is its exported API. */
#if defined(PK_BUILDING_LIB) && defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* pk_record.flags */
#define PK_REC_CONT	0x0001u	/* continues an earlier record of the same tid */
#define PK_REC_TRUNC	0x0002u	/* text was cut at PK_RECORD_MAX */
#define PK_REC_NOEOL	0x0004u	/* text did not end a line */
#define PK_REC_EMERG	0x0008u	/* stored inside an emergency section or panic */
#define PK_REC_FIELDS_DROPPED	0x0010u	/* a field given was left out (pk_printk_fields) */

#ifndef PK__FIELD_DEFINED
#define PK__FIELD_DEFINED
/* One KEY=VALUE field of a record (as printk.h declares it). */
struct pk_field {
	const char *key;
	const char *value;
};
#endif

/* One record, as a reader returns it (reserved zeroed by the library). */
struct pk_record {
	uint64_t seq;		/* sequence number in its lane, gapless as assigned */
	uint64_t ts_ns;		/* CLOCK_MONOTONIC at store time */
	int level;		/* PK_EMERG..PK_DEBUG */
	uint32_t tid;		/* storing thread */
	unsigned flags;		/* PK_REC_* */
	const char *text;	/* NUL-terminated, valid until the next call */
	size_t len;		/* text bytes, without the trailing newline */
	int facility;		/* syslog facility number */
	uint32_t pid;		/* storing process */
	union {			/* 8 bytes on every target, as the reserved word it took */
		const char *module;	/* its module's name (printk.h MODULES), or NULL */
		uint64_t reserved_module;
	};
	union {			/* its fields (pk_printk_fields()), in their order */
		const struct pk_field *fields;	/* valid as text; NULL if none */
		uint64_t reserved_fields;
	};
	union {
		size_t nfields;			/* 0 to PK_FIELDS_MAX */
		uint64_t reserved_nfields;
	};
	/*
	 * Its call site (printk.h, SOURCE LOCATIONS), valid as text: the
	 * file as __FILE__ spelled it and the function, each NULL if not
	 * known; line 0 if not known.
	 */
	union {
		const char *file;
		uint64_t reserved_file;
	};
	union {
		const char *func;
		uint64_t reserved_func;
	};
	union {
		unsigned line;
		uint64_t reserved_line;
	};
	/*
	 * The lane of the store it was stored in (0 in a store of one
	 * lane): seq counts within it.
	 */
	union {
		unsigned lane;
		uint64_t reserved_lane;
	};
};

struct pk_reader;

/**
 * pk_reader_open() - a reader of this process's store, at its oldest record.
 *
 * Initialises the library first if needed.  The reader reads the store in
 * use when it was opened: once pk_shutdown() or a pk_init() that changes
 * the store has released it, the reader's calls return -ENODEV (close it
 * and open another).  A pk_reader_wait() in progress holds such a
 * pk_init() back, for at most its timeout (pk_init() gives up after 2 s
 * with -EBUSY).
 * Context: any thread, not async-signal-safe (allocates).
 * Return: a reader, or NULL with errno set: ENOMEM, EAGAIN while the store
 * is being replaced or released, or the error of initialising the
 * library.
 */
struct pk_reader *pk_reader_open(void);

/**
 * pk_reader_open_file() - a read-only reader of the persistent store at
 * @path, at its oldest record (or its clear point, pk_reader_clear()).
 * @path: the store file; a symlink is followed.
 *
 * The file is untrusted: it is validated before use and every offset and
 * length read from it is checked.  Another user's store may be read if
 * the file's permissions allow it (the writers' ownership rules do not
 * bind readers).  If no process has the store open (a post-mortem read),
 * records left half-written by a dead writer are skipped at once; while a
 * writer is alive, a record in progress holds pk_reader_next() back
 * (it returns 0) until it is committed or, once later records exist, for
 * at most 1 s.  In a store of several lanes a live read-only reader also
 * holds back, for at most 100 ms, a record newer than 100 ms while an
 * idle lane could still store an older one (a writer that can store
 * one then has read its clock and not yet taken its seq); a writer
 * preempted for longer between the two may so come out of order.  A
 * post-mortem reader, and one opened PK_READER_WRITABLE, are always in
 * order.  The file is mapped, so if
 * another process truncates it while the reader is open, reading the lost
 * pages raises SIGBUS in the calling thread (pkmsg catches it and exits
 * with status 1); the library installs no handler of its own.
 * Context: any thread, not async-signal-safe (allocates).
 * Return: a reader, or NULL with errno set: EINVAL for a NULL @path or a
 * file that is not a regular file (looked at with stat(2) before it is
 * opened: a FIFO or a device is never opened) or not a valid store
 * (truncated, too short, too large, a corrupt header), EAGAIN if @path
 * was replaced between that look and the open, EPROTO for another format
 * version, ENOMEM, or the error of stat(2), open(2), fstat(2) or mmap(2)
 * (ENOENT, EACCES, ...).
 */
struct pk_reader *pk_reader_open_file(const char *path);

/**
 * pk_reader_next() - copy the next record into @rec.
 * @r:   the reader.
 * @rec: filled (reserved zeroed); rec->text points into @r and stays
 *       valid until the next call on @r or pk_reader_close().
 *
 * Records come in the merged order of the store's lanes (timestamp,
 * lane, seq).  rec->seq jumps over records of rec->lane that were lost
 * (overwritten before they were read, or never committed):
 * pk_reader_tell_lane(r, rec->lane) before the call (pk_reader_tell() in
 * a store of one lane) says where the gap began.  Lock-free: never waits
 * for a writer (see pk_reader_wait() to wait for new records).
 * Context: any thread (one at a time per reader), async-signal-safe.
 * Return: 1 a record was copied; 0 nothing more now; -EINVAL for a NULL
 * @r or @rec; -ENODEV the store this process's reader read was released.
 */
int pk_reader_next(struct pk_reader *r, struct pk_record *rec);

/**
 * pk_reader_seek() - continue at @seq.
 * @r:   the reader (NULL: nothing is done).
 * @seq: clamped to what the store holds now: below the oldest record it
 *       means the oldest, above the next seq to be stored it means that
 *       one (only new records).  In a store of several lanes, every lane
 *       continues at @seq, clamped to what that lane holds: 0 is the
 *       oldest record of each, UINT64_MAX only new records (a position
 *       in between is a cursor: pk_reader_seek_cursor()).
 * Context: any thread (one at a time per reader), async-signal-safe.
 * Return: nothing.
 */
void pk_reader_seek(struct pk_reader *r, uint64_t seq);

/**
 * pk_reader_wait() - wait until a record at the reader's position can be
 * read.
 * @r:          the reader.
 * @timeout_ms: < 0 waits for ever; 0 only checks.
 *
 * A reader of this process's store, or a writable file reader
 * (PK_READER_WRITABLE), sleeps on a futex until a writer wakes it; a
 * read-only file reader sleeps in slices of at most 100 ms.  In a store
 * of several lanes every lane's writers wake readers through lane 0's
 * futex; a reader also wakes at least every 100 ms, for a record held
 * back while an idle lane could store an older one.  A signal delivered
 * to the thread ends the wait
 * early (0 unless a record came).
 * Context: any thread (one at a time per reader), not from a signal
 * handler.
 * Return: 1 a record is ready (the next pk_reader_next() returns it); 0
 * timed out or interrupted; -EINVAL for a NULL @r; -ENODEV as
 * pk_reader_next(); another negative errno from futex(2).
 */
int pk_reader_wait(struct pk_reader *r, int timeout_ms);

/**
 * pk_reader_close() - release @r (its mapping and descriptor, for a store
 * file).  The record text it returned is invalid afterwards.
 * @r: the reader; NULL does nothing.
 * Context: any thread, not async-signal-safe (frees memory); not
 * concurrently with another call on @r.
 * Return: nothing.
 */
void pk_reader_close(struct pk_reader *r);

/* pk_reader_open_file_flags() flags */
#define PK_READER_WRITABLE	0x1u	/* map read-write (see below) */

/**
 * pk_reader_open_file_flags() - pk_reader_open_file() with @flags.
 * @path:  the store file.
 * @flags: 0 or PK_READER_WRITABLE.
 *
 * PK_READER_WRITABLE maps the file read-write, which needs write
 * permission, and opens it with O_NOFOLLOW (no symlink ever leads a
 * reader into writing): pk_reader_wait() then registers as a waiter and
 * sleeps until a writer wakes it, and pk_reader_clear() works.  A
 * read-only reader's pk_reader_wait() sleeps in slices of at most 100 ms
 * instead.  Neither kind writes anything but the header's waiter count
 * and clear point; in a store of several lanes of a live writer, a
 * writable reader also raises an idle lane's timestamp floor to the
 * clock (a seal: the lane's next record is not older than what was read)
 * and ends an unfinished line that holds the other lanes back (its
 * writer stores the rest as a new record), which keeps its merge exact.
 * Context: any thread, not async-signal-safe (allocates).
 * Return: a reader, or NULL with errno set: as pk_reader_open_file(), and
 * EINVAL for unknown @flags, ELOOP for a symlink when writable.
 */
struct pk_reader *pk_reader_open_file_flags(const char *path, unsigned flags);

/** What a reader knows about its store (pk_reader_info()). */
struct pk_store_info {
	uint64_t first_seq;		/* first seq this store (or its last clear) held */
	uint64_t next_seq;		/* seq the next record will get */
	uint64_t oldest_seq;		/* oldest record still in the store */
	uint64_t clear_seq;		/* readers start here (pk_reader_clear) */
	uint64_t lost;			/* records whose writer was overrun or died */
	uint64_t reserve_failed;	/* reservations that found no slot */
	uint64_t truncated;		/* records cut at PK_RECORD_MAX */
	uint64_t refused;		/* calls refused (bad format) */
	uint64_t data_size;		/* data ring bytes */
	uint64_t desc_count;		/* descriptor ring entries */
	uint64_t generation;		/* exclusive opens of a store file so far */
	int64_t realtime_zero_ns;	/* CLOCK_REALTIME at CLOCK_MONOTONIC zero */
	int32_t creator_pid;		/* last process to open the file exclusively */
	int live;			/* a writer has the store open now */
	union {				/* the store's lanes, 1 to 64 */
		unsigned lanes;
		uint64_t reserved_lanes;
	};
	uint64_t reserved[7];		/* zero: later fields */
};

/**
 * pk_reader_info() - the store's header and counters, read now.
 * @r:    the reader.
 * @info: filled (reserved zeroed); each field read on its own, not a
 *        snapshot.  live is always 1 for this process's store.  In a
 *        store of several lanes the seqs (first_seq, next_seq,
 *        oldest_seq, clear_seq) and the counters are the sums of the
 *        lanes' own, so that differences still count records
 *        (next_seq - first_seq stored, oldest_seq - first_seq
 *        overwritten), and data_size and desc_count those of all lanes;
 *        generation, realtime_zero_ns and creator_pid are the store's.
 * Context: any thread.
 * Return: 0, or -EINVAL for a NULL @r or @info; -ENODEV as pk_reader_next().
 */
int pk_reader_info(struct pk_reader *r, struct pk_store_info *info);

/**
 * pk_reader_tell() - the seq the next pk_reader_next() looks at first.  A
 * record returned with a higher seq means the ones between were lost.
 * @r: the reader.
 *
 * In a store of several lanes, seqs count within each lane: this is the
 * sum of every lane's pk_reader_tell_lane(), which grows by one for each
 * record returned and each one lost; it is not a seq of any record.
 * Context: any thread (one at a time per reader), async-signal-safe.
 * Return: that seq; 0 for a NULL @r.
 */
uint64_t pk_reader_tell(const struct pk_reader *r);

/**
 * pk_reader_tell_lane() - the seq after the last record of @lane that @r
 * returned (where it began in that lane, if none yet).  A record of @lane
 * returned with a higher seq means the ones between were lost.
 * @r:    the reader.
 * @lane: 0 to pk_store_info.lanes - 1.
 * Context: any thread (one at a time per reader), async-signal-safe.
 * Return: that seq; 0 for a NULL @r or a lane the store does not have.
 */
uint64_t pk_reader_tell_lane(const struct pk_reader *r, unsigned lane);

/* Bytes that hold any cursor, its NUL included (pk_reader_cursor()). */
#define PK_READER_CURSOR_MAX	1400

/**
 * pk_reader_cursor() - the reader's position as a string: after the last
 * record it returned, in every lane.
 * @r:    the reader.
 * @buf:  receives the cursor, NUL-terminated: "pk1:g=GEN:l=LANES:s=SEQ,..."
 *        (the store's generation, its lanes, and each lane's next seq, in
 *        lane order); only pk_reader_seek_cursor() need read it.
 * @size: bytes at @buf; PK_READER_CURSOR_MAX is always enough.
 *
 * A record read ahead by pk_reader_wait() but not yet returned is after
 * the cursor.  A cursor stays valid while the store exists: across
 * reopens by new writers, in another process, with another reader.
 * Context: any thread (one at a time per reader), async-signal-safe.
 * Return: the cursor's length; -ERANGE if @size is too small (@buf then
 * holds "" if @size > 0); -EINVAL for a NULL @r or @buf; -ENODEV as
 * pk_reader_next().
 */
int pk_reader_cursor(struct pk_reader *r, char *buf, size_t size);

/**
 * pk_reader_seek_cursor() - continue after the position @cursor names:
 * the next pk_reader_next() returns the first record after it, in the
 * same merged order as the reader that took it would have.
 * @r:      the reader.
 * @cursor: a string from pk_reader_cursor() on a reader of this store.
 *
 * Records the store lost since the cursor was taken (overwritten, or
 * cleared by PK_BUFFER_CLEAR) are reported as lost, by the jump in seq of
 * the next record of their lane.
 * Context: any thread (one at a time per reader), async-signal-safe.
 * Return: 0; -EINVAL for a NULL @r or @cursor, a malformed cursor, or one
 * of another store (another lane count, a later generation, or a seq
 * beyond what a lane has stored); -ENODEV as pk_reader_next().  On error
 * the reader's position is unchanged.
 */
int pk_reader_seek_cursor(struct pk_reader *r, const char *cursor);

/**
 * pk_reader_clear() - make readers opened from now on start after every
 * record stored so far (dmesg -C).  Safe while writers run: a record
 * stored after the call returns is always shown.  Readers already open
 * keep their position.
 * @r: a reader of this process's store, or one opened with
 *     PK_READER_WRITABLE.
 * Context: any thread.
 * Return: 0; -EACCES for a reader opened read-only; -EINVAL for a NULL @r;
 * -ENODEV as pk_reader_next().
 */
int pk_reader_clear(struct pk_reader *r);

#if defined(PK_BUILDING_LIB) && defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* PRINTK_READER_H */
