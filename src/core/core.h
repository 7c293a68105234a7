/* SPDX-License-Identifier: MIT */
/*
 * core.h - what core/ offers every wing above it: process-wide and
 * per-thread state, the thread id and the clock, the store gate and the
 * switch word, the module registry's matching, the hooks through which a
 * lower wing reaches a higher one, and (core/futex.h, core/atomics.h,
 * core/fsize.h) futexes, atomics and file growth without SIGXFSZ.
 * Not installed.
 */
#ifndef PK_CORE_H
#define PK_CORE_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "printk/printk.h"

#define PK__TLS __thread __attribute__((tls_model("initial-exec")))

#define PK__ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A record's module prefix: a length byte, then the name (the store's PK_RING_MOD_MAX). */
#define PK__MOD_MAX	32u

/* Library life cycle (pk__g.state). */
enum { PK__UNINIT = 0, PK__INITIALIZING = 1, PK__READY = 2 };

/* Per-thread state.  Initial-exec TLS: safe to touch from a signal handler. */
struct pk__thread {
	uint32_t tid;		/* cached gettid() */
	uint32_t fork_gen;	/* pk__g.fork_gen when tid was cached */
	int emergency;		/* pk_emergency_enter() depth */
	int in_printk;		/* pk_printk() nesting on this thread */
	bool open_valid;	/* this thread's newest record is OPEN */
	bool printer;		/* a libprintk printer thread */
	uint8_t open_level;
	uint8_t open_plen;	/* the module prefix's bytes in that record */
	uint16_t open_llen;	/* and its location block's (store/record.c, LOCATIONS) */
	char open_prefix[PK__MOD_MAX];	/* and the prefix (pk__mod_prefix()) */
	bool mod_dropped;	/* a module's level dropped this thread's last line */
	uint64_t open_seq;
	unsigned open_lane;	/* the lane of open_seq */
	uint64_t store_ts;	/* the clock pk__store() read for this thread's last record */
	/*
	 * Inside a console's write() on this thread (nesting depth), and the
	 * first record stored from there since this thread began printing:
	 * such records are printed later, never from the same call chain.
	 */
	int in_console;
	uint64_t recurse_seq;
	unsigned recurse_lane;	/* the lane of recurse_seq */
	/*
	 * The console whose driver this thread is inside (the innermost), or
	 * NULL: a crash there must not have the crash handler call that same
	 * driver again (panic.c).
	 */
	const void *in_con;
	bool in_con_atomic;	/* ... inside its write_atomic(), not its write() */
	uint32_t stack_gen;	/* pk__crash_stack_gen when this thread last looked */
	/*
	 * Records this thread is writing right now (a signal handler may
	 * store while its thread is mid-record): the store writes the seq
	 * here as soon as it takes one, so a crash handler on this thread
	 * knows which records it left in progress and can never finish.
	 */
	unsigned wdepth;
	uint64_t wseq[4];
	unsigned wlane[4];	/* the lane of wseq[i] */
	uint32_t open_gen;	/* pk__st.store_gen when open_seq was stored */
	unsigned gate_depth;	/* store gates this thread is inside (pk__gates_quiesce) */
	uint64_t gate_by_slot;	/* bit d: its entry at depth d went through its slot */
	int gate_slot;		/* its gate slot + 1, 0 none yet, -1 none to be had */
	uint32_t gate_slot_gen;	/* pk__g.fork_gen when gate_slot was set */
	unsigned gate_idx;	/* its shared counter + 1, 0 not chosen yet (gate_idx()) */
	unsigned pin_idx;	/* its console pin group + 1, 0 not chosen yet (console.c) */
	uint16_t pin_depth[16];	/* its pins of each console slot (console.c) */
	bool early_stored;	/* stored into the early store (pk__early_settle) */
	uint64_t early_seq;	/* the last of those */
};

#define PK__NO_SEQ UINT64_MAX

/* The lowest seq this thread left in progress in @lane, or PK__NO_SEQ. */
uint64_t pk__self_inflight(unsigned lane);

extern PK__TLS struct pk__thread pk__self;

/*
 * Give this thread an alternate signal stack for the crash handler, once
 * the handler is installed (a thread that logs, or prints, gets one at its
 * first call after that).  The crash handler (flush/panic.c) registers
 * the hook that makes the stack, then bumps the generation.
 * Async-signal-safe.
 */
