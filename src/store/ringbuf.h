/* SPDX-License-Identifier: MIT */
/*
 * The record store: a lockless, multi-producer, multi-reader ring of
 * variable-length records with 64-bit sequence numbers.
 *
 * The store knows nothing of consoles, locking or formatting.  Its memory
 * is one position-independent region (offsets, never pointers), so it may
 * live in anonymous memory or in a shared file mapping read by another
 * process.  See ringbuf.c for the algorithm and its memory-order argument.
 *
 * Synchronization table:
 *   pk__ring_write / pk__ring_extend / pk__ring_finalize_last   any thread,
 *       any signal handler, concurrently with everything below
 *   pk__ring_read / pk__ring_read_filtered (one reader struct)   one thread
 *       at a time per reader; any number of reader structs concurrently
 *   pk__ring_oldest / pk__ring_readable  any thread
 *   pk__ring_clear                       any thread, with everything above
 *   pk__ring_format / pk__ring_recover / pk__ring_restart   while no writer
 *       uses the region (readers may)
 *
 * Sequence numbers are 64-bit and any first seq up to PK_RING_SEQ_LIMIT
 * works: descriptors compare seqs modulo 2^32 (ringbuf.c, "SEQ
 * ARITHMETIC"), everything else compares full seqs, which cannot wrap from
 * there.  A header beyond the limit is corrupt (persist.c refuses it).
 *
 * Ordering contract with the layers above (flush.c relies on it):
 * committing a record (write:E in pk__ring_write and pk__ring_extend, and
 * the CAS that finalizes an OPEN record, write:F) is a seq_cst RMW of the
 * record's descriptor, and pk__ring_readable() loads seq_head and that
 * descriptor seq_cst.  So a store-buffering pattern built on them holds:
 * if a writer commits and then makes a seq_cst access X (flush.c: load the
 * printer's `sleeping` flag, fl:A; try the console lock, fl:B; look at a
 * console's owner, fl:C), and another thread makes a seq_cst access Y that
 * conflicts with X (sleeping = 1; unlock; release the console) and then
 * calls pk__ring_readable(), then the writer sees Y or the other thread
 * sees the record readable: a record is never left with nobody to print
 * it.  Weakening either side to acquire/release breaks fl:A-fl:C.
 */
#ifndef PK_RINGBUF_H
#define PK_RINGBUF_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "printk/reader.h"	/* struct pk_field */

#define PK_RING_MAGIC		0x31474e49524b5050ull	/* "PPKRING1" little-endian */
#define PK_RING_VERSION		10u
#define PK_RING_HDR_SIZE	512u
#define PK_RING_BLK_HDR		40u	/* bytes of block header */
#define PK_RING_MOD_MAX		32u	/* a record's module prefix: length byte, name */
/*
 * A record's fields block (record.c, "FIELDS"): its entries, up to
 * PK_FIELDS_BYTES (printk.h), then a 3-byte trailer.  The largest block
 * (text, prefix and fields) must stay within half the smallest data ring
 * (a writer stores only blocks that fit half the ring, ringbuf.c write:D).
 */
#define PK_RING_FIELDS_TRAILER	3u
#define PK_RING_FIELDS_MAX	(896u + PK_RING_FIELDS_TRAILER)
/*
 * A record's location block (record.c, "LOCATIONS"): a 6-byte header,
 * then the file (PK_SRCLOC_FILE_MAX) and function (PK_SRCLOC_FUNC_MAX)
 * names of its call site.
 */
#define PK_RING_LOC_HDR		6u
#define PK_RING_LOC_FILE_MAX	255u
#define PK_RING_LOC_FUNC_MAX	127u
#define PK_RING_LOC_MAX		(PK_RING_LOC_HDR + PK_RING_LOC_FILE_MAX + PK_RING_LOC_FUNC_MAX)
/* PK_RECORD_MAX + prefix + location + fields */
#define PK_RING_TEXT_MAX	(1024u + PK_RING_MOD_MAX + PK_RING_LOC_MAX + PK_RING_FIELDS_MAX)
/*
 * 8 KiB: the largest record must fit half of it (format 8 made records
 * longer than half of 4 KiB; PK_BUFFER_SIZE_MIN gives 8 KiB already).
 */
#define PK_RING_MIN_DATA_LOG2	13u
#define PK_RING_MAX_DATA_LOG2	30u
#define PK_RING_DESC_SHIFT	5u	/* one descriptor per 32 data bytes */

