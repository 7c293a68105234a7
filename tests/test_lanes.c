// SPDX-License-Identifier: MIT
/*
 * The store as lanes (src/store/lanes.c), alone: the head's timestamps,
 * sealing, the layout's validation, and the merging reader against
 * writers that migrate between CPUs, signal handlers that store nested
 * records, causal chains between threads and lanes overrun by writers,
 * and (x86-64) a signal handler storing at every instruction of a write.
 * Every stress case validates itself: keys strictly increasing, each
 * writer's records in its program order, every record read once or
 * counted lost, nothing counted that was read.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) && defined(__linux__)
#include <ucontext.h>
#endif

#include "store/lanes.h"
#include "testutil.h"

struct store {
	void *mem;
	size_t size;
	struct pk_lanes ls;
};

static struct store *store_new(unsigned n, unsigned data_log2)
{
	struct store *s = calloc(1, sizeof(*s));

	s->size = pk__lanes_region_size(n, data_log2);
	s->mem = aligned_alloc(4096, (s->size + 4095) & ~(size_t)4095);
	assert_non_null(s->mem);
	pk__lanes_format(s->mem, n, data_log2, 0);
	assert_int_equal(pk__lanes_attach(&s->ls, s->mem, s->size), 0);
	assert_int_equal(s->ls.n, n);
	return s;
}

static void store_free(struct store *s)
{
	free(s->mem);
	free(s);
}

static int put(struct pk_ring *ring, uint64_t ts, const char *text, bool open, uint64_t *seq)
{
	struct pk_ring_meta m = { .ts_ns = ts, .pid = 1, .tid = 1, .level = 6 };

	return pk__ring_write(ring, &m, text, (uint32_t)strlen(text), open, seq);
}

/* The head gives max(its ts, the caller's); a seal raises it only while idle. */
static void test_head_ts(void **state)
{
	struct store *s = store_new(1, 13);
	struct pk_ring *r = &s->ls.lane[0];
	struct pk_ring_reader rd;
	struct pk_ring_rec *rec = malloc(sizeof(*rec));
	uint64_t seq, hs, want[4] = { 100, 100, 250, 250 };
	unsigned i;

	(void)state;
	assert_int_equal(put(r, 100, "a", false, &seq), 0);
	assert_int_equal(put(r, 50, "b", false, &seq), 0);	/* older clock: gets 100 */
	assert_int_equal(pk__ring_floor(r, &hs), 100);
	assert_int_equal(hs, 2);
	assert_false(pk__ring_seal(r, 1, 250));		/* seq 1 is taken */
	assert_true(pk__ring_seal(r, 2, 250));
	assert_true(pk__ring_seal(r, 2, 200));		/* never lowers */
	assert_int_equal(pk__ring_floor(r, &hs), 250);
	assert_int_equal(put(r, 240, "c", false, &seq), 0);
	assert_int_equal(put(r, 0, "d", false, &seq), 0);
	pk__ring_reader_init(&rd, r, false);
	for (i = 0; i < 4; i++) {
		assert_int_equal(pk__ring_read(&rd, rec), 1);
		assert_int_equal(rec->meta.ts_ns, want[i]);
	}
	free(rec);
	store_free(s);
}

/* A store of lanes names each lane's place; anything else is refused. */
static void test_attach_validation(void **state)
{
	struct store *s = store_new(4, 13);
	struct pk_lanes ls;
	struct pk_ring_hdr *h1 = (struct pk_ring_hdr *)((char *)s->mem + s->ls.lane_size);
	struct pk_ring_hdr *h0 = s->mem;

	(void)state;
	assert_int_equal(pk__lanes_attach(&ls, s->mem, s->size - 1), -EINVAL);	/* cut short */
	h1->lane = 2;
	assert_int_equal(pk__lanes_attach(&ls, s->mem, s->size), -EINVAL);
	h1->lane = 1;
	h1->lanes = 3;
	assert_int_equal(pk__lanes_attach(&ls, s->mem, s->size), -EINVAL);
	h1->lanes = 4;
	h0->lanes = 0;
	assert_int_equal(pk__lanes_attach(&ls, s->mem, s->size), -EINVAL);
	h0->lanes = PK_LANES_MAX + 1;
	assert_int_equal(pk__lanes_attach(&ls, s->mem, s->size), -EINVAL);
	h0->lanes = 4;
	h1->version--;
	assert_int_equal(pk__lanes_attach(&ls, s->mem, s->size), -EPROTO);
	h1->version++;
	assert_int_equal(pk__lanes_attach(&ls, s->mem, s->size), 0);
	assert_int_equal(ls.n, 4);
	store_free(s);
}

