/* SPDX-License-Identifier: MIT */
/*
 * Readers of a libprintk record store: this process's own, or a persistent
 * store file written by another (possibly dead) process.
 *
 * Readers are lockless and never disturb writers.  Each reader has its own
 * position; any number may run at once, concurrently with any number of
 * writers.  Every record a reader returns has been validated after it was
 * copied; records that were overwritten while being read, or never
 * committed, are skipped and show up as a jump in seq.
 */
#ifndef PRINTK_READER_H
#define PRINTK_READER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* pk_record.flags */
#define PK_REC_CONT	0x0001u	/* continues an earlier record of the same tid */
#define PK_REC_TRUNC	0x0002u	/* text was cut at PK_RECORD_MAX */
#define PK_REC_NOEOL	0x0004u	/* text did not end a line */
#define PK_REC_EMERG	0x0008u	/* stored inside an emergency section or panic */

struct pk_record {
	uint64_t seq;		/* sequence number, gapless as assigned */
	uint64_t ts_ns;		/* CLOCK_MONOTONIC at store time */
	int level;		/* PK_EMERG..PK_DEBUG */
	uint32_t tid;		/* storing thread */
	unsigned flags;		/* PK_REC_* */
	const char *text;	/* NUL-terminated, valid until the next call */
	size_t len;		/* text bytes, without the trailing newline */
	int facility;		/* syslog facility number */
};

struct pk_reader;

/**
 * pk_reader_open() - a reader of this process's store, at its oldest record.
 * Context: any thread, not async-signal-safe (allocates).
 * Return: a reader, or NULL with errno set.
 */
struct pk_reader *pk_reader_open(void);

/**
 * pk_reader_open_file() - a reader of the persistent store at @path.
 * The file is untrusted: it is validated before use and every offset and
 * length read from it is checked.
 * Return: a reader, or NULL with errno set (ENOENT, EINVAL for a file that
 * is not a store, EPROTO for another format version, ...).
 */
struct pk_reader *pk_reader_open_file(const char *path);

/**
 * pk_reader_next() - copy the next record into @rec.
 * Return: 1 record; 0 nothing more now; < 0 -errno.  rec->seq jumps over
 * records that were lost (overwritten before they were read, or never
 * committed).
 */
int pk_reader_next(struct pk_reader *r, struct pk_record *rec);

/**
 * pk_reader_seek() - continue at @seq (clamped to what the store holds).
 */
void pk_reader_seek(struct pk_reader *r, uint64_t seq);

/**
 * pk_reader_wait() - wait up to @timeout_ms for a record after the reader's
 * position to be stored.  Return: 1 something new, 0 timed out, < 0 -errno.
 */
int pk_reader_wait(struct pk_reader *r, int timeout_ms);

void pk_reader_close(struct pk_reader *r);

#ifdef __cplusplus
}
#endif

#endif /* PRINTK_READER_H */
