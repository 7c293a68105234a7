// SPDX-License-Identifier: MIT
/*
 * sim.c - the discrete-event model behind pkbench sim.
 *
 * Time is simulated nanoseconds; events sit in a binary heap ordered by
 * (time, insertion number), so ties break the same way every run.  The
 * only randomness is the run's own PRNG (xoshiro256**, seeded with
 * splitmix64): the producers' start offsets, arrival times with --rate
 * and which calls are emergencies.
 *
 * MACHINE
 *
 * N CPUs, each with a run queue served round robin: a thread runs until
 * its step is done or, when others wait for the CPU, for one time slice.
 * Producer i runs on CPU i mod N; the rescue thread, the printer thread
 * and the main thread on the CPUs after the producers', so with T >= N
 * they compete with producers for a CPU, as on a real machine.  A thread
 * that sleeps (futex, a console line) leaves its CPU; one that is woken
 * becomes runnable wakeup_ns later.  A spinning waiter keeps its CPU.
 *
 * THE PROTOCOLS (src/flush/flush.c and conlock.c)
 *
 *   legacy   after storing, trylock; the holder prints record after
 *            record while any is pending, unlocks, looks again, relocks.
 *   handoff  after storing, pk__cl_lock_spinning(): take a free lock; if
 *            the holder is inside a record (ACTIVE), nobody waits and the
 *            holder is not the rescue thread, become the waiter: spin
 *            SPIN_NS, then sleep until handed the lock (or WAIT_NS).  The
 *            holder marks each record ACTIVE and hands over at its end
 *            when a waiter exists.  With a budget (the "budget" variant)
 *            a holder that printed longer than the budget with nobody
 *            waiting unlocks and wakes the rescue thread, which takes the
 *            lock as BUDGET (callers never wait for it) and prints until
 *            nothing is pending, polling every RESCUE_POLL_NS.
 *   thread   callers store and wake the printer thread if it sleeps; it
 *            prints one record per console ownership.
 *   emergency (any mode) a call in an emergency section prints directly:
 *            it takes the console at the next record boundary and prints
 *            everything stored up to its own record.
 *
 * A console write costs write_ns + bytes * write_kb_ns / 1024 of CPU,
 * then the line: the writer sleeps until the line has sent the bytes
 * (throttle.c: bytes / bps after the later of the write's start and the
 * line's previous end).  The store holds C records (its size over the
 * record's footprint); a console whose next record was overwritten
 * reports the loss with one drop notice line, as the library does.
 *
 * THE STORE
 *
 * One shared ring: storing costs fmt_ns (the caller's own part) plus a
 * serialized section of cs_ns + xfer_ns for each other CPU storing at
 * the same time; with k CPUs storing, a call takes
 * max(fmt + s, k * s), s = cs + xfer * (k - 1): the shared line moves
 * from CPU to CPU once per record and every contender pulls it.  Lanes:
 * fmt_ns + cs_ns + lane_ns * (k - 1), nothing serialized: each CPU stores
 * in its own lane, and lane_ns is what a call was measured to lose when
 * another CPU stores in its lane at the same time (simcost.c).  The storm uses this closed form;
 * pkb_sim_store_run() simulates the shared line call by call (a FIFO
 * server), which is where the store table's numbers come from.
 *
 * BATCHES
 *
 * A storm's producer that would only store (legacy: the lock is held;
 * handoff: somebody waits already, or the holder is between records or is
 * the rescue thread; thread: the printer is awake) makes its calls as one
 * CPU step of n calls up to the stop, not one event per call.  When the
 * state changes so that a call would do more (the lock is released, a
 * holder begins a record with no waiter, the printer goes to sleep), the
 * producer whose current call ends first is cut at that call's end, which
 * is the call that would have seen the change.  Records of a batch count
 * as stored as they complete (head_now()).  Calls cut by a time slice get
 * the time they waited added.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"
#include "store/lanes.h"
#include "store/ringbuf.h"

#define SPIN_NS		20000		/* flush.c SPIN_NS: a waiter spins this long ... */
#define WAIT_NS		1000000000	/* ... and waits this long in all (WAIT_NS) */
#define RESCUE_POLL_NS	100000000	/* flush.c RESCUE_POLL_NS */
#define PRINTER_NAP_NS	200000		/* printer_main(): an emergency printer has it */
#define FLUSH_POLL_NS	1000000		/* the main thread's pk_flush() looks again */
#define NOTICE_BYTES	36		/* "** N printk messages dropped **\n" */
#define INF		INT64_MAX

enum kind { K_WORKER, K_RESCUE, K_PRINTER, K_MAIN };
enum state { S_RUN, S_READY, S_BLOCKED, S_DONE };
enum role { R_NONE, R_HOLDER, R_PRINTER, R_DIRECT };
enum pc {
	W_CALL, W_BATCH_END, W_STORED, W_END, W_SPIN_END, W_PARKED,
	P_NEXT, P_WROTE, P_RECEND, E_GOT,
	RS_TRY, PR_LOOP, M_FLUSH,
};