static int drain(struct pk_lanes_reader *lr, struct pk_ring_rec **rec, uint64_t *jumped)
{
	int r;

	do
		r = pk__lanes_read(lr, rec, NULL, NULL, jumped, NULL);
	while (r == -EAGAIN);
	return r;
}

/*
 * Idle lanes: a reader that may seal lets a record out at once; one that
 * may not waits its grace; a post-mortem reader needs neither.
 */
static void test_idle_lanes(void **state)
{
	struct store *s = store_new(4, 13);
	struct pk_ring_rec *buf = calloc(4, sizeof(*buf)), *rec;
	struct pk_lanes_reader *lr = calloc(1, sizeof(*lr));
	uint64_t seq, t0 = tu_now_ns(), hs;

	(void)state;
	assert_int_equal(put(&s->ls.lane[2], t0, "two", false, &seq), 0);
	/* Read-only: held for the grace, then out. */
	pk__lanes_reader_init(lr, &s->ls, buf, false, false);
	lr->grace_ns = 50 * 1000 * 1000;
	assert_int_equal(drain(lr, &rec, NULL), 0);
	usleep(60 * 1000);
	assert_int_equal(drain(lr, &rec, NULL), 1);
	assert_string_equal(rec->text, "two");
	assert_int_equal(rec->lane, 2);
	/* Sealing: out at once, and the idle lanes' floors now pass it. */
	pk__lanes_reader_init(lr, &s->ls, buf, false, true);
	assert_int_equal(drain(lr, &rec, NULL), 1);
	assert_int_equal(rec->lane, 2);
	assert_true(lr->seals >= 1);
	assert_true(pk__ring_floor(&s->ls.lane[0], &hs) > t0 || pk__ring_floor(&s->ls.lane[3], &hs) > t0);
	assert_int_equal(drain(lr, &rec, NULL), 0);
	/* A later record in a sealed lane gets a ts past the one let out. */
	assert_int_equal(put(&s->ls.lane[0], t0, "zero", false, &seq), 0);
	assert_int_equal(drain(lr, &rec, NULL), 1);
	assert_string_equal(rec->text, "zero");
	assert_true(rec->meta.ts_ns > t0);
	/* Post-mortem: no bound but the records held. */
	pk__lanes_reader_init(lr, &s->ls, buf, true, false);
	assert_int_equal(drain(lr, &rec, NULL), 1);
	assert_string_equal(rec->text, "two");
	assert_int_equal(drain(lr, &rec, NULL), 1);
	assert_string_equal(rec->text, "zero");
	assert_int_equal(drain(lr, &rec, NULL), 0);
	assert_int_equal(lr->seals, 0);
	free(lr);
	free(buf);
	store_free(s);
}

/*
 * An open line in one lane, older than a record of another: the reader
 * finalizes it (as a newer record in its own lane would) and lets it out
 * first; the owner's extension then fails and it stores the rest anew.
 * An open line newer than the record held does not hold it up.
 */
static void test_open_line(void **state)
{
	struct store *s = store_new(2, 13);
	struct pk_ring_rec *buf = calloc(2, sizeof(*buf)), *rec;
	struct pk_lanes_reader *lr = calloc(1, sizeof(*lr));
	uint64_t seq0, seq1, t0 = tu_now_ns();

	(void)state;
	assert_int_equal(put(&s->ls.lane[0], t0, "open", true, &seq0), 0);
	assert_int_equal(put(&s->ls.lane[1], t0 + 10, "later", false, &seq1), 0);
	pk__lanes_reader_init(lr, &s->ls, buf, false, true);
	assert_int_equal(drain(lr, &rec, NULL), 1);
	assert_string_equal(rec->text, "open");
	assert_int_equal(pk__ring_extend(&s->ls.lane[0], seq0, " more", 5, false, 1024), -EAGAIN);
	assert_int_equal(drain(lr, &rec, NULL), 1);
	assert_string_equal(rec->text, "later");
	/* An open line newer than what is held stays open. */
	assert_int_equal(put(&s->ls.lane[0], t0 + 100, "open2", true, &seq0), 0);
	assert_int_equal(put(&s->ls.lane[1], t0 + 50, "before", false, &seq1), 0);
	assert_int_equal(drain(lr, &rec, NULL), 1);
	assert_string_equal(rec->text, "before");
	assert_int_equal(drain(lr, &rec, NULL), 0);
	assert_int_equal(pk__ring_extend(&s->ls.lane[0], seq0, " end", 4, false, 1024), 0);
	assert_int_equal(drain(lr, &rec, NULL), 1);
	assert_string_equal(rec->text, "open2 end");
	free(lr);
	free(buf);
	store_free(s);
}