extern _Atomic uint32_t pk__crash_stack_gen;
extern _Atomic(void (*)(void)) pk__crash_stack_fn;
void pk__crash_stack_register(void (*fn)(void));

static inline void pk__crash_stack_lazy(void)
{
	/* Relaxed: only asks whether to look; the look itself is a system call. */
	if (__builtin_expect(pk__self.stack_gen !=
			     atomic_load_explicit(&pk__crash_stack_gen, memory_order_relaxed), 0)) {
		/* Acquire: pairs with pk__crash_stack_register()'s release. */
		void (*fn)(void) = atomic_load_explicit(&pk__crash_stack_fn, memory_order_acquire);

		if (fn)
			fn();
	}
}

/*
 * The library's process-wide state.  What the store in use is lives with
 * the store (pk__st, store/store.h).
 */
struct pk__global {
	_Atomic int state;
	struct pk_config cfg;
	_Atomic uint32_t fork_gen;
	/* This process, as its records name it (updated in a fork child). */
	_Atomic uint32_t pid;
	/* pk_config.facility: what records stored now say; pk_init() may change it. */
	_Atomic int facility;
	/*
	 * Entries of the configuration's console list (pk_config.consoles or
	 * PK_CONSOLE) refused at the last pk_init(), first or not:
	 * pk_stats.consoles_failed.
	 */
	_Atomic unsigned consoles_failed;
};

extern struct pk__global pk__g;

#define PK__NO_SEQ UINT64_MAX

/* The lowest seq this thread left in progress in @lane, or PK__NO_SEQ. */
uint64_t pk__self_inflight(unsigned lane);

uint32_t pk__tid(void);
/*
 * pk__thread_name() - name the calling thread (its comm, as ps -L, top -H,
 * gdb and /proc/PID/task/TID/comm show it), cut to the kernel's 15 bytes.
 * Each of the library's threads calls it first thing, with a "pk-" name,
 * so that none of them shows as the program.  Best effort: a failure is
 * only a name missing.
 */
void pk__thread_name(const char *name);
uint64_t pk__now_ns(void);
/*
 * The store gate: pk_printk(), pk_flush() and pk_stats_get() use the store in use
 * between pk__gate_enter() (true: ready, and the store cannot change until
 * pk__gate_exit()) and pk__gate_exit(); pk_init() waits for them before it
 * changes the store.  Async-signal-safe.
 */
bool pk__gate_enter(void);
void pk__gate_exit(void);
/*
 * Panic and crash (this thread has set pk__panic_tid): wait, at most @ms,
 * until no other thread is inside a store gate, so that a caller that
 * passed the panic check before the panic began has stored its record
 * and returned.  Async-signal-safe.  Return: true if they all left.
 */
bool pk__gates_quiesce(unsigned ms);

/*
 * In a fork child (the front door's atfork handler): the other threads'
 * gate entries are gone, this thread's stay; a switch another thread was
 * making is over.
 */
void pk__gate_atfork_child(void);
/* Set the gates up (the first pk_init(), before the state is first READY). */
void pk__gates_setup(void);
/* pk_init(): wait (at most @ms) until no caller is inside the gate. */
bool pk__gates_drain(unsigned ms);
/* Tests: this thread's store-gate slot (-1: none); do callers use slots (core/gate.c)? */
int pk__gate_slot_self(void);
bool pk__gate_slots_on(void);
/* Tests: turn slots on or off for new entries; how many gates and slots count an entry (or wrapped). */
void pk__gate_slots_set(bool on);
unsigned long pk__gate_count(void);
/*
 * Is a store switch holding callers out (core/gate.c, "THE SWITCH WORD")?  A
 * hint (relaxed): a caller printing inside its gate stops, so that the
 * switch need not wait for a slow console.
 */
bool pk__switch_pending(void);
/* A store switch begins (callers are held out) and ends (they go on). */
void pk__switch_begin(void);
void pk__switch_end(void);
/*
 * The gate refused this caller: if a store switch holds it out and it can
 * wait, wait for the switch to end (bounded by *@until, set on the first
 * call; @safe_here tells whether this thread may wait at all).  Return:
 * true to try the gate again; false to store into the early store.
 */
