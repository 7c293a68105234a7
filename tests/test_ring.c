// SPDX-License-Identifier: MIT
/*
 * Unit tests of the record store alone (no front door, no consoles).
 * The module is compiled into this test so that its statics are in reach.
 */
/* A signal inside the carve of a data chunk, at will (test_chunks_signals). */
static void carve_hook(void);
#define PK_RING_CARVE_HOOK()	carve_hook()
/* A writer held between taking its seq and noting it (test_note_window). */
static void note_hook(void);
#define PK_RING_NOTE_HOOK()	note_hook()
#include "../src/store/ringbuf.c"

#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "format/format.h"
#include "store/store.h"
#include "testutil.h"

struct fixture {
	void *mem;
	struct pk_ring ring;
};

static struct fixture *fx_new(unsigned data_log2)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->mem = aligned_alloc(64, pk__ring_region_size(data_log2));
	pk__ring_format(f->mem, data_log2, 0);
	assert_int_equal(pk__ring_attach(&f->ring, f->mem, pk__ring_region_size(data_log2)), 0);
	return f;
}

static void fx_free(struct fixture *f)
{
	free(f->mem);
	free(f);
}

static int put(struct pk_ring *ring, const char *text, int level, bool open, uint64_t *seq)
{
	struct pk_ring_meta m = { .ts_ns = tu_now_ns(), .pid = 4321, .tid = 42, .level = (uint8_t)level,
				  .facility = 1, .flags = 0 };

	return pk__ring_write(ring, &m, text, (uint32_t)strlen(text), open, seq);
}

static void test_order_and_content(void **state)
{
	struct fixture *f = fx_new(16);
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	char buf[64];
	uint64_t seq, prev_ts = 0;
	int i;

	(void)state;
	for (i = 0; i < 100; i++) {
		snprintf(buf, sizeof(buf), "message %d", i);
		assert_int_equal(put(&f->ring, buf, i % 8, false, &seq), 0);
		assert_int_equal(seq, (uint64_t)i);
	}
	pk__ring_reader_init(&rd, &f->ring, false);
	for (i = 0; i < 100; i++) {
		assert_int_equal(pk__ring_read(&rd, &rec), 1);
		snprintf(buf, sizeof(buf), "message %d", i);
		assert_int_equal(rec.seq, (uint64_t)i);
		assert_string_equal(rec.text, buf);
		assert_int_equal(rec.len, strlen(buf));
		assert_int_equal(rec.meta.level, i % 8);
		assert_int_equal(rec.meta.tid, 42);
		assert_int_equal(rec.meta.pid, 4321);
		assert_int_equal(rec.meta.facility, 1);
		assert_true(rec.meta.ts_ns >= prev_ts);
		prev_ts = rec.meta.ts_ns;
	}
	assert_int_equal(pk__ring_read(&rd, &rec), 0);
	fx_free(f);
}

static void test_empty_and_max_text(void **state)
{
	struct fixture *f = fx_new(14);
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	char big[PK_RING_TEXT_MAX + 1];

	(void)state;
	memset(big, 'x', PK_RING_TEXT_MAX);
	big[PK_RING_TEXT_MAX] = '\0';
	assert_int_equal(put(&f->ring, "", 6, false, NULL), 0);
	assert_int_equal(put(&f->ring, big, 6, false, NULL), 0);
	pk__ring_reader_init(&rd, &f->ring, false);
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_int_equal(rec.len, 0);
	assert_string_equal(rec.text, "");
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_int_equal(rec.len, PK_RING_TEXT_MAX);
	assert_memory_equal(rec.text, big, PK_RING_TEXT_MAX);
	fx_free(f);
}

/* A 4 KiB ring wrapped many times: the reader sees the newest records, intact. */
static void test_wrap(void **state)
{
	struct fixture *f = fx_new(13);
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	char buf[200];
	uint64_t seq, prev = 0, got = 0;
	unsigned w;
	uint64_t c;
	int i;

	(void)state;
	for (i = 0; i < 20000; i++) {
		tu_make_text(buf, sizeof(buf), 1, (uint64_t)i, (size_t)(i % 97));
		assert_int_equal(put(&f->ring, buf, 6, false, &seq), 0);
	}
	pk__ring_reader_init(&rd, &f->ring, false);
	assert_true(rd.next > 19000);
	while (pk__ring_read(&rd, &rec) == 1) {
		assert_int_equal(tu_check_text(rec.text, rec.len, &w, &c), 0);
		assert_int_equal(c, rec.seq);
		if (got)
			assert_true(rec.seq > prev);
		prev = rec.seq;
		got++;
	}
	assert_int_equal(prev, 19999);
	assert_true(got > 10);
	assert_true(pk__ring_oldest(&f->ring, false) > 19000);
	fx_free(f);
}

/* A reader that falls behind jumps over what was overwritten. */
static void test_reader_lapped(void **state)
{
	struct fixture *f = fx_new(13);
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	char buf[100];
	int i;

	(void)state;
	pk__ring_reader_init(&rd, &f->ring, false);
	for (i = 0; i < 5; i++) {
		snprintf(buf, sizeof(buf), "early %d", i);
		put(&f->ring, buf, 6, false, NULL);
	}
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_int_equal(rec.seq, 0);
	for (i = 0; i < 1000; i++) {
		snprintf(buf, sizeof(buf), "late %d", i);
		put(&f->ring, buf, 6, false, NULL);
	}
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_true(rec.seq > 100);
	assert_true(strncmp(rec.text, "late ", 5) == 0);
	fx_free(f);
}

/* Continuation: an open record is invisible until finished, then one record. */
static void test_extend(void **state)
{
	struct fixture *f = fx_new(14);
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	uint64_t seq, seq2;

	(void)state;
	pk__ring_reader_init(&rd, &f->ring, false);
	assert_int_equal(put(&f->ring, "Loading", 6, true, &seq), 0);
	assert_int_equal(pk__ring_read(&rd, &rec), 0);	/* open: not yet visible */
	assert_int_equal(pk__ring_extend(&f->ring, seq, "...", 3, true, PK_RING_TEXT_MAX), 0);
	assert_int_equal(pk__ring_extend(&f->ring, seq, " done", 5, false, PK_RING_TEXT_MAX), 0);
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "Loading... done");
	assert_int_equal(rec.seq, seq);
	/* Finished records can no longer be extended. */
	assert_int_equal(pk__ring_extend(&f->ring, seq, "x", 1, false, PK_RING_TEXT_MAX), -EAGAIN);

	/* A newer record finalizes an open one and blocks extending it. */
	assert_int_equal(put(&f->ring, "part", 6, true, &seq), 0);
	assert_int_equal(put(&f->ring, "other", 6, false, &seq2), 0);
	assert_int_equal(pk__ring_extend(&f->ring, seq, "x", 1, false, PK_RING_TEXT_MAX), -EAGAIN);
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "part");
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "other");

	/* Too long to extend. */
	{
		char big[PK_RING_TEXT_MAX];

		memset(big, 'y', sizeof(big));
		assert_int_equal(put(&f->ring, "z", 6, true, &seq), 0);
		assert_int_equal(pk__ring_extend(&f->ring, seq, big, sizeof(big), false, PK_RING_TEXT_MAX), -E2BIG);
		assert_int_equal(pk__ring_read(&rd, &rec), 1);	/* finalized by the failure */
		assert_string_equal(rec.text, "z");
	}
	/* finalize_last makes a dangling open record readable. */
	assert_int_equal(put(&f->ring, "dangling", 6, true, &seq), 0);
	assert_int_equal(pk__ring_read(&rd, &rec), 0);
	pk__ring_finalize_last(&f->ring);
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "dangling");
	fx_free(f);
}

/*
 * A writer killed in the middle of extending its open record: the text it
 * had committed survives for a post-mortem reader and for recovery.
 */
static void test_killed_extension_keeps_committed_text(void **state)
{
	struct fixture *f = fx_new(14);
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	uint64_t seq, d;

	(void)state;
	assert_int_equal(put(&f->ring, "committed part", 6, true, &seq), 0);
	/* pk__ring_extend's reopen, then it dies before moving the descriptor. */
	d = atomic_load(pk__ring_desc(&f->ring, seq));
	atomic_store(pk__ring_desc(&f->ring, seq), (d & ~7ull) | DS_RESERVED);
	atomic_fetch_add(&f->ring.h->lpos_head, 64);	/* it had taken new space, too */
	pk__ring_reader_init(&rd, &f->ring, true);
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "committed part");
	/* Recovery when the store is reopened keeps it as a finished record. */
	assert_int_equal(pk__ring_recover(&f->ring), 0);
	pk__ring_reader_init(&rd, &f->ring, false);
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "committed part");
	fx_free(f);
}

/* Reserve like pk__ring_write's steps A-C, then never commit. */
static uint64_t reserve_and_abandon(struct pk_ring *ring, uint32_t len)
{
	uint64_t seq = atomic_fetch_add(&ring->h->seq_head, 1);
	uint64_t lpos = atomic_fetch_add(&ring->h->lpos_head, blk_size(len));

	atomic_store(pk__ring_desc(ring, seq), desc_make(seq, lpos, DS_RESERVED));
	return seq;
}

static void test_abandoned_reservation(void **state)
{
	struct fixture *f = fx_new(13);
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	uint64_t dead;
	int i;

	(void)state;
	pk__ring_reader_init(&rd, &f->ring, false);
	put(&f->ring, "before", 6, false, NULL);
	dead = reserve_and_abandon(&f->ring, 10);
	put(&f->ring, "after", 6, false, NULL);
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "before");
	/* In progress: the reader waits rather than skip at once. */
	assert_int_equal(pk__ring_read(&rd, &rec), 0);
	assert_int_equal(rd.next, dead);
	/* After the stall limit it gives up on it. */
	rd.stall_limit_ns = 0;
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "after");
	assert_int_equal(rec.seq, dead + 1);

	/* Writers never wait for it: wrap the descriptor ring over it. */
	for (i = 0; i < (int)(f->ring.desc_mask + 1) * 2; i++)
		assert_int_equal(put(&f->ring, "x", 6, false, NULL), 0);
	assert_int_equal(atomic_load(&f->ring.h->lost), 1);

	/* A post-mortem reader skips an abandoned record at once. */
	dead = reserve_and_abandon(&f->ring, 10);
	put(&f->ring, "last", 6, false, NULL);
	pk__ring_reader_init(&rd, &f->ring, true);
	rd.next = dead;
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "last");
	fx_free(f);
}

/*
 * Poll (up to 10 s) until @n waiters are registered and their lease, renewed
 * after @after, runs: the newest of them is then inside pk__ring_wait() for
 * good (a timed-out sleep renews the lease without leaving).
 */
static void await_waiters(const struct pk_ring_hdr *h, uint32_t n, uint64_t after)
{
	uint64_t until;
	int i;

	for (i = 0; i < 10000; i++) {
		until = atomic_load(&h->wait_until);
		if (atomic_load(&h->waiters) == n && until > after && lease_runs(until, now_ns()))
			return;
		usleep(1000);
	}
	fail_msg("%u waiters never registered", n);
}

struct waiter_arg {
	struct pk_ring *ring;
	uint64_t seq;
	int ret;
};

static void *waiter_thread(void *p)
{
	struct waiter_arg *a = p;

	a->ret = pk__ring_wait(a->ring, a->seq, 30000);
	return NULL;
}

/*
 * Writers wake registered waiters (the futex word moves) while their lease
 * runs; a waiter SIGKILLed in its sleep leaves `waiters` raised, and once
 * its lease has run out writers stop making the wake-up call.  A lease left
 * far ahead (an earlier boot) does not count either, and a new waiter is
 * woken again.
 */
