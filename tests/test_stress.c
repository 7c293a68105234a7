// SPDX-License-Identifier: MIT
/*
 * Multi-writer, multi-reader stress of the record store, self-validating.
 *
 * More writers than cores store texts that carry their writer, counter and
 * checksum; readers run all the while.  Each writer logs the seq it got for
 * each of its records.  Afterwards, for every reader and every seq ever
 * handed out, exactly one of these holds: the reader returned that record
 * (with the very content its writer stored at that seq), or the reader
 * skipped it as lost.  The store is small, so it wraps many times.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "ringbuf.h"
#include "testutil.h"

#define WRITERS		6
#define READERS		2
#define PER_WRITER	400000u
#define MAX_SEQ		(WRITERS * PER_WRITER)
#define NOT_WRITTEN	UINT64_MAX

static struct pk_ring ring;
static _Atomic int stop, writers_done;
static uint64_t *seqlog[WRITERS];	/* seqlog[w][c]: seq of writer w's record c */
static uint64_t writes_ok[WRITERS];

struct reader_log {
	struct pk_ring_reader rd;	/* initialised before the writers start */
	uint64_t *seen;		/* seen[seq] = w << 32 | c, plus one; 0: not read */
	uint8_t *lost;		/* lost[seq]: skipped as lost */
	uint64_t records, gaps, torn;
};

static struct reader_log rlog[READERS];

static void *writer(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	struct pk_ring_meta m = { .tid = w, .level = 6, .facility = 1 };
	char text[300];
	uint64_t c, seq;
	unsigned rnd = w * 7919u + 1;

	for (c = 0; c < PER_WRITER && !atomic_load(&stop); c++) {
		size_t len;

		rnd = rnd * 1103515245u + 12345u;
		len = tu_make_text(text, sizeof(text), w, c, (rnd >> 16) % 200);
		m.ts_ns = c;
		if (pk__ring_write(&ring, &m, text, (uint32_t)len, false, &seq) == 0) {
			seqlog[w][c] = seq;
			writes_ok[w]++;
		} else {
			seqlog[w][c] = NOT_WRITTEN;
		}
	}
	for (; c < PER_WRITER; c++)
		seqlog[w][c] = NOT_WRITTEN;
	atomic_fetch_add(&writers_done, 1);
	return NULL;
}

static void *reader(void *arg)
{
	struct reader_log *log = arg;
	struct pk_ring_reader rd = log->rd;
	struct pk_ring_rec *rec = malloc(sizeof(*rec));
	uint64_t expect, s;
	unsigned w;
	uint64_t c;
	int done_pass = 0;

	expect = rd.next;
	TU_CHECK((expect) == (0));
	for (;;) {
		int ret = pk__ring_read(&rd, rec);

		if (ret == 1) {
			TU_CHECK(rec->seq >= expect);
			for (s = expect; s < rec->seq; s++)
				log->lost[s] = 1;
			log->gaps += rec->seq - expect;
			if (tu_check_text(rec->text, rec->len, &w, &c) != 0 || rec->meta.tid != w ||
			    rec->meta.ts_ns != c) {
				log->torn++;
			} else {
				log->seen[rec->seq] = ((uint64_t)w << 32 | c) + 1;
			}
			log->records++;
			expect = rec->seq + 1;
			continue;
		}
		if (atomic_load(&writers_done) == WRITERS) {
			/* One more pass after the writers stopped, to the very end. */
			if (done_pass++)
				break;
			rd.stall_limit_ns = 0;
			continue;
		}
	}
	s = pk__ring_next_seq(&ring);
	TU_CHECK((expect) == (s));
	free(rec);
	return NULL;
}