bool pk__switch_wait(uint64_t *until, bool (*safe_here)(void));

/*
 * A console's ownership word: the console (console/) carries it, the flush
 * wing (flush/conlock.c) alone reads and writes it.
 */
struct pk__conown {
	_Atomic uint64_t word;		/* owner tid | prio << 32 | request << 34 | UNSAFE */
};

/*
 * HOOKS: what the front door (init.c) registers, for the wings below it
 * that must start the library or log through it (a console registered
 * first, pk_flush(), a reader, the exit flush), without naming it.
 */
struct pk__front_hooks {
	int (*ensure_init)(void);
	int (*init)(const struct pk_config *cfg);
	bool (*init_settle)(unsigned ms);
	int (*vprintk)(int level, const char *fmt, va_list ap);
};
void pk__front_register(const struct pk__front_hooks *h);
/* Lazily initialise; 0 or a negative errno (-ENODEV: no front door).  Async-signal-tolerant. */
int pk__ensure_init(void);
/* pk_init(@cfg), through the hook. */
int pk__front_init(const struct pk_config *cfg);
/*
 * The exit path: another thread is initialising (or changing the store);
 * wait until it is done, @ms at most.  Return: is the library READY?
 */
bool pk__init_settle(unsigned ms);
/* pk_printk(), through the hook. */
__attribute__((format(printf, 2, 3))) int pk__front_printk(int level, const char *fmt, ...);

/* module.c: the module registry's matching. */
/* A module name's characters: letters, digits and '_' (a C identifier's). */
static inline bool pk__mod_name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/*
 * Does @s match the first @plen bytes of @pat ('*' any run, '?' any one)?
 * Context: async-signal-safe.
 */
/*
 * A level as a user writes it (PK_LOGLEVEL, PK_MODULES, PK_CONSOLE's
 * @LEVEL and loglevel=, pkmsg --level): a name (emerg, alert, crit,
 * err or error, warn or warning, notice, info, debug; any case, whole,
 * never a prefix) or a number.  A name means "this level and everything
 * more severe" on either scale; a number is taken on the scale asked for:
 *   PK__LEVEL:    0-7, the level itself (a module's level, pkmsg);
 *                 a name gives its level (warn: 4).
 *   PK__LOGLEVEL: 0-8, a console loglevel as the kernel's: records with a
 *                 level below it print; a name gives its level + 1
 *                 (warn: 5, printing 0-4).
 * The one place the two scales meet; libprintk(7) "LEVELS" documents it.
 * @n: the length of @s (it need not be NUL-terminated).
 * Return: the value, or -1 if @s is neither.
 */
enum pk__level_scale { PK__LEVEL, PK__LOGLEVEL };
int pk__level_parse(const char *s, size_t n, enum pk__level_scale scale);
/* What pk__level_parse() takes, for error messages. */
#define PK__LEVEL_NAMES	"emerg, alert, crit, err, warn, notice, info, debug"
#define PK__LEVEL_WANT	"0-7 or a level name (" PK__LEVEL_NAMES ")"
#define PK__LOGLEVEL_WANT "0-8 or a level name (" PK__LEVEL_NAMES ")"
bool pk__glob_match(const char *pat, size_t plen, const char *s);
/*
 * Does @module (NULL: a record without one) match comma-separated pattern
 * list @list?  "-" in the list stands for records without a module.
 * Context: async-signal-safe.
 */
bool pk__mod_list_match(const char *list, const char *module);
/*
 * module.c, for fuzzing and tests: forget the level patterns, then apply
 * @v as PK_MODULES ("pattern=level,...") to the registered modules and
 * keep its patterns, saying nothing.  Return: the entries ignored.
 */
int pk__module_rules_apply(const char *v);
/*
 * Is @list a module list pk_console_set_modules() and pkmsg --module take:
 * 1 to 255 bytes of comma-separated, non-empty entries of letters,
 * digits, '_', '*', '?' and '-'?
 */
bool pk__mod_list_valid(const char *list);
/*
 * Does module @mod drop a record of @level (a continuation: @cont, format
 * @fmt)?  Notes on this thread a line left open by a dropped record.
 */
bool pk__mod_drops(const struct pk_module *mod, int level, bool cont, const char *fmt);

#endif /* PK_CORE_H */
