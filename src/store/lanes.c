// SPDX-License-Identifier: MIT
/*
 * lanes.c - the record store as lanes, and the reader that merges them.
 *
 * LAYOUT
 *
 * A store of N lanes is N ring regions (ringbuf.c) of one size, lane i at
 * byte i * size.  Each lane's header names its place (lane i of N), so a
 * file cut or pasted together is refused.  Lane 0's header carries what
 * belongs to the whole store (its creator, generation, the realtime
 * anchor).  One lane is exactly a single ring.
 *
 * WRITING
 *
 * A writer stores in lane sched_getcpu() % N: CPUs do not share a lane
 * while N >= the CPUs in use, so the head, descriptors and data that a
 * record touches stay in one CPU's cache.  A thread that migrates during a
 * store finishes in the lane it picked: every lane takes any writer
 * (ringbuf.c is multi-producer), so migration only costs a shared line.
 *
 * ORDER
 *
 * A record's key is (ts, lane, seq).  The head CAS (ringbuf.c, THE HEAD)
 * gives a record ts = max(head_ts, its writer's clock read before the CAS),
 * so within a lane ts never falls as seq grows: the lane's seq order is
 * its key order, and merging the lanes' streams by key is one order for
 * every reader.  It keeps:
 *
 * - a thread's program order, across migration too: its second record's
 *   clock is read after its first record's CAS, at which that record's ts
 *   was at most the clock; and
 * - causal order between threads: a record stored before a thread signals
 *   another has ts at most the clock at its CAS, and the other thread
 *   reads its clock afterwards.
 *
 * Both hold strictly (the later record's key is larger, whatever the
 * lanes) as long as CLOCK_MONOTONIC advances between two clock reads that
 * a cache-line transfer separates: a nanosecond clock on any machine where
 * such a transfer takes more than a nanosecond.  A coarse clock would tie,
 * and a tie is broken by lane, not by cause.  The merged order is the
 * order for every reader whatever the clock does.
 *
 * THE WATERMARK
 *
 * A reader holds, per lane, the next record it has read (committed, so
 * its key is known), or nothing.  It lets out the smallest key k held only
 * when no lane can still produce a smaller one:
 *
 * - a lane holding a record: its records come in key order, so none
 *   smaller than the one it holds;
 * - an idle lane (its reader is at seq_head): pk__ring_floor() gives a
 *   ts T that every record reserved from now on has or exceeds, so its
 *   next key is at least (T, lane, seq_head).  If that is not above k, the
 *   reader seals the lane: pk__ring_seal() raises head_ts to its clock,
 *   now, if seq_head has not moved and now > k.ts (else it looks again
 *   later), so any record the lane gets later has ts > k.ts; if a writer
 *   reserved meanwhile, the lane has a record in progress and the reader
 *   looks again.  Never k.ts + 1, ahead of the clock: a record stamped
 *   that could sort after one a clock read after it caused
 *   (verify/lanes.pml);
 * - a lane with a record in progress (seq taken, not committed): that
 *   record's ts is at least the lane's last ts the reader took, so if
 *   k.ts is below that the record comes after k; otherwise the reader
 *   waits for it, as a ring reader does (ringbuf.c: it gives up on a record
 *   in progress after stall_limit_ns and counts it lost).
 *
 * A post-mortem reader (every writer gone) has no lane that can grow: it
 * needs no bound but the records held.  A reader of a read-only mapping
 * cannot seal: for an idle lane whose floor does not clear k it lets k
 * out once k.ts is grace_ns behind its clock, or once it has waited
 * grace_ns for it; a record whose writer read its clock that long before
 * and reserved only afterwards (preempted that long in between) then
 * comes out of order.  That is the one inexact case; every reader that
 * can write the region (consoles, pk_flush, panic, pkmsg on a store it may
 * write) is exact.  (The age test lets records stored long ago out at
 * once: waiting grace_ns for each of them would make a read-only reader
 * of a live store take grace_ns a record for its whole backlog.)
 *
 * ACROSS A REBOOT
 *
 * A store file outlives a boot, and CLOCK_MONOTONIC starts again at the
 * next one: the records of the earlier boot can carry timestamps far
 * ahead of the clock.  A record k held that is more than
 * PK_LANES_AHEAD_NS ahead of the reader's clock is of an earlier boot
 * (within one boot a timestamp is never more than a few ns ahead: a
 * record's ts is at most its writer's clock, or a seal's).  The
 * reader lets it out without sealing or waiting: any record an idle lane
 * reserves from now on is of this boot, stored after k.  Sealing would be
 * wrong: head_ts = k.ts would give every later record of that lane
 * the earlier boot's time, the same one for each until the clock got
 * there.  Across a reboot the merged order follows the timestamps, which
 * restart, so it is exact within each boot only (persist.c, TIMESTAMPS
 * ACROSS RESTARTS).
 *
 * The reader's bound for an idle lane reads head_ts before seq_head
 * (pk__ring_floor): reading seq_head first could pair an old seq_head
 * with a head_ts that a later record raised, a bound above that record.
 */