static void test_killed_waiter_lease(void **state)
{
	size_t size = pk__ring_region_size(13);
	void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct pk_ring ring;
	struct pk_ring_hdr *h;
	struct waiter_arg wa;
	pthread_t tid;
	uint64_t until;
	uint32_t w;
	pid_t pid;
	int i, st;

	(void)state;
	assert_true(mem != MAP_FAILED);
	pk__ring_format(mem, 13, 0);
	assert_int_equal(pk__ring_attach(&ring, mem, size), 0);
	h = ring.h;

	pid = tu_fork();	/* killed with this test if it fails before the kill below */
	assert_true(pid >= 0);
	if (pid == 0) {
		uint64_t seq = atomic_load(&h->seq_head);

		for (;;)	/* wait for each next record until killed */
			if (pk__ring_wait(&ring, seq, -1) == 1 && pk__ring_readable(&ring, seq))
				seq++;
	}
	/* A live waiter in another process: the writer wakes it. */
	await_waiters(h, 1, 0);
	w = atomic_load(&h->wake);
	until = atomic_load(&h->wait_until);
	assert_int_equal(put(&ring, "wake up", 6, false, NULL), 0);
	assert_int_equal(atomic_load(&h->wake), w + 1);

	/* Killed in its next sleep: the count stays, the lease runs out. */
	await_waiters(h, 1, until);
	kill(pid, SIGKILL);
	assert_int_equal(tu_waitpid(pid, &st, 10000, "waiter in another process"), pid);
	assert_int_equal(atomic_load(&h->waiters), 1);
	for (i = 0; i < 1000 && lease_runs(atomic_load(&h->wait_until), now_ns()); i++)
		usleep(10000);
	assert_false(lease_runs(atomic_load(&h->wait_until), now_ns()));
	w = atomic_load(&h->wake);
	for (i = 0; i < 1000; i++)
		assert_int_equal(put(&ring, "nobody listens", 6, false, NULL), 0);
	assert_int_equal(atomic_load(&h->wake), w);

	/* A lease far ahead of this boot's clock is no lease either. */
	atomic_store(&h->wait_until, now_ns() + 100 * PK_RING_WAIT_LEASE_NS);
	assert_int_equal(put(&ring, "still nobody", 6, false, NULL), 0);
	assert_int_equal(atomic_load(&h->wake), w);

	/* A new waiter replaces that lease and is woken. */
	wa = (struct waiter_arg){ .ring = &ring, .seq = atomic_load(&h->seq_head) };
	assert_int_equal(pthread_create(&tid, NULL, waiter_thread, &wa), 0);
	await_waiters(h, 2, 0);
	assert_int_equal(put(&ring, "for the new waiter", 6, false, NULL), 0);
	assert_int_equal(atomic_load(&h->wake), w + 1);
	pthread_join(tid, NULL);
	assert_int_equal(wa.ret, 1);
	assert_int_equal(atomic_load(&h->waiters), 1);
	munmap(mem, size);
}

/* A stale writer scribbling over a committed record: the reader rejects it. */
static void test_torn_record_rejected(void **state)
{
	struct fixture *f = fx_new(13);
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	uint64_t seq, d, lpos;

	(void)state;
	put(&f->ring, "first record", 6, false, NULL);
	put(&f->ring, "victim record", 6, false, &seq);
	put(&f->ring, "third record", 6, false, NULL);
	d = atomic_load(pk__ring_desc(&f->ring, seq));
	lpos = lpos_expand(atomic_load(&f->ring.h->lpos_head), desc_off(d));
	atomic_store(word_at(&f->ring, lpos, 5), 0x4141414141414141ull);
	pk__ring_reader_init(&rd, &f->ring, false);
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "first record");
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "third record");
	assert_int_equal(rec.seq, seq + 1);

	/* The checksum covers the header words too: here the pid. */
	put(&f->ring, "fourth record", 6, false, &seq);
	d = atomic_load(pk__ring_desc(&f->ring, seq));
	lpos = lpos_expand(atomic_load(&f->ring.h->lpos_head), desc_off(d));
	atomic_fetch_xor(word_at(&f->ring, lpos, 4), 1);
	put(&f->ring, "fifth record", 6, false, NULL);
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "fifth record");
	assert_int_equal(rec.seq, seq + 1);
	fx_free(f);
}

static void test_attach_validation(void **state)
{
	size_t size = pk__ring_region_size(13);
	struct pk_ring ring;
	char *mem = aligned_alloc(64, size);
	struct pk_ring_hdr *h = (struct pk_ring_hdr *)mem;

	(void)state;
	pk__ring_format(mem, 13, 0);
	assert_int_equal(pk__ring_attach(&ring, mem, size), 0);
	assert_int_equal(pk__ring_attach(&ring, mem, size - 1), -EINVAL);
	assert_int_equal(pk__ring_attach(&ring, mem, 100), -EINVAL);
	assert_int_equal(pk__ring_attach(&ring, NULL, size), -EINVAL);
	h->version = 99;
	assert_int_equal(pk__ring_attach(&ring, mem, size), -EPROTO);
	h->version = PK_RING_VERSION;
	h->data_log2 = 40;
	assert_int_equal(pk__ring_attach(&ring, mem, size), -EINVAL);
	h->data_log2 = 12;
	h->data_off += 8;
	assert_int_equal(pk__ring_attach(&ring, mem, size), -EINVAL);
	h->data_off -= 8;
	h->magic ^= 1;
	assert_int_equal(pk__ring_attach(&ring, mem, size), -EINVAL);
	free(mem);
}

static void test_sizes(void **state)
{
	(void)state;
	assert_int_equal(pk__ring_data_log2_for(1000), 0);
	assert_int_equal(pk__ring_data_log2_for(1u << 20), 19);
	assert_true(pk__ring_region_size(pk__ring_data_log2_for(1u << 20)) <= (1u << 20));
	assert_int_equal(pk__ring_data_log2_for((size_t)1 << 40), PK_RING_MAX_DATA_LOG2);
}

/* ---- seq arithmetic over the whole 64-bit space ---- */

static struct fixture *fx_new_at(unsigned data_log2, uint64_t first)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->mem = aligned_alloc(64, pk__ring_region_size(data_log2));
	/* Format must not rely on zeroes. */
	memset(f->mem, 0xa5, pk__ring_region_size(data_log2));
	pk__ring_format(f->mem, data_log2, first);
	assert_int_equal(pk__ring_attach(&f->ring, f->mem, pk__ring_region_size(data_log2)), 0);
	return f;
}

static int put_meta(struct pk_ring *ring, const char *text, int level, uint32_t pid, uint64_t *seq)
{
	struct pk_ring_meta m = { .ts_ns = tu_now_ns(), .pid = pid, .tid = 42,
				  .level = (uint8_t)level,
				  .facility = 1, .flags = 0 };

	return pk__ring_write(ring, &m, text, (uint32_t)strlen(text), false, seq);
}

/* Store "seq=<seq>"-carrying self-checking texts; each must get the next seq. */
static void put_checked(struct pk_ring *ring, uint64_t first, uint64_t count)
{
	char buf[200];
	uint64_t i, seq, want = atomic_load(&ring->h->seq_head);

	for (i = 0; i < count; i++, want++) {
		tu_make_text(buf, sizeof(buf), 7, want - first, (size_t)((want * 7) % 90));
		seq = 0;
		assert_int_equal(put(ring, buf, 6, false, &seq), 0);
		assert_int_equal(seq, want);
	}
}

/* The record at @seq of a put_checked() run from @first, intact? */
static void assert_checked(const struct pk_ring_rec *rec, uint64_t first)
{
	unsigned w;
	uint64_t c;

	assert_int_equal(tu_check_text(rec->text, rec->len, &w, &c), 0);
	assert_int_equal(w, 7);
	assert_int_equal(c, rec->seq - first);
}

/* Write one record and read it back at once, @count times (no lapping). */
static void put_read(struct pk_ring *ring, struct pk_ring_reader *rd, uint64_t first,
		     uint64_t count)
{
	struct pk_ring_rec rec;
	uint64_t i, want;

	for (i = 0; i < count; i++) {
		want = atomic_load(&ring->h->seq_head);
		put_checked(ring, first, 1);
		assert_int_equal(pk__ring_read(rd, &rec), 1);
		assert_int_equal(rec.seq, want);
		assert_checked(&rec, first);
	}
	assert_int_equal(pk__ring_read(rd, &rec), 0);
}

static const uint64_t edges[] = {
	0, 3, (1ull << 31) - 3, 1ull << 31, (1ull << 31) + 1, (3ull << 30) + 17, (1ull << 32) - 3,
	(1ull << 32) - 1, (1ull << 32) + 5, (5ull << 31) + 2, (1ull << 33) - 3, (1ull << 63) - 3,
	(1ull << 63) + (1ull << 31) + 9, PK_RING_SEQ_LIMIT - 70,
};

/*
 * A store whose numbering starts just before an edge of the seq space:
 * writes past it succeed with consecutive seqs, through several laps of
 * the descriptor ring; a reader that keeps up gets everything intact and
 * in order; a lapped reader jumps and then gets the newest, intact;
 * oldest, readable and recover agree.
 */
static void test_seq_edges(void **state)
{
	struct pk_ring_reader rd, lapped, late;
	struct pk_ring_rec rec;
	uint64_t n, first, head, prev, i, oldest;
	size_t e;

	(void)state;
	for (e = 0; e < sizeof(edges) / sizeof(edges[0]); e++) {
		struct fixture *f = fx_new_at(13, edges[e]);

		first = edges[e];
		n = f->ring.desc_mask + 1;
		pk__ring_reader_init(&rd, &f->ring, false);
		pk__ring_reader_init(&lapped, &f->ring, false);
		assert_int_equal(rd.next, first);
		assert_int_equal(pk__ring_oldest(&f->ring, false), first);
		assert_int_equal(pk__ring_oldest(&f->ring, true), first);
		assert_false(pk__ring_readable(&f->ring, first));
		assert_int_equal(pk__ring_read(&rd, &rec), 0);

		/* A few, read one by one, across the edge. */
		put_checked(&f->ring, first, 8);
		assert_true(pk__ring_readable(&f->ring, first));
		assert_true(pk__ring_readable(&f->ring, first + 7));
		assert_false(pk__ring_readable(&f->ring, first + 8));
		for (i = 0; i < 8; i++) {
			assert_int_equal(pk__ring_read(&rd, &rec), 1);
			assert_int_equal(rec.seq, first + i);
			assert_checked(&rec, first);
		}
		assert_int_equal(pk__ring_read(&rd, &rec), 0);

		/* Five laps of the descriptor ring, read as they come. */
		for (i = 0; i < 5 * n; i++) {
			put_checked(&f->ring, first, 1);
			assert_int_equal(pk__ring_read(&rd, &rec), 1);
			assert_int_equal(rec.seq, first + 8 + i);
			assert_checked(&rec, first);
		}
		head = atomic_load(&f->ring.h->seq_head);
		assert_int_equal(head, first + 8 + 5 * n);
		assert_int_equal(atomic_load(&f->ring.h->reserve_failed), 0);
		assert_int_equal(atomic_load(&f->ring.h->lost), 0);

		/* The reader that never read: one jump, then the newest in order. */
		assert_int_equal(pk__ring_read(&lapped, &rec), 1);
		assert_true(rec.seq > first + 8);
		assert_checked(&rec, first);
		oldest = pk__ring_oldest(&f->ring, false);
		assert_int_equal(rec.seq, oldest);
		prev = rec.seq;
		while (pk__ring_read(&lapped, &rec) == 1) {
			assert_int_equal(rec.seq, prev + 1);
			assert_checked(&rec, first);
			prev = rec.seq;
		}
		assert_int_equal(prev, head - 1);
		assert_true(head - oldest <= n);
		/* Overwritten seqs are gaps, readable at once; the head is not. */
		assert_true(pk__ring_readable(&f->ring, first));
		assert_true(pk__ring_readable(&f->ring, oldest - 1));
		assert_false(pk__ring_readable(&f->ring, head));

		/* Recovery finds nothing to retire and changes nothing readers see. */
		assert_int_equal(pk__ring_recover(&f->ring), 0);
		pk__ring_reader_init(&late, &f->ring, false);
		assert_int_equal(late.next, oldest);
		for (i = oldest; i < head; i++) {
			assert_int_equal(pk__ring_read(&late, &rec), 1);
			assert_int_equal(rec.seq, i);
			assert_checked(&rec, first);
		}
		assert_int_equal(pk__ring_read(&late, &rec), 0);
		/* A writer dead mid-way is retired at once by recovery; the next is read. */
		i = reserve_and_abandon(&f->ring, 10);
		put_checked(&f->ring, first, 1);
		assert_int_equal(pk__ring_read(&late, &rec), 0);	/* waits for it */
		assert_int_equal(pk__ring_recover(&f->ring), 1);
		assert_int_equal(pk__ring_read(&late, &rec), 1);
		assert_int_equal(rec.seq, i + 1);
		assert_checked(&rec, first);
		assert_true(pk__ring_oldest(&f->ring, false) >= oldest);
		fx_free(f);
	}
}