static void test_store_stress(void **state)
{
	pthread_t wt[WRITERS], rt[READERS];
	size_t size = pk__ring_region_size(16);
	void *mem = aligned_alloc(64, size);
	double secs = tu_seconds(3.0);
	uint64_t t0, head, s, total_ok = 0;
	unsigned w, i;

	(void)state;
	pk__ring_format(mem, 16, 0);
	assert_int_equal(pk__ring_attach(&ring, mem, size), 0);
	for (w = 0; w < WRITERS; w++)
		seqlog[w] = malloc(PER_WRITER * sizeof(uint64_t));
	for (i = 0; i < READERS; i++) {
		rlog[i].seen = calloc(MAX_SEQ, sizeof(uint64_t));
		rlog[i].lost = calloc(MAX_SEQ, 1);
		pk__ring_reader_init(&rlog[i].rd, &ring, false);
		pthread_create(&rt[i], NULL, reader, &rlog[i]);
	}
	for (w = 0; w < WRITERS; w++)
		pthread_create(&wt[w], NULL, writer, (void *)(uintptr_t)w);
	t0 = tu_now_ns();
	while (atomic_load(&writers_done) < WRITERS && tu_now_ns() - t0 < (uint64_t)(secs * 1e9))
		usleep(10000);
	atomic_store(&stop, 1);
	for (w = 0; w < WRITERS; w++)
		pthread_join(wt[w], NULL);
	for (i = 0; i < READERS; i++)
		pthread_join(rt[i], NULL);

	head = pk__ring_next_seq(&ring);
	for (w = 0; w < WRITERS; w++)
		total_ok += writes_ok[w];
	print_message("%llu seqs, %llu committed, store wrapped %llu times\n",
		      (unsigned long long)head, (unsigned long long)total_ok,
		      (unsigned long long)(atomic_load(&ring.h->lpos_head) / ring.data_size));
	assert_true(atomic_load(&ring.h->lpos_head) > 10 * ring.data_size);

	for (i = 0; i < READERS; i++) {
		struct reader_log *log = &rlog[i];

		print_message("reader %u: %llu read, %llu lost\n", i,
			      (unsigned long long)log->records, (unsigned long long)log->gaps);
		assert_int_equal(log->torn, 0);
		assert_true(log->records > 1000);
		/* Every seq: read xor counted lost. */
		for (s = 0; s < head; s++)
			assert_true((log->seen[s] != 0) != (log->lost[s] != 0));
		/* Every record read is the one its writer stored at that seq. */
		for (s = 0; s < head; s++) {
			if (!log->seen[s])
				continue;
			w = (unsigned)((log->seen[s] - 1) >> 32);
			assert_true(w < WRITERS);
			assert_int_equal(seqlog[w][(uint32_t)(log->seen[s] - 1)], s);
		}
		/* Every committed record was read or counted lost (both above). */
		for (w = 0; w < WRITERS; w++)
			for (s = 0; s < PER_WRITER; s++)
				if (seqlog[w][s] != NOT_WRITTEN)
					assert_true(log->seen[seqlog[w][s]] || log->lost[seqlog[w][s]]);
		free(log->seen);
		free(log->lost);
	}
	for (w = 0; w < WRITERS; w++)
		free(seqlog[w]);
	free(mem);
}

/* The same through the public API: pk_printk writers and pk_reader readers. */
static _Atomic int api_stop;

static void *api_writer(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	char text[300];
	uint64_t c;

	for (c = 0; !atomic_load(&api_stop); c++) {
		tu_make_text(text, sizeof(text), w, c, (w * 31 + c) % 150);
		int ret = pk_info("%s\n", text);

		/* -ENOBUFS: overrun while being written; lost and counted. */
		TU_CHECK(ret > 0 || ret == -ENOBUFS);
	}
	return NULL;
}

static void *api_reader(void *arg)
{
	struct pk_reader *r = pk_reader_open();
	struct pk_record rec;
	uint64_t next = 0, last_c[WRITERS], got = 0;
	unsigned w;
	uint64_t c;

	(void)arg;
	memset(last_c, 0xff, sizeof(last_c));
	while (!atomic_load(&api_stop)) {
		if (pk_reader_next(r, &rec) != 1)
			continue;
		TU_CHECK(rec.seq >= next);
		next = rec.seq + 1;
		TU_CHECK(tu_check_text(rec.text, rec.len, &w, &c) == 0);
		TU_CHECK(w < WRITERS);
		/* One writer's records come in its own order. */
		TU_CHECK(last_c[w] == UINT64_MAX || c > last_c[w]);
		last_c[w] = c;
		got++;
	}
	pk_reader_close(r);
	TU_CHECK(got > 0);
	return NULL;
}

static void test_api_stress(void **state)
{
	struct pk_config cfg;
	pthread_t wt[WRITERS], rt[READERS];
	unsigned i;

	(void)state;
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.buffer_size = 64 << 10;
	assert_int_equal(pk_init(&cfg), 0);
	for (i = 0; i < READERS; i++)
		pthread_create(&rt[i], NULL, api_reader, NULL);
	for (i = 0; i < WRITERS; i++)
		pthread_create(&wt[i], NULL, api_writer, (void *)(uintptr_t)i);
	usleep((useconds_t)(tu_seconds(2.0) * 1e6));
	atomic_store(&api_stop, 1);
	for (i = 0; i < WRITERS; i++)
		pthread_join(wt[i], NULL);
	for (i = 0; i < READERS; i++)
		pthread_join(rt[i], NULL);
	pk_shutdown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_store_stress),
		cmocka_unit_test(test_api_stress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
