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

#include "core/core.h"
#include "format/format.h"
#include "printk/console.h"
#include "store/store.h"

/* PK_MAX_CONSOLES: printk/console.h */

/*
 * Where a printer is in the store for one console, lane by lane: the
 * lane's seq after the last record accounted for (printed, filtered or
 * reported dropped), and what was counted lost before the lane's next
 * record and is reported with it.  The reader (ring readers, the record
 * each lane holds, the watermark: store/lanes.h) merges the lanes.  The
 * console's own position belongs to whoever owns the console; after a
 * hostile takeover the new owner works on a private one instead, so that
 * the old owner, which may come back from write() at any time, and the
 * new one never share one.
 */
struct pk__con_lane {
	uint64_t expect;
	uint64_t counted_to;		/* losses before this seq are in @lost or reported */
	struct pk_ring_lost lost;	/* counted, reported before the lane's next record */
	/*
	 * Records a store switch left out before the console's first copied
	 * record in this lane (store/life.c, map_pos()): reported by the next
	 * read.
	 */
	struct pk__lost_note carry;
	bool has_carry;
};

struct pk__con_pos {
	/*
	 * The store's lanes when the position was set: what the position's
	 * owner reads, never pk__st (a printer given up on inside write()
	 * comes back to its console after the store is gone).
	 */
	unsigned n;
	struct pk_lanes_reader mr;	/* mr.buf: a record per lane, the position's owner's */
	struct pk__con_lane l[PK_LANES_MAX];
};

#define PK_CON_MODULES_MAX	255
#define PK_CON_MODF_SLOTS	8

struct pk_console {
	const struct pk_console_ops *ops;
	void *ctx;
	int slot;
	char *name;			/* pk_console_find(); never NULL once registered */
	bool config;			/* registered from the configuration's consoles */
	bool color;			/* PK_FMT_F_COLOR at registration: kept by set_format */
	_Atomic int loglevel;		/* < 0: the global console_loglevel */
	_Atomic unsigned fmt;
	/*
	 * On a line of its own: taken and released by whoever prints or
	 * passes over records, while the fields above are read by all.
	 */
	_Alignas(64) struct pk__conown own;
	char own_pad[64 - sizeof(struct pk__conown)];

	/* Owner only (whoever holds @own). */
	struct pk__con_pos pos;
	struct pk_ring_rec *recs;	/* pos.mr.buf: PK_LANES_MAX records, allocated */
	char buf[PK_FORMAT_MAX];

	/* Read by anyone. */
	/*
	 * A line per lane: two writers passing over filtered records in two
	 * lanes (pk__con_skip_filtered()) each write only their own.
	 */
	struct pk__con_lanepub {
		_Alignas(64) _Atomic uint64_t next_seq;	/* mirrors pos.l[lane].expect */
		_Atomic uint64_t skipped;	/* passed over by pk__con_skip_filtered() */
		/* pk__ring_undecided() of the lane's reader, UINT64_MAX: none */
		_Atomic uint64_t undecided;
	} lp[PK_LANES_MAX];
	_Atomic uint64_t records, notices, bytes, dropped, skipped, write_errors, busy_ns;
	_Atomic uint64_t unattributed;	/* of dropped: owner or level unknown */

	/*
	 * Module filter (pk_console_set_modules(), console.c "MODULE
	 * FILTER"): version N lives in modf[N % PK_CON_MODF_SLOTS]; modf_gen
	 * is the newest version, zero while never set.  Bytes read and
	 * written with relaxed atomic accesses.
	 */
	_Atomic uint64_t modf_gen;
	char modf[PK_CON_MODF_SLOTS][PK_CON_MODULES_MAX + 1];
};

/* Scratch space for printing without the console's own buffer (takeover). */
struct pk__con_scratch {
	char buf[PK_FORMAT_MAX];
};

/*
 * Iterate: pk__con_get() pins the console in @slot (NULL if none) so that
 * it cannot be released until pk__con_put().  Any thread, signal-safe.
 */
struct pk_console *pk__con_get(int slot);
void pk__con_put(int slot);
int pk__con_count(void);

