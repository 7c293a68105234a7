// SPDX-License-Identifier: MIT
/*
 * ringbuf.c - the lockless record store.
 *
 * OVERVIEW
 *
 * A region holds a header, a descriptor ring of N = 2^k 64-bit words and a
 * data ring of D = 2^m bytes, kept as 64-bit words.  A record is a block in
 * the data ring (a 40-byte header followed by its text, padded to 8 bytes)
 * plus the descriptor of seq, which says where the block is and what state
 * the record is in.  "desc[seq]" below is the descriptor at index
 * pk__ring_spread(seq) (ringbuf.h), a bijection of seq mod N that puts
 * consecutive seqs in different pages; nothing but speed depends on which
 * bijection it is.  The block header's five words:
 *
 *   0  seq (all 64 bits)
 *   1  ts_ns
 *   2  text length (bits 15..0), level (23..16), facility (31..24),
 *      flags (47..32)
 *   3  tid (bits 31..0), checksum (63..32)
 *   4  pid of the storing process (bits 31..0), header check (63..32)
 *
 * The checksum covers all five words and the text (three chains of one
 * mix, joined: sum_head() and sum_join(), format 10).  The header check
 * covers the header fields alone (seq, ts_ns, word 2, tid, pid) and is
 * never 0, so that a filtered read can trust a record's level and pid
 * without reading its text; in blocks written before it existed those
 * bits are 0 and such a block is validated whole.  (Older readers mix
 * word 4 whole into the checksum, which the writer does too: the format
 * version did not change.)
 *
 * A descriptor packs three things into one atomic word, so that a writer
 * claims and commits it with a single compare-and-swap and nobody can ever
 * see one field without the others:
 *
 *   bits 63..32   low 32 bits of the record's seq
 *   bits 31..3    low 32 bits of the block's logical position (8-aligned)
 *   bits  2..0    state: FREE, RESERVED, OPEN, FINAL
 *
 * Logical positions (lpos) grow for ever; the byte lives at lpos % D.  A
 * block reserved at lpos is intact until some reservation reaches lpos + D,
 * that is while lpos_head - lpos <= D.  Since D divides 2^32, the low 32
 * bits of lpos name the ring position exactly, and the full lpos is rebuilt
 * from lpos_head (valid records are always less than D <= 2^30 behind).
 *
 * Record states:
 *   FREE      never used: pk__ring_format() leaves each descriptor FREE
 *             with the seq one lap (N) before the first seq that will use
 *             it, which reads as older than that seq (see SEQ ARITHMETIC)
 *   RESERVED  a writer owns the record and is writing it
 *   OPEN      committed, but the text did not end a line: the owner may
 *             still extend it (pk_cont).  Invisible to live readers,
 *             except that a filtered read passes over one whose level or
 *             pid it rejects (FILTERED READING).
 *   FINAL     committed and readable
 *   LOST      retired by pk__ring_recover(): its writer died before
 *             committing it.  Readers skip it at once, as a lost record.
 *
 * WRITING (pk__ring_write)
 *
 *   A  {seq, ts} = the head {seq_head, head_ts}; CAS it to
 *      {seq + 1, max(head_ts, the caller's clock)}   gapless, lock-free
 *      (a fetch-add of seq_head without a 16-byte CAS: THE HEAD below)
 *   S  *seqp = seq, for a signal handler on this thread to see; note
 *      seq and level in the process's own table, if it keeps one
 *   B  lpos = fetch_add(lpos_head, size)    wait-free, or carved from
 *      the thread's data chunk (DATA CHUNKS below)
 *   C  CAS desc[seq]: older seq -> (seq, lpos, RESERVED)
 *   F  finalize desc[seq-1] if it is OPEN (it can no longer be extended);
 *      looked at only while open_count is not 0
 *   D  release fence; relaxed stores of the block words
 *   H  if OPEN: open_count++
 *   E  CAS desc: (seq, lpos, RESERVED) -> (seq, lpos, FINAL or OPEN)
 *
 * Seq and space are reserved separately, so block order in the data ring
 * need not follow seq order; nothing depends on it.  A writer never waits:
 * not for another writer, not for a reader, not for the writer it
 * interrupted on its own thread.  Overwriting the oldest records is
 * implicit: reservations simply run over them.
 *
 * A writer that stalls between A and E (preempted, or its thread stopped
 * for good) loses its record instead of blocking anyone: when seq + N
 * claims the descriptor at C it finds it RESERVED, counts the record as
 * lost and takes it; the stalled writer's commit CAS at E then fails.  Its
 * late stores may still land in data that now belongs to newer records,
 * which is why every block carries a checksum over its header and text:
 * a reader never returns a torn record, it skips and counts it.
 *
 * READING (pk__ring_read)
 *
 *   R1 d = load_acquire(desc[r]); must be (r, lpos, FINAL)
 *   R2 check lpos_head - lpos <= D (not yet overwritten)
 *   R3 relaxed loads of the block words into a private copy
 *   R4 acquire fence; reload desc and lpos_head
 *   R5 valid iff desc unchanged, lpos_head - lpos <= D, block seq == r and
 *      the checksum matches
 *
 * The region may come from an untrusted file (persist.c).  The read side
 * never trusts it: pk__ring_attach() reads each geometry field once and
 * builds the view from its validated copy, every ring index is masked,
 * a block's text length is checked before it is copied, and every loop is
 * bounded by the descriptor count.  A hostile region yields no records or
 * rejected ones, never an access outside the region.
 *
 * A record in progress (descriptor not yet claimed, RESERVED or OPEN) stops
 * a live reader: it returns "nothing now" (a filtered read passes over one
 * that its filter rejects: FILTERED READING, OWN FILTERED SKIP).  If the record stays in progress
 * for stall_limit_ns while later records exist, or falls more than N/2
 * behind seq_head, the reader gives up on it and moves on (counted as a
 * jump in seq).  A post-mortem reader (the writers are gone) skips RESERVED
 * records at once and reads OPEN ones, which hold committed text; a live
 * reader does the same for the one record named by its skip_seq.
 *
 * OWN RECORDS
 *
 * A process that shares a region with others (a store file, a fork
 * child) must not report their lost records as its own, and no process
 * should report lost records that its console would have filtered: the
 * pid and level of an overwritten record are gone with its block.  So a
 * view may keep a private table (pk_ring.own): writers through the view
 * note each seq they take there with its level (own:A), one word per seq
 * modulo the table's size W (2N, at least 2^12, at most 2^20: under one
 * lap only for data rings over 32 MiB).  A reader that loses seq s (filter
 * field `own`) counts it if the word names s at a level it would print,
 * and not if the word names an older seq (s was never noted: another
 * process's) unless the view is the region's sole writer (filter field
 * `sole`), where every seq is ours.  A word naming a newer seq of the
 * same class (the reader fell more than W behind) leaves s's owner and
 * level unknown: it is counted, so that no record of ours goes
 * uncounted, and reported apart (pk_ring_lost.unknown).  So the count is
 * exact while a reader stays within W seqs of what it counts.
 *
 * A writer stalled between A and own:A (two instructions, but a
 * preemption or, after a fork, the copy-on-write fault of the table's
 * page land there) leaves a seq taken and unnoted.  A reader of a shared
 * region that gives up on such a seq cannot yet tell whose it is: it
 * keeps it undecided (pk_ring_reader.undecided, up to PK_RING_UNDECIDED;
 * one more passes the oldest on as unknown) and decides it on a later
 * read, once the descriptor is claimed by it or a newer seq (own:C): the
 * note, if ours, is then visible.  (Counting every such seq as unknown
 * at once would count the other processes' records in progress that a
 * reader meets at the head of the store: 4 extra in 4 in test_flush's
 * shared store.)  Not covered: a reader lapped past a seq whose writer
 * is still in that window, which the writer then claims and commits
 * before the newer record of its descriptor claims it.
 *
 * FILTERED READING (pk__ring_read_filtered)
 *
 * R1-R2 as above; R3 loads the five header words only.  If the header
 * check is present and the filter rejects the record's level or pid, the
 * reader goes on to R4 and accepts the skip iff the descriptor is
 * unchanged, the block intact, the block seq is r and the header check
 * matches; otherwise (a torn header) the record counts as lost.  A record
 * the filter passes, or one without a header check, is read whole as in
 * R3-R5 and filtered afterwards.
 *
 * An OPEN record is filtered the same way, header only, and passed over if
 * the filter rejects it; otherwise (it passes, its header has no check, or
 * the check fails) it stays in progress as before, never counted lost
 * here.  A console that does not print its level so passes over an open
 * line at once instead of stopping at it until the line is finalised
 * (which made every caller after it take part in printing: flush.c,
 * stall_seq).  Sound because an OPEN record's header never changes in
 * place: pk__ring_extend() writes the longer text into a fresh block and
 * moves the descriptor to it with one CAS, copying level, pid and the
 * rest of the header, so the level and pid a reader validated (R4: the
 * descriptor still names the same block, the block intact, the header
 * check matches) are the record's for its whole life, whatever is
 * appended later.  The orderings are R1-R5's: read:A (acquire) pairs with
 * the OPEN commit (write:E), which follows the block's stores (write:D).
 *
 * SEQ ARITHMETIC
 *
 * Full 64-bit seqs are compared as numbers: from a valid header
 * (seq_head <= PK_RING_SEQ_LIMIT) they cannot wrap.  A descriptor holds
 * only the low 32 bits, compared as a signed 32-bit difference, which is
 * right as long as the two seqs are less than 2^31 apart.  The seqs that
 * meet at descriptor i are its current seq field and a seq r = i mod N
 * that a writer or reader holds (r >= first_seq, r < seq_head + N).  The
 * field is the newest seq = i (mod N) that claimed the descriptor, or if
 * none did yet, its first use - N (written by pk__ring_format and
 * pk__ring_restart, and by pk__ring_recover over whatever a file held).
 * Every seq = i (mod N) below seq_head was handed out and its writer
 * claims the descriptor unless a newer one did, so the field trails
 * seq_head by one lap plus one lap per writer stalled between A and C on
 * that descriptor, far less than 2^31, except for a writer stalled there
 * for about 2^31 records: the ABA case below.  (Descriptors used to
 * start zeroed: for a first seq whose low 32 bits lie in [2^31 + 1, 2^32)
 * a zero read as "newer" and every write failed.)
 *
 * MEMORY ORDERING (labels in the code: LMM(name))
 *
 *   write:A  seq_cst RMW (a full-barrier CAS, THE HEAD).  Pairs with
 *            write:F's seq_cst load and with
 *            write:G (see "finalization" below).  Its only other duty is to
 *            hand out distinct numbers, for which relaxed would do.
 *   write:S  volatile store of the seq to the caller's *seqp, then a
 *            seq_cst signal fence (a compiler barrier).  Pairs with a
 *            signal handler on the same thread (a crash handler reading
 *            the caller's in-flight seq): the store is emitted before the
 *            descriptor CAS write:C, so a handler that finds the record
 *            claimed also finds its seq.  No other thread reads it.
 *   write:B  relaxed RMW: only needs to hand out disjoint space.  Its
 *            ordering before the block stores is provided by write:D.  With
 *            a data chunk the RMW that took the chunk happened earlier on
 *            the same thread, so write:D orders it before this block's
 *            stores all the same.
 *   write:C  release CAS.  The block stores that follow are ordered after
 *            it by write:D; readers do not act on RESERVED descriptors.
 *            Release only for own:B: a reader that finds the record
 *            claimed, committed or overwritten also finds its note (own:A).
 *            (On x86-64 the same instruction as relaxed.)
 *   own:A    relaxed store of the process's own-table word for the seq,
 *            before write:C (see OWN RECORDS).
 *   own:B    a reader counting lost seqs: relaxed loads of their
 *            descriptors and an acquire fence (or read:A for one seq),
 *            then relaxed loads of the own table.  Every change of a
 *            descriptor is an RMW, so whatever value it loads lies in the
 *            release sequence of every claim and commit before it: the
 *            notes of all records that claimed it are visible.
 *   write:D  release fence, before the block stores.  Pairs with the
 *            acquire fence read:C: a reader whose relaxed block loads saw
 *            any store of this writer also sees write:B's new lpos_head and
 *            write:C's descriptor at read:D, and so rejects its copy.
 *            Without it a reader could accept a block that this writer is
 *            overwriting (a torn record).
 *   write:E  release CAS (seq_cst, for finalization).  Pairs with the
 *            acquire load read:A: a reader that sees FINAL sees the whole
 *            block.  Without it a reader could copy stale words.
 *   write:F  seq_cst load of open_count; if not 0, seq_cst load + CAS of
 *            the predecessor's descriptor.
 *   write:H  seq_cst RMW raising open_count, before the commit write:E
 *            of an OPEN record.
 *   write:G  seq_cst load of seq_head after committing OPEN.
 *            Finalization is a store-buffering (Dekker) pattern: writer
 *            s-1 does H (open_count++), E (commit OPEN), then G (load
 *            seq_head); writer s does A (seq_head++), then F (load
 *            open_count, and if not 0 load desc[s-1]).  All seq_cst, so
 *            they lie in one total order S, which each thread's program
 *            order respects.  If s's load of open_count reads 0, it
 *            precedes H in S (open_count only falls to 0 once every
 *            record counted has left OPEN, and H's raise is not undone
 *            before s-1's record leaves OPEN), so A < F < H < E < G in S
 *            and G reads seq_head > s: s-1 finalizes itself.  If it reads
 *            more than 0, s loads desc[s-1]: reading OPEN, it finalizes
 *            it; reading anything older, that load precedes E in S, so
 *            again A < E < G and s-1 finalizes itself.  Without this an
 *            OPEN record could stay invisible for ever although newer
 *            records exist.  (Raising the count after the commit instead
 *            breaks it: another record's early decrement can make s read
 *            0 after s-1's raise.)  test_ring's finalize_contended case
 *            checks that none is left OPEN.
 *   read:A   acquire load of the descriptor (pairs with write:E).  A
 *            filtered skip relies on it as a full read does: the header
 *            words it loads are those the committer stored.
 *   read:B   relaxed loads of lpos_head before copying: a hint only; the
 *            decisive check is read:D.
 *   read:C   acquire fence after the block loads (pairs with write:D).
 *   read:D   relaxed reloads of desc and lpos_head, ordered by read:C.
 *   wake:A   seq_cst loads of `waiters` and `wait_until` after the
 *            commit, pairing with the seq_cst RMWs of `waiters` and
 *            `wait_until` and the seq_cst loads of a reader about to sleep
 *            (wait:A): either the writer sees the waiter and its lease and
 *            bumps the futex word, or the reader sees the committed record
 *            and does not sleep.  Without it a reader (pkmsg -w) could
 *            sleep through a record.  The lease is read against the
 *            writer's clock, read after the commit, so after the reader's
 *            clock read that set it: a lease the writer finds expired
 *            belongs to a reader whose sleep has timed out (it looks again)
 *            or that is gone.
 *
 * In ThreadSanitizer builds the two fences are replaced by release stores
 * and acquire loads of the block words (atomics.h), which TSan follows.
 *
 * ABA on the descriptor: its seq field is 32 bits, so a writer stalled for
 * exactly 2^32 records between A and C could claim a descriptor it no
 * longer owns; the data check (lpos_head - lpos <= D) and the block's full
 * 64-bit seq still make every reader reject the record.
 */