/*
 * Region header.  Fixed fields are written once by pk__ring_format() before
 * the region is published; the atomics below are shared by all writers.
 * Layout is part of the persistent file format: change it only together
 * with PK_RING_VERSION.
 */
struct pk_ring_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size;		/* PK_RING_HDR_SIZE */
	uint64_t total_size;		/* bytes of the whole region */
	uint64_t desc_off;		/* byte offset of the descriptor ring */
	uint64_t data_off;		/* byte offset of the data ring */
	uint32_t desc_log2;		/* descriptors: 1 << desc_log2 */
	uint32_t data_log2;		/* data ring bytes: 1 << data_log2 */
	uint64_t first_seq;		/* seq of the first record of this region */
	int64_t realtime_zero_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC at creation */
	int32_t creator_pid;
	uint32_t flags;
	uint64_t generation;		/* bumped on each reopen of a file store */
	/*
	 * Lanes (lanes.c): this region is lane `lane` of `lanes`, each a
	 * region of total_size bytes, lane i at byte i * total_size of the
	 * store.  pk__ring_format() writes 1 and 0: a store of one lane.
	 */
	uint32_t lanes;
	uint32_t lane;
	uint8_t pad0[128 - 88];

	/*
	 * Line 2: the reservation head, changed by every writer (write:A).
	 * Nothing else lives here: another thread's store to this line takes
	 * it away from the writer that reads something beside it.
	 *
	 * seq_head and head_ts form one 16-byte word that write:A moves with
	 * one compare-and-swap where the machine has one (PK_RING_HEAD_CAS16):
	 * the record gets seq_head and the timestamp max(its caller's clock,
	 * head_ts), and head_ts becomes that timestamp.  So the timestamps of
	 * a region's records never decrease with their seqs, and a reader that
	 * raises head_ts (pk__ring_seal) bounds from below the timestamp of
	 * every record not yet reserved: what lets readers merge several
	 * regions (lanes) into one order (lanes.c).  Without a 16-byte CAS,
	 * write:A is a fetch-add of seq_head alone and head_ts stays 0: one
	 * lane only.
	 */
	_Alignas(16) _Atomic uint64_t seq_head;	/* next seq to hand out */
	_Atomic uint64_t head_ts;	/* CLOCK_MONOTONIC ns: no later record is older */
	/*
	 * The data head and the count of open records are changed by this
	 * region's writers only, right after they move seq_head: on its line,
	 * a writer takes one line, not two.  (Format 9 kept them on line 3,
	 * which every lane's writers read through their wh: a lane's writers
	 * took that line from the other lanes' writers on every record, and
	 * two threads on two lanes stored 8 M records/s where they now store
	 * 12.7 M.)
	 */
	_Atomic uint64_t lpos_head;	/* next data byte (logical, monotonic) */
	_Atomic uint64_t open_count;	/* >= records committed OPEN, not yet final (ringbuf.c) */
	uint8_t pad1[128 - 32];

	/*
	 * Line 3: read by every writer of every lane after its commit (lane
	 * 0's, through struct pk_ring.wh), written only by a reader going to
	 * sleep or waking: it stays shared in every writer's cache.
	 */
	_Atomic uint32_t waiters;	/* readers sleeping in pk__ring_wait */
	_Atomic uint32_t wake;		/* futex word for those readers */
	_Atomic uint64_t wait_until;	/* CLOCK_MONOTONIC ns: latest waiter's lease */
	uint8_t pad2[128 - 16];

	/* Line 4: counters of rare events */
	_Atomic uint64_t lost;		/* overrun between reserve and commit */
	_Atomic uint64_t reserve_failed;
	_Atomic uint64_t truncated;
	_Atomic uint64_t refused;
	_Atomic uint64_t clear_seq;	/* readers start here (pkmsg -C) */
	_Atomic uint64_t suppressed;	/* not stored: another thread was panicking */
	_Atomic uint64_t eager;		/* records formatted at the call, not deferred */
	_Atomic uint64_t joins;		/* opens of a store file that other writers held */
	uint8_t pad3[PK_RING_HDR_SIZE - 384 - 64];
};

_Static_assert(sizeof(struct pk_ring_hdr) == PK_RING_HDR_SIZE, "ring header size");
_Static_assert(offsetof(struct pk_ring_hdr, seq_head) % 16 == 0 &&
	       offsetof(struct pk_ring_hdr, head_ts) == offsetof(struct pk_ring_hdr, seq_head) + 8,
	       "the head's 16-byte word");

