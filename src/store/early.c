// SPDX-License-Identifier: MIT
/*
 * early.c - the early store: records stored before the library is set up,
 * like the kernel's static __log_buf before setup_log_buf().
 *
 * Initialising allocates, opens the consoles' files and starts threads,
 * none of which a signal handler may do (a handler that interrupted
 * malloc() would corrupt the heap or deadlock in it).  So pk_printk()
 * initialises only where that is safe (pk__early_init_safe_here()), and
 * otherwise stores into a small store that lives in static memory: its
 * header is a constant initialiser and its descriptors and data start
 * zeroed, which is an empty region whose first seq is 0, so storing needs
 * no set-up step that two callers could race on.  Writing it is the
 * store's own lock-free pk__ring_write(), async-signal-safe.
 *
 * At the first safe point (pk_init(), the first pk_printk() outside a
 * signal handler, or the exit of the process) the records move into the
 * configured store, keeping their time, thread, process and level, before
 * any console is registered: the consoles print them first.  A panic or
 * crash before that point writes them, and its report, straight to
 * standard error.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "format/format.h"
#include "format/format.h"
#include "store/store.h"

#define EARLY_DATA_LOG2	16u	/* 64 KiB of text: some 500 records; untouched pages cost nothing */
#define EARLY_DESC_LOG2	(EARLY_DATA_LOG2 - PK_RING_DESC_SHIFT)
#define EARLY_DESCS	(1u << EARLY_DESC_LOG2)
#define EARLY_DATA	(1u << EARLY_DATA_LOG2)
#define EARLY_STALL_NS	(20 * 1000000ull)	/* migration waits this long for a record */

static struct {
	struct pk_ring_hdr h;
	_Atomic uint64_t desc[EARLY_DESCS];
	_Atomic uint64_t data[EARLY_DATA / 8];
} region = {
	.h = {
		.magic = PK_RING_MAGIC,
		.version = PK_RING_VERSION,
		.hdr_size = PK_RING_HDR_SIZE,
		.total_size = PK_RING_HDR_SIZE + 8u * EARLY_DESCS + EARLY_DATA,
		.desc_off = PK_RING_HDR_SIZE,
		.data_off = PK_RING_HDR_SIZE + 8u * EARLY_DESCS,
		.desc_log2 = EARLY_DESC_LOG2,
		.data_log2 = EARLY_DATA_LOG2,
	},
};

_Static_assert(sizeof(region) == PK_RING_HDR_SIZE + 8u * EARLY_DESCS + EARLY_DATA,
	       "the early region is laid out as a store region");

/* Seq of the next early record to move into the configured store. */
static _Atomic uint64_t migrated;

/* A view of the region; building one only reads it.  Async-signal-safe. */
static void view(struct pk_ring *ring)
{
	int ret = pk__ring_attach(ring, &region, sizeof(region));

	(void)ret;	/* a constant header: always valid */
}

bool pk__early_init_safe_here(void)
{
	struct sigaction sa;
	sigset_t cur;
	int s;

	/*
	 * While a handler runs, the kernel blocks its signal (unless the
	 * handler asked for SA_NODEFER): a blocked signal that has a handler
	 * means we may be inside it.  Only asked before initialisation.
	 */
	if (pthread_sigmask(SIG_BLOCK, NULL, &cur))
		return false;
	for (s = 1; s < NSIG; s++) {
		if (sigismember(&cur, s) != 1 || sigaction(s, NULL, &sa))
			continue;
		if ((sa.sa_flags & SA_SIGINFO) ||
		    (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN))
			return false;
	}
	return true;
}

int pk__early_store(int level, unsigned flags, const char *text, size_t len, uint64_t *seqp)
{
	struct pk_ring ring;
	struct pk_ring_meta m;
	int ret;

	size_t max = PK_RECORD_MAX;

	view(&ring);
	/* A module prefix and a fields block come on top of the text's maximum. */
	max += pk__rec_extra(flags, text, len);
	if (len > max) {
		len = max;
		flags |= PK_REC_TRUNC;
	}
	m.ts_ns = pk__now_ns();
	m.tid = pk__tid();
	m.pid = (uint32_t)syscall(SYS_getpid);
	m.level = (uint8_t)level;
	m.facility = 1;		/* LOG_USER, the default */
	/* Nothing extends an early record: it is complete as it is. */
	m.flags = (uint16_t)(flags & ~PK_REC_NOEOL);
	ret = pk__ring_write(&ring, &m, text, (uint32_t)len, false, seqp);
	return ret;
}

void pk__early_drain(void)
{
	uint64_t head = atomic_load_explicit(&region.h.seq_head, memory_order_acquire);

	if (head)
		pk__early_settle(head - 1);
}

void pk__early_settle(uint64_t last)
{
	struct timespec nap = { 0, 20000 };
	unsigned i;

	/*
	 * This thread stored early records, the last one @last, and the
	 * library is now ready: they must reach the configured store before
	 * its next record does, or its records would come out of order.
	 * Bounded: a signal handler that interrupted this very thread's
	 * migration gives up after some 0.2 s (another thread's migration
	 * ends by itself, within its 40 ms wait per record in progress).
	 */
	for (i = 0; i < 10000 && atomic_load_explicit(&migrated, memory_order_acquire) <= last; i++) {
		if (pk__early_migrate())
			continue;
		nanosleep(&nap, NULL);	/* another thread is migrating */
	}
}