struct th {
	int id, kind, cpu, state, pc, role;
	int64_t rem, run_t0;
	uint32_t gen, tgen;
	struct th *qnext, *wnext;
	/* a call */
	int64_t call_t0;
	int emergency;
	int64_t emerg_in;	/* calls until the next emergency one */
	int64_t next_arrival;
	int burst_left;
	/* a batch */
	int batching, bidx;
	int64_t bd, btotal, bplanned, desched_at;
	uint64_t bgapcalls;
	/* waiting and printing */
	int spinning;
	int64_t spent, rec_t0;
	int cur_bytes, cur_notice, handoff_stint, budget_stint;
	uint64_t target;
	uint64_t bytes;
};

struct cpu {
	struct th *run, *qhead, *qtail;
	int nq;
	int64_t slice_end;
};

struct ev {
	int64_t t;
	uint64_t n;
	int tid;
	uint32_t gen;
	int timer;
};

struct sim {
	const struct pkb_sim_params *p;
	struct pkb_sim_result *r;
	int64_t now, stop;
	uint64_t s[4];			/* PRNG */
	struct ev *heap;
	size_t nheap, capheap;
	uint64_t evn;
	struct cpu *cpus;
	struct th *th;
	int nth, nworkers, workers_done;
	struct th *rescue, *printer, *mainth;
	/* store */
	uint64_t head_base, cap;
	int nstoring;
	struct th **batchers;
	int nbatchers;
	int interest;
	/* console lock */
	struct th *lock_owner, *waiter;
	int lock_budget, active;
	/* the console */
	uint64_t con_next;
	struct th *con_owner, *con_want, *want_tail;	/* emergency printers wait in turn */
	int64_t line_free;
	int printer_sleeping, rescue_sleeping;
	int64_t mark_t;
	int mark_behind;
	int finished;
};

/* ---- PRNG: xoshiro256**, seeded by splitmix64 ---- */

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rnd(struct sim *S)
{
	uint64_t *s = S->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

/* Uniform in [0, 1). */
static double rnd01(struct sim *S)
{
	return (double)(rnd(S) >> 11) * (1.0 / 9007199254740992.0);
}

static int64_t rnd_exp(struct sim *S, double mean)
{
	return (int64_t)(-log(1.0 - rnd01(S)) * mean);
}

/* Calls until the next emergency one (geometric), INF without emergencies. */
static int64_t next_emergency(struct sim *S)
{
	double e = S->p->emergency;

	if (e <= 0)
		return INF;
	if (e >= 1)
		return 0;
	return (int64_t)floor(log(1.0 - rnd01(S)) / log(1.0 - e));
}

/* ---- the event heap ---- */

static int ev_less(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->n < b->n);
}

static int hpush(struct ev **heap, size_t *nheap, size_t *cap, struct ev e)
{
	size_t i;

	if (*nheap == *cap) {
		size_t n = *cap ? *cap * 2 : 1024;
		struct ev *h = realloc(*heap, n * sizeof(*h));

		if (!h)
			return -ENOMEM;
		*heap = h;
		*cap = n;
	}
	i = (*nheap)++;
	while (i && ev_less(&e, &(*heap)[(i - 1) / 2])) {
		(*heap)[i] = (*heap)[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	(*heap)[i] = e;
	return 0;
}

static struct ev hpop(struct ev *heap, size_t *nheap)
{
	struct ev top = heap[0], last = heap[--*nheap];
	size_t i = 0, c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= *nheap)
			break;
		if (c + 1 < *nheap && ev_less(&heap[c + 1], &heap[c]))
			c++;
		if (!ev_less(&heap[c], &last))
			break;
		heap[i] = heap[c];
		i = c;
	}
	if (*nheap)
		heap[i] = last;
	return top;
}

/* A thread's next step (@timer 0) or its timer; each new one voids the old. */
static int push(struct sim *S, int64_t t, struct th *th, int timer)
{
	struct ev e = { t, S->evn++, th->id, timer ? ++th->tgen : ++th->gen, timer };

	return hpush(&S->heap, &S->nheap, &S->capheap, e);
}

/* ---- CPUs ---- */

static int oom;

static void sched_main(struct sim *S, struct th *t, int64_t when)
{
	if (push(S, when, t, 0) < 0)
		oom = 1;
}

static void settle(struct sim *S, struct th *t)
{
	t->rem -= S->now - t->run_t0;
	if (t->rem < 0)
		t->rem = 0;
	t->run_t0 = S->now;
}

static void arm(struct sim *S, struct th *t)
{
	int64_t e = S->now + t->rem, se = S->cpus[t->cpu].slice_end;

	sched_main(S, t, se < e ? se : e);
}

static void enqueue(struct cpu *c, struct th *t)
{
	t->qnext = NULL;
	if (c->qtail)
		c->qtail->qnext = t;
	else
		c->qhead = t;
	c->qtail = t;
	c->nq++;
}

static void truncate_batch(struct sim *S, struct th *t);

static void dispatch(struct sim *S, struct cpu *c)
{
	struct th *t = c->qhead;

	if (c->run || !t)
		return;
	c->qhead = t->qnext;
	if (!c->qhead)
		c->qtail = NULL;
	c->nq--;
	c->run = t;
	t->state = S_RUN;
	t->run_t0 = S->now;
	c->slice_end = c->nq ? S->now + S->p->slice_ns : INF;
	if (t->batching && t->desched_at >= 0) {
		/* The call cut by the slice took the wait too. */
		uint64_t d = (uint64_t)(t->bd + (S->now - t->desched_at));

		pkb_hist_add(&S->r->hist, d);
		if ((int64_t)d > S->p->watchdog_ns)
			S->r->watchdog++;
		if (d > S->r->max_in_storm_ns && S->now <= S->stop)
			S->r->max_in_storm_ns = d;
		t->bgapcalls++;
		t->desched_at = -1;
		if (S->interest || S->now >= S->stop)
			truncate_batch(S, t);
	}
	arm(S, t);
}