/* Take lane @l's next seq as a writer parked for good right after its head CAS would. */
static uint64_t park_writer(struct pk_ring *r)
{
	typedef unsigned __int128 u128;
	u128 *w = (u128 *)(void *)&r->h->seq_head, old, got;

	old = (u128)atomic_load(&r->h->head_ts) << 64 | atomic_load(&r->h->seq_head);
	for (;;) {
		got = __sync_val_compare_and_swap(w, old, old + 1);
		if (got == old)
			return (uint64_t)old;
		old = got;
	}
}

/*
 * A writer parked for good in lane 0, with nothing after it there, and a
 * record in lane 1: the reader gives the parked one up after its stall
 * limit and counts it, instead of holding lane 1 for ever (a single ring
 * gives up only when later records exist in the ring itself).
 */
static void test_parked_writer(void **state)
{
	struct store *s = store_new(2, 13);
	struct pk_ring_rec *buf = calloc(2, sizeof(*buf)), *rec;
	struct pk_lanes_reader *lr = calloc(1, sizeof(*lr));
	uint64_t seq, jumped = 0, t0;
	int r;

	(void)state;
	park_writer(&s->ls.lane[0]);
	assert_int_equal(put(&s->ls.lane[1], tu_now_ns(), "one", false, &seq), 0);
	pk__lanes_reader_init(lr, &s->ls, buf, false, true);
	lr->l[0].rd.stall_limit_ns = 50 * 1000 * 1000;
	t0 = tu_now_ns();
	do {
		r = pk__lanes_read(lr, &rec, NULL, NULL, &jumped, NULL);
		if (r != 1)
			usleep(1000);
	} while (r != 1 && tu_now_ns() - t0 < 10ull * 1000 * 1000 * 1000);
	assert_int_equal(r, 1);
	assert_string_equal(rec->text, "one");
	assert_int_equal(jumped, 1);
	assert_true(tu_now_ns() - t0 >= 50 * 1000 * 1000);
	free(lr);
	free(buf);
	store_free(s);
}

struct waiter {
	struct store *s;
	uint64_t seqs[PK_LANES_MAX];
	int ret;
};

static void *wait_all(void *arg)
{
	struct waiter *w = arg;

	w->ret = pk__ring_wait_many(w->s->ls.lane, w->s->ls.n, w->seqs, 30000, false);
	return NULL;
}

/*
 * One reader sleeps for every lane on lane 0's futex word: a commit in
 * any lane wakes it (the word moves), and a commit made before it
 * registered is seen by its look.  Each lane in turn.
 */
static void test_wait_any_lane(void **state)
{
	struct store *s = store_new(4, 13);
	struct pk_ring_hdr *h0 = s->ls.lane[0].h;
	struct waiter w = { .s = s };
	uint64_t seq, t0;
	uint32_t before;
	pthread_t t;
	unsigned lane, i;

	(void)state;
	for (i = 1; i < s->ls.n; i++)
		assert_ptr_equal(s->ls.lane[i].wh, h0);
	for (lane = 0; lane < s->ls.n; lane++) {
		for (i = 0; i < s->ls.n; i++)
			w.seqs[i] = pk__ring_next_seq(&s->ls.lane[i]);
		w.ret = -1;
		assert_int_equal(pthread_create(&t, NULL, wait_all, &w), 0);
		t0 = tu_now_ns();
		while (!atomic_load(&h0->waiters) && tu_now_ns() - t0 < 30ull * 1000000000ull)
			usleep(1000);
		assert_int_equal(atomic_load(&h0->waiters), 1);
		before = atomic_load(&h0->wake);
		assert_int_equal(put(&s->ls.lane[lane], tu_now_ns(), "x", false, &seq), 0);
		/* The commit moved the word the reader sleeps on. */
		assert_int_not_equal(atomic_load(&h0->wake), before);
		pthread_join(t, NULL);
		assert_int_equal(w.ret, 1);
		assert_int_equal(atomic_load(&h0->waiters), 0);
	}
	/* Already there: no sleep at all, registered or not. */
	w.seqs[0] = pk__ring_next_seq(&s->ls.lane[0]);
	w.seqs[3] = seq;
	assert_int_equal(pk__ring_wait_many(s->ls.lane, s->ls.n, w.seqs, 0, false), 1);
	assert_int_equal(pk__ring_wait_many(s->ls.lane, s->ls.n, w.seqs, 0, true), 1);
	w.seqs[3] = seq + 1;
	assert_int_equal(pk__ring_wait_many(s->ls.lane, s->ls.n, w.seqs, 0, true), 0);
	assert_int_equal(pk__ring_wait_many(s->ls.lane, 0, w.seqs, 0, true), -EINVAL);
	store_free(s);
}