#include "store/ringbuf.h"
#include "core/atomics.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LMM(label)	/* memory-order label, see the overview */

enum { DS_FREE = 0, DS_RESERVED = 1, DS_OPEN = 2, DS_FINAL = 3, DS_LOST = 4 };

static inline uint64_t desc_make(uint64_t seq, uint64_t lpos, unsigned state)
{
	return ((uint64_t)(uint32_t)seq << 32) | ((uint32_t)lpos & ~7u) | state;
}

static inline uint32_t desc_seq(uint64_t d) { return (uint32_t)(d >> 32); }
static inline uint32_t desc_off(uint64_t d) { return (uint32_t)d & ~7u; }
static inline unsigned desc_state(uint64_t d) { return (unsigned)(d & 7u); }

/* Rebuild a full lpos from its low 32 bits and a later lpos_head. */
static inline uint64_t lpos_expand(uint64_t head, uint32_t off)
{
	return head - (uint32_t)((uint32_t)head - off);
}

static inline uint32_t text_words(uint32_t len) { return (len + 7u) / 8u; }
static inline uint64_t blk_size(uint32_t len) { return PK_RING_BLK_HDR + 8ull * text_words(len); }
/* The largest record fits half the smallest ring: write:D stores no larger one. */
_Static_assert(PK_RING_BLK_HDR + (PK_RING_TEXT_MAX + 7u) / 8u * 8u <=
	       (1u << PK_RING_MIN_DATA_LOG2) / 2u, "a record of any size can be stored");

/* Block header words. */
static inline uint64_t hw2_make(uint32_t len, const struct pk_ring_meta *m)
{
	return (uint64_t)len | (uint64_t)m->level << 16 | (uint64_t)m->facility << 24 |
	       (uint64_t)m->flags << 32;
}

/*
 * Checksum over the header words and the text words: a 64-bit
 * multiply-xorshift mix, folded to 32 bits.  It only has to catch torn or
 * stale data, not adversaries.
 */
static inline uint64_t mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

static inline uint32_t fold(uint64_t h) { return (uint32_t)(h ^ (h >> 32)); }

/*
 * The block checksum runs three chains of mix(): one over the header
 * words (0, 1, 2, the tid, 4), one over the even text words, one over the
 * odd ones, joined at the end.  One chain over everything made each
 * record wait for 5 + n dependent multiplies (n its text words) before
 * its commit; three wait for max(5, n / 2) + 2 (format 10).
 */
#define SUM_HEAD	0x243f6a8885a308d3ull
#define SUM_EVEN	0x452821e638d01377ull
#define SUM_ODD		0xbe5466cf34e90c6cull

static inline uint64_t sum_head(uint64_t hw0, uint64_t hw1, uint64_t hw2, uint32_t tid,
				uint64_t hw4)
{
	return mix(mix(mix(mix(mix(SUM_HEAD, hw0), hw1), hw2), tid), hw4);
}

static inline uint32_t sum_join(uint64_t head, uint64_t even, uint64_t odd)
{
	return fold(mix(mix(head, even), odd));
}

/* The header check (word 4, bits 63..32): never 0, which means "none". */
static inline uint32_t hdr_check(uint64_t seq, uint64_t ts, uint64_t hw2, uint32_t tid,
				 uint32_t pid)
{
	uint32_t c = fold(mix(mix(mix(mix(mix(0x13198a2e03707344ull, seq), ts), hw2), tid), pid));

	return c ? c : 1;
}

/* Does @f let a record of @level stored by @pid through? */
static inline bool filter_pass(const struct pk_ring_filter *f, unsigned level, uint32_t pid)
{
	return (int)level < f->max_level && (!f->pid || pid == f->pid);
}

/* The own table's word for @seq taken at @level: seq's low 60 bits, valid, level. */
#define OWN_SEQ_MASK	((1ull << 60) - 1)
#define OWN_VALID	8ull

static inline uint64_t own_word(uint64_t seq, unsigned level)
{
	return ((seq & OWN_SEQ_MASK) << 4) | OWN_VALID | (level & 7u);
}

/* (a - b) for two seqs known by their low 60 bits, as a signed difference. */
static inline int64_t own_diff(uint64_t a, uint64_t b)
{
	return (int64_t)(((a - b) & OWN_SEQ_MASK) << 4) >> 4;
}

/*
 * The own table's word for @seq: one per seq modulo W, spread so that
 * consecutive seqs (taken by different threads) fall in different cache
 * lines: seq % 8 picks one of eight stripes of W / 8 words, seq / 8 the
 * word in it.  Seqs congruent modulo W share a word, as with seq % W.
 * (Writing seq % W directly cost two threads a third of their
 * throughput: 2.9M against 2.0M stores/s.)  Not the descriptors' page
 * layout (pk__ring_spread): there every note is a cache miss, which
 * measured no faster at two threads (111 ns a store either way) and
 * widens the window between taking a seq and noting it (own:A), in which
 * a record a reader gives up on goes uncounted in a shared store.
 */
static inline _Atomic uint64_t *own_at(const struct pk_ring *ring, uint64_t seq)
{
	unsigned stripe = (unsigned)__builtin_ctzll(ring->own_mask + 1) - 3;

	return &ring->own[((seq & 7u) << stripe) | ((seq >> 3) & (ring->own_mask >> 3))];
}

/*
 * Note @seq in the own table, unless a newer seq of its class is there
 * already: a writer preempted here for a whole table's span must not hide
 * the note of a record taken since (its own claim will most likely fail:
 * W >= N but in stores over 32 MiB).  Not atomic: a writer preempted
 * between the load and the store for a whole span still can; the drop
 * count then misses that newer record if it is lost.
 */
static inline void own_note(struct pk_ring *ring, uint64_t seq, unsigned level)
{
	_Atomic uint64_t *wp = own_at(ring, seq);
	uint64_t old = atomic_load_explicit(wp, memory_order_relaxed);

	if ((old & OWN_VALID) && own_diff(old >> 4, seq) > 0)
		return;
	atomic_store_explicit(wp, own_word(seq, level), memory_order_relaxed);
}

static inline _Atomic uint64_t *word_at(const struct pk_ring *ring, uint64_t lpos, uint64_t i)
{
	return &ring->data[((lpos >> 3) + i) & ring->word_mask];
}