#include "store/lanes.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

size_t pk__lanes_region_size(unsigned n, unsigned data_log2)
{
	return (size_t)n * pk__ring_region_size(data_log2);
}

unsigned pk__lanes_for(unsigned want, unsigned data_log2, unsigned *lane_log2)
{
	return pk__lanes_for_cpus(want, sysconf(_SC_NPROCESSORS_ONLN), data_log2, lane_log2);
}

unsigned pk__lanes_for_cpus(unsigned want, long cpus, unsigned data_log2, unsigned *lane_log2)
{
	unsigned n = 1, cap, min_log2;

#ifdef PK_RING_HEAD_CAS16
	if (want) {
		cap = PK_LANES_MAX;
		min_log2 = PK_RING_MIN_DATA_LOG2;
	} else {
		want = cpus > 0 ? (unsigned)(cpus < (long)PK_LANES_MAX ? cpus : (long)PK_LANES_MAX) : 1;
		cap = PK_LANES_DEFAULT_MAX;
		min_log2 = PK_LANES_MIN_DEFAULT_LOG2;
	}
	while (n * 2 <= want && n * 2 <= cap && data_log2 >= min_log2 + 1 &&
	       data_log2 - (unsigned)__builtin_ctz(n * 2) >= min_log2)
		n *= 2;
#else
	(void)want;
	(void)cpus;
#endif
	*lane_log2 = data_log2 - (unsigned)__builtin_ctz(n);
	return n;
}

void pk__lanes_format(void *mem, unsigned n, unsigned data_log2, uint64_t first_seq)
{
	size_t size = pk__ring_region_size(data_log2);
	unsigned i;

#ifndef PK_RING_HEAD_CAS16
	n = 1;
#endif
	if (n < 1)
		n = 1;
	if (n > PK_LANES_MAX)
		n = PK_LANES_MAX;
	for (i = 0; i < n; i++) {
		struct pk_ring_hdr *h = (struct pk_ring_hdr *)((char *)mem + (size_t)i * size);

		pk__ring_format(h, data_log2, first_seq);
		h->lanes = n;
		h->lane = i;
	}
}

