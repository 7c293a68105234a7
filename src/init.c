// SPDX-License-Identifier: MIT
/*
 * init.c - the library's life cycle, beside the front door (printk.c) in
 * its wing: pk_init() (the first initialisation and a later one, with a
 * store switch), the lazy first init of a pk_printk() made before any
 * pk_init(), fork (the atfork handlers) and pk_shutdown().  It owns the
 * settings every call reads (front.h) and registers the hooks by which
 * the wings below reach the front door (core/core.h, HOOKS).  Calls only
 * down: flush/, console/, store/, core/.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "console/consoles.h"
#include "flush/flush.h"
#include "store/store.h"
#include "flush/panic.h"
#include "front.h"

static PK__TLS bool in_init;

/* pk_config.default_level (.facility: pk__g.facility); pk_init() may change them. */
_Atomic int pk__def_level = PK_WARNING;
/* Store pk_printk()'s format and arguments, formatting later (PK_CFG_EAGER unset). */
_Atomic bool pk__defer_on = true;
/*
 * Whether records keep their call site (PK_CFG_NO_SRCLOC unset, PK_SRCLOC):
 * set by pk_init(), read relaxed by every call.
 */
_Atomic bool pk__srcloc_on = true;

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


/*
 * The settings every call reads (front.h) and the consoles' loglevel and
 * clock, from @cfg: a first init and a later one alike.  Relaxed stores:
 * a call racing pk_init() uses the old setting or the new (front.h).
 */
static void apply_settings(const struct pk_config *cfg, bool ll_weak)
{
	atomic_store_explicit(&pk__def_level, cfg->default_level, memory_order_relaxed);
	atomic_store_explicit(&pk__defer_on, !(cfg->flags & PK_CFG_EAGER), memory_order_relaxed);
	atomic_store_explicit(&pk__srcloc_on, !(cfg->flags & PK_CFG_NO_SRCLOC), memory_order_relaxed);
	atomic_store_explicit(&pk__g.facility, cfg->facility, memory_order_relaxed);
	pk__con_config_loglevel(cfg->console_loglevel, ll_weak);
	pk__con_update_utc_offset();
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
	apply_settings(cfg, ll_weak);
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
	apply_settings(cfg, ll_weak);
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
	if (ret == 0 && pk__early_pending() && pk__gate_enter()) {
		/*
		 * Stragglers: callers that saw the library not ready yet.  In
		 * the gate: init_lock is let go, and another thread's pk_init()
		 * may switch the store already.
		 */
		pk__early_migrate();
		pk__gate_exit();
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

/*
 * May pk_printk() go on to the configured store?  0 yes; -EINPROGRESS no,
 * use the early store (another thread is initialising, this one is
 * initialising already, or this may be a signal handler, where
 * initialising is not safe); another negative errno: initialising failed.
 */
int pk__front_ready(void)
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
	pk__store_finalize_last();
	pk__flush_shutdown();
	atomic_store_explicit(&pk__g.state, PK__INITIALIZING, memory_order_release);
	/* Readers of this store see it gone (reader.c, view_enter()). */
	atomic_fetch_add_explicit(&pk__st.store_gen, 1, memory_order_relaxed);
	pk__store_close();
	memset(&pk__st.lanes, 0, sizeof(pk__st.lanes));
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
