// SPDX-License-Identifier: MIT
/*
 * printk.c - the front door: levels, continuation, formatting, storing,
 * then asking the flush mode to print.  Also the library's life cycle
 * (pk_init, lazy init, fork, pk_shutdown), which it lends the wings below
 * through the hooks it registers (core/core.h, HOOKS).  Calls only down:
 * flush/, console/, store/, format/, core/.
 *
 * pk_vprintk() takes no lock and calls no malloc: the text is formatted by
 * stb_sprintf into a buffer on the caller's stack and stored with the
 * lock-free pk__ring_write().  All per-thread state is initial-exec TLS,
 * which a signal handler may use.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "console/consoles.h"
#include "core/futex.h"
#include "flush/flush.h"
#include "format/format.h"
#include "store/store.h"
#include "flush/panic.h"

static PK__TLS bool in_init;

/* pk_config.default_level (.facility: pk__g.facility); pk_init() may change them. */
static _Atomic int def_level = PK_WARNING;
/* Store pk_printk()'s format and arguments, formatting later (PK_CFG_EAGER unset). */
static _Atomic bool defer_on = true;
/*
 * Whether records keep their call site (PK_CFG_NO_SRCLOC unset, PK_SRCLOC):
 * set by pk_init(), read relaxed by every call.
 */
static _Atomic bool srcloc_on = true;

/* The store file that could not be used last (said once on stderr), and why. */
static char failed_path[4096];
static int failed_err;

static void note_failed(const char *path, int err)
{
	failed_path[0] = '\0';
	failed_err = err;
	if (path && err < 0 && strlen(path) < sizeof(failed_path))
		strcpy(failed_path, path);
}
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;


/*
 * Before the fork: the child may store, and lose, records before the
 * parent runs again; from here on the parent counts only what it noted.
 */
/*
 * FORK AND A FIRST INITIALISATION
 *
 * pk_init() holds init_lock from the moment it marks the library
 * INITIALIZING (a first init takes it right after its compare-and-swap,
 * before it touches anything) until it is done; so does a later pk_init()
 * for the whole of its work.  fork() takes it too (atfork_prepare(), its
 * handler registered before the first init begins), waiting up to
 * FORK_INIT_WAIT_MS: a child never starts in the middle of another
 * thread's initialisation, which it could not finish (no thread of the
 * parent but the forking one exists there).  What is left:
 *   - the initialiser had made its compare-and-swap but not yet taken the
 *     lock: it has done nothing else, and the child starts uninitialised;
 *   - the forking thread holds init_lock itself (a signal handler, or a
 *     console's set-up, that forks): the child goes on with what that
 *     thread was doing, and a first initialisation starts the library's
 *     threads at its end;
 *   - the wait timed out (an initialisation stuck for that long): the
 *     child starts uninitialised, and its first pk_init() drops what the
 *     parent's had set up so far (stale_init), said once on stderr.
 */
#define FORK_INIT_WAIT_MS	5000
/* This thread took init_lock in atfork_prepare() (the same thread runs the other handlers). */
static PK__TLS bool fork_locked;
/*
 * This thread holds init_lock (pk_init(), pk_shutdown()): a fork() from a
 * signal handler on it must not wait for itself, and its child goes on
 * with what the thread was doing.
 */
static PK__TLS bool lock_mine;
/* A fork child whose parent was initialising: set-up left half done (see above). */
static bool stale_init;
/* pk__g.fork_gen when this thread's first init began (a fork from inside it). */
static PK__TLS uint32_t init_fork_gen;

static void atfork_prepare(void)
{
	struct timespec until;

	fork_locked = false;
	if (!lock_mine) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += FORK_INIT_WAIT_MS / 1000;
		fork_locked = pthread_mutex_timedlock(&init_lock, &until) == 0;
	}
	pk__store_fork_shared();
	pk__flush_atfork_prepare();
}

static void atfork_parent(void)
{
	pk__flush_atfork_parent();
	if (fork_locked)
		pthread_mutex_unlock(&init_lock);
	fork_locked = false;
}

/*
 * The child's view of an initialisation the parent had under way (the
 * header above).  Relaxed: the child has one thread.
 */