/*
 * PK_BUFFER_CLEAR on a store past 2^31 records: pk__ring_restart moves
 * first_seq to the head and every write still succeeds.  A store that an
 * earlier version cleared this way (descriptors zeroed) refused every
 * write; the recovery at the next exclusive open repairs it.
 */
static void test_restart_past_2_31(void **state)
{
	static const uint64_t heads[] = { (1ull << 31) + 5, (1ull << 32) - 2, (7ull << 29) + 123 };
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	uint64_t head, seq, n;
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(heads) / sizeof(heads[0]); k++) {
		struct fixture *f = fx_new_at(13, heads[k] - 100);

		n = f->ring.desc_mask + 1;
		put_checked(&f->ring, heads[k] - 100, 100);
		head = atomic_load(&f->ring.h->seq_head);
		assert_int_equal(head, heads[k]);
		assert_int_equal(pk__ring_restart(&f->ring), head);
		assert_int_equal(f->ring.h->first_seq, head);
		assert_int_equal(atomic_load(&f->ring.h->clear_seq), head);
		pk__ring_reader_init(&rd, &f->ring, false);
		assert_int_equal(rd.next, head);
		assert_int_equal(pk__ring_read(&rd, &rec), 0);
		put_read(&f->ring, &rd, head, 3 * n);

		/* The zeroed descriptors an earlier clear left at this head. */
		head = atomic_load(&f->ring.h->seq_head);
		f->ring.h->first_seq = head;
		atomic_store(&f->ring.h->clear_seq, head);
		memset((void *)f->ring.desc, 0, n * 8);
		if ((uint32_t)head > (1u << 31)) {
			seq = 0;
			assert_int_equal(put(&f->ring, "refused", 6, false, &seq), -ENOBUFS);
			assert_int_equal(seq, head);	/* the seq is reported all the same */
			head++;
			f->ring.h->first_seq = head;
			atomic_store(&f->ring.h->clear_seq, head);
		}
		assert_int_equal(pk__ring_recover(&f->ring), 0);
		pk__ring_reader_init(&rd, &f->ring, false);
		assert_int_equal(rd.next, head);
		put_read(&f->ring, &rd, head, 2 * n);
		fx_free(f);
	}
}

/*
 * Hostile descriptors (a damaged or crafted file): every one claims a seq
 * far newer than any handed out.  Writers refuse them; recovery, which
 * every exclusive open runs, makes each consistent with the header, and
 * writes succeed again.  A reader on the damaged store returns at once.
 */
static void test_hostile_descriptors(void **state)
{
	struct fixture *f = fx_new_at(13, (1ull << 32) - 3);
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	uint64_t n = f->ring.desc_mask + 1, first = (1ull << 32) - 3, head, i, seq, retired;

	(void)state;
	put_checked(&f->ring, first, 10);
	head = atomic_load(&f->ring.h->seq_head);
	for (i = 0; i < n; i++)	/* every descriptor, as the seq that next uses it finds it */
		atomic_store(pk__ring_desc(&f->ring, head + i), desc_make(head + i + 1000 * n, 0, DS_FINAL));
	pk__ring_reader_init(&rd, &f->ring, false);
	rd.next = first;
	assert_int_equal(pk__ring_read(&rd, &rec), 0);	/* all "overwritten": nothing */
	assert_int_equal(rd.next, head);
	assert_int_equal(put(&f->ring, "refused", 6, false, &seq), -ENOBUFS);
	assert_int_equal(seq, head);
	head++;

	retired = pk__ring_recover(&f->ring);
	assert_int_equal(retired, head - first);	/* the records it held are lost */
	pk__ring_reader_init(&rd, &f->ring, false);
	assert_int_equal(pk__ring_oldest(&f->ring, false), head);
	assert_int_equal(rd.next, head);
	put_read(&f->ring, &rd, first, 2 * n);
	fx_free(f);
}

/* Write a formatted store of 2^12 data bytes at @first to @path, with @fill records. */
static void make_store_file(const char *path, uint64_t first, int fill)
{
	size_t size = pk__ring_region_size(13);
	struct pk_ring ring;
	void *mem = aligned_alloc(64, size);
	FILE *fp;
	int i;

	pk__ring_format(mem, 13, first);
	assert_int_equal(pk__ring_attach(&ring, mem, size), 0);
	for (i = 0; i < fill; i++)
		assert_int_equal(put(&ring, "from the file", 6, false, NULL), 0);
	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(mem, 1, size, fp), size);
	fclose(fp);
	free(mem);
}

static void set_bounds(const char *path, uint64_t first, uint64_t clear, uint64_t head)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &first, 8, offsetof(struct pk_ring_hdr, first_seq)), 8);
	assert_int_equal(pwrite(fd, &clear, 8, offsetof(struct pk_ring_hdr, clear_seq)), 8);
	assert_int_equal(pwrite(fd, &head, 8, offsetof(struct pk_ring_hdr, seq_head)), 8);
	close(fd);
}

/*
 * Open @path as a writer (with and without PK_BUFFER_CLEAR) and as a
 * reader.  @ok: all succeed, and writes then succeed and read back;
 * otherwise all fail with -EINVAL as a corrupt store and the file is left
 * as it was.
 */
static void open_store_file(const char *path, bool ok)
{
	size_t len0, len1, size;
	char *before = tu_read_file(path, &len0), *after;
	struct pk_config cfg;
	struct pk_ring ring;
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	void *mem;
	bool live;
	uint64_t seq, seq2;
	int fd, pass;

	assert_non_null(before);
	for (pass = 0; pass < 2; pass++) {
		pk_config_init(&cfg);
		cfg.buffer_path = path;
		cfg.buffer_size = pk__ring_region_size(13);
		cfg.flags = pass ? PK_CFG_BUFFER_CLEAR : 0;
		fd = -1;
		if (!ok) {
			assert_int_equal(pk__persist_open(&cfg, &mem, &size, &fd), -EINVAL);
			continue;
		}
		assert_int_equal(pk__persist_open(&cfg, &mem, &size, &fd), 0);
		assert_int_equal(pk__ring_attach(&ring, mem, size), 0);
		pk__ring_reader_init(&rd, &ring, false);
		assert_int_equal(put(&ring, "written", 6, false, &seq), 0);
		assert_int_equal(put(&ring, "and again", 6, false, &seq2), 0);
		assert_int_equal(seq2, seq + 1);
		assert_int_equal(pk__ring_read(&rd, &rec), 1);
		if (pass) {
			assert_int_equal(rec.seq, seq);
			assert_string_equal(rec.text, "written");
		}
		pk__persist_close(mem, size, fd);
	}
	if (!ok) {
		after = tu_read_file(path, &len1);
		assert_non_null(after);
		assert_int_equal(len0, len1);
		assert_memory_equal(before, after, len0);
		free(after);
		errno = 0;
		assert_int_equal(pk__persist_map_file(path, false, &mem, &size, &fd, &live),
				 -EINVAL);
	}
	free(before);
}

/*
 * A store file whose header holds absurd sequence bounds is corrupt: it
 * is refused like any invalid store, by writers and readers, and left as
 * it was.  Bounds at the far edges of what is valid work.
 */
static void test_hostile_seq_bounds(void **state)
{
	char *path = tu_tmp_path("ring-bounds");
	uint64_t near_top = UINT64_MAX - 2;

	(void)state;
	/* Near 2^64: the numbering would wrap. */
	make_store_file(path, 0, 3);
	set_bounds(path, near_top, near_top, near_top);
	open_store_file(path, false);
	/* Only the head absurd. */
	set_bounds(path, 0, 0, near_top);
	open_store_file(path, false);
	/* Just past the limit. */
	set_bounds(path, PK_RING_SEQ_LIMIT + 1, PK_RING_SEQ_LIMIT + 1, PK_RING_SEQ_LIMIT + 1);
	open_store_file(path, false);
	/* Head before the first seq; clear point past the head. */
	set_bounds(path, 1000, 1000, 999);
	open_store_file(path, false);
	set_bounds(path, 0, 1ull << 40, 3);
	open_store_file(path, false);
	unlink(path);

	/*
	 * Valid, far out: a store at the writers' limit (test_storesec: past
	 * it, readers only), one past 2^63, one cleared past 2^31.
	 */
	make_store_file(path, PK_RING_SEQ_WRITE_LIMIT - 100, 1);
	open_store_file(path, true);
	unlink(path);
	make_store_file(path, (1ull << 63) - 3, 5);
	open_store_file(path, true);
	unlink(path);
	/* Bounds moved to 2^31 + 9 over descriptors of seqs near 0, as a hand edit would. */
	make_store_file(path, 0, 3);
	set_bounds(path, (1ull << 31) + 9, (1ull << 31) + 9, (1ull << 31) + 9);
	open_store_file(path, true);
	unlink(path);
	free(path);
}

/* ---- filtered reads ---- */

/* Level and pid of record i of the mixed set: mixed, with a long run of debug. */
static int mixed_level(uint64_t i) { return i >= 200 && i < 400 ? 7 : (int)((i * 5 + i / 8) % 8); }
static uint32_t mixed_pid(uint64_t i) { return i % 3 == 2 ? 777 : 4321; }

/*
 * Lost records are counted by the view's own table (ringbuf.c, "OWN
 * RECORDS"): two "processes" write one region, one of them through a view
 * with a table.  A reader that is lapped (a jump) or overtaken one record
 * at a time must count exactly the lost records of its own view that its
 * level passes, those still named by their table word; in a region with
 * no other writer (sole) every lost seq but the known filtered ones.
 * Over first seqs that put the 32-bit descriptor seqs, the table's 60-bit
 * seqs and the write limit at the edges.
 */
static void own_lost_run(uint64_t first, bool two, uint64_t n, bool periodic, uint64_t seed)
{
	struct fixture *f = fx_new_at(13, first);
	struct pk_ring a = f->ring, b = f->ring;
	struct pk_ring_filter flt = { .max_level = 5, .pid = 0, .own = true, .sole = !two };
	uint64_t w, i, seq, skipped = 0, want = 0, want_unknown = 0, truth = 0, read = 0, *last;
	struct pk_ring_lost lost = { 0, 0, 0 };
	uint8_t *who, *lvl, *got;
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	int ret;

	w = pk__ring_own_words(&a);
	a.own = calloc(w, sizeof(uint64_t));
	a.own_mask = w - 1;
	who = calloc(n, 1);
	lvl = calloc(n, 1);
	got = calloc(n, 1);
	last = malloc(w * sizeof(*last));
	assert_non_null(a.own);
	assert_non_null(last);
	memset(last, 0xff, w * sizeof(*last));
	pk__ring_reader_init(&rd, &a, false);
	rd.next = first;
	rd.stall_limit_ns = 0;
	for (i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		who[i] = two && (seed >> 40) % 3 == 0;	/* 1: the other process */
		lvl[i] = (uint8_t)((seed >> 50) % 8);
		assert_int_equal(put_meta(who[i] ? &b : &a, "x", lvl[i], who[i] ? 2 : 1, &seq), 0);
		assert_true(seq == first + i);
		if (!who[i])
			last[seq & (w - 1)] = seq;
		/* Read now and then, so that both a lap and single losses occur. */
		if (periodic && (seed >> 20) % 211 == 0)
			while ((ret = pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost)) != 0)
				if (ret == 1)
					got[rec.seq - first] = 1;
	}
	while ((ret = pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost)) != 0)
		if (ret == 1)
			got[rec.seq - first] = 1;
	/* Nothing else was lost than what passed unread. */
	for (i = 0; i < n; i++) {
		uint64_t sq = first + i, named = last[sq & (w - 1)];
		bool passes = !who[i] && lvl[i] < 5;
		bool unknown = named != UINT64_MAX && named > sq, unnoted = !unknown && named != sq;

		read += got[i];
		if (got[i])
			continue;
		if (passes)
			truth++;
		/*
		 * Read at the end only: the table as it is then.  Read every
		 * two hundred records or so: the table still names every seq
		 * when it is counted.
		 */
		if (periodic) {
			unknown = false;
			unnoted = who[i];
		}
		if (unknown || (unnoted && !two)) {
			want++;	/* owner or level unknown: counted */
			want_unknown++;
		} else if (!unnoted && passes) {
			want++;	/* known to be ours and printable */
		}
	}
	print_message("first %#llx, %s, %s: %llu stored, %llu read, %llu ours and printable "
		      "lost; counted %llu (expected %llu), %llu unknown (expected %llu)\n",
		      (unsigned long long)first, two ? "two writers" : "sole writer",
		      periodic ? "read often" : "read once", (unsigned long long)n,
		      (unsigned long long)read, (unsigned long long)truth,
		      (unsigned long long)lost.counted, (unsigned long long)want,
		      (unsigned long long)lost.unknown, (unsigned long long)want_unknown);
	assert_true(truth > 0);
	assert_int_equal(lost.counted, want);
	assert_int_equal(lost.unknown, want_unknown);
	/* Nothing of ours goes uncounted; what is attributed is never too much. */
	assert_true(lost.counted >= truth);
	assert_true(lost.counted - lost.unknown <= truth);
	if (periodic)
		assert_int_equal(lost.counted, truth);
	free(last);
	free(got);
	free(lvl);
	free(who);
	free(a.own);
	fx_free(f);
}