int pk__lanes_attach(struct pk_lanes *ls, void *mem, size_t size)
{
	const volatile struct pk_ring_hdr *h0 = mem;
	uint32_t n, i;
	uint64_t lane_size;
	int ret;

	if (!mem || size < PK_RING_HDR_SIZE)
		return -EINVAL;
	ret = pk__ring_attach(&ls->lane[0], mem, size);
	if (ret)
		return ret;
	/* Read once: another process may change the file under us. */
	n = h0->lanes;
	if (n < 1 || n > PK_LANES_MAX || h0->lane != 0)
		return -EINVAL;
#ifndef PK_RING_HEAD_CAS16
	/* Its writers' and readers' order rests on the 16-byte head: one lane only. */
	if (n > 1)
		return -ENOTSUP;
#endif
	/* The size pk__ring_attach() validated, not a second read of the file's. */
	lane_size = PK_RING_HDR_SIZE + (ls->lane[0].desc_mask + 1) * 8 + ls->lane[0].data_size;
	if (lane_size > size / n)
		return -EINVAL;
	for (i = 1; i < n; i++) {
		const volatile struct pk_ring_hdr *h =
			(const volatile struct pk_ring_hdr *)((char *)mem + (size_t)i * lane_size);

		ret = pk__ring_attach(&ls->lane[i], (char *)mem + (size_t)i * lane_size, lane_size);
		if (ret)
			return ret;
		/* Every lane of one geometry, naming its place. */
		if (h->lanes != n || h->lane != i ||
		    ls->lane[i].data_size != ls->lane[0].data_size)
			return -EINVAL;
		/* Readers of the store sleep on lane 0's futex word (pk__ring_wait_many()). */
		ls->lane[i].wh = ls->lane[0].h;
	}
	ls->n = n;
	ls->lane_size = lane_size;
	return 0;
}

unsigned pk__lanes_pick(const struct pk_lanes *ls)
{
	int cpu;

	if (ls->n <= 1)
		return 0;
	/* glibc reads the kernel's rseq cpu_id: no system call. */
	cpu = sched_getcpu();
	return cpu < 0 ? 0 : (unsigned)cpu % ls->n;
}

int pk__lanes_write(struct pk_lanes *ls, const struct pk_ring_meta *meta, const char *text,
		    uint32_t len, bool open, unsigned *lane, uint64_t *seq)
{
	unsigned l = pk__lanes_pick(ls);

	if (lane) {
		*(volatile unsigned *)lane = l;
		atomic_signal_fence(memory_order_seq_cst);
	}
	return pk__ring_write(&ls->lane[l], meta, text, len, open, seq);
}

void pk__lanes_reader_init(struct pk_lanes_reader *lr, const struct pk_lanes *ls,
			   struct pk_ring_rec *buf, bool postmortem, bool seal)
{
	unsigned i;

