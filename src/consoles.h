/* SPDX-License-Identifier: MIT */
/*
 * consoles.h - the console registry and how one record reaches one
 * console.  Knows nothing of the flush modes or of the console lock: the
 * caller must own the console (pk__conown) when it calls pk__con_emit().
 */
#ifndef PK_CONSOLES_H
#define PK_CONSOLES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "conlock.h"
#include "format.h"
#include "printk/console.h"
#include "ringbuf.h"

#define PK_MAX_CONSOLES	16

struct pk_console {
	const struct pk_console_ops *ops;
	void *ctx;
	int slot;
	_Atomic int loglevel;		/* < 0: the global console_loglevel */
	_Atomic unsigned fmt;
	struct pk__conown own;

	/* Owner only (whoever holds @own). */
	struct pk_ring_reader rd;
	uint64_t expect;		/* seq after the last record accounted for */
	struct pk_ring_rec rec;
	char buf[PK_FORMAT_MAX];

	/* Read by anyone. */
	_Atomic uint64_t next_seq;	/* mirrors rd.next */
	_Atomic uint64_t records, notices, bytes, dropped, skipped, write_errors, busy_ns;

	/* Thread mode: this console's printer thread. */
	pthread_t thread;
	bool has_thread;
	_Atomic int thread_stop;
	_Atomic int sleeping;		/* the printer is (about to be) asleep on @wake */
	_Atomic uint32_t wake;
};

/* Scratch space for printing without the console's own buffers (takeover). */
struct pk__con_scratch {
	struct pk_ring_rec rec;
	char buf[PK_FORMAT_MAX];
};

/*
 * Iterate: pk__con_get() pins the console in @slot (NULL if none) so that
 * it cannot be released until pk__con_put().  Any thread, signal-safe.
 */
struct pk_console *pk__con_get(int slot);
void pk__con_put(int slot);
int pk__con_count(void);

/* Register without the init check (used while initialising). */
struct pk_console *pk__con_register(const struct pk_console_ops *ops, void *ctx, int loglevel,
				    unsigned fmt);
/* Unregister all (shutdown). */
void pk__con_unregister_all(void);

enum pk__emit {
	PK_EMIT_NONE,		/* nothing readable now */
	PK_EMIT_PRINTED,	/* one record (and any drop notice) written */
	PK_EMIT_SKIPPED,	/* the next record was below the loglevel */
};

/*
 * pk__con_emit() - print @c's next record.  The caller owns @c.
 * @scratch: NULL to use the console's own buffers; else these (after a
 * takeover, when the old owner may still be using the console's).
 * @atomic: use write_atomic() (the caller checked that there is one).
 */
enum pk__emit pk__con_emit(struct pk_console *c, struct pk__con_scratch *scratch, bool atomic);

/* Is a record (or a gap) readable for @c right now? */
bool pk__con_pending(struct pk_console *c);

/* The highest loglevel in effect on any console (cached; any context). */
int pk__con_max_loglevel(void);
/* Recompute it (after a loglevel change). */
void pk__con_update_max_loglevel(void);

/* The loglevel that applies to @c. */
int pk__con_loglevel(struct pk_console *c);

/* Printer shares: add @bytes written by thread @tid. */
void pk__share_add(uint32_t tid, uint64_t bytes, bool printer_thread);
void pk__share_reset(void);

/* After fork(): the owners may be threads that did not survive. */
void pk__con_atfork_child(void);
void pk__con_atfork_prepare(void);
void pk__con_atfork_parent(void);

#endif /* PK_CONSOLES_H */