static void atfork_child_init(void)
{
	int st = atomic_load_explicit(&pk__g.state, memory_order_relaxed);

	pthread_mutex_init(&init_lock, NULL);
	if (lock_mine) {
		/* This thread initialises (or re-): it goes on, and unlocks at the end. */
		pthread_mutex_lock(&init_lock);
	} else if (st == PK__INITIALIZING) {
		if (!fork_locked)
			stale_init = true;
		atomic_store_explicit(&pk__g.state, PK__UNINIT, memory_order_relaxed);
	}
	fork_locked = false;
}

static void atfork_child(void)
{
	pk__store_fork_shared();
	/*
	 * Relaxed: the child has one thread, which reads the counter itself;
	 * a new generation only makes each thread re-read its tid once.
	 */
	atomic_fetch_add_explicit(&pk__g.fork_gen, 1, memory_order_relaxed);
	/* Relaxed: the child's only thread is the one running this. */
	atomic_store_explicit(&pk__g.pid, (uint32_t)getpid(), memory_order_relaxed);
	pk__gate_atfork_child();
	atfork_child_init();
	pk__flush_atfork_child();
}

static void register_atfork(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}


/* How a store switch moves the consoles (store/life.c). */
static const struct pk__store_switch_ops switch_ops = {
	.positions = pk__con_positions,
	.rebase = pk__con_rebase,
};

/*
 * pk_init() on a library set up already: apply @cfg (see printk.h).
 * Serialised by init_lock; pk_printk() goes on meanwhile.
 */
static int init_cfg(const struct pk_config *cfg, bool ll_weak);

static int reinit(const struct pk_config *cfg, bool ll_weak)
{
	struct timespec until, nap = { 0, 100000 };
	int ret = 0, fret, store_err = 0, st, cancel;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	/* Another thread may be initialising (a first pk_printk()): wait for it, 10 s at most. */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	for (;;) {
		if (pthread_mutex_timedlock(&init_lock, &until)) {
			pthread_setcancelstate(cancel, NULL);
			return -EAGAIN;
		}
		st = atomic_load_explicit(&pk__g.state, memory_order_acquire);
		if (st != PK__INITIALIZING)
			break;
		/*
		 * A first initialisation between its compare-and-swap and taking
		 * init_lock (pk_init()): let it have the lock.
		 */
		pthread_mutex_unlock(&init_lock);
		nanosleep(&nap, NULL);
	}
	lock_mine = true;
	if (st != PK__READY) {
		lock_mine = false;
		pthread_mutex_unlock(&init_lock);
		pthread_setcancelstate(cancel, NULL);
		return st == PK__UNINIT ? init_cfg(cfg, ll_weak) : -EAGAIN;
	}
	/* The old consoles print what they have before they go. */
	pk_flush(1000);
	pk__flush_stop_threads();
	if (cfg->buffer_path && failed_err < 0 && !strcmp(cfg->buffer_path, failed_path)) {
		store_err = failed_err;	/* said already: not again on each call */
	} else if (!pk__store_same(cfg)) {
		store_err = pk__store_switch(cfg, &switch_ops);
		note_failed(cfg->buffer_path, store_err);
	}
	pk__g.cfg.mode = cfg->mode;
	pk__g.cfg.console_loglevel = cfg->console_loglevel;
	pk__g.cfg.print_budget_us = cfg->print_budget_us;
	pk__g.cfg.flags = cfg->flags;
	/* Relaxed: gate_fast's own rule (a caller that still reads it true enters by its slot). */
	if (cfg->flags & PK_CFG_GATE_COUNTERS)
		pk__gate_slots_set(false);
	atomic_store_explicit(&def_level, cfg->default_level, memory_order_relaxed);
	atomic_store_explicit(&defer_on, !(cfg->flags & PK_CFG_EAGER), memory_order_relaxed);
	atomic_store_explicit(&srcloc_on, !(cfg->flags & PK_CFG_NO_SRCLOC), memory_order_relaxed);
	atomic_store_explicit(&pk__g.facility, cfg->facility, memory_order_relaxed);
	pk__con_config_loglevel(cfg->console_loglevel, ll_weak);
	pk__con_update_utc_offset();
	fret = pk__flush_reconfigure(cfg);
	pk__con_replace_config((cfg->flags & PK_CFG_NO_CONSOLE) ? NULL :
			       cfg->consoles ? cfg->consoles : "stderr");
	lock_mine = false;
	pthread_mutex_unlock(&init_lock);
	pthread_setcancelstate(cancel, NULL);
	if (store_err < 0 && !pk__store_from_env(cfg->buffer_path))
		ret = store_err;
	return ret < 0 ? ret : fret;
}