	memset(lr, 0, sizeof(*lr));
	lr->ls = ls;
	lr->buf = buf;
	lr->seal = seal;
	lr->postmortem = postmortem;
	lr->grace_ns = PK_LANES_GRACE_NS;
	for (i = 0; i < ls->n; i++)
		pk__ring_reader_init(&lr->l[i].rd, &ls->lane[i], postmortem);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Is key (ta, la) below key (tb, lb)?  Seqs never tie two lanes' keys. */
static inline bool key_below(uint64_t ta, unsigned la, uint64_t tb, unsigned lb)
{
	return ta < tb || (ta == tb && la < lb);
}

/*
 * Fill lane @i's slot if it is empty.  Return 1 it holds a record, 0 the
 * lane has nothing now, -EAGAIN a batch of filtered records was passed over.
 */
int pk__lanes_fill(struct pk_lanes_reader *lr, unsigned i, const struct pk_ring_filter *f,
		   uint64_t *skipped, uint64_t *jumped, struct pk_ring_lost *lost)
{
	struct pk_lanes_lane *l = &lr->l[i];
	uint64_t from = l->rd.next, sk = 0, to;
	unsigned j;
	int r;

	if (l->have)
		return 1;
	/* Another lane's record waits: a record in progress here is given up in time. */
	l->rd.later_elsewhere = false;
	for (j = 0; j < lr->ls->n && !l->rd.later_elsewhere; j++)
		if (j != i && lr->l[j].have)
			l->rd.later_elsewhere = true;
	r = pk__ring_read_filtered(&l->rd, &lr->buf[i], f, &sk, lost);
	to = r == 1 ? lr->buf[i].seq : l->rd.next;
	if (skipped)
		*skipped += sk;
	if (jumped && to - from > sk)
		*jumped += to - from - sk;
	if (r == 1) {
		lr->buf[i].lane = i;
		l->have = true;
		if (lr->buf[i].meta.ts_ns > l->last_ts)
			l->last_ts = lr->buf[i].meta.ts_ns;
	}
	return r;
}

int pk__lanes_choose(struct pk_lanes_reader *lr)
{
	const struct pk_lanes *ls = lr->ls;
	unsigned n = ls->n, i, c;
	int tries;

	/* The smallest key held. */
	c = n;
	for (i = 0; i < n; i++)
		if (lr->l[i].have &&
		    (c == n || key_below(lr->buf[i].meta.ts_ns, i, lr->buf[c].meta.ts_ns, c)))
			c = i;
	if (c == n)
		return -1;
	/* Every other lane must be unable to produce a smaller key. */
	for (i = 0; i < n; i++) {
		struct pk_lanes_lane *l = &lr->l[i];
		uint64_t k = lr->buf[c].meta.ts_ns, hs, t, now;

		if (i == c || l->have || lr->postmortem)
			continue;
		for (tries = 0;; tries++) {
			t = pk__ring_floor(&ls->lane[i], &hs);
			if (l->rd.next < hs) {
				/*
				 * A record in progress at rd.next (or lost ones
				 * the ring reader has yet to jump): its ts is at
				 * least the lane's last one taken.  An OPEN one
				 * (a line not ended yet) has its ts already: if
				 * that is older than k, finalize it, as a newer
				 * record in its own lane would.
				 */
				if (key_below(k, c, l->last_ts, i))
					break;
				if (pk__ring_open_ts(&ls->lane[i], l->rd.next, &t)) {
					if (key_below(k, c, t, i))
						break;
					if (lr->seal) {
						pk__ring_finalize((struct pk_ring *)&ls->lane[i],
								  l->rd.next);
						return -EAGAIN;
					}
				}
				/*
				 * A reader that cannot write cannot finalize an
				 * open line: it waits the grace for it too.  A
				 * record in progress is given up by the lane's
				 * ring reader after its stall limit (fill()).
				 */
				if (!lr->seal) {
					now = mono_ns();
					if (!lr->blocked_since_ns)
						lr->blocked_since_ns = now;
					if (now - lr->blocked_since_ns >= lr->grace_ns)
						break;
				}
				return -1;
			}
			if (key_below(k, c, t, i))
				break;
			now = mono_ns();
			if (k > now && k - now > PK_LANES_AHEAD_NS)
				break;		/* of an earlier boot: ACROSS A REBOOT */
			if (!lr->seal) {
				if (now >= k && now - k >= lr->grace_ns)
					break;	/* that old: only a writer preempted as long is behind */
				if (!lr->blocked_since_ns)
					lr->blocked_since_ns = now;
				if (now - lr->blocked_since_ns >= lr->grace_ns)
					break;
				return -1;
			}
			/*
			 * Seal with the clock itself, never ahead of it: a
			 * time of k.ts + 1 could stamp a later record above a
			 * clock read that causally follows it (verify/lanes.pml,
			 * the k.ts+1 finding).  A clock that has not passed
			 * k.ts yet: look again later.
			 */
			if (now <= k)
				return -1;
			if (pk__ring_seal((struct pk_ring *)&ls->lane[i], hs, now)) {
				lr->seals++;
				break;
			}
			/* A writer reserved hs: the lane has a record in progress now. */
			if (tries > 2)
				return -1;
		}
	}
	lr->blocked_since_ns = 0;
	return (int)c;
}

int pk__lanes_read(struct pk_lanes_reader *lr, struct pk_ring_rec **rec,
		   const struct pk_ring_filter *f, uint64_t *skipped, uint64_t *jumped,
		   struct pk_ring_lost *lost)
{
	unsigned n = lr->ls->n, i;
	bool again = false;
	int c;

	for (i = 0; i < n; i++)
		if (pk__lanes_fill(lr, i, f, skipped, jumped, lost) == -EAGAIN)
			again = true;
	if (again)
		return -EAGAIN;		/* a lane still passing over filtered records */
	c = pk__lanes_choose(lr);
	if (c < 0)
		return c == -EAGAIN ? -EAGAIN : 0;
	lr->l[c].have = false;
	*rec = &lr->buf[c];
	return 1;
}