/*
 * Where a woken thread runs (the kernel's select_task_rq_fair(), reduced
 * to its outcome): its own CPU if that is idle, else an idle CPU if there
 * is one (select_idle_sibling()), else its own.  With no CPU idle Linux
 * keeps a woken thread on its previous CPU unless the load figures the
 * model does not keep say otherwise; a model that sent it to its waker's
 * CPU half the time (preempting the waker) spread a storm's printing over
 * every thread, where the real one at 2 CPUs passes between two threads
 * (top printer 60-67 % at 2 and at 16 threads, measured).
 */
static void place(struct sim *S, struct th *t)
{
	const struct cpu *own = &S->cpus[t->cpu];
	int i, n = S->p->cpus;

	if (!own->run && !own->nq)
		return;
	for (i = 1; i < n; i++) {
		int k = (t->cpu + i) % n;

		if (!S->cpus[k].run && !S->cpus[k].nq) {
			t->cpu = k;
			return;
		}
	}
}

/*
 * A woken thread: first in its CPU's queue, and it preempts the running
 * thread at once (the scheduler's wakeup preemption: a thread that slept
 * has run less than one that computes).
 */
static void make_ready(struct sim *S, struct th *t)
{
	struct cpu *c;
	int64_t gran = S->now;

	place(S, t);
	c = &S->cpus[t->cpu];
	t->state = S_READY;
	t->qnext = c->qhead;
	c->qhead = t;
	if (!c->qtail)
		c->qtail = t;
	c->nq++;
	if (!c->run) {
		dispatch(S, c);
		return;
	}
	if (c->slice_end > gran) {
		settle(S, c->run);
		c->slice_end = gran;
		arm(S, c->run);
	}
}

/* The running thread @t works @ns of CPU, then runs step @pc. */
static void cpu_step(struct sim *S, struct th *t, int64_t ns, int pc)
{
	t->rem = ns;
	t->pc = pc;
	t->run_t0 = S->now;
	arm(S, t);
}

static void leave_cpu(struct sim *S, struct th *t, int state)
{
	struct cpu *c = &S->cpus[t->cpu];

	t->state = state;
	t->rem = 0;
	t->gen++;	/* drops its pending step */
	if (c->run == t) {
		c->run = NULL;
		dispatch(S, c);
	}
}

static void sleep_until(struct sim *S, struct th *t, int64_t when, int pc)
{
	t->pc = pc;
	leave_cpu(S, t, S_BLOCKED);
	sched_main(S, t, when);
}

static void block(struct sim *S, struct th *t, int pc)
{
	t->pc = pc;
	leave_cpu(S, t, S_BLOCKED);
}

/* A blocked thread is woken: runnable after the wakeup latency. */
static void wake(struct sim *S, struct th *t, int pc, int64_t latency)
{
	t->pc = pc;
	sched_main(S, t, S->now + latency);
}

/* ---- the store ---- */

int pkb_sim_lanes(int cpus, size_t bytes, unsigned want)
{
	unsigned lane_log2;

	return (int)pk__lanes_for_cpus(want, cpus, pk__ring_data_log2_for(bytes), &lane_log2);
}

/*
 * A call with @k CPUs storing at once: on one ring, max(fmt + s, k * s),
 * s = cs + xfer * (k - 1); on @lanes lanes (0: one per CPU), each of the
 * min(k, lanes) lanes in use is such a ring for the ceil(k / lanes) CPUs
 * that share it, and a call loses lane_ns for each other lane in use.
 */
static int64_t call_cost(const struct pkb_sim_costs *c, enum pkb_sim_store store, int lanes,
			 int64_t k)
{
	int64_t s, d, used = k, per = 1, cs = c->cs_ns;

	if (k < 1)
		return c->fmt_ns + c->cs_ns;
	if (store == PKB_SIM_LANES) {
		if (lanes > 0 && lanes < k) {
			used = lanes;
			per = (k + lanes - 1) / lanes;
		}
		cs += c->lane_ns * (used - 1);
	} else {
		per = k;
	}
	s = cs + c->xfer_ns * (per - 1);
	d = c->fmt_ns + s;
	return per * s > d ? per * s : d;
}

static int64_t store_cost(struct sim *S)
{
	int64_t k = S->nstoring < S->p->cpus ? S->nstoring : S->p->cpus;

	return call_cost(&S->p->c, S->p->store, S->p->lanes, k);
}

/* Work @t has done in its current step. */
static int64_t done_work(struct sim *S, struct th *t)
{
	int64_t rem = t->rem;

	if (t->state == S_RUN)
		rem -= S->now - t->run_t0;
	if (rem < 0)
		rem = 0;
	return t->btotal - rem;
}

/* Records committed so far, batches included. */
static uint64_t head_now(struct sim *S)
{
	uint64_t h = S->head_base;
	int i;

	for (i = 0; i < S->nbatchers; i++)
		h += (uint64_t)(done_work(S, S->batchers[i]) / S->batchers[i]->bd);
	return h;
}