/*
 * pk_init() with @cfg checked and its zeros made defaults
 * (pk__config_resolve()).  @ll_weak: the console loglevel is the default
 * one, which a loglevel the program set before (pk_set_loglevel()) beats.
 * It is the same whether the environment came in through pk_init(NULL)
 * or through pk_config_init(): PK_LOGLEVEL is the user's choice and
 * beats an earlier pk_set_loglevel(); without it, the default loglevel
 * (0, or the 7 pk_config_init() writes) does not.
 */
int pk_init(const struct pk_config *cfg)
{
	struct pk_config res;
	bool ll_weak;
	int ret;

	if (!cfg) {
		/* The defaults and the environment: no field is the program's choice. */
		pk_config_init(&res);
		ll_weak = !pk__env_loglevel_set();
	} else {
		ret = pk__config_check(cfg);
		if (ret < 0)
			return ret;
		res = *cfg;
		ll_weak = !cfg->console_loglevel ||
			  (cfg->console_loglevel == PK__LOGLEVEL_DEFAULT && !pk__env_loglevel_set());
	}
	pk__config_resolve(&res);
	return init_cfg(&res, ll_weak);
}

static int init_cfg(const struct pk_config *cfg, bool ll_weak)
{
	static pthread_once_t atfork_once = PTHREAD_ONCE_INIT, gates_once = PTHREAD_ONCE_INIT;
	int expect = PK__UNINIT;
	int ret, store_err, cancel;

	ret = pk__config_check(cfg);
	if (ret < 0)
		return ret;
	if (pk__self.in_console)
		return -EDEADLK;	/* the consoles may change under their own write() */
	/* Before the library is marked INITIALIZING: a fork() from then on waits for it. */
	pthread_once(&atfork_once, register_atfork);
	if (!atomic_compare_exchange_strong_explicit(&pk__g.state, &expect, PK__INITIALIZING,
						     memory_order_acquire, memory_order_acquire))
		return in_init ? -EALREADY : reinit(cfg, ll_weak);
	/*
	 * A thread cancelled inside (a store file's or a console's open() is
	 * a cancellation point) would leave the library INITIALIZING for good.
	 */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&init_lock);
	lock_mine = true;
	in_init = true;
	init_fork_gen = atomic_load_explicit(&pk__g.fork_gen, memory_order_relaxed);
	if (stale_init) {
		/* A fork child of a parent whose initialisation had stalled: start afresh. */
		stale_init = false;
		fprintf(stderr, "libprintk: fork() while another thread's initialisation was "
			"stalled; initialising afresh in the child\n");
		pk__con_unregister_all();
		pk__store_close();
	}
	pk__g.cfg = *cfg;
	atomic_store_explicit(&def_level, cfg->default_level, memory_order_relaxed);
	atomic_store_explicit(&defer_on, !(cfg->flags & PK_CFG_EAGER), memory_order_relaxed);
	atomic_store_explicit(&srcloc_on, !(cfg->flags & PK_CFG_NO_SRCLOC), memory_order_relaxed);
	atomic_store_explicit(&pk__g.facility, cfg->facility, memory_order_relaxed);
	pk__con_config_loglevel(cfg->console_loglevel, ll_weak);
	pk__con_update_utc_offset();
	ret = pk__store_open(cfg, &store_err);
	note_failed(cfg->buffer_path, store_err);
	if (ret == 0) {
		/* Records stored before now come first, before any console exists. */
		pk__early_migrate();
		ret = pk__flush_init(&pk__g.cfg);
		if (ret < 0)
			pk__store_close();
	}
	/* Strings in cfg may not outlive the call; keep none of them. */
	pk__g.cfg.buffer_path = NULL;
	pk__g.cfg.consoles = NULL;
	if (ret == 0) {
		pthread_once(&gates_once, pk__gates_setup);
		/* This thread forked from inside its own initialisation: this is the child. */
		if (init_fork_gen != atomic_load_explicit(&pk__g.fork_gen, memory_order_relaxed))
			pk__flush_threads_resume();
	}
	in_init = false;
	/* Publishes pk__st.ring and the flush state to pk__ensure_init(). */
	atomic_store_explicit(&pk__g.state, ret == 0 ? PK__READY : PK__UNINIT, memory_order_release);
	lock_mine = false;
	pthread_mutex_unlock(&init_lock);
	if (ret == 0 && pk__early_pending()) {
		/* Stragglers: callers that saw the library not ready yet. */
		pk__early_migrate();
		pk__flush_kick();
	}
	pthread_setcancelstate(cancel, NULL);
	/*
	 * Set up all the same, with records in memory.  The program that
	 * named the store itself is told; a store named by PK_BUFFER is the
	 * user's, who was told on stderr, and must not make the program fail.
	 */
	if (ret == 0 && store_err < 0 && !pk__store_from_env(cfg->buffer_path))
		return store_err;
	return ret;
}