/*
 * OWN FILTERED SKIP (ringbuf.c): a filtered read passes over a seq the own
 * table names at a rejected level at once, whatever its descriptor says
 * (a writer held mid-record, overwritten), counted skipped once; a seq
 * named at a level the filter passes, or not named, is read as before.
 */
static void test_own_filtered_skip(void **state)
{
	struct fixture *f = fx_new(13);
	struct pk_ring a = f->ring;
	struct pk_ring_filter flt = { .max_level = 4, .pid = 0, .own = true, .sole = true };
	struct pk_ring_filter noown = flt;
	struct pk_ring_lost lost = { 0, 0, 0 };
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	uint64_t w, seq, s_dbg, s_err, d, skipped = 0;

	(void)state;
	noown.own = false;
	w = pk__ring_own_words(&a);
	a.own = calloc(w, sizeof(uint64_t));
	a.own_mask = w - 1;
	assert_non_null(a.own);
	/* A debug record whose writer is held before its commit. */
	assert_int_equal(put_meta(&a, "debug, in progress", 7, 1, &s_dbg), 0);
	d = atomic_load(pk__ring_desc(&a, s_dbg));
	atomic_store(pk__ring_desc(&a, s_dbg), (d & ~7ull) | DS_RESERVED);
	assert_int_equal(put_meta(&a, "an error after it", 3, 1, &s_err), 0);
	assert_int_equal(s_err, s_dbg + 1);

	/* Without the table the reader waits at the record in progress... */
	pk__ring_reader_init(&rd, &a, false);
	assert_int_equal(pk__ring_read_filtered(&rd, &rec, &noown, &skipped, &lost), 0);
	assert_int_equal(rd.next, s_dbg);
	assert_int_equal(skipped, 0);
	/* ...with it, passes it over and reads the error behind it. */
	pk__ring_reader_init(&rd, &a, false);
	assert_int_equal(pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost), 1);
	assert_int_equal(rec.seq, s_err);
	assert_string_equal(rec.text, "an error after it");
	assert_int_equal(skipped, 1);
	assert_int_equal(lost.counted + lost.filtered + lost.unknown, 0);

	/* A record the filter passes, held mid-record: waited for, not skipped. */
	assert_int_equal(put_meta(&a, "warning, in progress", 2, 1, &seq), 0);
	d = atomic_load(pk__ring_desc(&a, seq));
	atomic_store(pk__ring_desc(&a, seq), (d & ~7ull) | DS_RESERVED);
	assert_int_equal(pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost), 0);
	assert_int_equal(rd.next, seq);
	assert_int_equal(skipped, 1);
	atomic_store(pk__ring_desc(&a, seq), d);
	assert_int_equal(pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost), 1);
	assert_int_equal(rec.seq, seq);

	/*
	 * A seq taken and noted, its writer held before it claims the
	 * descriptor (which still names an older seq): passed over too.
	 */
	assert_int_equal(put_meta(&a, "debug, not claimed yet", 7, 1, &seq), 0);
	atomic_store(pk__ring_desc(&a, seq), desc_make(seq - (a.desc_mask + 1), 0, DS_FINAL));
	assert_int_equal(put_meta(&a, "an error after that", 3, 1, &s_err), 0);
	assert_int_equal(pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost), 1);
	assert_int_equal(rec.seq, s_err);
	assert_int_equal(skipped, 2);
	assert_int_equal(lost.counted + lost.filtered + lost.unknown, 0);

	/* A seq the table does not name (another process's): read as before. */
	assert_int_equal(put_meta(&a, "debug, not noted", 7, 1, &seq), 0);
	atomic_store(own_at(&a, seq), 0);
	assert_int_equal(pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost), 0);
	assert_int_equal(rd.next, seq + 1);
	assert_int_equal(skipped, 3);	/* BLK_FILTERED, from its header */

	/*
	 * Debug records, most of them overwritten before the reader came:
	 * each is skipped or counted lost->filtered (which a console adds to
	 * its skipped) once.
	 */
	{
		struct pk_ring_reader rd2;
		struct pk_ring_lost lost2 = { 0, 0, 0 };
		uint64_t first = rd.next, i, sk2 = 0, n = 3 * (a.desc_mask + 1);

		for (i = 0; i < n; i++)
			assert_int_equal(put_meta(&a, "debug flood", 7, 1, &seq), 0);
		rd2 = rd;
		while (pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost) != 0)
			;
		assert_int_equal(rd.next, first + n);
		assert_int_equal(lost.counted + lost.unknown, 0);
		assert_int_equal(skipped - 3 + lost.filtered, n);
		while (pk__ring_read_filtered(&rd2, &rec, &noown, &sk2, &lost2) != 0)
			;
		/* Without the table (no own counting): every lost seq counted. */
		assert_int_equal(rd2.next, first + n);
		assert_int_equal(sk2 + lost2.counted, n);
	}
	free(a.own);
	fx_free(f);
}

/*
 * A fork child forgets the seqs its parent noted up to the fork
 * (pk__ring_own_forget): lost, they are another process's.
 */
static void test_own_forget(void **state)
{
	struct fixture *f = fx_new(13);
	struct pk_ring a = f->ring;
	struct pk_ring_filter flt = { .max_level = 8, .pid = 0, .own = true, .sole = false };
	struct pk_ring_lost lost = { 0, 0, 0 };
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	uint64_t w, i, seq, skipped = 0;

	(void)state;
	w = pk__ring_own_words(&a);
	a.own = calloc(w, sizeof(uint64_t));
	a.own_mask = w - 1;
	assert_non_null(a.own);
	for (i = 0; i < 1000; i++)
		assert_int_equal(put_meta(&a, "noted", 3, 1, &seq), 0);
	/* The "parent's" seqs 600..999 as a child sees them after the fork. */
	pk__ring_own_forget(&a, 600, 1000);
	pk__ring_reader_init(&rd, &a, false);
	rd.next = 0;
	while (pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost) != 0)
		;
	/* 1000 seqs, 128 descriptors: all but the last lap lost; 600 of them ours. */
	print_message("lost %llu counted (%llu unknown), read up to %llu\n",
		      (unsigned long long)lost.counted, (unsigned long long)lost.unknown,
		      (unsigned long long)rd.next);
	assert_int_equal(lost.unknown, 0);
	assert_int_equal(lost.counted, 600);
	free(a.own);
	fx_free(f);
}

/*
 * A fork child's copy of the own table stopped noting at the fork, but
 * the head it forgets up to is read later, in the child's fork handler:
 * the parent may have taken more than a table's span of seqs by then
 * (a storming parent while the child waits for a CPU).  Every note of
 * the parent's since fork_head must go all the same, however far the
 * range runs, and the child's own notes after it must stay.
 */
static void test_own_forget_far(void **state)
{
	struct fixture *f = fx_new(13);
	struct pk_ring a = f->ring, b = f->ring;
	struct pk_ring_filter flt = { .max_level = 8, .pid = 0, .own = true, .sole = false };
	struct pk_ring_lost lost = { 0, 0, 0 };
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	uint64_t w, i, seq, to, skipped = 0, extra[] = { 0, 1, 777 };
	unsigned k;

	(void)state;
	w = pk__ring_own_words(&a);
	a.own = calloc(w, sizeof(uint64_t));
	a.own_mask = w - 1;
	b.own = NULL;	/* the parent's view after the fork: its notes are not the child's */
	assert_non_null(a.own);
	for (k = 0; k < sizeof(extra) / sizeof(extra[0]); k++) {
		uint64_t fork_head = atomic_load(&f->ring.h->seq_head) + 600;

		memset((void *)a.own, 0, w * sizeof(uint64_t));
		/* The parent's seqs up to the table's copy, 400 of them after fork_head. */
		for (i = 0; i < 1000; i++)
			assert_int_equal(put_meta(&a, "parent", 3, 1, &seq), 0);
		/* Taken after the copy, before the child's handler reads the head. */
		for (i = 0; i < w - 400 + extra[k]; i++)
			assert_int_equal(put_meta(&b, "parent later", 3, 1, &seq), 0);
		to = atomic_load(&f->ring.h->seq_head);
		pk__ring_own_forget(&a, fork_head, to);
		/* The child's own 10, then overwritten by the parent. */
		for (i = 0; i < 10; i++)
			assert_int_equal(put_meta(&a, "child", 3, 2, &seq), 0);
		for (i = 0; i < 1000; i++)
			assert_int_equal(put_meta(&b, "parent after", 3, 1, &seq), 0);
		pk__ring_reader_init(&rd, &a, false);
		rd.next = fork_head;
		memset(&lost, 0, sizeof(lost));
		while (pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost) != 0)
			;
		print_message("forgot [%llu, %llu) (%llu seqs, table %llu): lost %llu counted "
			      "(%llu unknown)\n", (unsigned long long)fork_head,
			      (unsigned long long)to, (unsigned long long)(to - fork_head),
			      (unsigned long long)w, (unsigned long long)lost.counted,
			      (unsigned long long)lost.unknown);
		/*
		 * The reader spans more than the table: a seq of the child's
		 * class before its note is counted as unknown, never
		 * attributed.  Attributed: the child's 10, no more.
		 */
		assert_true(lost.unknown <= 10);
		assert_int_equal(lost.counted - lost.unknown, 10);
	}
	free(a.own);
	fx_free(f);
}

/*
 * The window between taking a seq (write:A) and noting it in the own
 * table (own:A): a writer of this view held there while a reader gives
 * up on its seq, and that then claims and commits, stored a record the
 * reader never printed.  The reader must count it once the writer's claim
 * shows whose it was, and must not count one of another view's writers
 * held there.  Seeded rounds: which view's writer is held, how many
 * records others store past it, whether the reader looks in between.
 */
static _Thread_local bool note_hold_me;
static _Atomic int note_held, note_release;

static void note_hook(void)
{
	if (!note_hold_me)
		return;
	atomic_store(&note_held, 1);
	while (!atomic_load(&note_release))
		sched_yield();
}

struct note_writer {
	pthread_t thread;
	struct pk_ring *ring;
	uint32_t pid;
	uint64_t seq;
	int ret;
};

static void *note_writer_main(void *arg)
{
	struct note_writer *nw = arg;

	note_hold_me = true;
	nw->ret = put_meta(nw->ring, "held", 3, nw->pid, &nw->seq);
	return NULL;
}

static uint64_t note_drain(struct pk_ring_reader *rd, const struct pk_ring_filter *flt,
			   struct pk_ring_lost *lost, uint64_t held, bool *read_held)
{
	struct pk_ring_rec rec;
	uint64_t skipped = 0, n = 0;
	int ret;

	while ((ret = pk__ring_read_filtered(rd, &rec, flt, &skipped, lost)) != 0) {
		if (ret != 1)
			continue;
		n++;
		if (rec.seq == held)
			*read_held = true;
	}
	return n;
}