/* End @t's batch at the end of the call it is in. */
static void truncate_batch(struct sim *S, struct th *t)
{
	int64_t done = done_work(S, t), calls = done / t->bd, total;

	total = (done % t->bd == 0 && calls > 0) ? done : (calls + 1) * t->bd;
	if (t->state == S_RUN)
		settle(S, t);
	t->rem = total - done;
	t->btotal = total;
	if (t->state == S_RUN)
		arm(S, t);
}

/*
 * The state changed so that a producer's next call does more than store:
 * cut the batch of one running producer at the end of the call it is in,
 * a producer drawn at random among those on a CPU.  In the model every
 * call of a batch costs the same, so "the call that ends first" would be
 * decided by the instants the batches began and pick the same producer
 * at every change (at 4 threads on 2 CPUs, two of them did all the
 * printing); on a real CPU calls vary by tens of ns and, thousands of
 * calls into a batch, where each producer is within its call is as good
 * as uniform.  The draw is the model's seeded generator: one seed, one run.
 */
static void interest(struct sim *S)
{
	struct th *best = NULL;
	uint64_t seen = 0;
	int i;

	for (i = 0; i < S->nbatchers; i++) {
		struct th *t = S->batchers[i];

		if (t->state != S_RUN)
			continue;
		/* Reservoir sampling: each running producer with chance 1/seen. */
		if (rnd(S) % ++seen == 0)
			best = t;
	}
	if (best) {
		truncate_batch(S, best);
		S->interest = 0;
	} else if (S->nbatchers) {
		S->interest = 1;
	}
}

/* ---- the console ---- */

static uint64_t pending(struct sim *S)
{
	uint64_t h = head_now(S);

	return h > S->con_next ? h - S->con_next : 0;
}

/* Time with a backlog: the console behind the store at the last mark. */
static void mark(struct sim *S)
{
	if (S->mark_behind)
		S->r->backlog_s += (double)(S->now - S->mark_t) / 1e9;
	S->mark_t = S->now;
	S->mark_behind = pending(S) > 0;
}

static int64_t write_cost(struct sim *S, int bytes)
{
	return S->p->c.write_ns + (int64_t)bytes * S->p->c.write_kb_ns / 1024;
}

/* Take the console for the next record and start writing it. */
static void begin_record(struct sim *S, struct th *t)
{
	uint64_t h = head_now(S);

	S->con_owner = t;
	t->cur_notice = 0;
	t->cur_bytes = S->p->line_bytes > 0 ? S->p->line_bytes : S->p->rec_bytes;
	if (h - S->con_next > S->cap) {
		S->r->dropped += h - S->cap - S->con_next;
		S->con_next = h - S->cap;
		t->cur_notice = 1;
		t->cur_bytes = NOTICE_BYTES;
	}
	t->rec_t0 = S->now;
	if (t->handoff_stint) {
		S->active = 1;
		if (!S->waiter)
			interest(S);
	}
	cpu_step(S, t, S->p->c.lock_ns + write_cost(S, t->cur_bytes), P_WROTE);
}

/* ---- the threads' steps ---- */

static void step(struct sim *S, struct th *t);

static void end_call(struct sim *S, struct th *t)
{
	uint64_t d = (uint64_t)(S->now - t->call_t0), in;

	pkb_hist_add(&S->r->hist, d);
	S->r->calls++;
	if ((int64_t)d > S->p->watchdog_ns)
		S->r->watchdog++;
	in = S->now <= S->stop ? d : t->call_t0 < S->stop ? (uint64_t)(S->stop - t->call_t0) : 0;
	if (in > S->r->max_in_storm_ns)
		S->r->max_in_storm_ns = in;
	t->role = R_NONE;
	t->pc = W_CALL;
	step(S, t);
}

/* Would a call now only store (legacy, handoff, thread)? */
static int store_only(struct sim *S, struct th *t)
{
	switch (S->p->mode) {
	case PKB_LEGACY:
		return S->lock_owner && S->lock_owner != t;
	case PKB_THREAD:
		return !S->printer_sleeping;
	default:
		return S->lock_owner && S->lock_owner != t &&
		       (S->waiter || !S->active || S->lock_budget);
	}
}

static void do_handoff(struct sim *S)
{
	struct th *w = S->waiter;

	S->waiter = NULL;
	S->lock_owner = w;
	S->lock_budget = 0;
	S->active = 0;
	S->r->handoffs++;
	w->role = R_HOLDER;
	w->spent = 0;
	if (w->spinning) {
		/* Still spinning: it sees the lock at once. */
		w->spinning = 0;
		w->pc = P_NEXT;
		w->rem = 0;
		if (w->state == S_RUN) {
			w->run_t0 = S->now;
			arm(S, w);
		}
	} else {
		w->tgen++;	/* its timeout */
		wake(S, w, P_NEXT, S->p->c.wakeup_ns);
	}
}

static void kick_rescue(struct sim *S)
{
	if (S->rescue && S->rescue_sleeping) {
		S->rescue_sleeping = 0;
		S->rescue->tgen++;
		wake(S, S->rescue, RS_TRY, S->p->c.wakeup_ns);
	}
}