/* ---- a signal at every instruction of a write ---- */

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define STEP_SANITIZED 1
#endif
#endif
#if defined(__x86_64__) && defined(__linux__) && !defined(__SANITIZE_THREAD__) && \
	!defined(__SANITIZE_ADDRESS__) && !defined(STEP_SANITIZED)
#define STEP_OK 1
#define TRAP_FLAG	0x100
#define STEP_MAX	20000

static struct store *step_store;
static long step_n, step_target;
static bool step_acted;

static __attribute__((noinline)) void step_disarm(void)
{
	__asm__ volatile("");
}

/* "<c><k>" into @buf, without stdio (a signal handler's). */
static void step_text(char *buf, char c, long k)
{
	char d[24];
	int n = 0, i = 0;

	buf[i++] = c;
	do
		d[n++] = (char)('0' + k % 10);
	while ((k /= 10) > 0);
	while (n)
		buf[i++] = d[--n];
	buf[i] = '\0';
}

/*
 * At step k: a nested record, in the lane the interrupted write uses for
 * even k, in the other lane for odd k.
 */
static void step_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	char text[32];
	uint64_t seq;

	(void)sig;
	(void)si;
	if ((unsigned long)uc->uc_mcontext.gregs[REG_RIP] == (unsigned long)(uintptr_t)step_disarm ||
	    step_n >= STEP_MAX) {
		uc->uc_mcontext.gregs[REG_EFL] &= ~TRAP_FLAG;
		return;
	}
	if (step_n++ != step_target)
		return;
	step_acted = true;
	step_text(text, 'i', step_target);
	if (put(&step_store->ls.lane[step_target % 2], tu_now_ns(), text, false, &seq))
		abort();
}

static void step_arm(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	(void)si;
	((ucontext_t *)ucv)->uc_mcontext.gregs[REG_EFL] |= TRAP_FLAG;
}

/* One record "o<k>" into lane 0, stepped from before the call; the steps. */
static long step_write(long k)
{
	char text[32];
	uint64_t seq;
	int r;

	step_target = k;
	step_n = 0;
	step_acted = false;
	step_text(text, k < 0 ? 'c' : 'o', k < 0 ? 0 : k);	/* c: the counting run's */
	raise(SIGUSR1);		/* returns with the trap flag set */
	r = put(&step_store->ls.lane[0], tu_now_ns(), text, false, &seq);
	step_disarm();
	assert_int_equal(r, 0);
	return step_n;
}
#endif

/*
 * A signal at every instruction of a write (reserve, claim, copy, commit:
 * x86-64's trap flag steps pk__ring_write(), a SIGTRAP handler stores a
 * record of its own at step k, for every k), into the same lane or the
 * other: afterwards the merged read has every record once, in strictly
 * increasing keys, each lane's times never falling, nothing lost.
 */
