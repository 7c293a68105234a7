/* SPDX-License-Identifier: MIT */
/*
 * torture - what the torture program's scenarios share (tests/torture.c
 * runs them; tests/torture_crash.c and tests/torture_storm.c hold them).
 *
 * A scenario's run() does one run: it forks a child that cannot outlive
 * the program (fc_fork), makes the child do something hostile to
 * libprintk, waits for it with a bound, and checks what came out.  It
 * returns false with run->why filled when a promise broke.  Everything
 * random in a run comes from run->rng, seeded from run->seed, so a run's
 * parameters (which thread crashes, after how many records, ...) can be
 * repeated with --one; the interleaving of threads cannot.
 */
#ifndef PK_TORTURE_H
#define PK_TORTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "faultcon.h"
#include "printk/printk.h"

struct rng {
	uint64_t s;
};

uint64_t rng_next(struct rng *g);
/* Uniform in [0, @n); 0 if @n is 0. */
uint64_t rng_below(struct rng *g, uint64_t n);

struct trun {
	enum pk_mode mode;
	uint64_t seed;
	struct rng rng;
	bool ci;			/* the bounded version */
	bool verbose;
	bool skipped;			/* could not run here (note says why) */
	char note[256];			/* the run's parameters, for a failure line */
	char why[2048];			/* what broke */
};

struct scenario {
	const char *name;
	const char *what;
	unsigned full_runs, ci_runs;	/* per mode */
	bool (*run)(struct trun *r);
};

extern const struct scenario tt_crash, tt_sigabrt, tt_panic_parked, tt_sigkill_store;
extern const struct scenario tt_signal_storm, tt_fork_storm, tt_filtered_flood, tt_cancel_storm;
extern const struct scenario tt_error_flood;

/* Failures a child reports to its parent (shared memory, reset per run). */
extern struct fc_report *tt_rep;

const char *tt_mode_name(enum pk_mode m);
/* Fill r->why (appending after what is there); returns false. */
bool tt_fail(struct trun *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Fill r->note. */
void tt_note(struct trun *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * In a child: initialise libprintk with no console and (unless @flags has
 * TT_ATEXIT) no exit flush.  @path: a persistent store, or NULL.  Exits
 * with 90 on failure.
 */
#define TT_ATEXIT	0x80000000u
void tt_child_init(enum pk_mode mode, unsigned flags, size_t size, const char *path);

/*
 * Wait for @pid at most @timeout_ms (the child is killed after that, and
 * r->why says so).  Return: false on a timeout.  *@status: its status.
 */
bool tt_wait(struct trun *r, pid_t pid, int timeout_ms, int *status);
/* Does @status say the child died of @sig?  If not, fills r->why. */
bool tt_died_of(struct trun *r, int status, int sig);
/* Did the child exit 0 and report nothing?  If not, fills r->why. */
bool tt_exited_clean(struct trun *r, int status);

/*
 * Which records a child had stored: ok[w][c] is set by writer w once its
 * pk_printk() for counter c returned >= 0.  Shared memory, so the parent
 * reads it after the child died.
 */
struct acc {
	unsigned nw;
	uint64_t nc;
	_Atomic uint64_t failed;	/* calls that returned < 0 */
	uint8_t ok[];
};

struct acc *acc_new(unsigned nw, uint64_t nc);
void acc_free(struct acc *a);
static inline void acc_set(struct acc *a, unsigned w, uint64_t c)
{
	if (w < a->nw && c < a->nc)
		a->ok[(size_t)w * a->nc + c] = 1;
}
static inline bool acc_get(const struct acc *a, unsigned w, uint64_t c)
{
	return w < a->nw && c < a->nc && a->ok[(size_t)w * a->nc + c];
}
/* Stored records of writers [@w0, @w1) that @t never saw. */
uint64_t acc_missing(const struct acc *a, const struct tally *t, unsigned w0, unsigned w1,
		     char *first, size_t size);
/*
 * The rule every crash-like run checks: every stored record printed, or
 * counted in a drop notice; nothing reordered or damaged, and at most
 * @dups_ok records printed twice.  (A thread interrupted for good inside a
 * console's write() cannot tell whether its write happened; the console's
 * next owner prints that record again, as nbcon does after a takeover.
 * So a run may allow one duplicate per thread it stops inside pk_printk.)
 * @t: the tally of the output.  Returns false with r->why filled.
 */
bool tt_check_stored(struct trun *r, const struct acc *a, const struct tally *t, const char *what,
		     unsigned dups_ok);

/* A text of @w, @c with a pad length from @g, newline-terminated. */
size_t tt_text(char *buf, size_t size, unsigned w, uint64_t c, struct rng *g);

/*
 * The same text built without stdio, for signal handlers: "w=W c=C
 * pad=... sum=XXXXXXXX\n", the pad @pad letters long.
 */
size_t tt_text_safe(char *buf, size_t size, unsigned w, uint64_t c, unsigned pad);

/*
 * Nothing strands (for a child; failures go to tt_rep).  A watch reads a
 * console's output so far through @get (append-only text: a capture, a
 * file) and tallies what is new since it last looked.
 *
 * tt_child_printed() waits until every record that writers [@w0, @w1)
 * stored is in that output, or counted dropped there, for as long as the
 * output keeps growing (somebody is printing).  It fails if the output
 * stopped growing for @stall_ms short of that, or after @total_ms.  Call
 * it before any pk_flush(), which would print a stranded record itself.
 */
typedef char *(*tt_text_fn)(void *arg);
struct tt_watch {
	struct tally t;
	size_t off;
	tt_text_fn get;
	void *arg;
};
void tt_watch_init(struct tt_watch *w, const struct acc *a, tt_text_fn get, void *arg);
void tt_watch_free(struct tt_watch *w);
bool tt_child_printed(struct tt_watch *w, const struct acc *a, unsigned w0, unsigned w1,
		      const char *what, int stall_ms, int total_ms);

/*
 * A console that keeps its output in memory and may be written from a
 * signal handler (no malloc, no lock): @cap bytes reserved up front.  One
 * writer at a time, as the library guarantees for write(); readers copy
 * what was published so far (tt_sink_text, a tt_text_fn).
 */
struct tt_sink {
	_Atomic size_t len;
	size_t cap;
	char *buf;
};
extern const struct pk_console_ops tt_sink_ops;
struct tt_sink *tt_sink_new(size_t cap);
char *tt_sink_text(void *sink);

/* Remove a run's file, unless the run failed and TT_KEEP is set (then say where it is). */
void tt_discard(const char *path, bool ok);

/* Monotonic milliseconds since the first call. */
double tt_ms(void);
/* Sleep @us microseconds (random delays of a scenario, never synchronisation). */
void tt_usleep(uint64_t us);
/* A fault from a store to an inaccessible page (UBSan's null check cannot see it). */
void tt_crash_now(void);

#endif /* PK_TORTURE_H */