static void release_console(struct sim *S, struct th *t)
{
	if (S->con_owner == t)
		S->con_owner = NULL;
	if (S->con_want) {
		struct th *w = S->con_want;

		S->con_want = w->wnext;
		if (!S->con_want)
			S->want_tail = NULL;
		S->con_owner = w;
		wake(S, w, E_GOT, 0);
	}
}

/* A printer of the lock is done: what its kind does next. */
static void after_hold(struct sim *S, struct th *t)
{
	if (t->kind == K_RESCUE) {
		S->rescue_sleeping = 1;
		block(S, t, RS_TRY);
		push(S, S->now + RESCUE_POLL_NS, t, 1);
	} else if (t->kind == K_MAIN) {
		t->pc = M_FLUSH;
		step(S, t);
	} else {
		end_call(S, t);
	}
}

/* The holder is done: hand over, or unlock and look again. */
static void holder_leave(struct sim *S, struct th *t)
{
	if (S->waiter) {
		do_handoff(S);
		cpu_step(S, t, S->p->c.wake_ns, W_END);
		return;
	}
	S->lock_owner = NULL;
	S->lock_budget = 0;
	S->active = 0;
	interest(S);
	if (pending(S) && !S->con_owner) {
		/* Look again after the unlock; relock (console_unlock()'s "again"). */
		S->lock_owner = t;
		S->lock_budget = t->kind == K_RESCUE;
		t->spent = 0;
		t->pc = P_NEXT;
		step(S, t);
		return;
	}
	after_hold(S, t);
}

static void w_call(struct sim *S, struct th *t)
{
	const struct pkb_sim_params *p = S->p;

	if (S->now >= S->stop) {
		leave_cpu(S, t, S_DONE);
		if (++S->workers_done == S->nworkers)
			wake(S, S->mainth, M_FLUSH, S->p->c.wakeup_ns);	/* its join */
		return;
	}
	if (p->rate > 0 && !t->burst_left) {
		if (t->next_arrival > S->now) {
			sleep_until(S, t, t->next_arrival, W_CALL);
			return;
		}
		t->burst_left = p->burst;
		t->next_arrival += rnd_exp(S, 1e9 / p->rate);
	}
	if (t->burst_left)
		t->burst_left--;
	t->emergency = t->emerg_in == 0;
	if (t->emergency)
		t->emerg_in = next_emergency(S);
	else if (t->emerg_in != INF)
		t->emerg_in--;
	if (p->rate <= 0 && !t->emergency && store_only(S, t)) {
		int64_t n;

		S->interest = 0;
		t->bd = store_cost(S);
		n = (S->stop - S->now + t->bd - 1) / t->bd;
		if (t->emerg_in != INF && t->emerg_in + 1 < n)
			n = t->emerg_in + 1;
		if (t->emerg_in != INF)
			t->emerg_in -= n - 1;
		t->batching = 1;
		t->bgapcalls = 0;
		t->desched_at = -1;
		t->btotal = n * t->bd;
		t->bplanned = n;
		t->bidx = S->nbatchers;
		S->batchers[S->nbatchers++] = t;
		S->nstoring++;
		cpu_step(S, t, t->btotal, W_BATCH_END);
		return;
	}
	t->call_t0 = S->now;
	S->nstoring++;
	cpu_step(S, t, store_cost(S), W_STORED);
}

static void w_batch_end(struct sim *S, struct th *t)
{
	int64_t n = t->btotal / t->bd;
	uint64_t plain = (uint64_t)n > t->bgapcalls ? (uint64_t)n - t->bgapcalls : 0;
	struct th *last = S->batchers[--S->nbatchers];

	last->bidx = t->bidx;
	S->batchers[t->bidx] = last;
	t->batching = 0;
	S->nstoring--;
	S->head_base += (uint64_t)n;
	S->r->calls += (uint64_t)n;
	/* Calls cut off: the emergency they counted down to comes later. */
	if (t->emerg_in != INF)
		t->emerg_in += t->bplanned - n;
	/* Plain calls, bd each: the histogram in one go. */
	if (plain) {
		pkb_hist_add_n(&S->r->hist, (uint64_t)t->bd, plain);
		if (t->bd > S->p->watchdog_ns)
			S->r->watchdog += plain;
		if ((uint64_t)t->bd > S->r->max_in_storm_ns)
			S->r->max_in_storm_ns = (uint64_t)t->bd;
	}
	t->pc = W_CALL;
	step(S, t);
}

static void w_stored(struct sim *S, struct th *t)
{
	S->nstoring--;
	S->head_base++;
	if (t->emergency) {
		t->target = head_now(S);
		t->role = R_DIRECT;
		S->r->direct++;
		if (!S->con_owner) {
			S->con_owner = t;
			t->pc = E_GOT;
			step(S, t);
		} else {
			/* The owner yields at the record's end; emergencies in turn. */
			t->wnext = NULL;
			if (S->want_tail)
				S->want_tail->wnext = t;
			else
				S->con_want = t;
			S->want_tail = t;
			block(S, t, E_GOT);
		}
		return;
	}
	switch (S->p->mode) {
	case PKB_THREAD:
		if (S->printer_sleeping) {
			S->printer_sleeping = 0;
			wake(S, S->printer, PR_LOOP, S->p->c.wakeup_ns);
			cpu_step(S, t, S->p->c.wake_ns, W_END);
			return;
		}
		end_call(S, t);
		return;
	case PKB_LEGACY:
		break;
	default:
		if (S->lock_owner && S->active && !S->waiter && !S->lock_budget) {
			S->waiter = t;
			S->r->waits++;
			t->spinning = 1;
			cpu_step(S, t, SPIN_NS, W_SPIN_END);
			t->rec_t0 = S->now;	/* the wait's start */
			return;
		}
		break;
	}
	if (S->lock_owner) {
		end_call(S, t);
		return;
	}
	S->lock_owner = t;
	t->role = R_HOLDER;
	t->spent = 0;
	cpu_step(S, t, S->p->c.lock_ns, P_NEXT);
}