static void test_signal_at_every_step(void **state)
{
#ifdef STEP_OK
	struct pk_ring_rec *buf = calloc(2, sizeof(*buf)), *rec;
	struct pk_lanes_reader *lr = calloc(1, sizeof(*lr));
	struct sigaction sa;
	uint64_t jumped = 0, last_ts[2] = { 0, 0 }, prev_ts = 0, got = 0, lane_seq[2] = { 0, 0 };
	uint64_t prev_seq = 0;
	unsigned char *seen_o, *seen_i, *acted;
	unsigned prev_lane = 0;
	unsigned seen_c = 0;
	long n, k, v, steps, min_steps = STEP_MAX;
	int r;

	(void)state;
	step_store = store_new(2, 20);
	/*
	 * Without data chunks: every write takes its space from the lane's
	 * data head, so every run steps the same path (with chunks, the write
	 * that takes a chunk is the long one, and comes once in many).
	 */
	step_store->ls.lane[0].chunks = step_store->ls.lane[1].chunks = false;
	memset(&sa, 0, sizeof(sa));
	sa.sa_flags = SA_SIGINFO;
	sa.sa_sigaction = step_trap;
	sigaction(SIGTRAP, &sa, NULL);
	sa.sa_sigaction = step_arm;
	sigaction(SIGUSR1, &sa, NULL);
	/* A first write to each lane, not stepped. */
	assert_int_equal(put(&step_store->ls.lane[0], tu_now_ns(), "w", false, &jumped), 0);
	assert_int_equal(put(&step_store->ls.lane[1], tu_now_ns(), "w", false, &jumped), 0);
	jumped = 0;
	/* Counting (no step is the target), twice: the first stepped run does more, once. */
	step_write(-1);
	n = step_write(-1);
	assert_true(n > 20 && n < STEP_MAX);
	seen_o = calloc((size_t)n + 1, 1);
	seen_i = calloc((size_t)n + 1, 1);
	acted = calloc((size_t)n + 1, 1);
	for (k = 0; k < n; k++) {
		steps = step_write(k);
		if (steps < min_steps)
			min_steps = steps;
		acted[k] = step_acted;
	}
	signal(SIGTRAP, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);

	pk__lanes_reader_init(lr, &step_store->ls, buf, true, true);
	while ((r = pk__lanes_read(lr, &rec, NULL, NULL, &jumped, NULL)) != 0) {
		if (r == -EAGAIN)
			continue;
		assert_int_equal(r, 1);
		assert_true(rec->lane < 2);
		/* Keys strictly increasing; a lane's seqs gapless, its times never falling. */
		if (got && !(rec->meta.ts_ns > prev_ts ||
			     (rec->meta.ts_ns == prev_ts && rec->lane > prev_lane) ||
			     (rec->meta.ts_ns == prev_ts && rec->lane == prev_lane &&
			      rec->seq > prev_seq)))
			fail_msg("record %" PRIu64 " '%s' (lane %u seq %" PRIu64 " ts %" PRIu64
				 ") after lane %u ts %" PRIu64, got, rec->text, rec->lane, rec->seq,
				 rec->meta.ts_ns, prev_lane, prev_ts);
		assert_int_equal(rec->seq, lane_seq[rec->lane]);
		assert_true(rec->meta.ts_ns >= last_ts[rec->lane]);
		lane_seq[rec->lane]++;
		last_ts[rec->lane] = prev_ts = rec->meta.ts_ns;
		prev_lane = rec->lane;
		prev_seq = rec->seq;
		got++;
		v = strtol(rec->text + 1, NULL, 10);
		assert_true(v >= 0 && v <= n);
		if (rec->text[0] == 'w') {
			continue;
		} else if (rec->text[0] == 'c') {
			assert_true(seen_c < 2);
			seen_c++;
		} else if (rec->text[0] == 'o') {
			assert_false(seen_o[v]);
			seen_o[v] = 1;
		} else {
			assert_int_equal(rec->text[0], 'i');
			assert_false(seen_i[v]);
			seen_i[v] = 1;
		}
	}
	assert_int_equal(jumped, 0);
	for (k = 0, v = 0; k < n; k++) {
		assert_true(seen_o[k]);
		assert_int_equal(seen_i[k], acted[k]);
		v += acted[k];
	}
	assert_int_equal(seen_c, 2);
	print_message("a signal at each of %ld steps of a write (%ld to %ld a run) stored its own "
		      "record (%ld did): %" PRIu64 " records read in order, none lost\n", n,
		      min_steps, n, v, got);
	/* Every step of every run was a target once. */
	for (k = 0; k < min_steps; k++)
		assert_true(acted[k]);
	free(seen_o);
	free(seen_i);
	free(acted);
	free(lr);
	free(buf);
	store_free(step_store);
#else
	(void)state;
	tu_skip("single-stepping needs x86-64 Linux and no TSan or ASan");
#endif
}