size_t pk__ring_region_size(unsigned data_log2)
{
	size_t data = (size_t)1 << data_log2;
	size_t desc = (data >> PK_RING_DESC_SHIFT) * sizeof(uint64_t);

	return PK_RING_HDR_SIZE + desc + data;
}

unsigned pk__ring_data_log2_for(size_t bytes)
{
	unsigned l;

	for (l = PK_RING_MAX_DATA_LOG2; l >= PK_RING_MIN_DATA_LOG2; l--)
		if (pk__ring_region_size(l) <= bytes)
			return l;
	return 0;
}

/*
 * DATA CHUNKS.  A thread that stores often takes data space PK_RING_CHUNK
 * bytes at a time (write:B) and carves its blocks from that chunk, so that
 * lpos_head changes once per chunk, not once per record, and two threads'
 * blocks never share a cache line.  Space is handed out in disjoint pieces
 * all the same, and a block still lies below lpos_head from the moment it
 * is carved, so "intact while lpos_head - lpos <= D" holds as before; a
 * chunk's unused rest is never pointed to by any descriptor.
 *
 * Which threads: one that stored three records in a row with some, but at
 * most D / (16 * PK_RING_CHUNK), records of their size stored by others
 * between each and the one before (4 in a 256 KiB ring, 16 in a 1 MiB
 * one): a chunk it takes is used up before others store D / 8 past it,
 * and bursts stored with nobody between never take one.  Others
 * take their space straight from lpos_head, so a pool of threads taking
 * turns, or a thread per record, wastes nothing.  A chunk is given up
 * (its rest wasted, under PK_RING_CHUNK bytes) once lpos_head is D / 8
 * past the chunk's next free byte, so that no block goes into space that is
 * about to be overwritten while older records live on; also when its
 * thread exits.
 *
 * A chunk is per thread (TLS) and belongs to a view (pk_ring.id) and to a
 * process: the process token, a word in a MADV_WIPEONFORK page that reads
 * 0 in a fork child until its first carve sets it to a token larger than
 * any of its ancestors' (tokens_given), so
 * that a child never carves from the rest of its parent's chunk, whether
 * or not fork handlers ran (_Fork(), a handler registered before ours).
 * No token (the page or the advice refused): no chunks.  Signals: `busy`
 * is set around the carve; a handler that interrupts it on the same thread
 * takes its space straight from lpos_head.  A handler that leaves the
 * carve by siglongjmp() leaves `busy` set: that thread then takes its
 * space directly for good.  Rings under 256 KiB do not use chunks.
 */
#define PK_RING_CHUNK		4096u
#define PK_RING_CHUNK_MIN_LOG2	18u
#define PK_RING_CHUNK_STREAK	3u

#ifndef PK_RING_NOTE_HOOK
#define PK_RING_NOTE_HOOK()	/* test_ring holds a writer here */
#endif

#ifndef PK_RING_CARVE_HOOK
#define PK_RING_CARVE_HOOK()	/* test_ring raises a signal here */
#endif

struct chunk {
	uint64_t view;		/* pk_ring.id of the region it lies in; 0: none */
	uint64_t token;		/* the process token when it was taken */
	unsigned busy;		/* a carve is in progress on this thread */
	unsigned streak;	/* stores in a row that followed the one before closely */
	uint64_t next, end;	/* the rest of the chunk: [next, end) */
	uint64_t last;		/* lpos_head as this thread's previous store left it */
};

static __thread __attribute__((tls_model("initial-exec"))) struct chunk chunk;

/* The process token's page (MADV_WIPEONFORK), or NULL: no chunks. */
static _Atomic(_Atomic uint64_t *) token_page;

/*
 * Map the token page once per process (any context: mmap and madvise are
 * system calls; a loser of the race unmaps its page).
 */
static bool token_setup(void)
{
	_Atomic uint64_t *p, *none = NULL;

	if (atomic_load_explicit(&token_page, memory_order_acquire))
		return true;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return false;
	if (madvise((void *)p, 4096, MADV_WIPEONFORK) < 0) {
		munmap((void *)p, 4096);
		return false;
	}
	if (!atomic_compare_exchange_strong_explicit(&token_page, &none, p, memory_order_acq_rel,
						     memory_order_acquire))
		munmap((void *)p, 4096);
	return true;
}

/*
 * The tokens handed out in this process and its ancestors: fork copies it,
 * so along any line of forks tokens only grow, and a child's differs from
 * every token it may have inherited in a chunk.  (A pid would not do: a
 * child in a new pid namespace can have its parent's pid.)
 */
static _Atomic uint64_t tokens_given;

/* This process's token, set by its first carve. */
static uint64_t process_token(void)
{
	_Atomic uint64_t *t = (_Atomic uint64_t *)atomic_load_explicit(&token_page,
								       memory_order_acquire);
	uint64_t v = atomic_load_explicit(t, memory_order_relaxed), mine;

	if (v)
		return v;
	mine = atomic_fetch_add_explicit(&tokens_given, 1, memory_order_relaxed) + 1;
	/* Two threads of a new child: the first token set stays. */
	if (atomic_compare_exchange_strong_explicit(t, &v, mine, memory_order_relaxed,
						    memory_order_relaxed))
		return mine;
	return v;
}

static _Atomic uint64_t view_ids;

static void view_init(struct pk_ring *ring, void *mem, const struct pk_ring_hdr *g)
{
	ring->h = mem;
	ring->wh = mem;
	ring->desc = (_Atomic uint64_t *)((char *)mem + g->desc_off);
	ring->data = (_Atomic uint64_t *)((char *)mem + g->data_off);
	ring->desc_mask = (1ull << g->desc_log2) - 1;
	ring->desc_shift = pk__ring_spread_shift(ring->desc_mask);
	ring->data_size = 1ull << g->data_log2;
	ring->word_mask = ring->data_size / 8 - 1;
	ring->own = NULL;
	ring->own_mask = 0;
	ring->id = atomic_fetch_add_explicit(&view_ids, 1, memory_order_relaxed) + 1;
	ring->epoch = 0;
	ring->chunks = g->data_log2 >= PK_RING_CHUNK_MIN_LOG2 && token_setup();
}

/*
 * Make every descriptor FREE with the seq one lap before the first seq
 * >= @from that will use it: it reads as older than that seq.
 */
static void desc_reset(struct pk_ring *ring, uint64_t from)
{
	uint64_t n = ring->desc_mask + 1, use;

	for (use = from; use - from < n; use++) {
		/* Relaxed: no writer runs; readers never look below first_seq. */
		atomic_store_explicit(pk__ring_desc(ring, use), desc_make(use - n, 0, DS_FREE),
				      memory_order_relaxed);
	}
}

void pk__ring_format(void *mem, unsigned data_log2, uint64_t first_seq)
{
	struct pk_ring_hdr *h = mem;
	size_t size = pk__ring_region_size(data_log2);
	struct timespec mono, real;
	struct pk_ring ring;

	memset(mem, 0, size);
	h->magic = PK_RING_MAGIC;
	h->version = PK_RING_VERSION;
	h->hdr_size = PK_RING_HDR_SIZE;
	h->total_size = size;
	h->desc_log2 = data_log2 - PK_RING_DESC_SHIFT;
	h->data_log2 = data_log2;
	h->desc_off = PK_RING_HDR_SIZE;
	h->data_off = PK_RING_HDR_SIZE + ((size_t)8 << h->desc_log2);
	h->first_seq = first_seq;
	h->lanes = 1;
	h->lane = 0;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	h->realtime_zero_ns = ((int64_t)real.tv_sec - mono.tv_sec) * 1000000000ll +
			      ((int64_t)real.tv_nsec - mono.tv_nsec);
	h->creator_pid = (int32_t)getpid();
	atomic_init(&h->seq_head, first_seq);
	atomic_init(&h->lpos_head, 0);
	atomic_init(&h->clear_seq, first_seq);
	view_init(&ring, mem, h);
	desc_reset(&ring, first_seq);
}