static void test_note_window(void **state)
{
	struct fixture *f = fx_new(14);
	struct pk_ring a = f->ring, b = f->ring;
	struct pk_ring_filter flt = { .max_level = 8, .pid = 1, .own = true, .sole = false };
	struct pk_ring_lost lost = { 0, 0, 0 };
	struct pk_ring_reader rd;
	const char *e = getenv("PK_TEST_SEED");
	uint64_t rng = e ? strtoull(e, NULL, 0) : 22, w, i, seq, k, want = 0, given_up = 0;
	unsigned round, ours_rounds = 0;

	(void)state;
	print_message("seed %llu (PK_TEST_SEED)\n", (unsigned long long)rng);
	w = pk__ring_own_words(&a);
	a.own = calloc(w, sizeof(uint64_t));
	a.own_mask = w - 1;
	assert_non_null(a.own);
	pk__ring_reader_init(&rd, &a, false);
	rd.stall_limit_ns = 0;	/* give up on a record in progress at once */
	for (round = 0; round < 400; round++) {
		struct note_writer nw = { 0 };
		bool ours, read_held = false, look;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		ours = (rng >> 33) & 1;
		look = (rng >> 34) & 1;
		k = 1 + (rng >> 40) % 200;	/* records stored past the held one */
		nw.ring = ours ? &a : &b;
		nw.pid = ours ? 1 : 2;
		atomic_store(&note_held, 0);
		atomic_store(&note_release, 0);
		assert_int_equal(pthread_create(&nw.thread, NULL, note_writer_main, &nw), 0);
		while (!atomic_load(&note_held))
			sched_yield();
		/* Others store past it; the reader gives up on it, unclaimed and unnoted. */
		for (i = 0; i < k; i++)
			assert_int_equal(put_meta((i & 1) ? &b : &a, "past", 3, (i & 1) ? 2 : 1,
						  &seq), 0);
		note_drain(&rd, &flt, &lost, UINT64_MAX, &read_held);
		/* Then it is noted, claimed and committed: stored, not printed. */
		atomic_store(&note_release, 1);
		pthread_join(nw.thread, NULL);
		assert_int_equal(nw.ret, 0);
		assert_true(rd.next > nw.seq);
		given_up++;
		if (ours) {
			want++;
			ours_rounds++;
		}
		if (look)	/* a later record, or none: the count must come either way */
			assert_int_equal(put_meta(&b, "later", 3, 2, &seq), 0);
		note_drain(&rd, &flt, &lost, nw.seq, &read_held);
		assert_false(read_held);
		if (lost.counted != want)
			print_message("round %u (%s writer held, %llu past it): %llu counted, "
				      "expected %llu\n", round, ours ? "own" : "other",
				      (unsigned long long)k, (unsigned long long)lost.counted,
				      (unsigned long long)want);
		assert_int_equal(lost.counted, want);
	}
	print_message("%llu held writers given up on, %u of them this view's: %llu counted "
		      "(%llu unknown)\n", (unsigned long long)given_up, ours_rounds,
		      (unsigned long long)lost.counted, (unsigned long long)lost.unknown);
	assert_int_equal(lost.unknown, 0);
	free(a.own);
	fx_free(f);
}

static void test_own_lost_counts(void **state)
{
	static const uint64_t firsts[] = {
		0, (1ull << 31) - 70000, (1ull << 32) - 70000, (1ull << 60) - 70000,
		PK_RING_SEQ_WRITE_LIMIT - 300000,
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(firsts) / sizeof(firsts[0]); i++) {
		own_lost_run(firsts[i], true, 3000, false, 1 + i);	/* within the table */
		own_lost_run(firsts[i], true, 250000, true, 11 + i);
		own_lost_run(firsts[i], true, 250000, false, 21 + i);	/* classes reused */
		own_lost_run(firsts[i], false, 250000, true, 31 + i);
		own_lost_run(firsts[i], false, 250000, false, 41 + i);
	}
}

/*
 * Mixed levels and pids: a filtered read returns exactly the records the
 * filter passes, intact, counts every other one as skipped (none as lost),
 * and gives its caller a look-in every PK_RING_SKIP_BATCH records.
 */
static void test_filtered_read(void **state)
{
	struct fixture *f = fx_new_at(16, (1ull << 32) - 40);
	struct pk_ring_filter flt = { .max_level = 5, .pid = 4321 }, all = { 8, 0, false, false, 0 };
	struct pk_ring_reader rd, plain;
	struct pk_ring_rec rec, rec2;
	uint64_t first = (1ull << 32) - 40, skipped = 0, i, prev, want_skipped = 0;
	char buf[64];
	int ret, again = 0, want_again, run;

	(void)state;
	for (i = 0; i < 500; i++) {
		snprintf(buf, sizeof(buf), "record %llu", (unsigned long long)i);
		assert_int_equal(put_meta(&f->ring, buf, mixed_level(i), mixed_pid(i), NULL), 0);
	}
	pk__ring_reader_init(&rd, &f->ring, false);
	prev = first - 1;
	for (;;) {
		uint64_t before = rd.next, sk = skipped;

		ret = pk__ring_read_filtered(&rd, &rec, &flt, &skipped, NULL);
		if (ret == -EAGAIN) {
			again++;
			assert_int_equal(skipped - sk, PK_RING_SKIP_BATCH);
			assert_int_equal(rd.next - before, PK_RING_SKIP_BATCH);
			continue;
		}
		if (ret == 0)
			break;
		assert_int_equal(ret, 1);
		/* Everything passed over since the last record was filtered. */
		for (i = prev + 1; i < rec.seq; i++) {
			assert_true(mixed_level(i - first) >= 5 || mixed_pid(i - first) != 4321);
			want_skipped++;
		}
		i = rec.seq - first;
		assert_true(mixed_level(i) < 5 && mixed_pid(i) == 4321);
		snprintf(buf, sizeof(buf), "record %llu", (unsigned long long)i);
		assert_string_equal(rec.text, buf);
		assert_int_equal(rec.meta.level, mixed_level(i));
		assert_int_equal(rec.meta.pid, 4321);
		assert_int_equal(skipped, want_skipped);
		prev = rec.seq;
	}
	for (i = prev + 1; i < first + 500; i++)
		want_skipped++;
	assert_int_equal(skipped, want_skipped);
	assert_int_equal(rd.next, first + 500);
	assert_true(want_skipped > 300);
	/* A look-in after every PK_RING_SKIP_BATCH records passed over in a row. */
	for (i = 0, run = 0, want_again = 0; i < 500; i++) {
		if (mixed_level(i) < 5 && mixed_pid(i) == 4321)
			run = 0;
		else if (++run == PK_RING_SKIP_BATCH && i + 1 < 500)
			want_again++, run = 0;
	}
	assert_true(want_again >= 3);
	assert_int_equal(again, want_again);

	/* A filter that passes everything reads what pk__ring_read reads. */
	pk__ring_reader_init(&rd, &f->ring, false);
	pk__ring_reader_init(&plain, &f->ring, false);
	skipped = 0;
	while ((ret = pk__ring_read_filtered(&rd, &rec, &all, &skipped, NULL)) == 1) {
		assert_int_equal(pk__ring_read(&plain, &rec2), 1);
		assert_int_equal(rec.seq, rec2.seq);
		assert_string_equal(rec.text, rec2.text);
		assert_int_equal(rec.meta.pid, rec2.meta.pid);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(pk__ring_read(&plain, &rec2), 0);
	assert_int_equal(skipped, 0);
	/* No filter at all: the same, and a NULL count is fine. */
	pk__ring_reader_init(&rd, &f->ring, false);
	assert_int_equal(pk__ring_read_filtered(&rd, &rec, NULL, NULL, NULL), 1);
	assert_int_equal(rec.seq, first);
	fx_free(f);
}

/* Word @i of the block of record @seq. */
static _Atomic uint64_t *blk_word(struct pk_ring *ring, uint64_t seq, unsigned i)
{
	uint64_t d = atomic_load(pk__ring_desc(ring, seq));

	return word_at(ring, lpos_expand(atomic_load(&ring->h->lpos_head), desc_off(d)), i);
}

/*
 * A header torn or overwritten under a skip is a loss, never a filtered
 * record; a block of an earlier version (no header check) is validated
 * whole and then filtered.
 */
static void test_filtered_torn_header(void **state)
{
	struct fixture *f = fx_new(14);
	struct pk_ring_filter flt = { .max_level = 5, .pid = 0 };
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	uint64_t skipped = 0, s[6], hw2, hw3, hw4, h, he, ho, w;
	unsigned i, nw;

	(void)state;
	assert_int_equal(put_meta(&f->ring, "debug, ts torn", 7, 1, &s[0]), 0);
	assert_int_equal(put_meta(&f->ring, "debug, made to look like an error", 7, 1, &s[1]), 0);
	assert_int_equal(put_meta(&f->ring, "debug, old format", 7, 1, &s[2]), 0);
	assert_int_equal(put_meta(&f->ring, "error, old format", 3, 1, &s[3]), 0);
	assert_int_equal(put_meta(&f->ring, "debug, intact", 7, 1, &s[4]), 0);
	assert_int_equal(put_meta(&f->ring, "error, intact", 3, 1, &s[5]), 0);

	/* 0: a late store hit its timestamp word. */
	atomic_fetch_xor(blk_word(&f->ring, s[0], 1), 1ull << 40);
	/* 1: its level changed to 3, as a stale writer's header word would. */
	hw2 = atomic_load(blk_word(&f->ring, s[1], 2));
	atomic_store(blk_word(&f->ring, s[1], 2), (hw2 & ~(0xffull << 16)) | 3ull << 16);
	/* 2, 3: no header check, with a checksum as an earlier version made it. */
	for (i = 2; i <= 3; i++) {
		hw2 = atomic_load(blk_word(&f->ring, s[i], 2));
		hw3 = atomic_load(blk_word(&f->ring, s[i], 3));
		hw4 = (uint32_t)atomic_load(blk_word(&f->ring, s[i], 4));
		h = mix(0x243f6a8885a308d3ull, s[i]);
		h = mix(mix(h, atomic_load(blk_word(&f->ring, s[i], 1))), hw2);
		h = mix(mix(h, (uint32_t)hw3), hw4);
		nw = text_words((uint32_t)(hw2 & 0xffff));
		he = SUM_EVEN;
		ho = SUM_ODD;
		for (unsigned k = 0; k < nw; k++) {
			w = atomic_load(blk_word(&f->ring, s[i], 5 + k));
			if (k & 1)
				ho = mix(ho, w);
			else
				he = mix(he, w);
		}
		h = mix(mix(h, he), ho);
		atomic_store(blk_word(&f->ring, s[i], 4), hw4);
		atomic_store(blk_word(&f->ring, s[i], 3), (uint32_t)hw3 | (uint64_t)fold(h) << 32);
	}

	pk__ring_reader_init(&rd, &f->ring, false);
	assert_int_equal(pk__ring_read_filtered(&rd, &rec, &flt, &skipped, NULL), 1);
	assert_string_equal(rec.text, "error, old format");
	assert_int_equal(rec.seq, s[3]);
	/* 0 and 1 lost, 2 filtered (read whole). */
	assert_int_equal(skipped, 1);
	assert_int_equal(pk__ring_read_filtered(&rd, &rec, &flt, &skipped, NULL), 1);
	assert_string_equal(rec.text, "error, intact");
	assert_int_equal(skipped, 2);
	assert_int_equal(pk__ring_read_filtered(&rd, &rec, &flt, &skipped, NULL), 0);

	/* An unfiltered reader agrees: 0 and 1 are torn, 2 and 3 intact. */
	pk__ring_reader_init(&rd, &f->ring, false);
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_int_equal(rec.seq, s[2]);
	assert_string_equal(rec.text, "debug, old format");
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_int_equal(rec.seq, s[3]);
	fx_free(f);
}

/*
 * Filtered skips read the header only.  Not a test of speed (nothing is
 * asserted about time): it prints the cost per record next to a full read
 * of the same 80-byte records, for the record.
 */
static void test_filtered_skip_cost(void **state)
{
	struct fixture *f = fx_new(20);
	struct pk_ring_filter flt = { .max_level = 5, .pid = 0 };
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	char text[81];
	uint64_t skipped = 0, t0, t_skip = 0, t_read = 0, got = 0;
	const unsigned count = 6000, reps = 20;
	unsigned i, rep;
	int ret;

	(void)state;
	memset(text, 'm', 80);
	text[80] = '\0';
	for (i = 0; i < count; i++)
		assert_int_equal(put_meta(&f->ring, text, 7, 1, NULL), 0);
	for (rep = 0; rep < reps; rep++) {
		pk__ring_reader_init(&rd, &f->ring, false);
		t0 = tu_now_ns();
		while ((ret = pk__ring_read_filtered(&rd, &rec, &flt, &skipped, NULL)) != 0)
			assert_int_equal(ret, -EAGAIN);
		t_skip += tu_now_ns() - t0;
		pk__ring_reader_init(&rd, &f->ring, false);
		t0 = tu_now_ns();
		while (pk__ring_read(&rd, &rec) == 1)
			got++;
		t_read += tu_now_ns() - t0;
	}
	assert_int_equal(skipped, (uint64_t)count * reps);
	assert_int_equal(got, (uint64_t)count * reps);
	print_message("filtered skip %.1f ns/record, full read of 80 bytes %.1f ns/record\n",
		      (double)t_skip / skipped, (double)t_read / got);
	fx_free(f);
}

/* ---- reader control for panic ---- */

/*
 * skip_seq: a record the caller's own thread left in progress is not
 * waited for.  Unclaimed or with a torn block: skipped at once.  Complete
 * but for its commit: returned.  Other records in progress still stall.
 */
static void test_skip_seq(void **state)
{
	struct fixture *f = fx_new(14);
	struct pk_ring_meta m = { .ts_ns = 5, .pid = 1, .tid = 2, .level = 3 };
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	uint64_t seq, lpos, other;

	(void)state;
	pk__ring_reader_init(&rd, &f->ring, false);
	assert_int_equal(rd.skip_seq, UINT64_MAX);

	/* Seq taken, descriptor never claimed (interrupted right after write:A). */
	seq = atomic_fetch_add(&f->ring.h->seq_head, 1);
	put(&f->ring, "after the unclaimed one", 6, false, NULL);
	assert_int_equal(pk__ring_read(&rd, &rec), 0);	/* stalls: could be anyone's */
	rd.skip_seq = seq;
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_int_equal(rec.seq, seq + 1);
	assert_string_equal(rec.text, "after the unclaimed one");

	/* Claimed, block half written: skipped at once. */
	seq = reserve_and_abandon(&f->ring, 40);
	rd.skip_seq = seq;
	assert_int_equal(pk__ring_read(&rd, &rec), 0);	/* nothing after it yet */
	assert_int_equal(rd.next, seq + 1);
	put(&f->ring, "after the torn one", 6, false, NULL);
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "after the torn one");

	/* Written whole, interrupted before the commit: returned. */
	seq = atomic_fetch_add(&f->ring.h->seq_head, 1);
	lpos = atomic_fetch_add(&f->ring.h->lpos_head, blk_size(13));
	atomic_store(pk__ring_desc(&f->ring, seq), desc_make(seq, lpos, DS_RESERVED));
	put_block(&f->ring, lpos, seq, &m, "uncommitted!!", 13);
	other = reserve_and_abandon(&f->ring, 10);	/* another thread's */
	put(&f->ring, "last", 6, false, NULL);
	assert_int_equal(pk__ring_read(&rd, &rec), 0);
	rd.skip_seq = seq;
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_int_equal(rec.seq, seq);
	assert_string_equal(rec.text, "uncommitted!!");
	assert_int_equal(rec.meta.level, 3);
	/* The next one in progress is not ours: the default stall applies. */
	assert_int_equal(pk__ring_read(&rd, &rec), 0);
	assert_int_equal(rd.next, other);
	fx_free(f);
}

