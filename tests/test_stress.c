// SPDX-License-Identifier: MIT
/*
 * Multi-writer, multi-reader stress of the record store, self-validating.
 *
 * More writers than cores store texts that carry their writer, counter and
 * checksum, at levels that cycle and under two pids; readers run all the
 * while.  Each writer logs the seq it got for each of its records.
 * Afterwards, for every reader and every seq ever handed out, exactly one
 * of these holds: the reader returned that record (with the very content
 * its writer stored at that seq), or the reader skipped it as lost.  One
 * more reader reads through a filter: every seq it moved over was
 * returned (and passes the filter), or skipped as filtered (a committed
 * record whose logged level or pid the filter rejects), or lost.  The
 * store is small, so it wraps many times, and its numbering starts just
 * below 2^32, so the descriptors' 32-bit seq fields wrap during the run.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "store/store.h"
#include "store/ringbuf.h"
#include "testutil.h"

#define WRITERS		6
#define READERS		2		/* plain; one filtered reader besides */
#define PER_WRITER	400000u
#define MAX_SEQ		(WRITERS * PER_WRITER)
#define NOT_WRITTEN	UINT64_MAX
#define BASE		((1ull << 32) - 50000)	/* first seq */

/* What writer @w stores as its record @c: level and pid. */
static unsigned w_level(uint64_t c) { return (unsigned)(c % 8); }
static uint32_t w_pid(unsigned w) { return 100 + (w & 1); }

static const struct pk_ring_filter filter = { .max_level = 5, .pid = 100 };

static struct pk_ring ring;
static _Atomic int stop, writers_done;
static uint64_t *seqlog[WRITERS];	/* seqlog[w][c]: seq of writer w's record c */
static uint64_t writes_ok[WRITERS];

struct reader_log {
	struct pk_ring_reader rd;	/* initialised before the writers start */
	uint64_t *seen;		/* seen[seq] = w << 32 | c, plus one; 0: not read */
	uint8_t *lost;		/* lost[seq]: skipped as lost */
	uint64_t records, gaps, torn, last_ts;
};

static struct reader_log rlog[READERS];

/* The filtered reader: what it returned, and each stretch it moved over. */
struct stretch {
	uint64_t from, to;	/* seqs [from, to) passed over ... */
	uint64_t filtered;	/* ... of which this many were filtered */
};

static struct {
	struct pk_ring_reader rd;
	uint64_t *seen;		/* as reader_log */
	struct stretch *st;
	size_t nst, cap;
	uint64_t records, filtered, torn, again, last_ts;
} flog;