/*
 * A lock-free 16-byte compare-and-swap: x86-64 with cmpxchg16b (-mcx16,
 * which the build adds where the compiler takes it) and AArch64 inline it
 * for the __sync builtins and define this macro.  A 16-byte CAS through
 * libatomic may take a lock, which a signal handler interrupting its holder
 * would wait on for ever: the build never uses one (cmake checks that the
 * builtin links without libatomic).
 */
#if defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_16) && !defined(PK_RING_NO_CAS16)
#define PK_RING_HEAD_CAS16 1
#endif

/* A process-local view of a region: derived, validated pointers. */
struct pk_ring {
	struct pk_ring_hdr *h;
	/*
	 * Whose futex word a commit wakes readers on: h, or lane 0's header
	 * in a store of several lanes (pk__lanes_attach()), so that one
	 * reader sleeping for all lanes is woken by any lane's writers.
	 */
	struct pk_ring_hdr *wh;
	_Atomic uint64_t *desc;
	_Atomic uint64_t *data;		/* the data ring as 64-bit words */
	uint64_t desc_mask;		/* entries - 1 */
	unsigned desc_shift;		/* pk__ring_spread_shift(desc_mask) */
	uint64_t data_size;		/* bytes */
	uint64_t word_mask;		/* data_size / 8 - 1 */
	/*
	 * Optional and private to the process (set up by the store's life, life.c): which
	 * seqs were taken through this view, and at which level.  The word
	 * of seq % (own_mask + 1) (ringbuf.c own_at) holds the newest such
	 * seq (low 60 bits), a valid bit and the level.  NULL: not kept
	 * (pk__ring_attach leaves it so).
	 */
	_Atomic uint64_t *own;
	uint64_t own_mask;
	uint64_t id;			/* this view, for the writers' data chunks */
	uint64_t epoch;			/* recoveries and restarts through this view */
	bool chunks;			/* writers take data space in chunks */
};

/* Metadata stored with a record. */
struct pk_ring_meta {
	uint64_t ts_ns;
	uint32_t pid;			/* storing process */
	uint32_t tid;
	uint8_t level;
	uint8_t facility;
	uint16_t flags;			/* PK_REC_* */
};

/* A record as copied out by a reader. */
struct pk_ring_rec {
	uint64_t seq;			/* in its lane */
	uint32_t lane;			/* set by a merging reader (lanes.c); 0 otherwise */
	struct pk_ring_meta meta;
	uint32_t len;
	char module[PK_RING_MOD_MAX];		/* "" or its module's name (pk__rec_render) */
	/*
	 * Its fields' entries, "KEY\0VALUE\0" each (pk__rec_render), and a
	 * view of them made by pk__rec_fields() for a struct pk_record.
	 */
	uint16_t fields_len;
	uint8_t nfields;
	char fields[PK_RING_FIELDS_MAX];
	struct pk_field fv[8];			/* PK_FIELDS_MAX */
	/* Its call site (pk__rec_render): "" and 0 if it has none. */
	uint32_t line;
	char file[PK_RING_LOC_FILE_MAX + 1];
	char func[PK_RING_LOC_FUNC_MAX + 1];
	char text[PK_RING_TEXT_MAX + 8];	/* NUL-terminated */
};

/* Seqs of undecided owner a reader keeps (struct pk_ring_reader). */
#define PK_RING_UNDECIDED	4u

/*
 * A reader's position and policy.  pk__ring_reader_init() sets every
 * field; the caller may then change these:
 *   next            the next seq to look at (seek);
 *   stall_limit_ns  how long a record in progress (seq taken, not yet
 *                   committed) may stop the reader while later records
 *                   exist; then it is skipped as lost.  Default 1 s.  0: a
 *                   record in progress is skipped at once when later
 *                   records exist (a panic flush that cannot wait);
 *   skip_seq        a record the caller knows can never be finished: the
 *                   caller's own thread was interrupted while writing it
 *                   (a crash handler, see pk__ring_write's @seq).  If the
 *                   reader finds it in progress it does not wait: it
 *                   returns what of it is committed text (an OPEN record,
 *                   or a RESERVED one whose block validates) and skips it
 *                   as lost otherwise.  Default UINT64_MAX (none);
 *   postmortem      the writers are gone: nothing is in progress, every
 *                   record in progress is treated as skip_seq is.
 */