/* stall_limit_ns = 0: a record in progress is skipped at once when later ones exist. */
static void test_stall_limit_zero(void **state)
{
	struct fixture *f = fx_new(14);
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	uint64_t dead;

	(void)state;
	pk__ring_reader_init(&rd, &f->ring, false);
	rd.stall_limit_ns = 0;
	dead = reserve_and_abandon(&f->ring, 10);
	assert_int_equal(pk__ring_read(&rd, &rec), 0);	/* nothing later: wait */
	assert_int_equal(rd.next, dead);
	put(&f->ring, "later", 6, false, NULL);
	assert_int_equal(pk__ring_read(&rd, &rec), 1);	/* first call: skipped */
	assert_string_equal(rec.text, "later");
	/* An open record is in progress too. */
	assert_int_equal(put(&f->ring, "open", 6, true, NULL), 0);
	assert_int_equal(pk__ring_read(&rd, &rec), 0);
	dead = reserve_and_abandon(&f->ring, 10);	/* finalizes nothing: not a write */
	put(&f->ring, "after open", 6, false, NULL);
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "after open");
	assert_int_equal(rec.seq, dead + 1);
	fx_free(f);
}

/* ---- the in-flight seq ---- */

/* -ENOBUFS still reports the seq the record had. */
static void test_seq_reported_on_failure(void **state)
{
	struct fixture *f = fx_new(13);
	uint64_t head = atomic_load(&f->ring.h->seq_head), seq = UINT64_MAX;
	uint64_t n = f->ring.desc_mask + 1;

	(void)state;
	/* A newer record owns the descriptor (a writer of seq + n got there first). */
	atomic_store(pk__ring_desc(&f->ring, head), desc_make(head + n, 0, DS_RESERVED));
	assert_int_equal(put(&f->ring, "too late", 6, false, &seq), -ENOBUFS);
	assert_int_equal(seq, head);
	assert_int_equal(atomic_load(&f->ring.h->reserve_failed), 1);
	fx_free(f);
}

static struct pk_ring *sig_ring;
static uint64_t sig_inflight;		/* the writer's *seqp; volatile accesses only */
static volatile sig_atomic_t sig_bad, sig_calls;
static volatile long sig_claimed;
static _Atomic int sig_stop;

/*
 * On the writer's thread, wherever the signal lands: a record claimed but
 * not committed (only this thread writes, so it is the newest) must be the
 * one the writer's in-flight seq names; a set in-flight seq is the newest.
 */
static void inflight_handler(int sig)
{
	uint64_t head = atomic_load(&sig_ring->h->seq_head), s = head - 1, d, in;

	(void)sig;
	sig_calls++;
	if (head == sig_ring->h->first_seq)
		return;
	d = atomic_load(pk__ring_desc(sig_ring, s));
	in = *(volatile uint64_t *)&sig_inflight;
	if (desc_seq(d) == (uint32_t)s && desc_state(d) == DS_RESERVED) {
		sig_claimed++;
		if (in != s)
			sig_bad++;
	}
	if (in != UINT64_MAX && in != s)
		sig_bad++;
}

static void *signaller(void *arg)
{
	pthread_t target = *(pthread_t *)arg;
	unsigned i = 0;

	while (!atomic_load(&sig_stop)) {
		pthread_kill(target, SIGUSR1);
		if (++i % 16 == 0)
			sched_yield();
	}
	return NULL;
}

/*
 * pk__ring_write publishes the seq to *seqp before it claims the
 * descriptor, so a handler interrupting it at any point tells which
 * record its thread left in progress.
 */