static void w_spin_end(struct sim *S, struct th *t)
{
	t->spinning = 0;
	block(S, t, W_PARKED);
	push(S, t->rec_t0 + WAIT_NS, t, 1);
}

/* A waiter's WAIT_NS ran out: it withdraws and returns. */
static void waiter_timeout(struct sim *S, struct th *t)
{
	if (S->waiter != t)
		return;
	S->waiter = NULL;
	S->r->wait_timeouts++;
	wake(S, t, W_END, 0);
	if (S->active)
		interest(S);
}

static void p_next(struct sim *S, struct th *t)
{
	t->handoff_stint = t->role == R_HOLDER && t->kind == K_WORKER &&
			   (S->p->mode == PKB_HANDOFF || S->p->mode == PKB_BUDGET);
	t->budget_stint = t->role == R_HOLDER && t->kind == K_WORKER && S->p->mode == PKB_BUDGET;
	if (t->role == R_DIRECT) {
		if (S->con_next >= t->target || !pending(S)) {
			release_console(S, t);
			mark(S);
			end_call(S, t);
			return;
		}
		begin_record(S, t);
		return;
	}
	if (t->role == R_PRINTER) {
		if (!pending(S)) {
			mark(S);
			S->printer_sleeping = 1;
			block(S, t, PR_LOOP);
			interest(S);
			return;
		}
		if (S->con_owner) {
			sleep_until(S, t, S->now + PRINTER_NAP_NS, PR_LOOP);
			return;
		}
		begin_record(S, t);
		return;
	}
	/* The console lock holder. */
	if (!pending(S) || S->con_owner || S->con_want) {
		mark(S);
		holder_leave(S, t);
		return;
	}
	begin_record(S, t);
}

static void p_wrote(struct sim *S, struct th *t)
{
	double bps = S->p->bps;
	int64_t start, line;

	if (bps <= 0) {
		t->pc = P_RECEND;
		step(S, t);
		return;
	}
	start = S->now > S->line_free ? S->now : S->line_free;
	line = (int64_t)((double)t->cur_bytes * 1e9 / bps);
	S->line_free = start + line;
	S->r->busy_s += (double)line / 1e9;
	sleep_until(S, t, S->line_free, P_RECEND);
}

static void p_recend(struct sim *S, struct th *t)
{
	S->con_next++;
	if (t->cur_notice)
		S->r->notices++;
	else
		S->r->printed++;
	t->bytes += (uint64_t)t->cur_bytes;
	t->spent += S->now - t->rec_t0;
	release_console(S, t);
	mark(S);
	if (t->role == R_HOLDER && t->handoff_stint) {
		S->active = 0;
		if (S->waiter) {
			do_handoff(S);
			cpu_step(S, t, S->p->c.wake_ns, W_END);
			return;
		}
	}
	if (t->role == R_HOLDER && t->budget_stint && t->spent > S->p->budget_ns) {
		/* Pass the rest to the rescue thread. */
		S->r->budget_deferrals++;
		S->lock_owner = NULL;
		S->active = 0;
		interest(S);
		kick_rescue(S);
		cpu_step(S, t, S->p->c.wake_ns, W_END);
		return;
	}
	t->pc = t->role == R_PRINTER ? PR_LOOP : P_NEXT;
	step(S, t);
}

static void rs_try(struct sim *S, struct th *t)
{
	S->rescue_sleeping = 0;
	t->tgen++;
	if (pending(S) && !S->lock_owner) {
		S->lock_owner = t;
		S->lock_budget = 1;
		t->role = R_HOLDER;
		t->spent = 0;
		cpu_step(S, t, S->p->c.lock_ns, P_NEXT);
		return;
	}
	S->rescue_sleeping = 1;
	block(S, t, RS_TRY);
	push(S, S->now + RESCUE_POLL_NS, t, 1);
}

/* The main thread's pk_flush() after the producers returned. */
static void m_flush(struct sim *S, struct th *t)
{
	if (!pending(S) && !S->lock_owner && !S->con_owner) {
		mark(S);
		S->finished = 1;
		leave_cpu(S, t, S_DONE);
		return;
	}
	if (S->p->mode != PKB_THREAD && !S->lock_owner && !S->con_owner) {
		S->lock_owner = t;
		t->role = R_HOLDER;
		t->spent = 0;
		cpu_step(S, t, S->p->c.lock_ns, P_NEXT);
		return;
	}
	sleep_until(S, t, S->now + FLUSH_POLL_NS, M_FLUSH);
}