struct pk_ring_reader {
	const struct pk_ring *ring;
	uint64_t next;			/* next seq to read */
	uint64_t stall_seq;		/* seq we found in progress ... */
	uint64_t stall_since_ns;	/* ... since then */
	uint64_t stall_limit_ns;	/* skip a record in progress this long */
	uint64_t skip_seq;		/* never wait for this record */
	bool postmortem;		/* the writers are gone: nothing is in progress */
	/*
	 * Records of other lanes wait behind this reader's record in
	 * progress (set by a merging reader, lanes.c): give it up after
	 * stall_limit_ns even if nothing follows it in this region.
	 */
	bool later_elsewhere;
	/*
	 * Seqs a filtered read (f->own, not f->sole) gave up on while they
	 * were unclaimed and not in the own table: their writer may be one
	 * of this view's, between taking the seq and noting it.  Decided,
	 * oldest first, by a later filtered read once their descriptor is
	 * claimed (ringbuf.c, "OWN RECORDS").
	 */
	uint64_t undecided[PK_RING_UNDECIDED];
	unsigned n_undecided;
};

/*
 * Which records a filtered read passes over.  { 8, 0 } passes over
 * nothing.
 */
struct pk_ring_filter {
	int max_level;		/* records with level >= max_level are skipped
				   (8: none skipped) */
	uint32_t pid;		/* non-zero: records stored by another pid are skipped */
	/*
	 * Which lost records *lost counts (pk__ring_read_filtered).  false:
	 * every lost seq.  true: those the view's own table says were taken
	 * through it at a level below max_level, and those whose word a newer
	 * record of this view has taken (owner and level unknown, also added
	 * to lost->unknown); seqs never noted only if @sole (no other process
	 * stores into the region: then they are ours too, e.g. a writer
	 * interrupted between taking its seq and noting it).  A seq given
	 * up on while unclaimed and unnoted is counted later, once its claim
	 * shows whether this view took it (pk_ring_reader.undecided).  true
	 * also passes over, unread, a seq the table names at max_level or
	 * above (ringbuf.c, OWN FILTERED SKIP).
	 */
	bool own;
	bool sole;
	/* Filtered records a read passes over before it returns -EAGAIN (0: PK_RING_SKIP_BATCH). */
	unsigned batch;
};

/*
 * Lost records as a filtered read counts them: @counted, of which
 * @unknown are seqs whose owner or level the own table could not name
 * (counted all the same; see struct pk_ring_filter).
 */
struct pk_ring_lost {
	uint64_t counted;
	uint64_t unknown;
	/*
	 * Lost records the own table names at a level the filter rejects:
	 * passed over as filtered ones are, counted here for the reader to
	 * add to what it filtered (a console's skipped), not as drops.
	 */
	uint64_t filtered;
};

/* Records a filtered read passes over before it lets its caller look up. */
#define PK_RING_SKIP_BATCH	64u

/*
 * The highest seq_head a valid region may hold: 2^62 below 2^64.  No
 * store gets near it (2^62 records at a billion a second take 146 years),
 * so a header beyond it is corrupt, and from any valid header the
 * counters can never come near wrapping around.
 */
#define PK_RING_SEQ_LIMIT	(UINT64_MAX - (1ull << 62))
/*
 * Writers take a region only while seq_head <= PK_RING_SEQ_WRITE_LIMIT, so
 * that what they add (under 2^61 records in any lifetime) keeps it within
 * PK_RING_SEQ_LIMIT, which readers require.
 */
#define PK_RING_SEQ_WRITE_LIMIT	(PK_RING_SEQ_LIMIT - (1ull << 61))

/* Bytes needed for a region whose data ring is 1 << data_log2 bytes. */
size_t pk__ring_region_size(unsigned data_log2);
/* The largest data ring that fits in @bytes, or 0 if none does. */
unsigned pk__ring_data_log2_for(size_t bytes);

/*
 * Initialise @mem (zeroed or not) as an empty region whose first record
 * will get seq @first_seq (any value up to PK_RING_SEQ_LIMIT).  Every
 * descriptor starts FREE with a seq field that reads as older than the
 * first seq that will use it.
 */
void pk__ring_format(void *mem, unsigned data_log2, uint64_t first_seq);

/*
 * Validate an untrusted region of @size bytes and build a view of it.
 * Return: 0, -EINVAL (not a store / corrupt), -EPROTO (other version).
 */
