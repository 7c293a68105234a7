/* SPDX-License-Identifier: MIT */
/*
 * lanes.h - the record store as a set of lanes: N rings (ringbuf.h) side
 * by side in one region, fixed when it is formatted.  A writer stores in
 * the lane of the CPU it runs on; a reader merges the lanes into one
 * order, (timestamp, lane, seq in the lane).  See lanes.c for the order
 * and the watermark that makes it exact.
 *
 * Synchronization table:
 *   pk__lanes_write            any thread, any signal handler
 *   pk__lanes_read (one reader struct)   one thread at a time per reader
 *   pk__lanes_format            while nobody uses the region
 *   pk__lanes_attach            any thread (the region is untrusted)
 */
#ifndef PK_LANES_H
#define PK_LANES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/ringbuf.h"

/* The most lanes a store may have (a file's header is refused beyond it). */
#define PK_LANES_MAX		64u

/* A process-local view of a store of lanes. */
struct pk_lanes {
	unsigned n;			/* lanes, 1 to PK_LANES_MAX */
	size_t lane_size;		/* bytes of each lane's region */
	struct pk_ring lane[PK_LANES_MAX];
};

/*
 * A store with lanes takes the data ring a single ring of its size would
 * have (pk__ring_data_log2_for) and shares it out: @n lanes, a power of
 * two, each with 1/n of it, and a header each (so the store is (n - 1) *
 * PK_RING_HDR_SIZE bytes larger than the single ring).
 * Default (@want 0): one lane per CPU online, rounded down to a power of
 * two, at most PK_LANES_DEFAULT_MAX, and so that each lane keeps at least
 * 2^PK_LANES_MIN_DEFAULT_LOG2 bytes of data: a thread that stores alone
 * (one CPU's lane) still has a useful share.  @want > 0 (PK_LANES,
 * pk_config.lanes): that many, rounded down to a power of two, at most
 * PK_LANES_MAX, and so that each lane keeps the smallest data ring.
 * Without PK_RING_HEAD_CAS16: one lane.
 * Return: the lanes; *@lane_log2 each one's data ring (log2 bytes).
 */
#define PK_LANES_DEFAULT_MAX		16u
#define PK_LANES_MIN_DEFAULT_LOG2	17u	/* 128 KiB */
unsigned pk__lanes_for(unsigned want, unsigned data_log2, unsigned *lane_log2);
/* The same for a machine of @cpus CPUs online (pkbench sim). */
unsigned pk__lanes_for_cpus(unsigned want, long cpus, unsigned data_log2, unsigned *lane_log2);

/* Bytes of a store of @n lanes whose data rings are 1 << @data_log2 bytes. */
size_t pk__lanes_region_size(unsigned n, unsigned data_log2);

/*
 * Format @mem as @n empty lanes (@n is 1 without PK_RING_HEAD_CAS16),
 * each starting at seq @first_seq.
 */
void pk__lanes_format(void *mem, unsigned n, unsigned data_log2, uint64_t first_seq);

/*
 * Validate an untrusted store of @size bytes at @mem and build @ls.
 * Lane 0's header says how many lanes there are and how big each is; every
 * lane must be a valid ring region of that size that names its place.
 * Return: 0, -EINVAL (not a store of lanes / corrupt), -EPROTO (another
 * format version).
 */
int pk__lanes_attach(struct pk_lanes *ls, void *mem, size_t size);

/* The lane a writer on this CPU uses.  Async-signal-safe. */
unsigned pk__lanes_pick(const struct pk_lanes *ls);

/*
 * Store a record in this CPU's lane: pk__ring_write() there.  *@lane
 * receives the lane before the record's seq is taken (so that a signal
 * handler on this thread can name the record in progress), *@seq as
 * pk__ring_write() sets it.  A thread that migrates during the call
 * finishes in the lane it started in.
 */