static void test_inflight_seq_seen_by_handler(void **state)
{
	struct fixture *f = fx_new_at(14, (1ull << 32) - 1000);
	struct sigaction sa, old;
	pthread_t self = pthread_self(), tid;
	char text[120];
	uint64_t t0 = tu_now_ns(), writes = 0;
	int ret;

	(void)state;
	memset(text, 'x', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	sig_ring = &f->ring;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = inflight_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	atomic_store(&sig_stop, 0);
	assert_int_equal(pthread_create(&tid, NULL, signaller, &self), 0);
	/* Until enough signals landed inside a claim (TSan: none may); a bound. */
	while ((sig_claimed < 20 || writes < 10000) &&
	       tu_now_ns() - t0 < (tu_sanitized_thread() ? 1000000000ull : 3000000000ull)) {
		*(volatile uint64_t *)&sig_inflight = UINT64_MAX;
		ret = pk__ring_write(&f->ring, &(struct pk_ring_meta){ .level = 6 }, text,
				     (uint32_t)(writes % 100), false, &sig_inflight);
		assert_int_equal(ret, 0);
		writes++;
	}
	atomic_store(&sig_stop, 1);
	pthread_join(tid, NULL);
	sigaction(SIGUSR1, &old, NULL);
	print_message("%llu writes, %ld signals, %ld inside a claim\n", (unsigned long long)writes,
		      (long)sig_calls, sig_claimed);
	assert_int_equal(sig_bad, 0);
	/* TSan delivers signals only at its own points: no claim may be caught then. */
	if (!tu_sanitized_thread())
		assert_true(sig_claimed > 0);
	fx_free(f);
}

/*
 * pk__ring_spread() is a bijection of seq mod the table's size (every
 * entry once over any run of size seqs, from any start, across the 2^32
 * and 2^64 edges), and from 2^12 entries on, the entries of seqs up to 64
 * apart never share a 128-byte block (two lines the CPU fetches together)
 * unless they are a whole number of pages (table / 512) apart.
 */
static void test_spread(void **state)
{
	static const uint64_t starts[] = { 0, 1, 4095, (1ull << 32) - 7, UINT64_MAX - 20 };
	unsigned l2, k, hits;
	uint64_t s, d;

	(void)state;
	for (l2 = 7; l2 <= 22; l2++) {
		uint64_t n = 1ull << l2, mask = n - 1;
		unsigned shift = pk__ring_spread_shift(mask);
		uint64_t group = l2 >= 12 ? 1ull << shift : 0;	/* pages in a group */
		uint8_t *seen = calloc(n, 1);

		assert_true(shift == (l2 >= 12 ? (l2 - 9 < 4 ? l2 - 9 : 4) : 0));
		assert_true(group <= PK_RING_SPREAD_PAGES);
		for (k = 0; k < PK__ARRAY_SIZE(starts); k++) {
			memset(seen, 0, n);
			hits = 0;
			for (s = starts[k]; s - starts[k] < n; s++) {
				uint64_t i = pk__ring_spread(s, mask, shift);

				assert_true(i < n);
				assert_int_equal(seen[i], 0);
				seen[i] = 1;
				hits++;
				/* The same entry one lap on. */
				assert_int_equal(pk__ring_spread(s + n, mask, shift), i);
				if (l2 < 12)
					continue;
				/* No line (nor line pair) shared with the next 15 seqs. */
				for (d = 1; d < 16; d++)
					assert_true(pk__ring_spread(s + d, mask, shift) / 16 != i / 16);
				/* Consecutive seqs in different pages. */
				assert_true(pk__ring_spread(s + 1, mask, shift) / 512 != i / 512);
				/* A group's seqs stay within its pages (the TLB's bound). */
				assert_int_equal(pk__ring_spread(s, mask, shift) / 512 / group,
						 (s / (group * 512)) % ((n / 512) / group));
			}
			assert_int_equal(hits, n);
		}
		free(seen);
	}
}

/*
 * open_count: a record committed OPEN is counted until it leaves OPEN for
 * good, through each way out (finalized by its successor, by
 * pk__ring_finalize_last, extended to FINAL, an extension refused as too
 * long, the successor's look when the count was right).  A write with no
 * OPEN record about does not look at its predecessor's descriptor at all.
 */
static void test_open_count(void **state)
{
	struct fixture *f = fx_new(13);
	_Atomic uint64_t *oc = &f->ring.h->open_count;
	uint64_t s1, s2, s3;

	(void)state;
	assert_int_equal(atomic_load(oc), 0);
	assert_int_equal(put(&f->ring, "a", 6, true, &s1), 0);
	assert_int_equal(atomic_load(oc), 1);
	assert_int_equal(put(&f->ring, "b\n", 6, false, &s2), 0);	/* finalizes s1 */
	assert_int_equal(desc_state(atomic_load(pk__ring_desc(&f->ring, s1))), DS_FINAL);
	assert_int_equal(atomic_load(oc), 0);

	assert_int_equal(put(&f->ring, "c", 6, true, &s3), 0);
	assert_int_equal(pk__ring_extend(&f->ring, s3, "d", 1, true, PK_RING_TEXT_MAX), 0);
	assert_int_equal(atomic_load(oc), 1);		/* still OPEN */
	assert_int_equal(pk__ring_extend(&f->ring, s3, "e\n", 2, false, PK_RING_TEXT_MAX), 0);
	assert_int_equal(atomic_load(oc), 0);		/* extended to FINAL */

	assert_int_equal(put(&f->ring, "f", 6, true, &s3), 0);
	assert_int_equal(pk__ring_extend(&f->ring, s3, "gg", 2, true, 2), -E2BIG);
	assert_int_equal(desc_state(atomic_load(pk__ring_desc(&f->ring, s3))), DS_FINAL);
	assert_int_equal(atomic_load(oc), 0);		/* refused: committed FINAL */

	assert_int_equal(put(&f->ring, "h", 6, true, &s3), 0);
	pk__ring_finalize_last(&f->ring);
	assert_int_equal(desc_state(atomic_load(pk__ring_desc(&f->ring, s3))), DS_FINAL);
	assert_int_equal(atomic_load(oc), 0);

	/*
	 * With the count at 0, a successor trusts it: an OPEN record that the
	 * count missed (only a damaged header does that) stays OPEN, which
	 * shows the look is skipped; recover() finalizes it and sets the
	 * count right.
	 */
	assert_int_equal(put(&f->ring, "i", 6, true, &s3), 0);
	atomic_store(oc, 0);
	assert_int_equal(put(&f->ring, "j\n", 6, false, NULL), 0);
	assert_int_equal(desc_state(atomic_load(pk__ring_desc(&f->ring, s3))), DS_OPEN);
	atomic_store(oc, 77);
	pk__ring_recover(&f->ring);
	assert_int_equal(desc_state(atomic_load(pk__ring_desc(&f->ring, s3))), DS_FINAL);
	assert_int_equal(atomic_load(oc), 0);

	/*
	 * A recovery wiped the count of a record still being extended (a
	 * fork child recovering while a handler interrupted the writer): the
	 * record's end must not take the count below 0, where the next OPEN
	 * record would read as none.
	 */
	assert_int_equal(put(&f->ring, "k", 6, true, &s3), 0);
	atomic_store(oc, 0);
	assert_int_equal(pk__ring_extend(&f->ring, s3, "l\n", 2, false, PK_RING_TEXT_MAX), 0);
	assert_int_equal(atomic_load(oc), 0);
	assert_int_equal(put(&f->ring, "m", 6, true, &s3), 0);
	assert_int_equal(atomic_load(oc), 1);
	assert_int_equal(put(&f->ring, "n\n", 6, false, NULL), 0);
	assert_int_equal(desc_state(atomic_load(pk__ring_desc(&f->ring, s3))), DS_FINAL);

	/*
	 * The same, with a record stored in between: a writer raised the
	 * count (write:H), a recovery reset it, another OPEN record raised
	 * it, and then the writer's commit failed.  Its undo must leave the
	 * other record's count, so that the next record finalizes it.
	 */
	{
		uint64_t e = open_epoch(&f->ring);

		atomic_fetch_add(oc, 1);
		pk__ring_recover(&f->ring);
		assert_int_equal(atomic_load(oc), 0);
		assert_int_equal(put(&f->ring, "o", 6, true, &s3), 0);
		assert_int_equal(atomic_load(oc), 1);
		open_undo(&f->ring, e);
		assert_int_equal(atomic_load(oc), 1);
		assert_int_equal(put(&f->ring, "p\n", 6, false, NULL), 0);
		assert_int_equal(desc_state(atomic_load(pk__ring_desc(&f->ring, s3))), DS_FINAL);
		assert_int_equal(atomic_load(oc), 0);
	}
	fx_free(f);
}

/*
 * Finalization under contention: one thread stores lines in two pieces (an
 * OPEN record, then an extension to FINAL, or left OPEN for the next
 * record to finalize), others store whole lines.  Every record but the
 * newest must end FINAL: one left OPEN means a writer neither saw it
 * (open_count, write:F) nor was seen by its owner (write:G).
 */
struct fin_arg {
	struct pk_ring *ring;
	bool opener;
	unsigned n;
};

static void *fin_main(void *arg)
{
	struct fin_arg *a = arg;
	unsigned i;
	uint64_t seq;

	for (i = 0; i < a->n; i++) {
		if (!a->opener) {
			(void)put(a->ring, "whole line\n", 6, false, NULL);
			continue;
		}
		if (put(a->ring, "part", 6, true, &seq) == 0 && i % 3 == 0)
			(void)pk__ring_extend(a->ring, seq, " end\n", 5, false, PK_RING_TEXT_MAX);
	}
	return NULL;
}

static void test_finalize_contended(void **state)
{
	unsigned round, rounds = tu_scaled(40), i, nthr = 3;

	(void)state;
	for (round = 0; round < rounds; round++) {
		struct fixture *f = fx_new(20);
		struct fin_arg args[3];
		pthread_t t[3];
		uint64_t head, s, open_left = 0;

		for (i = 0; i < nthr; i++) {
			args[i] = (struct fin_arg){ &f->ring, i == 0, 3000 };
			assert_int_equal(pthread_create(&t[i], NULL, fin_main, &args[i]), 0);
		}
		for (i = 0; i < nthr; i++)
			pthread_join(t[i], NULL);
		head = atomic_load(&f->ring.h->seq_head);
		for (s = 0; s + 1 < head; s++) {
			uint64_t d = atomic_load(pk__ring_desc(&f->ring, s));

			assert_int_equal(desc_seq(d), (uint32_t)s);
			if (desc_state(d) == DS_OPEN)
				open_left++;
		}
		assert_int_equal(open_left, 0);
		pk__ring_finalize_last(&f->ring);
		assert_int_equal(atomic_load(&f->ring.h->open_count), 0);
		fx_free(f);
	}
	print_message("%u rounds of %u x 3000 records\n", rounds, nthr);
}

/*
 * Data chunks (rings of 2^18 bytes and more): a signal handler storing on
 * the writer's own thread, wherever it lands, gets space of its own.  The
 * writer raises the signal inside its own carve every few records (the
 * handler must find `busy` set and take space straight from lpos_head),
 * while another thread's signals land anywhere; a reader following the
 * writer finds every record, none torn and none skipped.
 */
static struct pk_ring *chunk_ring;
static volatile sig_atomic_t chunk_sig_stores, chunk_sig_in_carve;
/*
 * Records the handler may still store: one per record of the writer and
 * one per signal raised in a carve, so that the reader keeps up (ThreadSanitizer runs a pending handler at
 * every atomic operation, which would otherwise lap the ring).
 */
static volatile sig_atomic_t chunk_sig_budget;
static volatile sig_atomic_t carve_raise;	/* raise SIGUSR1 inside the next carve */
static volatile sig_atomic_t carve_raised;	/* how often it did */
static volatile sig_atomic_t in_chunk_handler;

static void carve_hook(void)
{
	/*
	 * Not from the handler's own carve: the signaller's signal can land
	 * between the test arming carve_raise and its write, and SIGUSR1,
	 * blocked in the handler, would then be taken after the carve (seen
	 * once in a loop at load average 20-29: 4000 handlers inside a
	 * carve, 4001 raised there).
	 */
	if (carve_raise && !in_chunk_handler) {
		carve_raise = 0;	/* once: the handler's own carve must not raise */
		carve_raised++;
		chunk_sig_budget = 1;	/* this one stores */
		raise(SIGUSR1);
	}
}

/*
 * As if another thread had just taken 64 bytes: a thread takes a chunk
 * only while others store between its records (take_space).
 */
static void other_writer(struct pk_ring *ring)
{
	atomic_fetch_add(&ring->h->lpos_head, 64);
}

static void chunk_handler(int sig)
{
	(void)sig;
	if (!chunk_ring)
		return;
	if (chunk_sig_budget <= 0)
		return;
	chunk_sig_budget--;
	if (chunk.busy)
		chunk_sig_in_carve++;
	in_chunk_handler = 1;
	if (pk__ring_write(chunk_ring, &(struct pk_ring_meta){ .level = 6, .pid = 4321 },
			   "handler record", 14, false, NULL) == 0)
		chunk_sig_stores++;
	in_chunk_handler = 0;
}

static void test_chunks_signals(void **state)
{
	struct fixture *f = fx_new(18);
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	struct sigaction sa, old;
	pthread_t self = pthread_self(), tid;
	uint64_t t0 = tu_now_ns(), writes = 0, read = 0, expect = 0, limit, head0;
	char text[200];
	int i;
	uint32_t len;

	(void)state;
	assert_true(f->ring.chunks);
	memset(text, 'm', sizeof(text));
	chunk_ring = &f->ring;
	pk__ring_reader_init(&rd, &f->ring, false);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = chunk_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);

	/*
	 * Three records in a row take their space directly, the fourth a
	 * chunk; one signal inside the fifth's carve: the handler's record
	 * takes its space directly, the writer's comes from the chunk.
	 */
	for (i = 0; i < 4; i++) {
		other_writer(&f->ring);
		head0 = atomic_load(&f->ring.h->lpos_head);
		assert_int_equal(put_meta(&f->ring, "first", 6, 4321, NULL), 0);
		assert_int_equal(atomic_load(&f->ring.h->lpos_head),
				 head0 + (i < 3 ? blk_size(5) : PK_RING_CHUNK));
	}
	other_writer(&f->ring);
	head0 = atomic_load(&f->ring.h->lpos_head);
	chunk_sig_budget = 1;
	carve_raise = 1;
	assert_int_equal(put_meta(&f->ring, "first", 6, 4321, NULL), 0);
	carve_raise = 0;
	assert_int_equal(chunk_sig_in_carve, 1);
	assert_int_equal(chunk_sig_stores, 1);
	assert_int_equal(atomic_load(&f->ring.h->lpos_head), head0 + blk_size(14));

	atomic_store(&sig_stop, 0);
	assert_int_equal(pthread_create(&tid, NULL, signaller, &self), 0);
	limit = tu_sanitized_thread() ? 1000000000ull : 3000000000ull;
	while (writes < 20000 && tu_now_ns() - t0 < limit) {
		len = 1 + (uint32_t)(writes * 7 % sizeof(text));
		chunk_sig_budget = 1;
		other_writer(&f->ring);
		carve_raise = writes % 5 == 0;
		assert_int_equal(pk__ring_write(&f->ring,
						&(struct pk_ring_meta){ .level = 6, .pid = 4321 },
						text, len, false, NULL), 0);
		carve_raise = 0;
		writes++;
		/* Follow closely: nothing is overwritten before it is read. */
		while (pk__ring_read(&rd, &rec) == 1) {
			assert_int_equal(rec.seq, expect);	/* nothing skipped */
			expect++;
			read++;
			if (strcmp(rec.text, "handler record") != 0 && strcmp(rec.text, "first") != 0) {
				assert_true(rec.len >= 1 && rec.len <= sizeof(text));
				assert_memory_equal(rec.text, text, rec.len);
			}
		}
	}
	atomic_store(&sig_stop, 1);
	pthread_join(tid, NULL);
	chunk_ring = NULL;
	sigaction(SIGUSR1, &old, NULL);
	while (pk__ring_read(&rd, &rec) == 1) {
		assert_int_equal(rec.seq, expect);
		expect++;
		read++;
	}
	print_message("%llu writes, %ld from the handler, %ld of them inside a carve (%ld raised there), "
		      "%llu read\n", (unsigned long long)writes + 5, (long)chunk_sig_stores,
		      (long)chunk_sig_in_carve, (long)carve_raised, (unsigned long long)read);
	assert_int_equal(read, writes + 5 + (uint64_t)chunk_sig_stores);
	assert_int_equal(atomic_load(&f->ring.h->lost), 0);
	/* ThreadSanitizer may run the raised handler after the carve. */
	if (tu_sanitized_thread())
		assert_true(chunk_sig_in_carve > 0);
	else
		assert_true(chunk_sig_in_carve >= carve_raised);
	fx_free(f);
}

/*
 * A chunk left behind: this thread takes a chunk, other threads then
 * store more than a whole ring, and this thread's next record must not go
 * into its old chunk (overwritten meanwhile; the record would be lost).
 * And a fork child storing into a shared ring takes a chunk of its own,
 * never the rest of its parent's: both sides' records stay intact.
 */
struct flood_arg {
	struct pk_ring *ring;
	uint64_t bytes;
};

static void *flood_main(void *arg)
{
	struct flood_arg *a = arg;
	char text[100];
	uint64_t done;

	memset(text, 'f', sizeof(text));
	for (done = 0; done < a->bytes; done += blk_size(sizeof(text)))
		(void)pk__ring_write(a->ring, &(struct pk_ring_meta){ .level = 6, .pid = 4321 },
				     text, sizeof(text), false, NULL);
	return NULL;
}