/* The level of a message that names none (before init: the default config's). */
static int default_level(bool early)
{
	return early ? PK_WARNING : atomic_load_explicit(&def_level, memory_order_relaxed);
}

/*
 * May pk_printk() go on to the configured store?  0 yes; -EINPROGRESS no,
 * use the early store (another thread is initialising, this one is
 * initialising already, or this may be a signal handler, where
 * initialising is not safe); another negative errno: initialising failed.
 */
static int printk_ready(void)
{
	int st = atomic_load_explicit(&pk__g.state, memory_order_acquire);
	int ret;

	if (__builtin_expect(st == PK__READY, 1))
		return 0;
	if (st == PK__UNINIT && !in_init && pk__early_init_safe_here()) {
		ret = pk_init(NULL);
		if (ret == 0)
			return 0;
		if (ret != -EALREADY)
			return ret;
	}
	if (atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__READY)
		return 0;
	return -EINPROGRESS;
}

static int front_ensure_init(void)
{
	int st = atomic_load_explicit(&pk__g.state, memory_order_acquire);
	int i, ret;

	if (__builtin_expect(st == PK__READY, 1))
		return 0;
	if (st == PK__UNINIT) {
		if (in_init)
			return -EAGAIN;
		ret = pk_init(NULL);
		if (ret != -EALREADY)
			return ret;
	}
	/* Someone else is initialising.  Never wait for our own thread. */
	if (in_init)
		return -EAGAIN;
	for (i = 0; i < 10000; i++) {
		st = atomic_load_explicit(&pk__g.state, memory_order_acquire);
		if (st == PK__READY)
			return 0;
		if (st == PK__UNINIT)
			return -ENODEV;
		sched_yield();
	}
	return -EAGAIN;
}

static bool front_init_settle(unsigned ms)
{
	struct timespec until;
	uint64_t ns;

	if (atomic_load_explicit(&pk__g.state, memory_order_acquire) != PK__INITIALIZING ||
	    in_init)
		return atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__READY;
	clock_gettime(CLOCK_REALTIME, &until);
	ns = (uint64_t)until.tv_nsec + (uint64_t)(ms % 1000) * 1000000ull;
	until.tv_sec += (time_t)(ms / 1000 + ns / 1000000000ull);
	until.tv_nsec = (long)(ns % 1000000000ull);
	/* The initialiser holds init_lock until it is done (atfork_prepare()'s header). */
	if (!lock_mine && pthread_mutex_timedlock(&init_lock, &until) == 0)
		pthread_mutex_unlock(&init_lock);
	return atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__READY;
}

static void refuse(void)
{
	if (pk__gate_enter()) {
		atomic_fetch_add_explicit(&pk__st.ring.h->refused, 1, memory_order_relaxed);
		pk__gate_exit();
	}
}




/*
 * Store package @pkg (@n bytes, a whole line, after a module prefix and
 * location block of @plen bytes together, as @flags says, followed by a
 * fields block of @flen bytes) as a record; then print as the mode says.
 */
static int store_package(int level, unsigned flags, const unsigned char *pkg, size_t plen, int n,
			 size_t flen)
{
	uint64_t seq;
	int ret;

	pk__self.in_printk++;
	ret = pk__store(level, flags | PK__REC_PACKED | (flen ? PK__REC_FIELDS : 0),
			(const char *)pkg, plen + (size_t)n + flen, &seq);
	pk__self.open_valid = false;
	if (ret == 0) {
		pk__self.open_seq = seq;	/* the thread's newest, closed */
		pk__self.open_gen = atomic_load_explicit(&pk__st.store_gen, memory_order_relaxed);
		pk__self.open_level = (uint8_t)level;
		pk__flush_after_store(level, seq);
	}
	pk__self.in_printk--;
	return ret < 0 ? ret : n;
}