int pk__ring_attach(struct pk_ring *ring, void *mem, size_t size);

/*
 * pk__ring_write() - store one record.
 * @len:  clamped to PK_RING_TEXT_MAX by the caller.
 * @open: the text does not end a line; the record stays invisible to
 *        readers until finalized so that pk__ring_extend() can add to it.
 * @seq:  if not NULL, receives the record's seq as soon as it is taken
 *        (write:A), before the record is claimed, written or committed,
 *        by a store that a signal handler interrupting this thread sees.
 *        A caller that sets *@seq = UINT64_MAX before the call lets a
 *        crash handler on its thread tell which record the thread left in
 *        progress (reader's skip_seq): UINT64_MAX means none was claimed
 *        yet (the thread was interrupted before write:A or in the few
 *        instructions between write:A and this store, when the record's
 *        descriptor is not claimed: a reader waits stall_limit_ns for it).
 *
 * The commit is a seq_cst RMW; with pk__ring_readable()'s seq_cst loads
 * it forms the store-buffering pairs described at the top of this file
 * (flush.c fl:A, fl:B, fl:C).
 *
 * Context: any thread or signal handler; lock-free (wait-free but for the
 * descriptor CAS, which retries only when another writer changed it).
 * Return: 0; -ENOBUFS if the record was lost (overrun by newer records
 * before it was committed, or its descriptor already taken by a newer
 * one): *@seq is set all the same.
 */
int pk__ring_write(struct pk_ring *ring, const struct pk_ring_meta *meta,
		   const char *text, uint32_t len, bool open, uint64_t *seq);

/*
 * Append to open record @seq if it is still open and still the newest.
 * @max: the longest the record's text may grow (at most PK_RING_TEXT_MAX).
 * Return: 0 appended; -EAGAIN if it cannot be extended (the caller stores
 * a new record instead); -E2BIG if the result would exceed @max.
 */
int pk__ring_extend(struct pk_ring *ring, uint64_t seq, const char *text,
		    uint32_t len, bool open, uint32_t max);
/*
 * pk__ring_extend() with @xform applied to the record's body and header
 * (copied, while the record is held RESERVED) before @text is appended:
 * how an open line stored as a package becomes text when pk_cont() joins
 * it (record.c, pk__rec_open_unpack).  @xform returns 0, or a negative
 * errno to leave the record as it was (committed FINAL, and that errno
 * returned).  It must keep the record's level and pid: the own table
 * noted the level when the seq was taken, and filtered readers rely on
 * both (OWN FILTERED SKIP, FILTERED READING).  Context: as
 * pk__ring_extend(); @xform must be async-signal-safe.
 */
int pk__ring_extend_x(struct pk_ring *ring, uint64_t seq, const char *text, uint32_t len,
		      bool open, uint32_t max, int (*xform)(struct pk_ring_rec *rec));

/* Make the newest record readable if it is still open. */
void pk__ring_finalize_last(struct pk_ring *ring);

/*
 * pk__ring_finalize() - make record @seq readable if it is OPEN (as a newer
 * record's writer does, write:F).  Its owner's next extension then fails
 * and it stores the rest as a new record.  A merging reader finalizes an
 * OPEN record that an older key than another lane's holds up (lanes.c).
 * Context: any thread or signal handler; the region must be writable.
 */
void pk__ring_finalize(struct pk_ring *ring, uint64_t seq);

/*
 * pk__ring_open_ts() - if record @seq is OPEN with an intact header, its
 * timestamp into *@ts: true.  Only the descriptor and header words are
 * read (validated as a filtered read validates them).
 * Context: any thread or signal handler; never writes.
 */
bool pk__ring_open_ts(const struct pk_ring *ring, uint64_t seq, uint64_t *ts);

/* The data ring bytes a record of @len text bytes takes (header and padding). */
uint64_t pk__ring_footprint(uint32_t len);

void pk__ring_reader_init(struct pk_ring_reader *rd, const struct pk_ring *ring,
			  bool postmortem);

/*
 * pk__ring_read() - read the next record into @out.  Records that were
 * lost (overwritten, torn, retired, or given up on while in progress) are
 * jumped over: rd->next and out->seq move past them.
 * Context: one thread at a time per reader; any context where the region
 * stays mapped.  Bounded: at most one pass over the descriptor ring.
 * Return: 1 record (out->seq may jump over lost ones), 0 nothing more now.
 */