/* Lanes of another geometry than lane 0's are refused. */
static void test_attach_mixed_geometry(void **state)
{
	size_t l13 = pk__ring_region_size(13), l14 = pk__ring_region_size(14);
	char *mem = aligned_alloc(4096, (2 * l14 + 4095) & ~(size_t)4095);
	struct pk_lanes ls;
	struct pk_ring_hdr *h;

	(void)state;
	/* Lane 0 of 16 KiB data, "lane 1" of 8 KiB inside the second slot. */
	pk__ring_format(mem, 14, 0);
	h = (struct pk_ring_hdr *)mem;
	h->lanes = 2;
	pk__ring_format(mem + l14, 13, 0);
	h = (struct pk_ring_hdr *)(mem + l14);
	h->lanes = 2;
	h->lane = 1;
	assert_true(l13 < l14);
	assert_int_equal(pk__lanes_attach(&ls, mem, 2 * l14), -EINVAL);
	free(mem);
}

/*
 * A read-only reader of a live store with an idle lane lets out at once
 * the records older than its grace: only a writer preempted that long
 * could still store an older one.  (It waited the grace for each.)
 */
static void test_readonly_backlog(void **state)
{
	struct store *s = store_new(2, 13);
	struct pk_ring_rec *buf = calloc(2, sizeof(*buf)), *rec;
	struct pk_lanes_reader *lr = calloc(1, sizeof(*lr));
	uint64_t seq, t0 = tu_now_ns() - 5000000000ull, start;
	char text[32];
	int i;

	(void)state;
	for (i = 0; i < 40; i++) {
		snprintf(text, sizeof(text), "old %d", i);
		assert_int_equal(put(&s->ls.lane[0], t0 + (uint64_t)i, text, false, &seq), 0);
	}
	pk__lanes_reader_init(lr, &s->ls, buf, false, false);
	lr->grace_ns = 2000000000ull;
	start = tu_now_ns();
	for (i = 0; i < 40; i++) {
		assert_int_equal(drain(lr, &rec, NULL), 1);
		assert_int_equal(rec->seq, i);
	}
	assert_true(tu_now_ns() - start < lr->grace_ns);
	/* A record of now is still held for its grace. */
	assert_int_equal(put(&s->ls.lane[0], tu_now_ns(), "new", false, &seq), 0);
	assert_int_equal(drain(lr, &rec, NULL), 0);
	free(lr);
	free(buf);
	store_free(s);
}

/*
 * ACROSS A REBOOT (lanes.c): a record far ahead of the clock (stored
 * before a reboot) is let out without a seal, by a reader that may seal
 * and by one that may not; the idle lanes' heads stay at the clock, so
 * that a record stored now gets the time of now, not the earlier boot's.
 */
static void test_earlier_boot(void **state)
{
	struct store *s = store_new(4, 13);
	struct pk_ring_rec *buf = calloc(4, sizeof(*buf)), *rec;
	struct pk_lanes_reader *lr = calloc(1, sizeof(*lr));
	uint64_t seq, hs, ahead = tu_now_ns() + 3600ull * 1000000000ull;
	unsigned i;

	(void)state;
	assert_int_equal(put(&s->ls.lane[1], ahead, "before the reboot", false, &seq), 0);
	pk__lanes_reader_init(lr, &s->ls, buf, false, false);
	lr->grace_ns = 10ull * 1000000000ull;
	assert_int_equal(drain(lr, &rec, NULL), 1);
	assert_string_equal(rec->text, "before the reboot");
	pk__lanes_reader_init(lr, &s->ls, buf, false, true);
	assert_int_equal(drain(lr, &rec, NULL), 1);
	assert_string_equal(rec->text, "before the reboot");
	assert_int_equal(lr->seals, 0);
	for (i = 0; i < 4; i++)
		if (i != 1)
			assert_true(pk__ring_floor(&s->ls.lane[i], &hs) < ahead - 1800ull * 1000000000ull);
	assert_int_equal(put(&s->ls.lane[2], tu_now_ns(), "after", false, &seq), 0);
	assert_int_equal(drain(lr, &rec, NULL), 1);
	assert_string_equal(rec->text, "after");
	assert_true(rec->meta.ts_ns < ahead - 1800ull * 1000000000ull);
	free(lr);
	free(buf);
	store_free(s);
}