int pk__ring_attach(struct pk_ring *ring, void *mem, size_t size)
{
	const volatile struct pk_ring_hdr *h = mem;
	struct pk_ring_hdr g;	/* the geometry, each field read once */
	uint64_t desc_bytes, data_bytes;

	if (!mem || size < PK_RING_HDR_SIZE)
		return -EINVAL;
	/*
	 * The region may be a file another process can change under us: read
	 * every field we validate exactly once (volatile), then build the view
	 * from this copy, so that what we checked is what we use.
	 */
	g.magic = h->magic;
	g.version = h->version;
	g.hdr_size = h->hdr_size;
	g.total_size = h->total_size;
	g.desc_off = h->desc_off;
	g.data_off = h->data_off;
	g.desc_log2 = h->desc_log2;
	g.data_log2 = h->data_log2;
	if (g.magic != PK_RING_MAGIC)
		return -EINVAL;
	if (g.version != PK_RING_VERSION)
		return -EPROTO;
	if (g.hdr_size != PK_RING_HDR_SIZE)
		return -EINVAL;
	if (g.data_log2 < PK_RING_MIN_DATA_LOG2 || g.data_log2 > PK_RING_MAX_DATA_LOG2 ||
	    g.desc_log2 != g.data_log2 - PK_RING_DESC_SHIFT)
		return -EINVAL;
	desc_bytes = 8ull << g.desc_log2;
	data_bytes = 1ull << g.data_log2;
	if (g.desc_off != PK_RING_HDR_SIZE || g.data_off != PK_RING_HDR_SIZE + desc_bytes)
		return -EINVAL;
	if (g.total_size != PK_RING_HDR_SIZE + desc_bytes + data_bytes || g.total_size > size)
		return -EINVAL;
	view_init(ring, mem, &g);
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Whether a waiters' lease ending at @until still runs at @now.  A lease
 * is never granted for longer than PK_RING_WAIT_LEASE_NS, so one that ends
 * much further ahead (twice: room for clock reads on different CPUs) is
 * left from an earlier boot of a persistent store, when CLOCK_MONOTONIC
 * ran further: no live waiter holds it.
 */
static bool lease_runs(uint64_t until, uint64_t now)
{
	return until >= now && until - now <= 2 * PK_RING_WAIT_LEASE_NS;
}

static void wake_readers(struct pk_ring *ring)
{
	struct pk_ring_hdr *h = ring->wh;

	/* LMM(wake:A) */
	if (!atomic_load_explicit(&h->waiters, memory_order_seq_cst))
		return;
	if (!lease_runs(atomic_load_explicit(&h->wait_until, memory_order_seq_cst), now_ns()))
		return;		/* the waiters counted are gone */
	atomic_fetch_add_explicit(&h->wake, 1, memory_order_release);
	syscall(SYS_futex, &h->wake, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void pk__ring_wake(struct pk_ring *ring)
{
	wake_readers(ring);
}

/*
 * open_count: at least the number of records committed OPEN and not yet
 * FINAL (or lost), so that a writer whose predecessor cannot be OPEN need
 * not look at its descriptor (write:F).  Raised before the commit that
 * makes a record OPEN (write:H), lowered once the record has left OPEN for
 * good.  It may stay too high (a writer killed in between, an OPEN record
 * overwritten by a lap), which costs only the look; pk__ring_recover()
 * and pk__ring_restart() set it right.
 */
static void open_done(struct pk_ring *ring)
{
	_Atomic uint64_t *oc = &ring->h->open_count;
	uint64_t v = atomic_load_explicit(oc, memory_order_relaxed);

	/*
	 * Never below 0, as a last guard (open_undo() is the first): a
	 * decrement whose raise a recovery wiped must not wrap the count.
	 * An RMW all the same, in open_count's modification order.
	 */
	while (v && !atomic_compare_exchange_weak_explicit(oc, &v, v - 1, memory_order_relaxed,
							   memory_order_relaxed))
		;
}

/*
 * A writer's own record leaves OPEN, or failed to become OPEN: lower the
 * count for it, unless a recovery or restart reset the count since the
 * writer read @epoch (before raising it, write:H, or before reopening the
 * record to extend it).  That happens only on the writer's own thread (a
 * signal handler that forks, and the child recovers its private store
 * before the handler returns), so a compiler barrier orders the reads.
 * Without it the writer would take the count of a record stored since
 * the reset, which its successor would then not finalize.
 */
static inline uint64_t open_epoch(const struct pk_ring *ring)
{
	atomic_signal_fence(memory_order_seq_cst);
	return *(const volatile uint64_t *)&ring->epoch;
}

static void open_undo(struct pk_ring *ring, uint64_t epoch)
{
	if (open_epoch(ring) == epoch)
		open_done(ring);
}

/* Finalize record @seq if it is OPEN.  LMM(write:F) */
static void finalize(struct pk_ring *ring, uint64_t seq)
{
	_Atomic uint64_t *dp = pk__ring_desc(ring, seq);
	uint64_t d = atomic_load_explicit(dp, memory_order_seq_cst);

	if (desc_seq(d) != (uint32_t)seq || desc_state(d) != DS_OPEN)
		return;
	/*
	 * Failure means the owner reopened it to extend (it then re-checks
	 * seq_head and finalizes it itself) or someone finalized it already.
	 */
	if (atomic_compare_exchange_strong_explicit(dp, &d, (d & ~7ull) | DS_FINAL,
						    memory_order_seq_cst, memory_order_relaxed)) {
		open_done(ring);
		wake_readers(ring);
	}
}

/*
 * The last @n (1..7) bytes of a text at @p as a word whose bytes in memory
 * are those bytes and then zeros: what memcpy(&w, p, n) into w = 0 makes,
 * without a call for a variable length.
 */
static inline uint64_t tail_word(const char *p, uint32_t n)
{
	uint64_t w = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	unsigned s = 0;

	if (n & 4) {
		uint32_t x;

		memcpy(&x, p, 4);
		w = x;
		p += 4;
		s = 32;
	}
	if (n & 2) {
		uint16_t x;

		memcpy(&x, p, 2);
		w |= (uint64_t)x << s;
		p += 2;
		s += 16;
	}
	if (n & 1)
		w |= (uint64_t)(unsigned char)*p << s;
#else
	memcpy(&w, p, n);
#endif
	return w;
}

/* Store the block words; the caller owns [lpos, lpos + size). */
static void put_block(struct pk_ring *ring, uint64_t lpos, uint64_t seq,
		      const struct pk_ring_meta *m, const char *text, uint32_t len)
{
	uint64_t hw2 = hw2_make(len, m);
	uint64_t hw4 = (uint64_t)m->pid |
		       (uint64_t)hdr_check(seq, m->ts_ns, hw2, m->tid, m->pid) << 32;
	uint64_t h = sum_head(seq, m->ts_ns, hw2, m->tid, hw4), he = SUM_EVEN, ho = SUM_ODD;
	uint64_t body = ((lpos >> 3) + 5) & ring->word_mask, w, w2;
	uint32_t i, full = len / 8, nw = text_words(len);

	if (body + nw <= ring->word_mask + 1) {
		/* The body does not wrap (nearly always): one pointer. */
		_Atomic uint64_t *dst = &ring->data[body];

		for (i = 0; i + 1 < full; i += 2) {
			memcpy(&w, text + i * 8, 8);
			memcpy(&w2, text + i * 8 + 8, 8);
			he = mix(he, w);
			ho = mix(ho, w2);
			atomic_store_explicit(&dst[i], w, PK_MO_FENCED_STORE);
			atomic_store_explicit(&dst[i + 1], w2, PK_MO_FENCED_STORE);
		}
		for (; i < nw; i++) {
			if (i < full)
				memcpy(&w, text + i * 8, 8);
			else
				w = tail_word(text + full * 8, len & 7);
			if (i & 1)
				ho = mix(ho, w);
			else
				he = mix(he, w);
			atomic_store_explicit(&dst[i], w, PK_MO_FENCED_STORE);
		}
	} else {
		for (i = 0; i < nw; i++) {
			w = i < full ? 0 : tail_word(text + full * 8, len & 7);
			if (i < full)
				memcpy(&w, text + i * 8, 8);
			if (i & 1)
				ho = mix(ho, w);
			else
				he = mix(he, w);
			atomic_store_explicit(word_at(ring, lpos, 5 + i), w, PK_MO_FENCED_STORE);
		}
	}
	atomic_store_explicit(word_at(ring, lpos, 0), seq, PK_MO_FENCED_STORE);
	atomic_store_explicit(word_at(ring, lpos, 1), m->ts_ns, PK_MO_FENCED_STORE);
	atomic_store_explicit(word_at(ring, lpos, 2), hw2, PK_MO_FENCED_STORE);
	atomic_store_explicit(word_at(ring, lpos, 3),
			      (uint64_t)m->tid | (uint64_t)sum_join(h, he, ho) << 32,
			      PK_MO_FENCED_STORE);
	atomic_store_explicit(word_at(ring, lpos, 4), hw4, PK_MO_FENCED_STORE);
}

/* Commit @claimed as OPEN or FINAL.  0, or -ENOBUFS if overrun meanwhile. */
static int commit(struct pk_ring *ring, uint64_t seq, uint64_t claimed, bool open)
{
	_Atomic uint64_t *dp = pk__ring_desc(ring, seq);
	uint64_t want = (claimed & ~7ull) | (open ? DS_OPEN : DS_FINAL);

	/* LMM(write:E) */
	if (!atomic_compare_exchange_strong_explicit(dp, &claimed, want, memory_order_seq_cst,
						     memory_order_relaxed))
		return -ENOBUFS;	/* counted as lost by whoever took the descriptor */
	/* LMM(write:G) */
	if (open && atomic_load_explicit(&ring->h->seq_head, memory_order_seq_cst) != seq + 1)
		finalize(ring, seq);
	wake_readers(ring);
	return 0;
}

static uint64_t take_space(struct pk_ring *ring, uint64_t size)
{
	volatile struct chunk *c = &chunk;
	_Atomic uint64_t *head = &ring->h->lpos_head;
	uint64_t lpos, h, token;
	bool mine;

	/* LMM(write:B): relaxed, as without chunks. */
	if (!ring->chunks || c->busy || size > PK_RING_CHUNK / 4)
		return atomic_fetch_add_explicit(head, size, memory_order_relaxed);
	c->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	PK_RING_CARVE_HOOK();
	token = process_token();
	h = atomic_load_explicit(head, memory_order_relaxed);
	mine = c->view == ring->id && c->token == token;
	if (mine && c->end - c->next >= size && h - c->next <= ring->data_size / 8) {
		lpos = c->next;
		c->next = lpos + size;
	} else {
		/*
		 * Hot: others stored something, and at most D / (16 * CHUNK)
		 * records of this size, since this thread's last (4 in a
		 * 256 KiB ring, 16 in 1 MiB), so a chunk is used up long
		 * before others store D / 8 past it.  A thread that stores in
		 * bursts with nobody between does not contend for lpos_head.
		 */
		c->streak = mine && h != c->last &&
					    h - c->last <= ring->data_size / (16 * PK_RING_CHUNK) * size
				    ? c->streak + 1 : 0;
		if (c->streak >= PK_RING_CHUNK_STREAK) {
			lpos = atomic_fetch_add_explicit(head, PK_RING_CHUNK, memory_order_relaxed);
			c->end = lpos + PK_RING_CHUNK;
			c->next = lpos + size;
		} else {
			lpos = atomic_fetch_add_explicit(head, size, memory_order_relaxed);
			c->next = c->end = 0;	/* no chunk */
		}
		c->view = ring->id;
		c->token = token;
		h = lpos + size;
	}
	c->last = h;
	atomic_signal_fence(memory_order_seq_cst);
	c->busy = 0;
	return lpos;
}

/*
 * THE HEAD (write:A)
 *
 * With PK_RING_HEAD_CAS16, seq_head and head_ts are one 16-byte word and
 * write:A is a compare-and-swap of it: {s, t} -> {s + 1, max(t, *ts)}.
 * The record gets seq s and timestamp max(t, *ts), written back to *ts.
 * Hence, along the word's modification order, seqs grow by one and
 * timestamps never fall: a region's records are ordered the same by seq
 * and by timestamp, and the timestamp of a record is at most the clock
 * when its CAS succeeded (t came from an earlier clock read, of a writer
 * or of pk__ring_seal's caller).  The two halves are read first with
 * relaxed loads, which may tear; a torn pair only makes the CAS fail, and
 * the failed CAS returns the word whole.  The CAS is a full barrier (the
 * __sync builtins are), so write:A stays the seq_cst RMW that write:F and
 * write:G pair with.
 *
 * Mixed-size access: seq_head alone is read with 64-bit atomic loads all
 * over the store, and head_ts by pk__ring_floor.  The targets that define
 * the macro (x86-64, AArch64) make an aligned 8-byte load single-copy
 * atomic against the 16-byte CAS, which writes both halves in one step.
 */
#ifdef PK_RING_HEAD_CAS16
typedef unsigned __int128 pk_u128;

/*
 * The 16-byte compare-and-swap: the value @w held, @old if it swapped.  On
 * x86-64 the instruction itself: ThreadSanitizer turns the __sync builtin
 * into a call that takes a lock of its own (a process-local spin lock with
 * plain loads and stores), which is neither atomic against another process
 * sharing a store file nor lock-free.  A full barrier either way.
 */
static inline pk_u128 cas16(pk_u128 *w, pk_u128 old, pk_u128 now)
{
#if defined(__x86_64__)
	uint64_t lo = (uint64_t)old, hi = (uint64_t)(old >> 64);

	__asm__ __volatile__("lock cmpxchg16b %0"
			     : "+m"(*w), "+a"(lo), "+d"(hi)
			     : "b"((uint64_t)now), "c"((uint64_t)(now >> 64))
			     : "memory", "cc");
	return (pk_u128)hi << 64 | lo;
#else
	return __sync_val_compare_and_swap(w, old, now);
#endif
}
#endif

static inline uint64_t head_take(struct pk_ring_hdr *h, uint64_t *ts)
{
#ifdef PK_RING_HEAD_CAS16
	pk_u128 *w = (pk_u128 *)(void *)&h->seq_head;
	uint64_t s = atomic_load_explicit(&h->seq_head, memory_order_relaxed);
	uint64_t t = atomic_load_explicit(&h->head_ts, memory_order_relaxed);
	pk_u128 old = (pk_u128)t << 64 | s, now, got;

	for (;;) {
		s = (uint64_t)old;
		t = (uint64_t)(old >> 64);
		if (t < *ts)
			t = *ts;
		now = (pk_u128)t << 64 | (s + 1);
		got = cas16(w, old, now);
		if (got == old)
			break;
		old = got;
	}
	*ts = t;
	return s;
#else
	return atomic_fetch_add_explicit(&h->seq_head, 1, memory_order_seq_cst);
#endif
}

uint64_t pk__ring_floor(const struct pk_ring *ring, uint64_t *seq)
{
	/*
	 * head_ts first (acquire), then seq_head: see ringbuf.h.  Both loads
	 * read the one word that every head CAS writes whole, in its
	 * modification order.
	 */
	uint64_t t = atomic_load_explicit(&ring->h->head_ts, memory_order_acquire);

	*seq = atomic_load_explicit(&ring->h->seq_head, memory_order_seq_cst);
#ifdef PK_RING_HEAD_CAS16
	return t;
#else
	return 0;	/* writers ignore head_ts: no bound */
#endif
}

bool pk__ring_seal(struct pk_ring *ring, uint64_t seq, uint64_t ts)
{
#ifdef PK_RING_HEAD_CAS16
	pk_u128 *w = (pk_u128 *)(void *)&ring->h->seq_head;
	uint64_t t = atomic_load_explicit(&ring->h->head_ts, memory_order_relaxed);
	pk_u128 old = (pk_u128)t << 64 | seq, got;

	for (;;) {
		if ((uint64_t)old != seq)
			return false;		/* a writer reserved seq */
		if ((uint64_t)(old >> 64) >= ts)
			return true;
		got = cas16(w, old, (pk_u128)ts << 64 | seq);
		if (got == old)
			return true;
		old = got;
	}
#else
	(void)ring;
	(void)seq;
	(void)ts;
	return false;
#endif
}

int pk__ring_write(struct pk_ring *ring, const struct pk_ring_meta *meta,
		   const char *text, uint32_t len, bool open, uint64_t *seqp)
{
	struct pk_ring_hdr *h = ring->h;
	struct pk_ring_meta m = *meta;
	uint64_t size = blk_size(len);
	uint64_t seq, lpos, old, claimed, epoch;
	_Atomic uint64_t *dp;

	/* LMM(write:A) */
	seq = head_take(h, &m.ts_ns);
	if (seqp) {
		/*
		 * LMM(write:S): before the claim (write:C), as a signal handler
		 * interrupting this thread sees it.
		 */
		*(volatile uint64_t *)seqp = seq;
		atomic_signal_fence(memory_order_seq_cst);
	}
	PK_RING_NOTE_HOOK();
	/* LMM(own:A) */
	if (ring->own)
		own_note(ring, seq, m.level);
	/* LMM(write:B) */
	lpos = take_space(ring, size);

	dp = pk__ring_desc(ring, seq);
	claimed = desc_make(seq, lpos, DS_RESERVED);
	old = atomic_load_explicit(dp, memory_order_relaxed);
	do {
		if ((int32_t)(desc_seq(old) - (uint32_t)seq) > 0) {
			/* A newer record already owns the descriptor. */
			atomic_fetch_add_explicit(&h->reserve_failed, 1, memory_order_relaxed);
			return -ENOBUFS;
		}
		/* LMM(write:C) */
	} while (!atomic_compare_exchange_weak_explicit(dp, &old, claimed, memory_order_release,
							memory_order_relaxed));
	if (desc_state(old) == DS_RESERVED && desc_seq(old) != (uint32_t)seq)
		atomic_fetch_add_explicit(&h->lost, 1, memory_order_relaxed);

	/*
	 * LMM(write:F): the predecessor may be OPEN only if open_count says
	 * some record is (see "finalization" in the overview).
	 */
	if (seq != h->first_seq && atomic_load_explicit(&h->open_count, memory_order_seq_cst))
		finalize(ring, seq - 1);

	/* LMM(write:D) */
	pk__fence_release();
	/*
	 * A writer preempted for a whole lap of the data ring since write:B
	 * would store into space that newer, committed records hold, and
	 * destroy them (their checksum then fails).  Its own record is lost
	 * anyway (readers find its block overwritten): leave the space alone.
	 * A hint (relaxed): a lap during put_block() itself still does harm.
	 */
	if (atomic_load_explicit(&h->lpos_head, memory_order_relaxed) - lpos <= ring->data_size - size)
		put_block(ring, lpos, seq, &m, text, len);
	if (!open)
		return commit(ring, seq, claimed, false);
	epoch = open_epoch(ring);
	/* LMM(write:H) */
	atomic_fetch_add_explicit(&h->open_count, 1, memory_order_seq_cst);
	if (commit(ring, seq, claimed, true) < 0) {
		open_undo(ring, epoch);
		return -ENOBUFS;
	}
	return 0;
}

static bool copy_record(const struct pk_ring *ring, uint64_t r, uint64_t d, struct pk_ring_rec *out);

/* Load the five header words of the block at @lpos (read:B's fenced loads). */
static inline void hdr_load(const struct pk_ring *ring, uint64_t lpos, uint64_t hw[5])
{
	unsigned i;

	for (i = 0; i < 5; i++)
		hw[i] = atomic_load_explicit(word_at(ring, lpos, i), PK_MO_FENCED_LOAD);
}

/*
 * Extending copies: the whole new text goes into a fresh block, and one
 * CAS moves the descriptor from the old block to it.  Until that CAS the
 * old block stays exactly as committed, so a writer killed in the middle
 * (SIGKILL on a file store) leaves the committed text readable: the
 * post-mortem reader and pk__ring_recover() validate the block a RESERVED
 * descriptor points to and keep it if its checksum holds.
 */
int pk__ring_extend(struct pk_ring *ring, uint64_t seq, const char *text, uint32_t len, bool open,
		    uint32_t max)
{
	return pk__ring_extend_x(ring, seq, text, len, open, max, NULL);
}

int pk__ring_extend_x(struct pk_ring *ring, uint64_t seq, const char *text, uint32_t len,
		      bool open, uint32_t max, int (*xform)(struct pk_ring_rec *rec))
{
	struct pk_ring_hdr *h = ring->h;
	_Atomic uint64_t *dp = pk__ring_desc(ring, seq);
	uint64_t d = atomic_load_explicit(dp, memory_order_acquire);
	uint64_t claimed, moved, lpos, epoch = open_epoch(ring);
	struct pk_ring_rec old;
	uint32_t newlen;
	int ret = -EAGAIN;

	if (desc_seq(d) != (uint32_t)seq || desc_state(d) != DS_OPEN)
		return -EAGAIN;
	claimed = (d & ~7ull) | DS_RESERVED;
	/* Reopen.  Acquire: we re-read our own block, published by write:E. */
	if (!atomic_compare_exchange_strong_explicit(dp, &d, claimed, memory_order_seq_cst,
						     memory_order_relaxed))
		return -EAGAIN;

	if (atomic_load_explicit(&h->seq_head, memory_order_seq_cst) != seq + 1)
		goto out;	/* no longer the newest */
	if (!copy_record(ring, seq, claimed, &old))
		goto out;	/* overwritten meanwhile */
	if (xform) {
		ret = xform(&old);
		if (ret < 0)
			goto out;
		ret = -EAGAIN;
	}
	newlen = old.len + len;
	if (newlen > PK_RING_TEXT_MAX || newlen > max) {
		ret = -E2BIG;
		goto out;
	}
	memcpy(old.text + old.len, text, len);
	/* LMM(write:B), then LMM(write:D): fresh space, as in a write. */
	lpos = atomic_fetch_add_explicit(&h->lpos_head, blk_size(newlen), memory_order_relaxed);
	pk__fence_release();
	put_block(ring, lpos, seq, &old.meta, old.text, newlen);
	/* LMM(write:E): publish the new block in place of the old one. */
	moved = desc_make(seq, lpos, open ? DS_OPEN : DS_FINAL);
	if (!atomic_compare_exchange_strong_explicit(dp, &claimed, moved, memory_order_seq_cst,
						     memory_order_relaxed)) {
		open_undo(ring, epoch);
		return -ENOBUFS;	/* overrun meanwhile: counted by whoever took it */
	}
	if (!open)
		open_undo(ring, epoch);
	/* LMM(write:G) */
	if (open && atomic_load_explicit(&h->seq_head, memory_order_seq_cst) != seq + 1)
		finalize(ring, seq);
	wake_readers(ring);
	return 0;
out:
	/* The record leaves OPEN here, committed or overrun. */
	open_undo(ring, epoch);
	if (commit(ring, seq, claimed, false) < 0)
		return -ENOBUFS;
	return ret;
}

uint64_t pk__ring_footprint(uint32_t len)
{
	return blk_size(len);
}

static bool block_intact(const struct pk_ring *ring, uint32_t off, uint64_t *lposp);

void pk__ring_finalize(struct pk_ring *ring, uint64_t seq)
{
	finalize(ring, seq);
}

bool pk__ring_open_ts(const struct pk_ring *ring, uint64_t seq, uint64_t *ts)
{
	_Atomic uint64_t *dp = pk__ring_desc(ring, seq);
	uint64_t d, d2, lpos, hw[5];

	/* LMM(read:A) */
	d = atomic_load_explicit(dp, memory_order_acquire);
	if (desc_seq(d) != (uint32_t)seq || desc_state(d) != DS_OPEN)
		return false;
	/* LMM(read:B) */
	if (!block_intact(ring, desc_off(d), &lpos))
		return false;
	hdr_load(ring, lpos, hw);
	/* LMM(read:C) */
	pk__fence_acquire();
	/* LMM(read:D) */
	d2 = atomic_load_explicit(dp, memory_order_relaxed);
	if ((d2 & ~7ull) != (d & ~7ull) || !block_intact(ring, desc_off(d), &lpos))
		return false;
	if (hw[0] != seq || !(hw[4] >> 32) ||
	    (uint32_t)(hw[4] >> 32) !=
		    hdr_check(hw[0], hw[1], hw[2], (uint32_t)hw[3], (uint32_t)hw[4]))
		return false;
	*ts = hw[1];
	return true;
}

void pk__ring_finalize_last(struct pk_ring *ring)
{
	uint64_t head = atomic_load_explicit(&ring->h->seq_head, memory_order_seq_cst);

	if (head != ring->h->first_seq)
		finalize(ring, head - 1);
}

void pk__ring_reader_init(struct pk_ring_reader *rd, const struct pk_ring *ring, bool postmortem)
{
	memset(rd, 0, sizeof(*rd));
	rd->ring = ring;
	rd->postmortem = postmortem;
	rd->stall_limit_ns = 1000000000ull;
	rd->stall_seq = UINT64_MAX;
	rd->skip_seq = UINT64_MAX;
	rd->next = pk__ring_oldest(ring, true);
}

/* Is the data of a record at low-32 position @off still intact? */
static bool block_intact(const struct pk_ring *ring, uint32_t off, uint64_t *lposp)
{
	uint64_t lh = atomic_load_explicit(&ring->h->lpos_head, memory_order_relaxed);
	uint64_t lpos = lpos_expand(lh, off);

	*lposp = lpos;
	return lh - lpos <= ring->data_size;
}

uint64_t pk__ring_oldest(const struct pk_ring *ring, bool after_clear)
{
	const struct pk_ring_hdr *h = ring->h;
	uint64_t head = atomic_load_explicit(&h->seq_head, memory_order_acquire);
	uint64_t lo = after_clear ? atomic_load_explicit(&h->clear_seq, memory_order_relaxed) : 0;
	uint64_t n = ring->desc_mask + 1, r, d, lpos;

	if (lo < h->first_seq)
		lo = h->first_seq;
	if (lo > head)
		lo = head;	/* a corrupt header: nothing is older than the head */
	if (head - lo > n)
		lo = head - n;
	for (r = lo; r < head; r++) {
		d = atomic_load_explicit(pk__ring_desc(ring, r), memory_order_acquire);
		if ((int32_t)(desc_seq(d) - (uint32_t)r) > 0)
			continue;			/* taken by a newer record */
		if (desc_seq(d) != (uint32_t)r || desc_state(d) == DS_FREE)
			break;				/* not yet claimed: in progress */
		if (desc_state(d) == DS_LOST)
			continue;			/* retired: its writer died */
		if (desc_state(d) == DS_RESERVED || block_intact(ring, desc_off(d), &lpos))
			break;
	}
	return r;
}

/* What read_block() made of a record. */
enum { BLK_LOST = -1, BLK_FILTERED = 0, BLK_READ = 1, BLK_PASSES = 2 };

/*
 * Validate record @r described by @d and copy it into @out, unless @f
 * (may be NULL) rejects it: then, if the block carries a header check,
 * only its header words are read and validated.  @probe: read no text;
 * a record @f does not reject (or one without a header check) gives
 * BLK_PASSES at once.
 * Return: BLK_READ (@out holds it), BLK_FILTERED (rejected by @f, intact),
 * BLK_LOST (overwritten or torn), BLK_PASSES (@probe).
 */
static int read_block(const struct pk_ring *ring, uint64_t r, uint64_t d, struct pk_ring_rec *out,
		      const struct pk_ring_filter *f, bool probe)
{
	_Atomic uint64_t *dp = pk__ring_desc(ring, r);
	uint64_t lpos, hw[5], h = 0, w, d2;
	uint32_t len, i, nw;
	bool skip;

	/* LMM(read:B) */
	if (!block_intact(ring, desc_off(d), &lpos))
		return BLK_LOST;
	hdr_load(ring, lpos, hw);
	len = (uint32_t)(hw[2] & 0xffff);
	if (hw[0] != r || len > PK_RING_TEXT_MAX)
		return BLK_LOST;
	/* Without a header check the text must be read to validate anything. */
	skip = f && (hw[4] >> 32) && !filter_pass(f, (unsigned)(hw[2] >> 16) & 7, (uint32_t)hw[4]);
	if (!skip && probe)
		return BLK_PASSES;
	if (!skip) {
		uint64_t he = SUM_EVEN, ho = SUM_ODD;

		h = sum_head(hw[0], hw[1], hw[2], (uint32_t)hw[3], hw[4]);
		nw = text_words(len);
		for (i = 0; i < nw; i++) {
			w = atomic_load_explicit(word_at(ring, lpos, 5 + i), PK_MO_FENCED_LOAD);
			if (i & 1)
				ho = mix(ho, w);
			else
				he = mix(he, w);
			memcpy(out->text + i * 8, &w, 8);
		}
		h = sum_join(h, he, ho);
	}
	/* LMM(read:C) */
	pk__fence_acquire();
	/* LMM(read:D) */
	d2 = atomic_load_explicit(dp, memory_order_relaxed);
	if ((d2 & ~7ull) != (d & ~7ull) || !block_intact(ring, desc_off(d), &lpos))
		return BLK_LOST;
	if (skip) {
		if (hdr_check(hw[0], hw[1], hw[2], (uint32_t)hw[3], (uint32_t)hw[4]) !=
		    (uint32_t)(hw[4] >> 32))
			return BLK_LOST;	/* a torn header: not to be trusted */
		return BLK_FILTERED;
	}
	if ((uint32_t)h != (uint32_t)(hw[3] >> 32))
		return BLK_LOST;
	out->text[len] = '\0';
	out->len = len;
	out->seq = r;
	out->lane = 0;	/* a merging reader names it (lanes.c) */
	out->meta.ts_ns = hw[1];
	out->meta.tid = (uint32_t)hw[3];
	out->meta.pid = (uint32_t)hw[4];
	out->meta.level = (uint8_t)((hw[2] >> 16) & 7);
	out->meta.facility = (uint8_t)(hw[2] >> 24);
	out->meta.flags = (uint16_t)(hw[2] >> 32);
	if (f && !filter_pass(f, out->meta.level, out->meta.pid))
		return BLK_FILTERED;	/* a block without a header check */
	return BLK_READ;
}

/* Copy and validate record @r described by @d.  true if @out holds it. */
static bool copy_record(const struct pk_ring *ring, uint64_t r, uint64_t d, struct pk_ring_rec *out)
{
	return read_block(ring, r, d, out, NULL, false) == BLK_READ;
}

/*
 * A record in progress at @r (FREE, RESERVED or OPEN): may the reader
 * stop and wait for it?  Not if it was told the record cannot finish, nor
 * once it stalled stall_limit_ns on it with later records stored.
 */
static bool stall(struct pk_ring_reader *rd, uint64_t r, uint64_t head)
{
	const struct pk_ring *ring = rd->ring;
	uint64_t t, d, lpos;

	if (rd->postmortem || r == rd->skip_seq || head - r > (ring->desc_mask + 1) / 2)
		return false;
	/*
	 * Waiting must not cost the records after it: once the next one's
	 * block is half the data ring behind the head (a flood, with the
	 * writer of @r preempted), it is overwritten soon, and with it
	 * whatever printable record follows; give up on @r now.  Relaxed: a
	 * stale answer only waits one more look, or gives up on a record
	 * that was overrun anyway.
	 */
	if (r + 1 < head) {
		d = atomic_load_explicit(pk__ring_desc(ring, r + 1), memory_order_relaxed);
		if (desc_seq(d) == (uint32_t)(r + 1) && desc_state(d) != DS_FREE &&
		    (!block_intact(ring, desc_off(d), &lpos) ||
		     atomic_load_explicit(&ring->h->lpos_head, memory_order_relaxed) - lpos >
			     ring->data_size / 2))
			return false;
	}
	t = now_ns();
	if (rd->stall_seq != r) {
		rd->stall_seq = r;
		rd->stall_since_ns = t;
	}
	/*
	 * With nothing after it in this region a record in progress is waited
	 * for as long as it takes, unless a merging reader says that records
	 * of other lanes wait behind it (lanes.c).
	 */
	return t - rd->stall_since_ns < rd->stall_limit_ns || (head <= r + 1 && !rd->later_elsewhere);
}

uint64_t pk__ring_own_words(const struct pk_ring *ring)
{
	uint64_t n = 2 * (ring->desc_mask + 1);

	return n < (1ull << 12) ? 1ull << 12 : n > (1ull << 20) ? 1ull << 20 : n;
}

/*
 * Count, by the own table, the seqs [from, to) that a reader lost.  The
 * seqs s, s + W, s + 2W ... (W table words) share a word, which names the
 * newest of them noted, if any: the k-th of the class in the range
 * (k = its distance from s / W).  That one is ours at a known level.  The
 * ones before it are of unknown owner and level (a newer record of ours
 * took the word): counted, so that none of ours goes uncounted, and
 * reported as unknown.  The ones after it were never noted: another
 * process's, or (sole writer) ours all the same.  A word that is not
 * valid or names a seq before s: none of the class was noted.
 */
static void own_count(const struct pk_ring *ring, const struct pk_ring_filter *f,
		      uint64_t from, uint64_t to, struct pk_ring_lost *out)
{
	uint64_t w = ring->own_mask + 1, n = to - from < w ? to - from : w;
	unsigned shift = (unsigned)__builtin_ctzll(w);	/* w is a power of two */
	uint64_t s, e, occ, k, unnoted;
	int64_t d;

	for (s = from; s < from + n; s++) {
		occ = ((to - 1 - s) >> shift) + 1;	/* s, s + w, ... below to */
		e = atomic_load_explicit(own_at(ring, s), memory_order_relaxed);
		d = (e & OWN_VALID) ? own_diff(e >> 4, s) : -1;
		k = d < 0 ? 0 : (uint64_t)d >> shift;	/* d is a multiple of w */
		if (d < 0) {
			unnoted = occ;
		} else if (k >= occ) {
			out->unknown += occ;
			unnoted = 0;
		} else {
			out->unknown += k;
			if ((int)(e & 7u) < f->max_level)
				out->counted++;
			else
				out->filtered++;
			unnoted = occ - k - 1;
		}
		out->counted += d < 0 ? 0 : (k < occ ? k : occ);
		if (f->sole) {
			out->counted += unnoted;
			out->unknown += unnoted;
		}
	}
}

void pk__ring_lost_counted(const struct pk_ring *ring, const struct pk_ring_filter *f,
			   uint64_t from, uint64_t to, struct pk_ring_lost *out)
{
	uint64_t i, n;

	if (to <= from)
		return;
	if (!f || !f->own || !ring->own) {
		out->counted += to - from;
		return;
	}
	/*
	 * LMM(own:B): relaxed loads of the descriptors of the lost seqs,
	 * then an acquire fence.  Every change of a descriptor is an RMW, so
	 * the value loaded is in the release sequence of each earlier claim
	 * (write:C, release) and commit (write:E) of that descriptor: the
	 * fence makes the note (own:A) of every record that ever claimed it
	 * visible.  A record accepted by its writer was claimed, so its note
	 * is seen.  A caller that found the seq's descriptor with an acquire
	 * load (read:A) has this already; the table of a lapped reader needs
	 * it.  A sole writer needs no ordering: a note it misses leaves the
	 * seq unnoted, which it counts (as unknown) anyway.
	 */
	if (!f->sole) {
		n = to - from < ring->desc_mask + 1 ? to - from : ring->desc_mask + 1;
		for (i = 0; i < n; i++)
			(void)atomic_load_explicit(pk__ring_desc(ring, from + i),
						   memory_order_relaxed);
		pk__fence_acquire();
	}
	own_count(ring, f, from, to, out);
}

/*
 * A word names the newest seq of its class noted through this view, and
 * that may be any seq of [@from, @to), however far apart they lie: a
 * fork child's copy of the table stopped noting at the fork, while @to
 * is read in the child's handler, after the parent's threads took more
 * seqs (more than W of them while the child waited for a CPU: the copy
 * then still names seqs below @to - W, and looking only at the last W
 * seqs' own words left those notes, so that the child reported the
 * parent's lost records as its own).  So every word that can name one,
 * all W at most, is looked at, and cleared if it names a seq in the
 * range.  Relaxed: the table is
 * private to the view and only its own thread runs (a fork child's
 * handler).
 */
void pk__ring_own_forget(struct pk_ring *ring, uint64_t from, uint64_t to)
{
	uint64_t i, n, e, w = ring->own_mask + 1;
	_Atomic uint64_t *wp;
	int64_t d;

	if (!ring->own || to <= from)
		return;
	n = to - from < w ? to - from : w;	/* from .. from + n - 1: each word once */
	for (i = 0; i < n; i++) {
		wp = own_at(ring, from + i);
		e = atomic_load_explicit(wp, memory_order_relaxed);
		if (!(e & OWN_VALID))
			continue;
		d = own_diff(e >> 4, from);
		if (d >= 0 && (uint64_t)d < to - from)
			atomic_store_explicit(wp, 0, memory_order_relaxed);
	}
}

/* One lost seq @r, found through its descriptor's acquire load (read:A). */
static inline void lost_one(const struct pk_ring *ring, const struct pk_ring_filter *f,
			    uint64_t r, struct pk_ring_lost *lost)
{
	if (!lost)
		return;
	if (f && f->own && ring->own)
		own_count(ring, f, r, r + 1, lost);
	else
		lost->counted++;
}

/* Has @seq, or a newer seq of its descriptor, claimed it (in @d)? */
static inline bool desc_claimed(uint64_t d, uint64_t seq)
{
	return (int32_t)(desc_seq(d) - (uint32_t)seq) >= 0;
}

bool pk__ring_claimed(const struct pk_ring *ring, uint64_t seq)
{
	return desc_claimed(atomic_load_explicit(pk__ring_desc(ring, seq), memory_order_seq_cst),
			    seq);
}

uint64_t pk__ring_undecided(const struct pk_ring_reader *rd)
{
	return rd->n_undecided ? rd->undecided[0] : UINT64_MAX;
}

/*
 * Does the own table name @seq (0), a newer seq of its class (1), or
 * neither (-1)?
 */
static int own_names(const struct pk_ring *ring, uint64_t seq)
{
	uint64_t e = atomic_load_explicit(own_at(ring, seq), memory_order_relaxed);
	int64_t d = (e & OWN_VALID) ? own_diff(e >> 4, seq) : -1;

	return d < 0 ? -1 : d > 0;
}

/*
 * OWN FILTERED SKIP.  Does the own table name @seq at a level @f rejects?
 * Then a filtered read passes it over without loading its descriptor or
 * block: its level is a fact of the seq, noted by the writer that took it
 * (own:A), whatever became of the record since (committed, in progress,
 * its claim failed, overwritten).  Read whole, such a record gives
 * BLK_FILTERED, or is lost and counted as lost->filtered, which a console
 * adds to its skipped as well; either way the seq is skipped once.  A seq
 * another process took, or one not noted yet, is not named: read as
 * before.  The load is relaxed: nothing of the record is read.  At one
 * thread this took a filtered record's pass from about 30 ns to a few.
 */
static inline bool own_filtered(const struct pk_ring *ring, const struct pk_ring_filter *f,
				uint64_t seq)
{
	uint64_t e;

	if (!ring->own || f->max_level > 7)
		return false;	/* no table, or a filter that passes every level */
	e = atomic_load_explicit(own_at(ring, seq), memory_order_relaxed);
	return e == own_word(seq, (unsigned)(e & 7u)) && (int)(e & 7u) >= f->max_level;
}

/*
 * Give up on @r, in progress and unclaimed (its descriptor @d names an
 * older seq), in a region others store into.  If the own table does not
 * name it, its writer may be one of this view's that took the seq and
 * has not noted it yet (write:A .. own:A): keep it undecided instead of
 * passing it as another's.  A full list passes its oldest on as unknown.
 * Return: true if kept.
 */
static bool give_up_undecided(struct pk_ring_reader *rd, const struct pk_ring_filter *f,
			      uint64_t r, uint64_t d, struct pk_ring_lost *lost)
{
	const struct pk_ring *ring = rd->ring;
	unsigned i;

	if (!lost || !f || !f->own || f->sole || !ring->own || desc_claimed(d, r) ||
	    own_names(ring, r) >= 0)
		return false;
	if (rd->n_undecided == PK_RING_UNDECIDED) {
		lost->counted++;
		lost->unknown++;
		for (i = 1; i < PK_RING_UNDECIDED; i++)
			rd->undecided[i - 1] = rd->undecided[i];
		rd->n_undecided--;
	}
	rd->undecided[rd->n_undecided++] = r;
	return true;
}

/*
 * Decide the undecided seqs whose descriptor has been claimed since.
 * LMM(own:C): the acquire load of the descriptor, as own:B: a value
 * claimed by the seq or a newer one lies in the release sequence of the
 * seq's own claim (write:C), if it made one, so its note (own:A) is seen.
 * A seq whose writer never claimed (a newer record took the descriptor
 * first: its call failed) or that another view took stays unnoted: not
 * counted.
 */
static void decide_undecided(struct pk_ring_reader *rd, const struct pk_ring_filter *f,
			     struct pk_ring_lost *lost)
{
	const struct pk_ring *ring = rd->ring;
	unsigned i, kept = 0;
	uint64_t u, d;

	for (i = 0; i < rd->n_undecided; i++) {
		u = rd->undecided[i];
		d = atomic_load_explicit(pk__ring_desc(ring, u), memory_order_acquire);
		if (desc_claimed(d, u))
			own_count(ring, f, u, u + 1, lost);
		else
			rd->undecided[kept++] = u;
	}
	rd->n_undecided = kept;
}

static int read_next(struct pk_ring_reader *rd, struct pk_ring_rec *out,
		     const struct pk_ring_filter *f, uint64_t *skipped, struct pk_ring_lost *lost)
{
	const struct pk_ring *ring = rd->ring;
	uint64_t n = ring->desc_mask + 1;
	/*
	 * Nothing before first_seq exists in this region.  It changes only
	 * when a new process re-formats a store file (PK_BUFFER_CLEAR) under
	 * a follower; without the clamp the follower would wait for the
	 * vanished records one stall at a time.
	 */
	uint64_t first = ring->h->first_seq;
	uint64_t head, r = rd->next, d;
	unsigned st, passed = 0, batch = f && f->batch ? f->batch : PK_RING_SKIP_BATCH;
	bool done;
	int ret;

	if (rd->n_undecided && lost && f && f->own && ring->own)
		decide_undecided(rd, f, lost);
	for (;;) {
		head = atomic_load_explicit(&ring->h->seq_head, memory_order_acquire);
		if (r < first && first <= head) {
			if (lost)
				pk__ring_lost_counted(ring, f, r, first, lost);
			r = first;
		}
		if (r >= head) {
			rd->next = r;
			return 0;
		}
		if (head - r > n) {
			/* the descriptor ring lapped us */
			if (lost)
				pk__ring_lost_counted(ring, f, r, head - n, lost);
			r = head - n;
		}
		if (passed >= batch) {
			rd->next = r;
			return -EAGAIN;
		}
		if (f && f->own && own_filtered(ring, f, r)) {
			if (skipped)
				(*skipped)++;	/* OWN FILTERED SKIP */
			r++;
			passed++;
			continue;
		}
		/* LMM(read:A) */
		d = atomic_load_explicit(pk__ring_desc(ring, r), memory_order_acquire);
		if ((int32_t)(desc_seq(d) - (uint32_t)r) > 0) {
			lost_one(ring, f, r, lost);
			r++;		/* overwritten by a newer record */
			continue;
		}
		st = desc_seq(d) == (uint32_t)r ? desc_state(d) : DS_FREE;
		if (st >= DS_LOST) {
			lost_one(ring, f, r, lost);
			r++;		/* retired, or a state no writer makes: lost */
			continue;
		}
		/*
		 * Committed text: FINAL, or OPEN when nobody can extend it any
		 * more.  A RESERVED record's block, when nobody can finish it,
		 * is committed text whose extension was cut short, or a record
		 * complete but for its commit, if it validates.
		 */
		done = rd->postmortem || r == rd->skip_seq;
		if (st == DS_OPEN && f && !done &&
		    read_block(ring, r, d, out, f, true) == BLK_FILTERED) {
			/*
			 * An OPEN record the filter rejects is passed over
			 * now, not when it is finalised (FILTERED READING).
			 */
			if (skipped)
				(*skipped)++;
			r++;
			passed++;
			continue;
		}
		if (st == DS_FINAL || (done && st != DS_FREE)) {
			ret = read_block(ring, r, d, out, f, false);
			if (ret == BLK_READ) {
				rd->next = r + 1;
				return 1;
			}
			if (ret == BLK_FILTERED && skipped)
				(*skipped)++;
			if (ret == BLK_LOST)
				lost_one(ring, f, r, lost);
			r++;		/* filtered, or overwritten or torn: lost */
			if (f)
				passed++;
			continue;
		}
		/* In progress: FREE (unclaimed), RESERVED or OPEN. */
		if (stall(rd, r, head)) {
			rd->next = r;
			return 0;
		}
		if (!give_up_undecided(rd, f, r, d, lost))
			lost_one(ring, f, r, lost);
		r++;			/* given up on: counted as lost, or later */
	}
}

int pk__ring_read(struct pk_ring_reader *rd, struct pk_ring_rec *out)
{
	return read_next(rd, out, NULL, NULL, NULL);
}

int pk__ring_read_filtered(struct pk_ring_reader *rd, struct pk_ring_rec *out,
			   const struct pk_ring_filter *f, uint64_t *skipped,
			   struct pk_ring_lost *lost)
{
	return read_next(rd, out, f, skipped, lost);
}

uint64_t pk__ring_data_lag(const struct pk_ring *ring, uint64_t seq)
{
	uint64_t d = atomic_load_explicit(pk__ring_desc(ring, seq), memory_order_relaxed), lpos;

	if (desc_seq(d) != (uint32_t)seq || desc_state(d) == DS_FREE ||
	    !block_intact(ring, desc_off(d), &lpos))
		return UINT64_MAX;
	return atomic_load_explicit(&ring->h->lpos_head, memory_order_relaxed) - lpos;
}

/* Is there something for a reader at @seq to do (a record or a gap)? */
bool pk__ring_readable(const struct pk_ring *ring, uint64_t seq)
{
	uint64_t head = atomic_load_explicit(&ring->h->seq_head, memory_order_seq_cst);
	uint64_t d;

	if (seq >= head)
		return false;
	d = atomic_load_explicit(pk__ring_desc(ring, seq), memory_order_seq_cst);
	if (desc_seq(d) != (uint32_t)seq)
		return (int32_t)(desc_seq(d) - (uint32_t)seq) > 0;
	return desc_state(d) == DS_FINAL || desc_state(d) >= DS_LOST;
}

/*
 * Extend the waiters' lease to @until, never shortening a running one; a
 * lease left from an earlier boot (further ahead than a lease can be) is
 * replaced.  Always a seq_cst RMW, even when the value stays: it orders
 * this waiter's registration before its check (wait:A).
 */
static void lease_renew(struct pk_ring_hdr *h, uint64_t until)
{
	uint64_t cur = atomic_load_explicit(&h->wait_until, memory_order_relaxed), want;

	do {
		want = lease_runs(cur, until) ? cur : until;
		/* LMM(wait:A) */
	} while (!atomic_compare_exchange_weak_explicit(&h->wait_until, &cur, want,
							memory_order_seq_cst, memory_order_relaxed));
}

/* Is record @seqs[i] of @rings[i] readable for some i (seq_cst loads, wait:A)? */
static bool any_readable(const struct pk_ring *rings, unsigned n, const uint64_t *seqs)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (pk__ring_readable(&rings[i], seqs[i]))
			return true;
	return false;
}

static int wait_registered(const struct pk_ring *rings, unsigned n, const uint64_t *seqs,
			   int timeout_ms)
{
	struct pk_ring_hdr *h = rings[0].wh;
	uint64_t now = now_ns(), deadline = 0, left;
	struct timespec ts;
	uint32_t w;
	int ret = 0;

	if (timeout_ms >= 0)
		deadline = now + (uint64_t)timeout_ms * 1000000ull;
	atomic_fetch_add_explicit(&h->waiters, 1, memory_order_seq_cst);
	for (;;) {
		lease_renew(h, now + PK_RING_WAIT_LEASE_NS);
		w = atomic_load_explicit(&h->wake, memory_order_acquire);
		/*
		 * LMM(wait:A): the seq_cst RMWs of waiters and wait_until above
		 * and the seq_cst loads in pk__ring_readable() pair with the
		 * seq_cst commit and the seq_cst loads of waiters and
		 * wait_until in wake_readers() (wake:A).  Every lane's writer
		 * looks at this header (its wh), so the pair holds for the
		 * lane of each seq we look at.
		 */
		if (any_readable(rings, n, seqs)) {
			ret = 1;
			break;
		}
		/* Sleep no longer than the lease, which a writer honours. */
		left = PK_RING_WAIT_LEASE_NS;
		if (timeout_ms >= 0) {
			if (now >= deadline)
				break;
			if (deadline - now < left)
				left = deadline - now;
		}
		ts.tv_sec = (time_t)(left / 1000000000ull);
		ts.tv_nsec = (long)(left % 1000000000ull);
		if (syscall(SYS_futex, &h->wake, FUTEX_WAIT, w, &ts, NULL, 0) == 0 ||
		    errno == EAGAIN) {
			ret = 1;
			break;
		}
		if (errno == EINTR)
			break;
		if (errno != ETIMEDOUT) {
			ret = -errno;
			break;
		}
		now = now_ns();
	}
	atomic_fetch_sub_explicit(&h->waiters, 1, memory_order_relaxed);
	return ret;
}

static int wait_unregistered(const struct pk_ring *rings, unsigned n, const uint64_t *seqs,
			     int timeout_ms)
{
	_Atomic uint32_t *wake = &rings[0].wh->wake;
	uint64_t deadline = 0, now;
	long slice_ms = 1;
	struct timespec ts;
	uint32_t w;

	if (timeout_ms >= 0)
		deadline = now_ns() + (uint64_t)timeout_ms * 1000000ull;
	for (;;) {
		/*
		 * Acquire: pairs with the release increment in wake_readers(),
		 * so a wake-up that a registered waiter caused is not missed
		 * by the check below.  Nothing breaks without it but latency:
		 * we do not register, so our only guarantee is the timeout.
		 */
		w = atomic_load_explicit(wake, memory_order_acquire);
		if (any_readable(rings, n, seqs))
			return 1;
		now = now_ns();
		if (timeout_ms >= 0 && now >= deadline)
			return 0;
		if (timeout_ms >= 0 && (uint64_t)slice_ms * 1000000ull > deadline - now)
			slice_ms = (long)((deadline - now + 999999ull) / 1000000ull);
		ts.tv_sec = slice_ms / 1000;
		ts.tv_nsec = (slice_ms % 1000) * 1000000l;
		/* FUTEX_WAIT only reads the word: allowed on a read-only mapping. */
		if (syscall(SYS_futex, wake, FUTEX_WAIT, w, &ts, NULL, 0) < 0 &&
		    errno != ETIMEDOUT && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (slice_ms < PK_RING_POLL_MAX_MS)
			slice_ms = slice_ms * 2 < PK_RING_POLL_MAX_MS ? slice_ms * 2 : PK_RING_POLL_MAX_MS;
	}
}

int pk__ring_wait(const struct pk_ring *ring, uint64_t seq, int timeout_ms)
{
	return wait_registered(ring, 1, &seq, timeout_ms);
}

int pk__ring_wait_readonly(const struct pk_ring *ring, uint64_t seq, int timeout_ms)
{
	return wait_unregistered(ring, 1, &seq, timeout_ms);
}

int pk__ring_wait_many(const struct pk_ring *rings, unsigned n, const uint64_t *seqs,
		       int timeout_ms, bool readonly)
{
	if (!n)
		return -EINVAL;
	return readonly ? wait_unregistered(rings, n, seqs, timeout_ms)
			: wait_registered(rings, n, seqs, timeout_ms);
}

uint64_t pk__ring_clear(struct pk_ring *ring)
{
	struct pk_ring_hdr *h = ring->h;
	/*
	 * Relaxed: clear_seq is only a lower bound where new readers start;
	 * they validate every record through its descriptor (read:A), so no
	 * store needs to be ordered with this one.  A record stored after we
	 * load seq_head gets a seq >= it and stays visible.
	 */
	uint64_t head = atomic_load_explicit(&h->seq_head, memory_order_relaxed);
	uint64_t cur = atomic_load_explicit(&h->clear_seq, memory_order_relaxed);

	/* Only ever raise it: a slower concurrent clear must not undo ours. */
	while (cur < head &&
	       !atomic_compare_exchange_weak_explicit(&h->clear_seq, &cur, head,
						      memory_order_relaxed, memory_order_relaxed))
		;
	return head > cur ? head : cur;
}

uint64_t pk__ring_restart(struct pk_ring *ring)
{
	struct pk_ring_hdr *h = ring->h;
	uint64_t head = pk__ring_clear(ring);

	/*
	 * Plain store: no writer runs, and a follower in another process
	 * only clamps its position to it (pk__ring_read).
	 */
	h->first_seq = head;
	desc_reset(ring, head);
	*(volatile uint64_t *)&ring->epoch = ring->epoch + 1;
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&h->open_count, 0, memory_order_relaxed);
	/* Records before first_seq are dead to readers: wipe their text. */
	memset((void *)ring->data, 0, (size_t)ring->data_size);
	return head;
}

uint64_t pk__ring_recover(struct pk_ring *ring)
{
	struct pk_ring_rec scratch;
	struct pk_ring_hdr *h = ring->h;
	uint64_t n = ring->desc_mask + 1, retired = 0;
	uint64_t head = atomic_load_explicit(&h->seq_head, memory_order_relaxed);
	uint64_t first = h->first_seq, next, r, d;
	unsigned st;

	if (first > head)
		first = head;	/* a corrupt header (persist.c refuses it) */
	for (next = head; next - head < n; next++) {
		_Atomic uint64_t *dp = pk__ring_desc(ring, next);

		/*
		 * Each descriptor once: the next seq to use it, and the last
		 * one handed out for it (r), if that one belongs to this
		 * region.  Relaxed throughout: the caller guarantees no writer
		 * runs, and readers in other processes validate every record
		 * they copy.
		 */
		r = next - n;
		d = atomic_load_explicit(dp, memory_order_relaxed);
		if (next - first < n) {
			/*
			 * Never used since first_seq: it must read as older than
			 * its next use.  It does unless the file was damaged or a
			 * restart was cut short (its old zeroed descriptors).
			 */
			if ((int32_t)(desc_seq(d) - (uint32_t)next) >= 0)
				atomic_store_explicit(dp, desc_make(r, 0, DS_FREE),
						      memory_order_relaxed);
			continue;
		}
		/* A field newer than r is damage: nothing newer was handed out. */
		st = desc_seq(d) == (uint32_t)r ? desc_state(d) : DS_FREE;
		if (st == DS_OPEN) {
			/* Committed text nobody can extend any more. */
			atomic_store_explicit(dp, (d & ~7ull) | DS_FINAL, memory_order_relaxed);
		} else if (st == DS_RESERVED && copy_record(ring, r, d, &scratch)) {
			/* An extension cut short: its block is still the committed one. */
			atomic_store_explicit(dp, (d & ~7ull) | DS_FINAL, memory_order_relaxed);
		} else if (st == DS_FREE || st == DS_RESERVED) {
			/* Its writer died between taking the seq and committing. */
			atomic_store_explicit(dp, desc_make(r, desc_off(d), DS_LOST),
					      memory_order_relaxed);
			retired++;
		}
	}
	if (retired)
		atomic_fetch_add_explicit(&h->lost, retired, memory_order_relaxed);
	/* Nothing is OPEN any more; a writer interrupted in one must not lower the count. */
	*(volatile uint64_t *)&ring->epoch = ring->epoch + 1;
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&h->open_count, 0, memory_order_relaxed);
	return retired;
}