int pk__ring_read(struct pk_ring_reader *rd, struct pk_ring_rec *out);

/*
 * pk__ring_read_filtered() - pk__ring_read(), but records the filter rejects are
 * passed over without copying their text: only the descriptor and the block's
 * header words are read and validated (descriptor unchanged, block intact,
 * the header's own check word).  A header found torn or overwritten is
 * treated as lost (a jump), never as filtered.  With f->own, a seq that this
 * view's own table names at a level @f rejects is passed over as filtered
 * without reading anything of it, committed or still in progress
 * (ringbuf.c, OWN FILTERED SKIP).
 * *skipped (if not NULL) is increased by the number of records passed over
 * this way, so a caller tells the two apart: of the seqs a call moves over
 * (from rd->next before it to out->seq, or to rd->next after it), *skipped
 * grew by the filtered ones and the rest were lost.
 * *lost (if not NULL) is increased by the lost ones that @f counts (all of
 * them unless f->own; see struct pk_ring_filter).
 * @f: NULL filters nothing (then this is pk__ring_read()).
 * Context: as pk__ring_read().
 * Return: 1 record in @out; 0 nothing more now; -EAGAIN a batch of
 * PK_RING_SKIP_BATCH records was passed over and more may follow (call again;
 * the caller gets a chance to check for a higher-priority owner in between).
 */
int pk__ring_read_filtered(struct pk_ring_reader *rd, struct pk_ring_rec *out,
			   const struct pk_ring_filter *f, uint64_t *skipped,
			   struct pk_ring_lost *lost);

/*
 * pk__ring_lost_counted() - of the seqs [@from, @to), all of them lost to
 * a reader, add those @f counts to *@out (as *lost above).  Bounded: at most
 * min(to - from, own_mask + 1) table words and as many descriptors, plus
 * desc_mask + 1 descriptors for a range longer than the table.
 * Context: any thread or signal handler.
 */
void pk__ring_lost_counted(const struct pk_ring *ring, const struct pk_ring_filter *f,
			   uint64_t from, uint64_t to, struct pk_ring_lost *out);

/*
 * pk__ring_own_words() - how many table words a view of @ring gets: two
 * laps of its descriptors, at least 2^12 and at most 2^20 (8 bytes each:
 * 512 KiB for the default store, 8 MiB at most; under one lap only for
 * data rings over 32 MiB).
 */
uint64_t pk__ring_own_words(const struct pk_ring *ring);

/*
 * pk__ring_own_forget() - unnote the seqs [@from, @to) in @ring's own
 * table (a fork child's copy names its parent's records as its own),
 * however wide the range: every word naming one of them is cleared.
 * Context: while no writer uses the view (a fork child's handler).
 */
void pk__ring_own_forget(struct pk_ring *ring, uint64_t from, uint64_t to);

/*
 * pk__ring_undecided() - the oldest seq @rd gave up on without knowing
 * whose it was (struct pk_ring_reader), or UINT64_MAX if none.  A
 * filtered read with a lost count decides it once pk__ring_claimed()
 * says its descriptor was claimed, and counts it if it was this view's.
 */
uint64_t pk__ring_undecided(const struct pk_ring_reader *rd);

/*
 * pk__ring_claimed() - has record @seq, or a newer one of its descriptor,
 * claimed the descriptor?  A seq_cst load, as pk__ring_readable()'s: a
 * writer that commits @seq (seq_cst, write:E) and then makes a seq_cst
 * access forms the same store-buffering pairs with a thread that makes a
 * conflicting seq_cst access and then calls this (flush.c fl:A, fl:B).
 * Context: any thread or signal handler; wait-free.
 */
bool pk__ring_claimed(const struct pk_ring *ring, uint64_t seq);

/*
 * Oldest seq still in the store; with @after_clear, not before the point
 * set by pkmsg -C (where new readers start).
 */
uint64_t pk__ring_oldest(const struct pk_ring *ring, bool after_clear);

/*
 * pk__ring_readable() - is there something for a reader at @seq to do now
 * (a committed record, or a gap: @seq overwritten or retired)?
 * Its loads of seq_head and of the descriptor are seq_cst: they pair with
 * the seq_cst commit (write:E) in the store-buffering patterns described
 * at the top of this file, which flush.c relies on (fl:A, fl:B, fl:C) and
 * pk__ring_wait() too (wait:A with wake:A).
 * Context: any thread or signal handler; wait-free.
 * Return: true if a read at @seq would not stop for lack of a record.
 */