int pk__lanes_write(struct pk_lanes *ls, const struct pk_ring_meta *meta, const char *text,
		    uint32_t len, bool open, unsigned *lane, uint64_t *seq);

/*
 * A merging reader.  Each lane has a ring reader and room for the next
 * record it read (buf[lane], given by the caller: n records), held until
 * the watermark lets it out.
 *
 * @seal: the reader may write to the region (seal idle lanes,
 * pk__ring_seal): then the order is exact.  A reader of a read-only
 * mapping cannot seal: it lets out a record held for an idle lane whose
 * floor is behind it once the record is @grace_ns old (its timestamp
 * that far behind the clock), or once it has waited @grace_ns for it
 * (a writer preempted that long between its clock read and its head
 * CAS then comes out of order: the one inexact case, lanes.c).
 */
struct pk_lanes_reader {
	const struct pk_lanes *ls;
	struct pk_ring_rec *buf;
	bool seal;
	bool postmortem;
	uint64_t grace_ns;
	uint64_t blocked_since_ns;	/* read-only: when an idle lane first held us */
	uint64_t seals;			/* statistics: seals made */
	struct pk_lanes_lane {
		struct pk_ring_reader rd;
		uint64_t last_ts;	/* timestamp of the last record taken from the lane */
		bool have;		/* buf[lane] holds the lane's next record */
	} l[PK_LANES_MAX];
};

/* Default grace of a reader that cannot seal. */
#define PK_LANES_GRACE_NS	1000000000ull

/*
 * Within one boot no record's timestamp is ahead of CLOCK_MONOTONIC by
 * more than a few nanoseconds (a seal's k.ts + 1, lanes.c); a record
 * held by a reader that is further ahead than this was stored before a
 * reboot (the clock restarted), or the store is hostile.  The reader
 * then neither seals for it nor waits: every record a lane reserves from
 * now on is of this boot, later than it (lanes.c, ACROSS A REBOOT).
 * persist.c lowers a lane's head_ts that is this far ahead when a
 * writer takes a store over.
 */
#define PK_LANES_AHEAD_NS	1000000000ull

void pk__lanes_reader_init(struct pk_lanes_reader *lr, const struct pk_lanes *ls,
			   struct pk_ring_rec *buf, bool postmortem, bool seal);

/*
 * pk__lanes_read() - the next record in the merged order.
 * *@rec points at it (inside lr->buf, valid until the next call), its lane
 * in (*rec)->lane.  *@jumped (if not NULL) grows by the records lost
 * (jumped over, not filtered) in any lane since the last call: report
 * them before this record.  @f, *@skipped and *@lost as for
 * pk__ring_read_filtered(), for every lane.
 * Return: 1 a record; 0 nothing more now (a lane's record in progress, or
 * nothing stored); -EAGAIN some lane passed over a batch of filtered
 * records: call again.
 */
int pk__lanes_read(struct pk_lanes_reader *lr, struct pk_ring_rec **rec,
		   const struct pk_ring_filter *f, uint64_t *skipped, uint64_t *jumped,
		   struct pk_ring_lost *lost);

/*
 * The two halves of pk__lanes_read(), for a reader that keeps more per
 * lane (a console: lanes' own lost counts, published positions).
 * pk__lanes_fill() - read lane @i's next record into buf[i] unless it
 * holds one: 1 it holds one (l[i].have), 0 nothing now, -EAGAIN a batch
 * of filtered records passed over.  Counting as pk__lanes_read().
 * pk__lanes_choose() - the lane whose held record goes out next (the
 * caller then clears l[lane].have), -1 none may yet (nothing held, or the
 * watermark holds it), -EAGAIN look again (an open line was finalized).
 */
int pk__lanes_fill(struct pk_lanes_reader *lr, unsigned i, const struct pk_ring_filter *f,
		   uint64_t *skipped, uint64_t *jumped, struct pk_ring_lost *lost);
int pk__lanes_choose(struct pk_lanes_reader *lr);

#endif /* PK_LANES_H */
