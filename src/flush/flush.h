/* SPDX-License-Identifier: MIT */
/*
 * flush.h - the flush modes: who writes stored records to the consoles.
 */
#ifndef PK_FLUSH_H
#define PK_FLUSH_H

#include <stdbool.h>
#include <stdint.h>

#include "printk/printk.h"

/* Set the flush mode up: register consoles from cfg->consoles, start threads. */
int pk__flush_init(const struct pk_config *cfg);
/* After pk_printk stored record @seq of @level: print it as the mode says. */
void pk__flush_after_store(int level, unsigned lane, uint64_t seq);
/* Something to print appeared without a store (a console registered). */
void pk__flush_kick(void);
/*
 * A record was stored without its newline: have it printed if left open
 * (any context).  @now: the time it was stored, or 0 to read the clock.
 */
void pk__flush_note_open(uint64_t now);
/*
 * pk_init() again: stop the library's threads (the store may change
 * meanwhile), then apply @cfg's mode, budget and flags and start the
 * threads its mode needs.  Return: 0, or -EAGAIN if threads could not be
 * started (printing goes on without them: thread mode falls back to
 * printing from the callers, said once on stderr).
 */
void pk__flush_stop_threads(void);
int pk__flush_reconfigure(const struct pk_config *cfg);
/*
 * Start the threads the mode needs that do not run (a fork child that
 * goes on with its parent's initialisation).  One that cannot be started
 * is done without, said once on stderr.
 */
void pk__flush_threads_resume(void);
/* Flush everything, stop printer threads, unregister consoles. */
void pk__flush_shutdown(void);
/* Around fork(): keep the console registry consistent for the child. */
void pk__flush_atfork_prepare(void);
void pk__flush_atfork_parent(void);
/* In the child after fork(): reset locks and threads that did not survive. */
void pk__flush_atfork_child(void);

/*
 * Print everything pending on every console from this thread, taking each
 * console at @prio (EMERGENCY: at a record boundary; PANIC: by force if
 * its owner is stuck).  Return: records printed.  Async-signal-safe.
 */
#include "flush/conlock.h"
int pk__flush_direct(enum pk__prio prio);
/*
 * Panic only: are records @first..@last all intact in the store?  And
 * write @buf to every console that has write_atomic(), as it is.
 * Async-signal-safe.
 */
bool pk__flush_seqs_intact(unsigned lane, uint64_t first, uint64_t last);
void pk__flush_write_all(const char *buf, size_t len);
/* The highest loglevel any console prints below (cached). */
int pk__flush_max_loglevel(void);

/* Handoff mode: is a caller waiting for the console lock?  (tests, bench) */
bool pk__flush_waiter_present(void);

#endif /* PK_FLUSH_H */