static void step(struct sim *S, struct th *t)
{
	switch (t->pc) {
	case W_CALL:
		w_call(S, t);
		break;
	case W_BATCH_END:
		w_batch_end(S, t);
		break;
	case W_STORED:
		w_stored(S, t);
		break;
	case W_END:
		after_hold(S, t);
		break;
	case W_SPIN_END:
		w_spin_end(S, t);
		break;
	case W_PARKED:		/* woken without a handoff: cannot happen */
		end_call(S, t);
		break;
	case P_NEXT:
	case PR_LOOP:
		p_next(S, t);
		break;
	case P_WROTE:
		p_wrote(S, t);
		break;
	case P_RECEND:
		p_recend(S, t);
		break;
	case E_GOT:
		t->role = R_DIRECT;
		p_next(S, t);
		break;
	case RS_TRY:
		rs_try(S, t);
		break;
	case M_FLUSH:
		m_flush(S, t);
		break;
	}
}

static void on_event(struct sim *S, const struct ev *e)
{
	struct th *t = &S->th[e->tid];
	struct cpu *c = &S->cpus[t->cpu];


	if (e->timer) {
		if (e->gen != t->tgen || t->state != S_BLOCKED)
			return;
		if (t->kind == K_RESCUE) {
			t->tgen++;
			sched_main(S, t, S->now);	/* the poll: runnable now */
			t->pc = RS_TRY;
		} else {
			waiter_timeout(S, t);
		}
		return;
	}
	if (e->gen != t->gen)
		return;
	if (t->state == S_BLOCKED) {
		make_ready(S, t);
		return;
	}
	if (t->state != S_RUN)
		return;
	settle(S, t);
	if (t->rem == 0) {
		step(S, t);
		return;
	}
	/* The slice ran out. */
	if (c->nq) {
		c->run = NULL;
		t->state = S_READY;
		if (t->batching)
			t->desched_at = S->now;
		enqueue(c, t);
		dispatch(S, c);
	} else {
		c->slice_end = INF;
		arm(S, t);
	}
}

static int64_t capacity(const struct pkb_sim_params *p)
{
	int64_t per = p->rec_bytes + p->c.rec_overhead;

	return per > 0 ? (int64_t)p->buffer_size / per : 1;
}

static double host_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int pkb_sim_run(const struct pkb_sim_params *p, struct pkb_sim_result *r)
{
	struct sim S;
	uint64_t x = p->seed, best = 0, total = 0;
	double t0 = host_now();
	int i, extra = 1 + (p->mode == PKB_BUDGET) + (p->mode == PKB_THREAD);

	if (p->cpus < 1 || p->cpus > PKB_SIM_MAX_CPUS || p->threads < 1 ||
	    p->threads > PKB_SIM_MAX_THREADS || p->seconds <= 0)
		return -EINVAL;
	memset(&S, 0, sizeof(S));
	memset(r, 0, sizeof(*r));
	r->p = *p;
	pkb_hist_init(&r->hist);
	S.p = p;
	S.r = r;
	S.stop = (int64_t)(p->seconds * 1e9);
	for (i = 0; i < 4; i++)
		S.s[i] = splitmix(&x);
	S.cap = (uint64_t)capacity(p);
	S.nworkers = p->threads;
	S.nth = p->threads + extra;
	S.cpus = calloc((size_t)p->cpus, sizeof(*S.cpus));
	S.th = calloc((size_t)S.nth, sizeof(*S.th));
	S.batchers = calloc((size_t)S.nth, sizeof(*S.batchers));
	oom = 0;
	if (!S.cpus || !S.th || !S.batchers) {
		free(S.cpus);
		free(S.th);
		free(S.batchers);
		return -ENOMEM;
	}
	for (i = 0; i < p->cpus; i++)
		S.cpus[i].slice_end = INF;
	for (i = 0; i < S.nth; i++) {
		struct th *t = &S.th[i];

		t->id = i;
		t->cpu = i % p->cpus;
		t->state = S_BLOCKED;
		t->desched_at = -1;
		t->kind = i < p->threads ? K_WORKER : K_MAIN;
	}
	S.mainth = &S.th[p->threads];
	S.mainth->cpu = 0;
	i = p->threads + 1;
	if (p->mode == PKB_BUDGET) {
		S.rescue = &S.th[i++];
		S.rescue->kind = K_RESCUE;
		S.rescue_sleeping = 1;
		push(&S, RESCUE_POLL_NS, S.rescue, 1);
	}
	if (p->mode == PKB_THREAD) {
		S.printer = &S.th[i++];
		S.printer->kind = K_PRINTER;
		S.printer->role = R_PRINTER;
		S.printer_sleeping = 1;
	}
	/* The producers start within a microsecond of each other. */
	for (i = 0; i < p->threads; i++) {
		struct th *t = &S.th[i];

		t->pc = W_CALL;
		t->emerg_in = next_emergency(&S);
		t->next_arrival = p->rate > 0 ? rnd_exp(&S, 1e9 / p->rate) : 0;
		sched_main(&S, t, (int64_t)(rnd(&S) % 1000));
	}
	while (S.nheap && !S.finished && !oom) {
		struct ev e = hpop(S.heap, &S.nheap);

		S.now = e.t;
		r->events++;
		on_event(&S, &e);
	}
	r->end_s = (double)S.now / 1e9;
	r->stored = S.head_base;
	r->store_rate = (double)S.head_base / p->seconds;
	for (i = 0; i < S.nth; i++) {
		struct th *t = &S.th[i];

		total += t->bytes;
		if (t->bytes)
			r->printers++;
		if (t->bytes > best) {
			best = t->bytes;
			if (t->kind == K_WORKER)
				snprintf(r->top_who, sizeof(r->top_who), "w%d", i);
			else
				snprintf(r->top_who, sizeof(r->top_who), "%s",
					 t->kind == K_RESCUE ? "rescue" :
					 t->kind == K_PRINTER ? "printer" : "main");
		}
	}
	r->top_share = total ? (double)best / (double)total : 0;
	if (!total)
		snprintf(r->top_who, sizeof(r->top_who), "-");
	free(S.heap);
	free(S.cpus);
	free(S.th);
	free(S.batchers);
	r->wall_s = host_now() - t0;
	if (oom)
		return -ENOMEM;
	return S.finished ? 0 : -EDEADLK;
}