/* Is another thread panicking?  Then this record is not stored (counted). */
static bool panic_suppressed(void)
{
	/* LMM(gate:D): seq_cst, after the gate's seq_cst increment. */
	if (__builtin_expect(atomic_load_explicit(&pk__panic_tid, memory_order_seq_cst) != 0, 0) &&
	    pk__panicking_other(pk__tid())) {
		atomic_fetch_add_explicit(&pk__st.ring.h->suppressed, 1, memory_order_relaxed);
		return true;
	}
	return false;
}

/*
 * The record's fields (pk_printk_fields()): @n of them at @f, and where
 * the call's verdict on them goes (-EINVAL or -EMSGSIZE for one left out).
 */
struct fields_arg {
	const struct pk_field *f;
	size_t n;
	int err;
	const struct pk_srcloc *loc;	/* the call site, or NULL */
};

/*
 * After the module prefix of @mplen bytes at @buf: the location block
 * of @loc if locations are kept, PK__REC_LOC added to *@flags.  Return:
 * the block's bytes.
 */
static size_t put_loc(char *buf, size_t mplen, const struct pk_srcloc *loc, unsigned *flags)
{
	size_t n;

	if (!loc || !atomic_load_explicit(&srcloc_on, memory_order_relaxed))
		return 0;
	n = pk__loc_encode(buf + mplen, loc);
	if (n)
		*flags |= PK__REC_LOC;
	return n;
}

static int vprintk(const struct pk_module *mod, int level, const char *fmt, va_list ap, bool early,
		   struct fields_arg *fa)
{
	char mbuf[PK_RING_MOD_MAX + PK_RING_LOC_MAX + PK__TEXT_BUF + PK_RING_FIELDS_MAX];
	char *buf;
	unsigned flags = 0, fmt_flags = 0;
	bool cont = false;
	uint64_t seq;
	size_t len, plen, mplen, llen = 0, flen;
	int n, ret, err = errno;	/* the caller's, for %m (pk_vprintk() restored it) */
	/*
	 * While another thread panics, it prints everything stored before;
	 * new records from the others would only push the panic report out
	 * of the store before a slow console reaches it (as Linux keeps
	 * non-panic CPUs out of the ring buffer).  Counted, not stored.
	 */
	if (panic_suppressed())
		return -EBUSY;

	/* A kernel format: %p takes the kernel's extensions (printk/kernel.h). */
	if (level == PK_LEVEL_KERNEL) {
		fmt_flags = PK__FMT_KERNEL;
		level = PK_LEVEL_DEFAULT;
	}
	/* Kernel-style prefixes: "\001" followed by a digit, 'c', 'd' or 'k'. */
	while (fmt[0] == '\001' && fmt[1]) {
		if (fmt[1] >= '0' && fmt[1] <= '7')
			level = fmt[1] - '0';
		else if (fmt[1] == 'c')
			level = PK_LEVEL_CONT;
		else if (fmt[1] == 'd')
			level = PK_LEVEL_DEFAULT;
		else if (fmt[1] == 'k')
			fmt_flags = PK__FMT_KERNEL;
		else
			break;
		fmt += 2;
	}
	if (level == PK_LEVEL_CONT) {
		cont = true;
		level = pk__self.open_valid ? pk__self.open_level : default_level(early);
	} else if (level < PK_EMERG || level > PK_DEBUG) {
		level = default_level(early);
	}
	if (pk__mod_drops(mod, level, cont, fmt))
		return 0;
	/*
	 * The record's module name goes first (PK__REC_MODULE).  A
	 * continuation that cannot join its line (printed meanwhile) becomes
	 * a record of that line's module, whoever's code continues it.
	 */
	if (cont && pk__self.open_valid) {
		mplen = pk__self.open_plen;
		memcpy(mbuf, pk__self.open_prefix, mplen);
	} else {
		mplen = mod ? pk__mod_prefix(mbuf, mod) : 0;
	}
	if (mplen)
		flags |= PK__REC_MODULE;
	/* Then its call site (a continuation has none: it is its line's). */
	if (!cont)
		llen = put_loc(mbuf, mplen, fa->loc, &flags);
	plen = mplen + llen;
	buf = mbuf + plen;

