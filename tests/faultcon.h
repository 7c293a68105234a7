/* SPDX-License-Identifier: MIT */
/*
 * faultcon - what test_faults and torture share:
 *
 *  - a console that injects write faults (EAGAIN, EINTR, short writes,
 *    EPIPE, ENOSPC, a write that blocks until released, a very slow write,
 *    a return larger than asked, 0), chosen per record by a plan, and that
 *    keeps exactly what it took;
 *  - a checker of what a console printed: records made by tu_make_text()
 *    are counted per writer and counter, duplicates, disorder and
 *    corruption are found, drop notices are summed;
 *  - forked children that cannot outlive a failure: PR_SET_PDEATHSIG and a
 *    bounded wait that kills a child that hangs.
 */
#ifndef PK_FAULTCON_H
#define PK_FAULTCON_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "printk/console.h"

/* What a fault console does with one record. */
enum fc_fault {
	FC_NONE,
	/* Transient: the library retries and the record arrives whole. */
	FC_EAGAIN,		/* the record's first write returns -EAGAIN */
	FC_EINTR,		/* ... -EINTR */
	FC_ZERO,		/* ... 0 */
	FC_SHORT,		/* every write takes at most FC_SHORT_BYTES */
	FC_BIG,			/* takes everything, returns more than asked */
	FC_SLOW,		/* the first write sleeps slow_ms first */
	FC_BLOCK,		/* the first write blocks until fc_release() */
	/* Permanent: the record is lost to this console, one write error. */
	FC_EPIPE,		/* -EPIPE */
	FC_ENOSPC,		/* -ENOSPC */
	FC_ENOSPC_PARTIAL,	/* takes half the record, then -ENOSPC */
	FC_EAGAIN_ALWAYS,	/* -EAGAIN for as long as it is asked */
	FC_ZERO_ALWAYS,		/* 0 for as long as it is asked */
	FC_NR
};

#define FC_SHORT_BYTES	7

const char *fc_fault_name(enum fc_fault f);
bool fc_fault_permanent(enum fc_fault f);

struct fc_console;
/* Which fault record (@w, @c) gets; other lines (notices, reports) get none. */
typedef enum fc_fault (*fc_plan_fn)(const struct fc_console *fc, unsigned w, uint64_t c);

struct fc_console {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	fc_plan_fn plan;
	unsigned param;			/* for the plan */
	unsigned slow_ms;

	/* The record being written (lock held). */
	bool cur_valid;
	enum fc_fault cur_fault;
	unsigned cur_calls;
	char *cur;			/* its text as first offered */
	size_t cur_len, cur_taken;

	/* What it took (lock held; read after the writers are done). */
	char *text;			/* the records it took whole, in order */
	size_t len, cap;
	uint64_t calls;			/* write() calls */
	uint64_t bytes;			/* bytes taken, never more than offered */
	uint64_t records;		/* records offered (retries not counted) */
	uint64_t test_records;		/* of which tu_make_text() records */
	uint64_t lost;			/* records not taken whole */
	uint64_t injected[FC_NR];	/* records per fault */

	/* FC_BLOCK */
	bool released;
	_Atomic uint32_t blocked_tid;	/* the thread blocked inside write(), or 0 */
	_Atomic int blocks;		/* blocking writes entered */
};

extern const struct pk_console_ops fc_ops;

struct fc_console *fc_new(fc_plan_fn plan, unsigned param);
/* Let every blocked write (and every later FC_BLOCK) go on. */
void fc_release(struct fc_console *fc);
/* Account a record the library left unfinished (call once it is done). */
void fc_settle(struct fc_console *fc);
/* Copy of what it took whole (caller frees). */
char *fc_text(struct fc_console *fc);
void fc_free(struct fc_console *fc);

/*
 * Parse one output line (human, raw or with a [T..] prefix; the newline
 * excluded) as a tu_make_text() record.  Return: 1 intact record, fills
 * @w, @c; 0 not a record; -1 a record that is damaged.
 */
int fc_parse_line(const char *line, size_t len, unsigned *w, uint64_t *c);

/* What one console printed. */
struct tally {
	unsigned nw;			/* writers 0..nw-1 */
	uint64_t nc;			/* counters 0..nc-1 */
	uint8_t *seen;			/* times (w, c) was printed, saturating */
	uint64_t *last;			/* per writer: last counter + 1, 0: none yet */
	uint64_t records;		/* intact record lines */
	uint64_t dups, disorder, corrupt, out_of_range;
	uint64_t notices, dropped;	/* drop notices and the sum of their counts */
	uint64_t other;			/* any other line */
	char bad[200];			/* the first bad line, for the report */
};

void tally_init(struct tally *t, unsigned nw, uint64_t nc);
void tally_free(struct tally *t);
/* Count every line of NUL-terminated @text. */
void tally_text(struct tally *t, const char *text);
unsigned tally_seen(const struct tally *t, unsigned w, uint64_t c);
/* Duplicates, disorder, corruption or records of unknown writers? */
bool tally_damaged(const struct tally *t);
/* One line describing @t. */
void tally_describe(const struct tally *t, char *buf, size_t size);

/*
 * Children.  fc_fork(): fork(); in the child, die with the parent.
 * fc_wait(): wait up to @timeout_ms; a child still running then is killed
 * with SIGKILL and reaped.  Return: 0, or -ETIMEDOUT if it was killed.
 */
pid_t fc_fork(void);
int fc_wait(pid_t pid, int timeout_ms, int *status);
/* Called (if set) with a child that hung, before it is killed: e.g. to print its stacks. */
extern void (*fc_on_hang)(pid_t pid);
/* "exit 3", "signal 11 (Segmentation fault)" */
void fc_status_str(int status, char *buf, size_t size);

/*
 * A failure report that a child fills and its parent reads: anonymous
 * shared memory, set up before fork().
 */
struct fc_report {
	_Atomic int failed;
	_Atomic size_t len;
	char msg[8192];
};
struct fc_report *fc_report_new(void);
void fc_report_reset(struct fc_report *r);
void fc_report_free(struct fc_report *r);
/* Add a line to @r and count a failure.  Any thread of the child. */
void fc_failf(struct fc_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Anonymous shared memory of @size bytes, zeroed (aborts on failure). */
void *fc_shared(size_t size);
void fc_unshare(void *p, size_t size);

#endif /* PK_FAULTCON_H */