/* ---- store throughput: the shared line call by call ---- */

/*
 * Each producer makes its own part (fmt_ns), then wants the line; the line
 * serves them in turn, each for cs_ns plus xfer_ns for every other
 * producer (they all pull it, one transfer each a record); lanes have no
 * line, each call costs fmt_ns + cs_ns + lane_ns for every other producer
 * storing (in its own lane) at once.  Records stored within @window_s,
 * over @window_s.
 */
int pkb_sim_store_run(const struct pkb_sim_params *p, double window_s,
		      struct pkb_sim_store_result *r)
{
	const struct pkb_sim_costs *c = &p->c;
	int k = p->threads < p->cpus ? p->threads : p->cpus, i, holder = -1;
	int64_t end = (int64_t)(window_s * 1e9);
	uint64_t done = 0, n = 0, x = p->seed;
	double t0 = host_now();
	struct ev *heap = NULL;
	size_t nheap = 0, cap = 0;
	int *fifo, fh = 0, ft = 0, waiting = 0, rc = 0;

	memset(r, 0, sizeof(*r));
	r->cpus = p->cpus;
	r->threads = p->threads;
	r->store = p->store;
	if (k < 1 || end <= 0)
		return -EINVAL;
	if (p->store == PKB_SIM_LANES && p->lanes > 0 && p->lanes < k) {
		/*
		 * Fewer lanes than CPUs storing: each lane is a ring shared by
		 * the CPUs that map to it (k / lanes of them, one more for
		 * k % lanes lanes), each call also losing lane_ns for every
		 * other lane in use.
		 */
		struct pkb_sim_params q = *p;
		struct pkb_sim_store_result part;
		int hi = (k + p->lanes - 1) / p->lanes, nhi = k % p->lanes ? k % p->lanes : p->lanes;
		int lo = k / p->lanes, nlo = p->lanes - nhi;

		q.store = PKB_SIM_RING;
		q.lanes = 0;
		q.c.cs_ns += p->c.lane_ns * (p->lanes - 1);
		q.cpus = q.threads = hi;
		rc = pkb_sim_store_run(&q, window_s, &part);
		r->rate = nhi * part.rate;
		r->events = part.events;
		if (!rc && nlo && lo) {
			q.cpus = q.threads = lo;
			q.seed = p->seed + 1;
			rc = pkb_sim_store_run(&q, window_s, &part);
			r->rate += nlo * part.rate;
			r->events += part.events;
		}
		r->wall_s = host_now() - t0;
		return rc;
	}
	fifo = calloc((size_t)k + 1, sizeof(*fifo));
	if (!fifo)
		return -ENOMEM;
	for (i = 0; i < k && !rc; i++)
		rc = hpush(&heap, &nheap, &cap, (struct ev){ (int64_t)(splitmix(&x) % 1000) + c->fmt_ns,
						       n++, i, 0, 0 });
	while (!rc && nheap) {
		struct ev e = hpop(heap, &nheap);

		if (e.t >= end)
			break;
		r->events++;
		if (p->store == PKB_SIM_LANES) {
			done++;
			rc = hpush(&heap, &nheap, &cap,
				   (struct ev){ e.t + c->cs_ns + c->fmt_ns + c->lane_ns * (k - 1), n++,
						e.tid, 0, 0 });
			continue;
		}
		if (e.timer) {
			/* Its section is done: stored; the line passes on. */
			done++;
			holder = -1;
			rc = hpush(&heap, &nheap, &cap, (struct ev){ e.t + c->fmt_ns, n++, e.tid, 0, 0 });
		} else {
			fifo[ft] = e.tid;
			ft = (ft + 1) % (k + 1);
			waiting++;
		}
		if (holder < 0 && waiting && !rc) {
			/*
			 * Every producer stores all the time: each of the k pulls
			 * the line once per record, as in store_cost().  (Counting
			 * only those queued now would leave out the one that just
			 * released the line and is making its next call; with two
			 * producers no transfer would ever be charged.)
			 */
			int64_t contenders = k;

			holder = fifo[fh];
			fh = (fh + 1) % (k + 1);
			waiting--;
			rc = hpush(&heap, &nheap, &cap,
				   (struct ev){ e.t + c->cs_ns + c->xfer_ns * (contenders - 1), n++,
						holder, 0, 1 });
		}
	}
	r->rate = (double)done / window_s;
	r->wall_s = host_now() - t0;
	free(heap);
	free(fifo);
	return rc;
}