	/*
	 * Deferred formatting: a line (its format ends with a newline) is
	 * stored as its format and arguments, and formatted when a console
	 * prints it or a reader reads it (pk__rec_render()).  Continuations,
	 * lines left open, the early store and what cannot be packed are
	 * formatted now; those stored here are counted in `eager' (the early
	 * store's are not: they are moved into the store later).
	 */
	if (!early && __builtin_expect(pk__self.early_stored, 0)) {
		pk__early_settle(pk__self.early_seq);	/* this thread's early ones go first */
		pk__self.early_stored = false;
		errno = err;	/* the move may have changed it */
	}
	if (!early && !cont && atomic_load_explicit(&defer_on, memory_order_relaxed)) {
		/*
		 * The package goes where the text would, after the module
		 * prefix: one buffer on the caller's stack (a signal
		 * handler's may be small), the text formatted over it if the
		 * package is not stored.
		 */
		unsigned char *pkg = (unsigned char *)mbuf;

		n = pk__vpack(pkg + plen, PK_RECORD_MAX, fmt, ap, fmt_flags, err);
		if (n == -1) {
			refuse();
			return -EINVAL;
		}
		if (n > 0 && pkg[plen + (size_t)n - 1] == '\n') {
			_Static_assert(sizeof(mbuf) >= PK_RING_MOD_MAX + PK_RING_LOC_MAX +
				       PK_RECORD_MAX + PK_RING_FIELDS_MAX,
				       "room for the fields after a package");
			flen = fa->n ? pk__fields_encode((char *)pkg + plen + n, fa->f, fa->n,
							 &fa->err) : 0;
			return store_package(level, flags, pkg, plen, n, flen);
		}
	}

	/*
	 * The formatter refuses %n itself, in every spelling its conversion
	 * parser accepts, before it would write through the pointer.
	 */
	n = pk__vsnprintf_flags(buf, PK__TEXT_BUF, fmt, ap, fmt_flags);
	if (n < 0) {
		refuse();
		return -EINVAL;
	}
	len = pk__text_settle(buf, n, &flags);
	/*
	 * The fields block goes after the text; the record is then complete
	 * (nothing could be appended after the block): never left open.
	 */
	flen = 0;
	if (fa->n) {
		flen = pk__fields_encode(buf + len, fa->f, fa->n, &fa->err);
		flags &= ~(unsigned)PK_REC_NOEOL;
		flags |= PK__REC_FIELDS;
	}

	if (early) {
		uint64_t eseq = PK__NO_SEQ;

		ret = pk__early_store(level, flags | (cont ? PK_REC_CONT : 0), mbuf,
				      plen + len + flen, &eseq);
		if (eseq != PK__NO_SEQ) {
			pk__self.early_seq = eseq;
			pk__self.early_stored = true;
		}
		/*
		 * The library may have become ready since we looked, and moved
		 * the early records before ours arrived: move it ourselves.
		 */
		if (atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__READY &&
		    pk__early_migrate())
			pk__flush_kick();
		return ret < 0 ? ret : (int)len;
	}
	pk__self.in_printk++;
	if (cont && !flen && pk__self.open_valid &&
	    pk__self.open_gen == atomic_load_explicit(&pk__st.store_gen, memory_order_relaxed)) {
		uint64_t open_seq = pk__self.open_seq;

		unsigned depth = pk__self.wdepth;

		/* In progress while extended: see pk__store(). */
		if (depth < PK__ARRAY_SIZE(pk__self.wseq))
			*(volatile uint64_t *)&pk__self.wseq[depth] = open_seq;
		*(volatile unsigned *)&pk__self.wdepth = depth + 1;
		ret = pk__ring_extend(&pk__st.ring, open_seq, buf, (uint32_t)len,
				      (flags & PK_REC_NOEOL) != 0,
				      PK_RECORD_MAX + pk__self.open_plen + pk__self.open_llen);
		*(volatile unsigned *)&pk__self.wdepth = depth;
		if (ret == 0) {
			seq = open_seq;
			/*
			 * Still open: note it again.  The watcher may have
			 * taken the last note and tried to finalise the record
			 * while this extension held it (a no-op then).
			 */
			if (flags & PK_REC_NOEOL)
				pk__flush_note_open();
			goto stored;
		}
	}
	if (cont && !len && !flen) {
		/*
		 * An empty continuation ("\n" or "") whose record was finalised
		 * already (printed: its line is ended) or never existed: it
		 * would only make an empty line.  Nothing to store.
		 */
		pk__self.open_valid = false;
		pk__self.in_printk--;
		return 0;
	}
	if (cont)
		flags |= PK_REC_CONT;
	ret = pk__store(level, flags, mbuf, plen + len + flen, &seq);
	if (ret < 0) {
		pk__self.open_valid = false;
		pk__self.in_printk--;
		return ret;
	}
	if (flags & PK_REC_NOEOL) {
		/* A new open line: its module, for continuations (joining or not). */
		pk__self.open_plen = (uint8_t)mplen;
		pk__self.open_llen = (uint16_t)llen;
		memcpy(pk__self.open_prefix, mbuf, mplen);
	}
	if (flags & PK_REC_NOEOL)
		pk__flush_note_open();
stored:
	/* Formatted at the call (not deferred), and stored. */
	atomic_fetch_add_explicit(&pk__st.ring.h->eager, 1, memory_order_relaxed);
	pk__self.open_valid = (flags & PK_REC_NOEOL) != 0;
	pk__self.open_seq = seq;
	pk__self.open_gen = atomic_load_explicit(&pk__st.store_gen, memory_order_relaxed);
	pk__self.open_level = (uint8_t)level;
	pk__flush_after_store(level, seq);
	pk__self.in_printk--;
	return (int)len;
}