bool pk__early_pending(void)
{
	return atomic_load_explicit(&region.h.seq_head, memory_order_acquire) >
	       atomic_load_explicit(&migrated, memory_order_acquire);
}

static _Atomic int migrating;

static uint64_t migrate_once(void)
{
	struct pk_ring ring;
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	struct timespec nap = { 0, 50000 };
	uint64_t moved = 0, seq, waited = 0, from;

	view(&ring);
	pk__ring_reader_init(&rd, &ring, false);
	from = atomic_load_explicit(&migrated, memory_order_relaxed);
	if (rd.next < from)
		rd.next = from;
	/*
	 * A record another thread is writing right now commits within
	 * microseconds: wait for it, a bounded time.  One a handler left
	 * half-written (its thread never returns to it) is skipped then.
	 * The migrating thread never has one of its own in progress: it is
	 * not in a handler (pk_init and the flushes are not called there).
	 */
	rd.stall_limit_ns = EARLY_STALL_NS;
	for (;;) {
		if (pk__ring_read(&rd, &rec) == 1) {
			/*
			 * Into the migrating thread's lane, in order; a record
			 * older than that lane's newest takes its time (a
			 * lane's times never fall: lanes.c).
			 */
			if (pk__lanes_write(&pk__st.lanes, &rec.meta, rec.text, rec.len, false, NULL,
					    &seq) == 0)
				moved++;
			/* Record by record: a thread waiting in settle() goes on early. */
			if (rec.seq + 1 == rd.next && rd.next - from == moved)
				atomic_store_explicit(&migrated, rd.next, memory_order_release);
			continue;
		}
		if (rd.next >= pk__ring_next_seq(&ring) || waited >= 2 * EARLY_STALL_NS)
			break;
		nanosleep(&nap, NULL);
		waited += (uint64_t)nap.tv_nsec;
		if (waited >= EARLY_STALL_NS)
			rd.stall_limit_ns = 0;	/* skip what is still in progress */
	}
	/*
	 * Records lost in the early store (overwritten before they could be
	 * moved: before the library was set up, or while a store switch held
	 * callers out) are lost for good, and no console could see a gap for
	 * them: a lost note counts them, in-band on every console, and in
	 * the store's `lost' (record.c, "LOST NOTES").  Their levels are not
	 * known: every console counts them.
	 */
	if (rd.next - from > moved) {
		struct pk__lost_note note;
		uint64_t n = rd.next - from - moved;
		int l;

		for (l = 0; l <= 8; l++)
			note.cum[l] = n;
		note.unknown = n;
		pk__lost_note_write(pk__lane(pk__lanes_pick(&pk__st.lanes)), &note, 0, &seq);
	}
	/* Release: a thread that sees its record passed sees it stored (settle). */
	atomic_store_explicit(&migrated, rd.next, memory_order_release);
	return moved;
}

uint64_t pk__early_migrate(void)
{
	uint64_t moved = 0;
	int round, idle;

	/*
	 * One migrator at a time (pk_init, the exit flush, or a caller that
	 * stored early and then found the library ready).  A caller that
	 * finds another at work leaves it to that one, which looks again
	 * after letting go: a record stored meanwhile is not left behind.
	 * A record still in progress at the end is taken next time.
	 */
	for (round = 0; round < 3 && pk__early_pending(); round++) {
		idle = 0;
		/* LMM(early:A): acquire/release: the migrators' `migrated` passes along. */
		if (!atomic_compare_exchange_strong_explicit(&migrating, &idle, 1,
							     memory_order_acquire,
							     memory_order_relaxed))
			break;
		moved += migrate_once();
		atomic_store_explicit(&migrating, 0, memory_order_release);
	}
	return moved;
}

void pk__early_print_raw(int fd)
{
	struct pk_format_opts fo = { 0 };
	struct pk_ring ring;
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	struct pk_record r;
	char buf[PK_RECORD_MAX + 128];
	size_t n;

	/* Panic: whoever was migrating will not finish (other threads are stopped out). */
	view(&ring);
	pk__ring_reader_init(&rd, &ring, true);	/* nobody finishes a record now */
	if (rd.next < atomic_load_explicit(&migrated, memory_order_relaxed))
		rd.next = atomic_load_explicit(&migrated, memory_order_relaxed);
	fo.fmt = PK_FMT_HUMAN | PK_FMT_F_ESCAPE;
	while (pk__ring_read(&rd, &rec) == 1) {
		pk__rec_export(&rec, &r);	/* its module prefix too */
		n = pk__format_record(buf, sizeof(buf), &r, &fo);
		if (write(fd, buf, n) < 0)
			break;
	}
	atomic_store_explicit(&migrated, rd.next, memory_order_relaxed);
}

