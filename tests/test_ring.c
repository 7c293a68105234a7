// SPDX-License-Identifier: MIT
/*
 * Unit tests of the record store alone (no front door, no consoles).
 * The module is compiled into this test so that its statics are in reach.
 */
#include "../src/ringbuf.c"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

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
	struct fixture *f = fx_new(12);
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
	struct fixture *f = fx_new(12);
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
	assert_int_equal(pk__ring_extend(&f->ring, seq, "...", 3, true), 0);
	assert_int_equal(pk__ring_extend(&f->ring, seq, " done", 5, false), 0);
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "Loading... done");
	assert_int_equal(rec.seq, seq);
	/* Finished records can no longer be extended. */
	assert_int_equal(pk__ring_extend(&f->ring, seq, "x", 1, false), -EAGAIN);

	/* A newer record finalizes an open one and blocks extending it. */
	assert_int_equal(put(&f->ring, "part", 6, true, &seq), 0);
	assert_int_equal(put(&f->ring, "other", 6, false, &seq2), 0);
	assert_int_equal(pk__ring_extend(&f->ring, seq, "x", 1, false), -EAGAIN);
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "part");
	assert_int_equal(pk__ring_read(&rd, &rec), 1);
	assert_string_equal(rec.text, "other");

	/* Too long to extend. */
	{
		char big[PK_RING_TEXT_MAX];

		memset(big, 'y', sizeof(big));
		assert_int_equal(put(&f->ring, "z", 6, true, &seq), 0);
		assert_int_equal(pk__ring_extend(&f->ring, seq, big, sizeof(big), false), -E2BIG);
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
	d = atomic_load(&f->ring.desc[seq & f->ring.desc_mask]);
	atomic_store(&f->ring.desc[seq & f->ring.desc_mask], (d & ~7ull) | DS_RESERVED);
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

	atomic_store(&ring->desc[seq & ring->desc_mask], desc_make(seq, lpos, DS_RESERVED));
	return seq;
}

static void test_abandoned_reservation(void **state)
{
	struct fixture *f = fx_new(12);
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
	size_t size = pk__ring_region_size(12);
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
	pk__ring_format(mem, 12, 0);
	assert_int_equal(pk__ring_attach(&ring, mem, size), 0);
	h = ring.h;

	pid = fork();
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
	assert_int_equal(waitpid(pid, &st, 0), pid);
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
	struct fixture *f = fx_new(12);
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	uint64_t seq, d, lpos;

	(void)state;
	put(&f->ring, "first record", 6, false, NULL);
	put(&f->ring, "victim record", 6, false, &seq);
	put(&f->ring, "third record", 6, false, NULL);
	d = atomic_load(&f->ring.desc[seq & f->ring.desc_mask]);
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
	d = atomic_load(&f->ring.desc[seq & f->ring.desc_mask]);
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
	size_t size = pk__ring_region_size(12);
	struct pk_ring ring;
	char *mem = aligned_alloc(64, size);
	struct pk_ring_hdr *h = (struct pk_ring_hdr *)mem;

	(void)state;
	pk__ring_format(mem, 12, 0);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