int pk_vprintk(int level, const char *fmt, va_list ap)
{
	return pk_vprintk_mod(NULL, level, fmt, ap);
}

static int vprintk_gated(const struct pk_module *mod, int level, const char *fmt, va_list ap,
			 struct fields_arg *fa);

int pk_vprintk_mod(const struct pk_module *mod, int level, const char *fmt, va_list ap)
{
	struct fields_arg fa = { NULL, 0, 0, NULL };

	return vprintk_gated(mod, level, fmt, ap, &fa);
}

int pk_vprintk_loc(const struct pk_module *mod, const struct pk_srcloc *loc, int level,
		   const char *fmt, va_list ap)
{
	struct fields_arg fa = { NULL, 0, 0, loc };

	return vprintk_gated(mod, level, fmt, ap, &fa);
}

int pk_printk_loc(const struct pk_module *mod, const struct pk_srcloc *loc, int level,
		  const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = pk_vprintk_loc(mod, loc, level, fmt, ap);
	va_end(ap);
	return ret;
}

static int vprintk_fields_loc(const struct pk_srcloc *loc, int level,
			      const struct pk_field *fields, size_t n, const char *fmt, va_list ap)
{
	struct fields_arg fa = { fields, n, 0, loc };
	int ret = vprintk_gated(NULL, level, fmt, ap, &fa);

	/* Stored, but a field was left out: say which kind of wrong. */
	return ret >= 0 && fa.err ? fa.err : ret;
}

int pk_vprintk_fields(int level, const struct pk_field *fields, size_t n, const char *fmt,
		      va_list ap)
{
	return vprintk_fields_loc(NULL, level, fields, n, fmt, ap);
}

int pk_printk_fields_loc(const struct pk_srcloc *loc, int level, const struct pk_field *fields,
			 size_t n, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vprintk_fields_loc(loc, level, fields, n, fmt, ap);
	va_end(ap);
	return ret;
}

int pk_printk_fields(int level, const struct pk_field *fields, size_t n, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = pk_vprintk_fields(level, fields, n, fmt, ap);
	va_end(ap);
	return ret;
}

static int vprintk_gated(const struct pk_module *mod, int level, const char *fmt, va_list ap,
			 struct fields_arg *fa)
{
	int err = errno;	/* %m prints the caller's errno, whatever init does */
	uint64_t until = 0;
	bool gated;
	int ret;

	if (!fmt) {
		refuse();
		return -EINVAL;
	}
	ret = printk_ready();
	if (ret < 0 && ret != -EINPROGRESS)
		return ret;
	/*
	 * pk_init() changing the store: wait for it if this caller can
	 * (switch_wait()); else the early store takes the record meanwhile.
	 */
	gated = ret == 0 && pk__gate_enter();
	while (!gated && pk__switch_wait(&until, pk__early_init_safe_here))
		gated = pk__gate_enter();
	errno = err;
	ret = vprintk(mod, level, fmt, ap, !gated, fa);
	if (gated)
		pk__gate_exit();
	errno = err;
	return ret;
}

int pk_printk_site(struct pk_site *site, int level, const char *fmt, const unsigned char *sig,
		   unsigned n, const union pk_arg *args)
{
	return pk_printk_site_mod(NULL, site, level, fmt, sig, n, args);
}