/*
 * The slots that hold a console (or one being unregistered), bit i for
 * slot i: a superset of those pk__con_get() returns a console for (a
 * slot's bit is set before its console is stored, cleared after it is
 * gone).
 */
extern struct pk__con_slot_word {
	_Alignas(64) _Atomic uint32_t mask;
	char pad[60];
} pk__con_slot_word;

static inline uint32_t pk__con_slots(void)
{
	return atomic_load_explicit(&pk__con_slot_word.mask, memory_order_relaxed);
}

/* For each slot @i in @m (a copy of pk__con_slots() it consumes). */
#define pk__con_each_slot(i, m) for (; (m) && ((i) = __builtin_ctz(m), 1); (m) &= (m) - 1)

/* Register without the init check (used while initialising). */
struct pk_console *pk__con_register(const struct pk_console_ops *ops, void *ctx, int loglevel,
				    unsigned fmt);
/*
 * The same, with a name (NULL: ops->name) and marked as one of the
 * configuration's consoles if @config.  PK_FMT_F_COLOR in @fmt colors the
 * console's human output for good (the PK_CONSOLE option color=), whatever
 * pk_console_set_format() sets later.  A configuration console whose name
 * is in the table pk__con_replace_config() keeps starts where the console
 * of that name it replaces stopped, instead of at the backlog.
 */
struct pk_console *pk__con_register_named(const struct pk_console_ops *ops, void *ctx,
					  int loglevel, unsigned fmt, const char *name,
					  bool config);
/*
 * pk_init() again: unregister the configuration's consoles, then register
 * those of @spec (PK_CONSOLE syntax; NULL: none), each continuing where
 * the old console of the same name stopped.  Consoles the program
 * registered itself stay.  Return: consoles registered.
 */
int pk__con_replace_config(const char *spec);
/* Call @fn on every registered console with the registry lock held. */
void pk__con_each_locked(void (*fn)(struct pk_console *c));
/* Every console's position moves to a new store: @map(old next_seq). */
void pk__con_rebase(void (*map)(const struct pk__spos *old, struct pk__spos *now, void *arg,
				struct pk__lost_note *carry, bool *has_carry),
		    void *arg, unsigned old_n);
/* The registered consoles' next_seq, at most @max of them into @out.  Return: how many. */
unsigned pk__con_positions(struct pk__spos *out, unsigned max);
/* @c's published position (next_seq of each lane) into @out. */
void pk__con_next(struct pk_console *c, struct pk__spos *out);
/* The sum of @c's published lane positions: it only grows (progress). */
uint64_t pk__con_progress(struct pk_console *c);
/* The global console loglevel (pk_set_loglevel()) and the local UTC offset. */
void pk__con_set_global_loglevel(int loglevel);
/*
 * pk_init()'s: @loglevel, unless @weak (the configuration's is only the
 * default) and the program chose one with pk_set_loglevel().
 */
void pk__con_config_loglevel(int loglevel, bool weak);
void pk__con_update_utc_offset(void);
/* Unregister all (shutdown). */
void pk__con_unregister_all(void);

/*
 * What the flush layer is told about the registry (set once by it): a
 * console was added (0, or -errno to refuse it), and a console is about to
 * go (0, or -EBUSY: a printer of it is stuck inside write(), so it must
 * never be freed); both with the registry lock held.  kick: a console was
 * registered, print its backlog (no lock held).
 */
struct pk__con_hooks {
	int (*added)(struct pk_console *c);
	int (*removing)(struct pk_console *c);
	void (*kick)(void);	/* after registering: print the backlog */
};
void pk__con_set_hooks(const struct pk__con_hooks *hooks);

enum pk__emit {
	PK_EMIT_NONE,		/* nothing readable now */
	PK_EMIT_PRINTED,	/* one record (and any drop notice) written */
	PK_EMIT_SKIPPED,	/* records below the loglevel passed over; call again */
	PK_EMIT_LOST,		/* the console was taken from us: touch it no more */
};