bool pk__ring_readable(const struct pk_ring *ring, uint64_t seq);

/*
 * pk__ring_data_lag() - how far the block of record @seq lies behind the
 * data head, in bytes; UINT64_MAX if the descriptor no longer (or not
 * yet) names @seq with a block: overwritten, or reserved without space.
 * A hint for a writer deciding whether to hold back (relaxed loads: a
 * stale answer only holds back one call early or late).  Any context.
 */
uint64_t pk__ring_data_lag(const struct pk_ring *ring, uint64_t seq);

/*
 * pk__ring_floor() - the region's head as a lower bound: *@seq receives
 * seq_head and the return value is a timestamp that every record with a
 * seq >= *@seq has or exceeds (head_ts, loaded before seq_head: a record
 * reserved after the head_ts load got at least that timestamp, and every
 * record reserved before the seq_head load has a seq below *@seq).
 * 0 without PK_RING_HEAD_CAS16.
 * Context: any thread or signal handler; wait-free; never writes.
 */
uint64_t pk__ring_floor(const struct pk_ring *ring, uint64_t *seq);

/*
 * pk__ring_seal() - if the region's seq_head is still @seq, raise its
 * head_ts to @ts (never lower it): every record reserved afterwards gets a
 * timestamp >= @ts.  A merging reader seals an idle lane so that it may
 * emit the other lanes' records older than @ts (lanes.c).
 * Context: any thread or signal handler; lock-free; the region must be
 * writable.
 * Return: true if seq_head was @seq (head_ts is now >= @ts); false if a
 * writer has reserved @seq meanwhile, or without PK_RING_HEAD_CAS16.
 */
bool pk__ring_seal(struct pk_ring *ring, uint64_t seq, uint64_t ts);

/*
 * A registered waiter's lease: it renews wait_until to now + this before
 * every sleep, and writers wake waiters only while a lease runs.  A waiter
 * that dies (SIGKILL, or a thread that did not survive fork) leaves
 * `waiters` raised, but its lease runs out: writers then stop making the
 * futex call within this time.
 */
#define PK_RING_WAIT_LEASE_NS	1000000000ull

/*
 * pk__ring_wait() - wait up to @timeout_ms (-1: no limit) for record @seq
 * to become readable, registered in the region so that writers wake us.
 * Context: any thread but a signal handler; the region must be writable.
 * Return: 1 something to read (or woken), 0 timed out or interrupted, -errno.
 */
int pk__ring_wait(const struct pk_ring *ring, uint64_t seq, int timeout_ms);

/* Longest sleep of pk__ring_wait_readonly() between two looks. */
#define PK_RING_POLL_MAX_MS	100

/*
 * pk__ring_wait_readonly() - pk__ring_wait() for a region mapped read-only.
 * It cannot register in `waiters`, so writers do not wake it for sure: it
 * sleeps on the futex word (woken early if some registered waiter is
 * woken) for at most PK_RING_POLL_MAX_MS at a time, backing off from 1 ms.
 * Context: any thread; never writes to the region.
 * Return: 1 something to read, 0 timed out, -errno.
 */
int pk__ring_wait_readonly(const struct pk_ring *ring, uint64_t seq, int timeout_ms);

/*
 * pk__ring_wait_many() - pk__ring_wait() (@readonly: pk__ring_wait_readonly())
 * until record @seqs[i] of ring @rings[i] is readable for some i < @n.
 * The rings are the lanes of one store: they share one futex word, lane
 * 0's (struct pk_ring.wh), which any lane's commit bumps while a waiter is
 * registered there.  Same context and return as those.
 */
int pk__ring_wait_many(const struct pk_ring *rings, unsigned n, const uint64_t *seqs,
		       int timeout_ms, bool readonly);

/*
 * pk__ring_clear() - make new readers start after every record stored so
 * far (pkmsg -C).  Only ever raises clear_seq.
 * Context: any thread, concurrently with writers and readers; lock-free.
 * Return: the new clear_seq.
 */
uint64_t pk__ring_clear(struct pk_ring *ring);