static void *writer(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	struct pk_ring_meta m = { .tid = w, .pid = w_pid(w), .facility = 1 };
	char text[300];
	uint64_t c, seq;
	unsigned rnd = w * 7919u + 1;

	for (c = 0; c < PER_WRITER && !atomic_load(&stop); c++) {
		size_t len;

		rnd = rnd * 1103515245u + 12345u;
		len = tu_make_text(text, sizeof(text), w, c, (rnd >> 16) % 200);
		m.ts_ns = c;
		m.level = (uint8_t)w_level(c);
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

/* A record's time never falls below the one before it in the store (with a 16-byte CAS). */
static bool ts_order_ok(uint64_t *last, uint64_t ts)
{
#ifdef PK_RING_HEAD_CAS16
	if (ts < *last)
		return false;
#endif
	*last = ts;
	return true;
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
	TU_CHECK((expect) == (BASE));
	for (;;) {
		int ret = pk__ring_read(&rd, rec);

		if (ret == 1) {
			TU_CHECK(rec->seq >= expect);
			for (s = expect; s < rec->seq; s++)
				log->lost[s - BASE] = 1;
			log->gaps += rec->seq - expect;
			/*
			 * The store stamps max(its head's time, the caller's):
			 * never below what the writer gave (ringbuf.c, THE
			 * HEAD), and never falling with the seq.
			 */
			if (tu_check_text(rec->text, rec->len, &w, &c) != 0 || rec->meta.tid != w ||
			    rec->meta.ts_ns < c || !ts_order_ok(&log->last_ts, rec->meta.ts_ns)) {
				log->torn++;
			} else {
				log->seen[rec->seq - BASE] = ((uint64_t)w << 32 | c) + 1;
			}
			log->records++;
			expect = rec->seq + 1;
			continue;
		}
		/*
		 * Nothing returned, but records may have been passed over as
		 * lost (overwritten, torn, a block its lapped writer never
		 * stored): at the very end, after the last record read, they
		 * are counted here, as the next record read would count them.
		 */
		TU_CHECK(rd.next >= expect);
		for (s = expect; s < rd.next; s++)
			log->lost[s - BASE] = 1;
		log->gaps += rd.next - expect;
		expect = rd.next;
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

static void note_stretch(uint64_t from, uint64_t to, uint64_t filtered)
{
	if (from == to) {
		TU_CHECK(filtered == 0);
		return;
	}
	if (flog.nst == flog.cap) {
		flog.cap = flog.cap ? 2 * flog.cap : 4096;
		flog.st = realloc(flog.st, flog.cap * sizeof(*flog.st));
		TU_CHECK(flog.st != NULL);
	}
	flog.st[flog.nst++] = (struct stretch){ from, to, filtered };
}

static void *filtered_reader(void *arg)
{
	struct pk_ring_reader rd = flog.rd;
	struct pk_ring_rec *rec = malloc(sizeof(*rec));
	uint64_t expect = rd.next, skipped = 0, before;
	unsigned w;
	uint64_t c;
	int done_pass = 0, ret;

	(void)arg;
	TU_CHECK(expect == BASE);
	for (;;) {
		before = skipped;
		ret = pk__ring_read_filtered(&rd, rec, &filter, &skipped, NULL);
		TU_CHECK(skipped - before <= (ret == 1 ? rec->seq : rd.next) - expect);
		if (ret == 1) {
			TU_CHECK(rec->seq >= expect);
			note_stretch(expect, rec->seq, skipped - before);
			TU_CHECK(rec->meta.level < filter.max_level && rec->meta.pid == filter.pid);
			if (tu_check_text(rec->text, rec->len, &w, &c) != 0 || rec->meta.tid != w ||
			    rec->meta.ts_ns < c || !ts_order_ok(&flog.last_ts, rec->meta.ts_ns) ||
			    rec->meta.level != w_level(c) ||
			    rec->meta.pid != w_pid(w))
				flog.torn++;
			else
				flog.seen[rec->seq - BASE] = ((uint64_t)w << 32 | c) + 1;
			flog.records++;
			expect = rec->seq + 1;
			continue;
		}
		TU_CHECK(rd.next >= expect);
		note_stretch(expect, rd.next, skipped - before);
		expect = rd.next;
		if (ret == -EAGAIN) {
			flog.again++;
			continue;
		}
		TU_CHECK(ret == 0);
		if (atomic_load(&writers_done) == WRITERS) {
			if (done_pass++)
				break;
			rd.stall_limit_ns = 0;
		}
	}
	flog.filtered = skipped;
	TU_CHECK(expect == pk__ring_next_seq(&ring));
	free(rec);
	return NULL;
}

static void test_store_stress(void **state)
{
	pthread_t wt[WRITERS], rt[READERS], ft;
	size_t size = pk__ring_region_size(16);
	void *mem = aligned_alloc(64, size);
	double secs = tu_seconds(3.0);
	uint64_t t0, head, s, total_ok = 0, *owner, rejected, in_stretches = 0;
	unsigned w, i;
	size_t k;

	(void)state;
	pk__ring_format(mem, 16, BASE);
	assert_int_equal(pk__ring_attach(&ring, mem, size), 0);
	for (w = 0; w < WRITERS; w++)
		seqlog[w] = malloc(PER_WRITER * sizeof(uint64_t));
	for (i = 0; i < READERS; i++) {
		rlog[i].seen = calloc(MAX_SEQ, sizeof(uint64_t));
		rlog[i].lost = calloc(MAX_SEQ, 1);
		pk__ring_reader_init(&rlog[i].rd, &ring, false);
		pthread_create(&rt[i], NULL, reader, &rlog[i]);
	}
	flog.seen = calloc(MAX_SEQ, sizeof(uint64_t));
	pk__ring_reader_init(&flog.rd, &ring, false);
	pthread_create(&ft, NULL, filtered_reader, NULL);
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
	pthread_join(ft, NULL);

	head = pk__ring_next_seq(&ring);
	for (w = 0; w < WRITERS; w++)
		total_ok += writes_ok[w];
	print_message("%llu seqs, %llu committed, store wrapped %llu times\n",
		      (unsigned long long)(head - BASE), (unsigned long long)total_ok,
		      (unsigned long long)(atomic_load(&ring.h->lpos_head) / ring.data_size));
	assert_true(atomic_load(&ring.h->lpos_head) > 10 * ring.data_size);

	for (i = 0; i < READERS; i++) {
		struct reader_log *log = &rlog[i];

		print_message("reader %u: %llu read, %llu lost\n", i,
			      (unsigned long long)log->records, (unsigned long long)log->gaps);
		assert_int_equal(log->torn, 0);
		assert_true(log->records > 1000);
		/* Every seq: read xor counted lost. */
		for (s = 0; s < head - BASE; s++)
			assert_true((log->seen[s] != 0) != (log->lost[s] != 0));
		/* Every record read is the one its writer stored at that seq. */
		for (s = 0; s < head - BASE; s++) {
			if (!log->seen[s])
				continue;
			w = (unsigned)((log->seen[s] - 1) >> 32);
			assert_true(w < WRITERS);
			assert_int_equal(seqlog[w][(uint32_t)(log->seen[s] - 1)], BASE + s);
		}
		/* Every committed record was read or counted lost (both above). */
		for (w = 0; w < WRITERS; w++)
			for (s = 0; s < PER_WRITER; s++)
				if (seqlog[w][s] != NOT_WRITTEN)
					assert_true(log->seen[seqlog[w][s] - BASE] ||
						    log->lost[seqlog[w][s] - BASE]);
		free(log->seen);
		free(log->lost);
	}

	/*
	 * The filtered reader.  owner[seq]: writer and counter of the record
	 * committed at seq, plus one; 0: none was.
	 */
	owner = calloc(MAX_SEQ, sizeof(uint64_t));
	for (w = 0; w < WRITERS; w++)
		for (s = 0; s < PER_WRITER; s++)
			if (seqlog[w][s] != NOT_WRITTEN)
				owner[seqlog[w][s] - BASE] = ((uint64_t)w << 32 | s) + 1;
	print_message("filtered reader: %llu read, %llu filtered, %llu look-ins\n",
		      (unsigned long long)flog.records, (unsigned long long)flog.filtered,
		      (unsigned long long)flog.again);
	assert_int_equal(flog.torn, 0);
	/* About 11 in 16 records are filtered; the plain readers see > 1000. */
	assert_true(flog.records > 100);
	assert_true(flog.filtered > 300);
	/* Returned: the very record its writer stored there, which passes. */
	for (s = 0; s < head - BASE; s++) {
		if (!flog.seen[s])
			continue;
		assert_int_equal(flog.seen[s], owner[s]);
		w = (unsigned)((owner[s] - 1) >> 32);
		assert_true(w_level((uint32_t)(owner[s] - 1)) < 5 && w_pid(w) == 100);
	}
	/*
	 * Each stretch moved over: no more filtered than it holds committed
	 * records the filter rejects, the rest lost; the stretches and the
	 * records returned cover every seq once.
	 */
	for (k = 0; k < flog.nst; k++) {
		const struct stretch *st = &flog.st[k];

		rejected = 0;
		for (s = st->from; s < st->to; s++) {
			uint64_t o = owner[s - BASE];

			assert_int_equal(flog.seen[s - BASE], 0);
			if (o && ((int)w_level((uint32_t)(o - 1)) >= filter.max_level ||
				  w_pid((unsigned)((o - 1) >> 32)) != filter.pid))
				rejected++;
		}
		assert_true(st->filtered <= rejected);
		in_stretches += st->to - st->from;
	}
	assert_int_equal(in_stretches + flog.records, head - BASE);
	free(owner);
	free(flog.seen);
	free(flog.st);
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