/*
 * pk__con_emit() - print @c's next record.  The caller owns @c as @tid;
 * ownership is checked again before every write() and before the position
 * is published, and PK_EMIT_LOST returned as soon as it is gone.
 * @pos: NULL for the console's own position; else a private one (after a
 * takeover), whose progress is published only forward.
 * @scratch: NULL to use the console's own buffers; else these (after a
 * takeover, when the old owner may still be using the console's).
 * @atomic: use write_atomic() (the caller checked that there is one).
 */
enum pk__emit pk__con_emit(struct pk_console *c, struct pk__con_pos *pos,
			   struct pk__con_scratch *scratch, bool atomic, uint32_t tid);

/*
 * Pass over filtered records of lane @lane (PK__ALL_LANES: of every lane)
 * without writing: a flood's writers keep the console from falling behind.
 * The caller owns @c.  Return: whether the console moved.
 */
#define PK__ALL_LANES	(~0u)
bool pk__con_skip_filtered(struct pk_console *c, unsigned lane, uint32_t tid);
/* Records pk__con_skip_filtered() passes over at most, a lane at a time. */
#define PK__CON_HELP_BATCH	64u
/*
 * pk__con_give_up() - the process is exiting and @c did not get to print
 * up to @head in time: say how many of the records it would have printed
 * it leaves (one drop notice, counted in its `dropped'), and move it to
 * @head.  The caller owns @c as @tid.  Return: the records counted.
 */
uint64_t pk__con_give_up(struct pk_console *c, const struct pk__spos *head, uint32_t tid);

/*
 * Set @pos to start at @seq (nothing before it is this console's
 * business).  @count_gap: records from @seq on that are no longer in the
 * store are reported as dropped (a takeover); else it starts at the oldest.
 */
void pk__con_pos_init(struct pk__con_pos *pos, const struct pk__spos *seq, bool count_gap);

/* Is a record (or a gap) readable for @c right now, in some lane? */
bool pk__con_pending(struct pk_console *c);
/*
 * Has @c still to account for records before @target (readable or not),
 * in some lane?  NULL: the store's heads now.
 */
bool pk__con_behind(struct pk_console *c, const struct pk__spos *target);
/* Has @c still to account for record @seq of @lane? */
bool pk__con_behind_seq(struct pk_console *c, unsigned lane, uint64_t seq);

/* The highest loglevel in effect on any console (cached; any context). */
int pk__con_max_loglevel(void);
/* Recompute it (after a loglevel change). */
void pk__con_update_max_loglevel(void);

/* The loglevel that applies to @c. */
int pk__con_loglevel(struct pk_console *c);

/* Printer shares: add @bytes written by thread @tid. */
void pk__share_add(uint32_t tid, uint64_t bytes, bool printer_thread);
void pk__share_reset(void);

/*
 * After fork(): the owners may be threads that did not survive, and the
 * parent's records before @head are the parent's to print: every console
 * starts at @head.
 */
void pk__con_atfork_child(const struct pk__spos *head);
void pk__con_atfork_prepare(void);
void pk__con_atfork_parent(void);

/* The file consoles' part of it (console/file.c), under the registry's lock. */
void pk__file_atfork_prepare(void);
void pk__file_atfork_parent(void);
void pk__file_atfork_child(void);

/*
 * console_spec.c: PK_CONSOLE at init.  As pk_console_register_spec(), but
 * if entries were given and none could be used, stderr is registered
 * instead, with one warning.  Return: consoles registered, or -EINVAL.
 */
int pk__console_register_env(const char *spec);
/*
 * The same grammar parsed only (fuzzing, tests): nothing is opened,
 * resolved, registered or said.  Return: the entries that would be made
 * (with their options), *@nbad the entries refused; -EINVAL for NULL.
 */
int pk__console_spec_check(const char *spec, int *nbad);

/*
 * What the flush wing, which owns consoles (flush/conlock.c), tells the
 * registry, registered by pk__flush_init(): who owns @c now (0: nobody),
 * and forgetting every owner in a fork child.  Until then nobody owns a
 * console.
 */
struct pk__con_owner_ops {
	uint32_t (*owner)(const struct pk__conown *o);
	void (*reset)(struct pk__conown *o);
};
void pk__con_owner_register(const struct pk__con_owner_ops *ops);

#endif /* PK_CONSOLES_H */