/* ---- the stress: migrating writers, nested handlers, causal chains ---- */

#define NW_MAX		8
#define ID_SIG		(NW_MAX)		/* + writer: its handler's records */
#define ID_CAUSE	(2 * NW_MAX)		/* the causal pair's two records */
#define IDS		(2 * NW_MAX + 2)

struct stress {
	struct store *s;
	unsigned nw;
	unsigned per;			/* records each writer stores */
	_Atomic unsigned done;
	_Atomic uint64_t stored[IDS];	/* records stored (write returned 0 or -ENOBUFS) */
	_Atomic int token;		/* the causal chain: 0, 1 stored, 2 second stored */
	pthread_t tid[NW_MAX];
	_Atomic bool stop_sig;
};

static struct stress *g;
static __thread unsigned tl_id = UINT32_MAX;
static __thread uint64_t tl_sig_count;

static uint64_t store_rec(unsigned id, uint64_t c)
{
	char text[64];
	struct pk_ring_meta m = { .ts_ns = tu_now_ns(), .pid = 1, .tid = id, .level = 6 };
	unsigned lane;
	uint64_t seq;
	int n = snprintf(text, sizeof(text), "%u %" PRIu64, id, c);

	pk__lanes_write(&g->s->ls, &m, text, (uint32_t)n, false, &lane, &seq);
	atomic_fetch_add(&g->stored[id], 1);
	return seq;
}

static void on_sig(int sig)
{
	int e = errno;

	(void)sig;
	if (tl_id < NW_MAX)
		store_rec(ID_SIG + tl_id, tl_sig_count++);
	errno = e;
}

static void *writer(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg, i;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	tl_id = id;
	for (i = 0; i < g->per; i++) {
		if (i % 7 == 0 && ncpu > 1) {
			/* Migrate: a CPU of its own choosing, every few records. */
			CPU_ZERO(&set);
			CPU_SET((int)((id + i / 7) % (unsigned)ncpu), &set);
			pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
		}
		store_rec(id, i);
		if (id == 0 && i == g->per / 2) {
			/* The cause: stored, then the other thread is told. */
			store_rec(ID_CAUSE, 0);
			atomic_store(&g->token, 1);
		}
		if (id == 1 && i == g->per / 2) {
			while (atomic_load(&g->token) != 1)
				sched_yield();
			store_rec(ID_CAUSE, 1);
			atomic_store(&g->token, 2);
		}
	}
	atomic_fetch_add(&g->done, 1);
	return NULL;
}

static void *signaller(void *arg)
{
	unsigned i = 0;

	(void)arg;
	while (!atomic_load(&g->stop_sig)) {
		pthread_kill(g->tid[i++ % g->nw], SIGUSR1);
		usleep(50);
	}
	return NULL;
}

struct tally {
	uint64_t next[IDS];	/* the counter expected next from each id */
	uint64_t seen, gaps, jumped, keys_bad, order_bad, dup;
	uint64_t last_ts;
	unsigned last_lane;
	uint64_t last_seq;
	bool any;
};

static void check_rec(struct tally *t, const struct pk_ring_rec *rec)
{
	unsigned id;
	uint64_t c;

	if (t->any && !(t->last_ts < rec->meta.ts_ns ||
			(t->last_ts == rec->meta.ts_ns &&
			 (t->last_lane < rec->lane ||
			  (t->last_lane == rec->lane && t->last_seq < rec->seq))))) {
		if (t->keys_bad++ < 5)
			print_message("key went back: (%" PRIu64 ", %u, %" PRIu64 ") after (%" PRIu64
				      ", %u, %" PRIu64 ")\n", rec->meta.ts_ns, rec->lane, rec->seq,
				      t->last_ts, t->last_lane, t->last_seq);
	}
	t->any = true;
	t->last_ts = rec->meta.ts_ns;
	t->last_lane = rec->lane;
	t->last_seq = rec->seq;
	if (sscanf(rec->text, "%u %" SCNu64, &id, &c) != 2 || id >= IDS) {
		t->order_bad++;
		return;
	}
	t->seen++;
	if (c < t->next[id]) {
		if (t->dup++ < 5)
			print_message("id %u: %" PRIu64 " again or out of order (expected %" PRIu64 ")\n",
				      id, c, t->next[id]);
		return;
	}
	t->gaps += c - t->next[id];
	t->next[id] = c + 1;
}