int pk_printk_site_mod(const struct pk_module *mod, struct pk_site *site, int level,
		       const char *fmt, const unsigned char *sig, unsigned n,
		       const union pk_arg *args)
{
	return pk_printk_site_loc(mod, NULL, site, level, fmt, sig, n, args);
}

int pk_printk_site_loc(const struct pk_module *mod, const struct pk_srcloc *loc,
		       struct pk_site *site, int level, const char *fmt, const unsigned char *sig,
		       unsigned n, const union pk_arg *args)
{
	unsigned char pkg[PK_RING_TEXT_MAX];
	const struct pk__site_class *cl = pk__site_get(site, fmt, sig, n);
	int err = errno, len, ret;
	unsigned flags = 0;
	size_t plen;

	/* A level pk_printk() must read, or no deferring: the variadic path. */
	if (!cl || level < PK_EMERG || level > PK_DEBUG ||
	    !atomic_load_explicit(&defer_on, memory_order_relaxed))
		return PK_SITE_VARIADIC;
	/* Not set up (pk_printk() initialises), or pk_init() changing the store. */
	if (!pk__gate_enter())
		return PK_SITE_VARIADIC;
	if (panic_suppressed()) {
		ret = -EBUSY;
		goto out;
	}
	if (pk__mod_drops(mod, level, false, fmt)) {
		ret = 0;
		goto out;
	}
	plen = mod ? pk__mod_prefix((char *)pkg, mod) : 0;
	if (plen)
		flags |= PK__REC_MODULE;
	plen += put_loc((char *)pkg, plen, loc, &flags);
	_Static_assert(sizeof(pkg) >= PK_RING_MOD_MAX + PK_RING_LOC_MAX + PK_RECORD_MAX,
		       "room for a package after the prefix and location");
	len = pk__site_pack(pkg + plen, PK_RECORD_MAX, fmt, cl, sig, args, err);
	if (len < 0) {
		ret = PK_SITE_VARIADIC;	/* longer than a record: formatted at the call */
		goto out;
	}
	if (__builtin_expect(pk__self.early_stored, 0)) {
		pk__early_settle(pk__self.early_seq);	/* this thread's early ones go first */
		pk__self.early_stored = false;
	}
	ret = store_package(level, flags, pkg, plen, len, 0);
out:
	pk__gate_exit();
	errno = err;
	return ret;
}

int pk_printk(int level, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = pk_vprintk(level, fmt, ap);
	va_end(ap);
	return ret;
}

int pk_printk_mod(const struct pk_module *mod, int level, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = pk_vprintk_mod(mod, level, fmt, ap);
	va_end(ap);
	return ret;
}

void pk_shutdown(void)
{
	int cancel;

	if (atomic_load_explicit(&pk__g.state, memory_order_acquire) != PK__READY)
		return;
	/* From inside a console's write(): it would free the console under us. */
	if (pk__self.in_console)
		return;
	/* Under init_lock: a fork() meanwhile waits (atfork_prepare()). */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&init_lock);
	lock_mine = true;
	if (atomic_load_explicit(&pk__g.state, memory_order_acquire) != PK__READY) {
		lock_mine = false;
		pthread_mutex_unlock(&init_lock);
		pthread_setcancelstate(cancel, NULL);
		return;
	}
	pk__ring_finalize_last(&pk__st.ring);
	pk__flush_shutdown();
	atomic_store_explicit(&pk__g.state, PK__INITIALIZING, memory_order_release);
	/* Readers of this store see it gone (reader.c, view_enter()). */
	atomic_fetch_add_explicit(&pk__st.store_gen, 1, memory_order_relaxed);
	pk__store_close();
	memset(&pk__st.ring, 0, sizeof(pk__st.ring));
	pk__self.open_valid = false;
	atomic_store_explicit(&pk__g.state, PK__UNINIT, memory_order_release);
	lock_mine = false;
	pthread_mutex_unlock(&init_lock);
	pthread_setcancelstate(cancel, NULL);
}

/* What the wings below reach the front door by (core/core.h, HOOKS). */
static const struct pk__front_hooks front_hooks = {
	.ensure_init = front_ensure_init,
	.init = pk_init,
	.init_settle = front_init_settle,
	.vprintk = pk_vprintk,
};

/* Before any constructor of default priority, which may log or register a console. */
__attribute__((constructor(101))) static void front_register(void)
{
	pk__front_register(&front_hooks);
}