/*
 * pk__ring_recover() - after every writer of the region died (a store file
 * reopened by a new process): finalize OPEN records, which nobody can
 * extend any more, and retire as LOST the records whose writer died before
 * committing (RESERVED, or seq taken but descriptor never claimed), so that
 * live readers skip them at once instead of waiting for them.  Every
 * other descriptor is made to read as older than the seq that will next
 * use it, whatever the file held (a hostile file, or a clear cut short),
 * so that no writer finds its descriptor "taken by a newer record".
 * Context: no writer may run on the region; readers may.
 * Return: the number of records retired (also added to `lost`).
 */
uint64_t pk__ring_recover(struct pk_ring *ring);

/*
 * pk__ring_restart() - start the region afresh at its seq_head, continuing
 * the numbering (PK_BUFFER_CLEAR on a store file): clear_seq and then
 * first_seq move to seq_head, every descriptor becomes FREE (reading as
 * older than the seq that will next use it) and the data ring is wiped.
 * Each step leaves a valid region; one cut short is repaired by
 * pk__ring_recover().  Counters are the caller's to reset.
 * Context: no writer may run on the region; readers may.
 * Return: the new first_seq.
 */
uint64_t pk__ring_restart(struct pk_ring *ring);

/* Wake readers sleeping in pk__ring_wait (after a store by any process). */
void pk__ring_wake(struct pk_ring *ring);

/*
 * Where the entry of @seq lies in a table of mask + 1 words indexed by seq
 * (the descriptors).  Consecutive seqs are taken by different threads, so
 * their entries must not share a cache line, nor lie in lines that the
 * CPU's prefetchers fetch together.  So from 2^12 entries on, the table is
 * cut into pages of 512 words (4 KiB), and the pages into groups of
 * PK_RING_SPREAD_PAGES (8 if the table has only 8 pages): the low bits
 * of seq pick the page in the group, the next nine bits the word in it
 * (with 8 pages, bit 3 picks the half of the page and bits 4-11 the word
 * in it), the bits above the group; the page's place in its group (times
 * 16 words) is added to the word, so that the entries of consecutive seqs
 * also fall in different cache sets.  Seq s shares its line with seqs at
 * least 16 away,
 * and a run of seqs touches at most PK_RING_SPREAD_PAGES pages of the
 * table at a time.  A bijection of seq mod (mask + 1): everything else
 * about an entry depends on the seq alone.  Smaller tables are indexed by
 * seq mod (mask + 1).  @shift: log2 of the pages in a group, or 0 for the
 * plain index (pk__ring_spread_shift).
 *
 * (desc[seq % N] let two threads on two cores pull lines back and forth
 * for every record: a store took 570-590 ns a thread against 47 ns alone.
 * Spreading seqs over every page of the table, as format 5 did, made each
 * store of a 128 MiB ring touch another page, one TLB miss a record:
 * 450 ns a store against 376 ns with format 4; the groups bound that.)
 */
#define PK_RING_SPREAD_PAGES	16u	/* 1 << the most pk__ring_spread_shift returns */

static inline unsigned pk__ring_spread_shift(uint64_t mask)
{
	unsigned pages;

	if (mask + 1 < (1u << 12))
		return 0;
	pages = (unsigned)__builtin_ctzll(mask + 1) - 9;	/* log2 of the table's pages */
	return pages < 4 ? pages : 4;				/* log2(PK_RING_SPREAD_PAGES) */
}

static inline uint64_t pk__ring_spread(uint64_t seq, uint64_t mask, unsigned shift)
{
	uint64_t lo, half, word, page;

	if (!shift)
		return seq & mask;
	lo = seq & ((1u << shift) - 1u);
	/*
	 * Groups of 8 pages (a 2^12-entry table): bit 3 of seq picks the
	 * page's half, so that s and s + 8 do not share a line either.
	 */
	half = (seq & 15u) >> shift;
	word = ((seq >> 4) & ((1u << (5 + shift)) - 1u)) | (half << (5 + shift));
	page = (((seq >> (shift + 9)) << shift) | lo) & (mask >> 9);
	return (page << 9) | ((word + (lo << 4)) & 511u);
}

/* The descriptor of @seq. */
static inline _Atomic uint64_t *pk__ring_desc(const struct pk_ring *ring, uint64_t seq)
{
	return &ring->desc[pk__ring_spread(seq, ring->desc_mask, ring->desc_shift)];
}

static inline uint64_t pk__ring_next_seq(const struct pk_ring *ring)
{
	return atomic_load_explicit(&ring->h->seq_head, memory_order_acquire);
}

#endif /* PK_RINGBUF_H */