static void test_chunks_stale_and_fork(void **state)
{
	size_t size = pk__ring_region_size(18);
	void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct pk_ring ring;
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	struct flood_arg fa;
	pthread_t t;
	uint64_t s1, s2, i, lost0;
	pid_t pid;
	int st;

	(void)state;
	assert_true(mem != MAP_FAILED);
	pk__ring_format(mem, 18, 0);
	assert_int_equal(pk__ring_attach(&ring, mem, size), 0);
	for (i = 0; i < 4; i++) {	/* the fourth takes a chunk */
		other_writer(&ring);
		assert_int_equal(put_meta(&ring, "before the flood", 6, 4321, &s1), 0);
	}
	assert_true(chunk.end - chunk.next > 0 && chunk.view == ring.id);
	fa = (struct flood_arg){ &ring, 2 * ring.data_size };
	assert_int_equal(pthread_create(&t, NULL, flood_main, &fa), 0);
	pthread_join(t, NULL);
	lost0 = atomic_load(&ring.h->lost);
	assert_int_equal(put_meta(&ring, "after the flood", 6, 4321, &s2), 0);
	pk__ring_reader_init(&rd, &ring, false);
	rd.next = s2;
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_int_equal(rec.seq, s2);
	assert_string_equal(rec.text, "after the flood");

	/*
	 * Fork: the parent holds a chunk with room left; the child stores
	 * too, under the same pid as far as the records go (a child whose
	 * library did not learn its pid: no fork handler ran).
	 */
	for (i = 0; i < 4; i++) {
		other_writer(&ring);
		assert_int_equal(put_meta(&ring, "parent", 6, 4321, &s1), 0);
	}
	assert_true(chunk.end - chunk.next > 0 && chunk.view == ring.id);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* A token above every one it inherited (not a pid: see process_token). */
		if (process_token() <= chunk.token)
			_exit(2);
		for (i = 0; i < 200; i++)
			if (put_meta(&ring, "child record", 6, 4321, NULL) != 0)
				_exit(1);
		_exit(0);
	}
	for (i = 0; i < 200; i++)
		assert_int_equal(put_meta(&ring, "parent record", 6, 4321, NULL), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	rd.next = s1 + 1;
	for (i = 0; i < 400; i++) {
		assert_int_equal(pk__ring_read(&rd, &rec), 1);
		assert_int_equal(rec.seq, s1 + 1 + i);		/* none torn, none skipped */
		assert_true(!strcmp(rec.text, "child record") || !strcmp(rec.text, "parent record"));
	}
	assert_int_equal(atomic_load(&ring.h->lost), lost0);
	munmap(mem, size);
}

/*
 * Chunks never cost a ring its capacity when threads store now and then:
 * a thread per record, and a pool of threads taking turns, leave as many
 * records readable as one thread storing them all (within a record or
 * two: blocks land in another order).
 */
struct turn_arg {
	struct pk_ring *ring;
	pthread_mutex_t *mu;
	pthread_cond_t *cv;
	unsigned *turn, id, nthreads, rounds, burst;
};

static void *turn_main(void *arg)
{
	struct turn_arg *a = arg;
	unsigned r;

	for (r = 0; r < a->rounds; r++) {
		pthread_mutex_lock(a->mu);
		while (*a->turn % a->nthreads != a->id)
			pthread_cond_wait(a->cv, a->mu);
		pthread_mutex_unlock(a->mu);
		for (unsigned b = 0; b < a->burst; b++)
			(void)put_meta(a->ring, "a record of eighty bytes or so, as a real message would be, more or less", 6, 4321, NULL);
		pthread_mutex_lock(a->mu);
		(*a->turn)++;
		pthread_cond_broadcast(a->cv);
		pthread_mutex_unlock(a->mu);
	}
	return NULL;
}

static void *one_record(void *arg)
{
	(void)put_meta(arg, "a record of eighty bytes or so, as a real message would be, more or less", 6, 4321, NULL);
	return NULL;
}

static uint64_t readable(struct pk_ring *ring)
{
	static struct pk_ring_rec rec;
	struct pk_ring_reader rd;
	uint64_t n = 0;

	pk__ring_reader_init(&rd, ring, true);
	while (pk__ring_read(&rd, &rec) == 1)
		n++;
	return n;
}

static void test_chunks_capacity(void **state)
{
	struct fixture *one = fx_new(18), *pool = fx_new(18), *each = fx_new(18), *bursts = fx_new(18);
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
	struct turn_arg args[24];
	pthread_t t[24];
	unsigned turn = 0, i, total = 24 * 150;
	uint64_t n_one, n_pool, n_each, n_bursts;

	(void)state;
	for (i = 0; i < total; i++)
		one_record(&one->ring);
	for (i = 0; i < 24; i++) {
		args[i] = (struct turn_arg){ &pool->ring, &mu, &cv, &turn, i, 24, total / 24, 1 };
		assert_int_equal(pthread_create(&t[i], NULL, turn_main, &args[i]), 0);
	}
	for (i = 0; i < 24; i++)
		pthread_join(t[i], NULL);
	turn = 0;
	for (i = 0; i < 24; i++) {	/* four records a turn */
		args[i] = (struct turn_arg){ &bursts->ring, &mu, &cv, &turn, i, 24, total / 96, 4 };
		assert_int_equal(pthread_create(&t[i], NULL, turn_main, &args[i]), 0);
	}
	for (i = 0; i < 24; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < total; i++) {
		assert_int_equal(pthread_create(&t[0], NULL, one_record, &each->ring), 0);
		pthread_join(t[0], NULL);
	}
	n_one = readable(&one->ring);
	n_pool = readable(&pool->ring);
	n_each = readable(&each->ring);
	n_bursts = readable(&bursts->ring);
	print_message("%u records stored; readable: %llu from one thread, %llu from 24 taking turns, "
		      "%llu from 24 taking turns of 4, %llu from a thread each\n", total,
		      (unsigned long long)n_one, (unsigned long long)n_pool,
		      (unsigned long long)n_bursts, (unsigned long long)n_each);
	assert_true(n_one < total);		/* the ring wrapped */
	assert_true(n_pool + 2 >= n_one);
	assert_true(n_each + 2 >= n_one);
	assert_true(n_bursts + 2 >= n_one);
	fx_free(bursts);
	fx_free(one);
	fx_free(pool);
	fx_free(each);
}

/*
 * A filtered reader passes over an OPEN record whose level it rejects at
 * once, and still stops at one it would print; a torn header of an OPEN
 * record is neither passed over nor counted lost; the record's text,
 * extended later, reaches an unfiltered reader whole.
 */
static void test_open_filtered(void **state)
{
	struct fixture *f = fx_new(14);
	struct pk_ring_filter flt = { .max_level = 7 };	/* debug (7) filtered */
	struct pk_ring_lost lost = { 0 };
	struct pk_ring_reader rd, all;
	struct pk_ring_rec rec;
	uint64_t seq, seq2, skipped = 0, hw2;

	(void)state;
	pk__ring_reader_init(&rd, &f->ring, false);
	pk__ring_reader_init(&all, &f->ring, false);
	assert_int_equal(put(&f->ring, "debug: Probing", 7, true, &seq), 0);
	assert_int_equal(pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost), 0);
	assert_int_equal(skipped, 1);
	assert_int_equal(rd.next, seq + 1);
	assert_int_equal(lost.counted, 0);
	assert_int_equal(pk__ring_read(&all, &rec), 0);	/* open: not yet visible */
	assert_int_equal(all.next, seq);
	/* Extended after it was passed over: nothing changes for the reader. */
	assert_int_equal(pk__ring_extend(&f->ring, seq, " ...", 4, true, PK_RING_TEXT_MAX), 0);
	assert_int_equal(pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost), 0);
	assert_int_equal(skipped, 1);
	assert_int_equal(pk__ring_extend(&f->ring, seq, " done", 5, false, PK_RING_TEXT_MAX), 0);
	assert_int_equal(pk__ring_read(&all, &rec), 1);
	assert_string_equal(rec.text, "debug: Probing ... done");

	/* An open line it prints stops it until the line is finalised. */
	assert_int_equal(put(&f->ring, "info: Loading", 6, true, &seq2), 0);
	assert_int_equal(pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost), 0);
	assert_int_equal(rd.next, seq2);
	assert_int_equal(skipped, 1);
	pk__ring_finalize_last(&f->ring);
	assert_int_equal(pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost), 1);
	assert_string_equal(rec.text, "info: Loading");

	/* A torn header of an open filtered record: in progress, not lost. */
	assert_int_equal(put(&f->ring, "debug: torn", 7, true, &seq), 0);
	hw2 = atomic_load(blk_word(&f->ring, seq, 2));
	atomic_store(blk_word(&f->ring, seq, 2), hw2 ^ (1ull << 40));
	assert_int_equal(pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost), 0);
	assert_int_equal(rd.next, seq);
	assert_int_equal(skipped, 1);
	assert_int_equal(lost.counted, 0);
	atomic_store(blk_word(&f->ring, seq, 2), hw2);
	assert_int_equal(pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost), 0);
	assert_int_equal(rd.next, seq + 1);
	assert_int_equal(skipped, 2);
	assert_int_equal(lost.counted, 0);
	fx_free(f);
}

/*
 * One writer stores open debug lines, extends each a few times and
 * between them stores closed info lines; a filtered reader (info and
 * worse) on another thread reads as they come.  Every info line must be
 * read once, in order, whole; nothing counted lost; and, once the writer
 * is done, read + passed over = stored.  The reader is the consoles' view
 * of a program that logs "Probing" ... " done" at debug level.
 */
struct open_stress {
	struct pk_ring *ring;
	unsigned lines;
	_Atomic bool done;
};

static void *open_stress_writer(void *arg)
{
	struct open_stress *os = arg;
	char buf[64];
	uint64_t seq;
	unsigned i, k;

	for (i = 0; i < os->lines; i++) {
		snprintf(buf, sizeof(buf), "debug %u", i);
		assert_int_equal(put(os->ring, buf, 7, true, &seq), 0);
		for (k = 0; k < i % 4; k++)
			assert_int_equal(pk__ring_extend(os->ring, seq, " .", 2, k + 1 < i % 4,
							 PK_RING_TEXT_MAX), 0);
		snprintf(buf, sizeof(buf), "info %u", i);
		assert_int_equal(put(os->ring, buf, 6, i % 3 == 0, NULL), 0);
	}
	pk__ring_finalize_last(os->ring);
	atomic_store(&os->done, true);
	return NULL;
}

static void test_open_filtered_stress(void **state)
{
	struct pk_ring_filter flt = { .max_level = 7 };
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	char want[64];
	pthread_t t;
	bool done;
	int ret, round;

	(void)state;
	/* 40,000 records a round into 2^16 descriptors: never lapped. */
	for (round = 0; round < 5; round++) {
		struct fixture *f = fx_new(22);
		struct open_stress os = { &f->ring, 20000, false };
		struct pk_ring_lost lost = { 0 };
		uint64_t skipped = 0, got = 0;

		assert_true(f->ring.desc_mask + 1 > 2 * os.lines);
		pk__ring_reader_init(&rd, &f->ring, false);
		assert_int_equal(pthread_create(&t, NULL, open_stress_writer, &os), 0);
		do {
			done = atomic_load(&os.done);
			while ((ret = pk__ring_read_filtered(&rd, &rec, &flt, &skipped, &lost)) != 0) {
				if (ret < 0)
					continue;
				snprintf(want, sizeof(want), "info %" PRIu64, got);
				assert_string_equal(rec.text, want);
				got++;
			}
		} while (!done);
		pthread_join(t, NULL);
		assert_int_equal(got, os.lines);
		assert_int_equal(lost.counted, 0);
		assert_int_equal(got + skipped, pk__ring_next_seq(&f->ring));
		fx_free(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_content),
		cmocka_unit_test(test_empty_and_max_text),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_reader_lapped),
		cmocka_unit_test(test_extend),
		cmocka_unit_test(test_abandoned_reservation),
		cmocka_unit_test(test_killed_extension_keeps_committed_text),
		cmocka_unit_test(test_torn_record_rejected),
		cmocka_unit_test(test_killed_waiter_lease),
		cmocka_unit_test(test_attach_validation),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_seq_edges),
		cmocka_unit_test(test_restart_past_2_31),
		cmocka_unit_test(test_hostile_descriptors),
		cmocka_unit_test(test_hostile_seq_bounds),
		cmocka_unit_test(test_filtered_read),
		cmocka_unit_test(test_filtered_torn_header),
		cmocka_unit_test(test_filtered_skip_cost),
		cmocka_unit_test(test_open_filtered),
		cmocka_unit_test(test_open_filtered_stress),
		cmocka_unit_test(test_skip_seq),
		cmocka_unit_test(test_own_lost_counts),
		cmocka_unit_test(test_own_forget),
		cmocka_unit_test(test_own_filtered_skip),
		cmocka_unit_test(test_own_forget_far),
		cmocka_unit_test(test_note_window),
		cmocka_unit_test(test_stall_limit_zero),
		cmocka_unit_test(test_seq_reported_on_failure),
		cmocka_unit_test(test_inflight_seq_seen_by_handler),
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_open_count),
		cmocka_unit_test(test_finalize_contended),
		cmocka_unit_test(test_chunks_signals),
		cmocka_unit_test(test_chunks_stale_and_fork),
		cmocka_unit_test(test_chunks_capacity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