static void run_stress(unsigned n, unsigned data_log2, unsigned nw, unsigned per, bool sig,
		       const char *what)
{
	struct stress st;
	struct pk_ring_rec *buf = calloc(n, sizeof(*buf)), *rec;
	struct pk_lanes_reader *lr = calloc(1, sizeof(*lr));
	struct tally *t = calloc(1, sizeof(*t));
	pthread_t sigt;
	uint64_t stored = 0;
	unsigned i;
	int r;

	memset(&st, 0, sizeof(st));
	st.s = store_new(n, data_log2);
	st.nw = nw;
	st.per = per;
	g = &st;
	signal(SIGUSR1, on_sig);
	pk__lanes_reader_init(lr, &st.s->ls, buf, false, true);
	for (i = 0; i < nw; i++)
		assert_int_equal(pthread_create(&st.tid[i], NULL, writer, (void *)(uintptr_t)i), 0);
	if (sig)
		assert_int_equal(pthread_create(&sigt, NULL, signaller, NULL), 0);
	for (;;) {
		bool fin = atomic_load(&st.done) == nw;

		r = pk__lanes_read(lr, &rec, NULL, NULL, &t->jumped, NULL);
		if (r == 1) {
			check_rec(t, rec);
			continue;
		}
		if (r == -EAGAIN)
			continue;
		if (fin) {
			/* Every writer is done: what is left is readable now. */
			r = drain(lr, &rec, &t->jumped);
			if (r == 1) {
				check_rec(t, rec);
				continue;
			}
			break;
		}
		sched_yield();
	}
	if (sig) {
		atomic_store(&st.stop_sig, true);
		pthread_join(sigt, NULL);
	}
	for (i = 0; i < nw; i++)
		pthread_join(st.tid[i], NULL);
	/* Handlers that ran after the drain: read them too. */
	while ((r = drain(lr, &rec, &t->jumped)) == 1)
		check_rec(t, rec);
	for (i = 0; i < IDS; i++)
		stored += atomic_load(&st.stored[i]);
	print_message("%s: %u lanes, %u writers: stored %" PRIu64 ", read %" PRIu64
		      ", lost %" PRIu64 " (gaps %" PRIu64 "), seals %" PRIu64 "\n",
		      what, n, nw, stored, t->seen, t->jumped, t->gaps, lr->seals);
	assert_int_equal(t->keys_bad, 0);
	assert_int_equal(t->order_bad, 0);
	assert_int_equal(t->dup, 0);
	/* Every record read once or counted lost, and nothing else counted. */
	assert_int_equal(t->seen + t->jumped, stored);
	assert_true(t->gaps <= t->jumped);
	/* Both, in causal order (a duplicate or reversal is caught above). */
	if (!t->jumped)
		assert_int_equal(t->next[ID_CAUSE], 2);
	signal(SIGUSR1, SIG_DFL);
	free(t);
	free(lr);
	free(buf);
	store_free(st.s);
}

static void test_stress_migrate(void **state)
{
	(void)state;
	run_stress(2, 20, 4, tu_scaled(40000), false, "migrate");
}

static void test_stress_idle_lanes_signals(void **state)
{
	(void)state;
	run_stress(8, 18, 5, tu_scaled(20000), true, "idle lanes, signals");
}

static void test_stress_overrun(void **state)
{
	(void)state;
	/* 8 KiB lanes: the reader is lapped, and counts what it missed. */
	run_stress(2, 13, 4, tu_scaled(30000), true, "overrun");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_head_ts),
		cmocka_unit_test(test_attach_validation),
		cmocka_unit_test(test_idle_lanes),
		cmocka_unit_test(test_open_line),
		cmocka_unit_test(test_parked_writer),
		cmocka_unit_test(test_wait_any_lane),
		cmocka_unit_test(test_signal_at_every_step),
		cmocka_unit_test(test_attach_mixed_geometry),
		cmocka_unit_test(test_readonly_backlog),
		cmocka_unit_test(test_earlier_boot),
		cmocka_unit_test(test_stress_migrate),
		cmocka_unit_test(test_stress_idle_lanes_signals),
		cmocka_unit_test(test_stress_overrun),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
