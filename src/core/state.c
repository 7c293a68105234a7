// SPDX-License-Identifier: MIT
/*
 * state.c - process-wide state: the library's life-cycle word and
 * configuration (pk__g), each thread's state (pk__self), the thread id and
 * the clock, error text (pk_strerror), and the hooks through which the
 * wings below reach the front door and the crash handler without naming
 * them.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

struct pk__global pk__g = { .facility = 1 };
PK__TLS struct pk__thread pk__self;

/*
 * HOOKS.  The front door (init.c) registers its life-cycle calls before
 * main() (a constructor of high priority), the crash handler (panic.c) its
 * per-thread signal stack when it is installed.  Release stores; the
 * acquire loads below pair with them, so that a hook seen set is seen
 * whole.
 */
static _Atomic(const struct pk__front_hooks *) front;
_Atomic uint32_t pk__crash_stack_gen;
_Atomic(void (*)(void)) pk__crash_stack_fn;

void pk__front_register(const struct pk__front_hooks *h)
{
	atomic_store_explicit(&front, h, memory_order_release);
}

int pk__ensure_init(void)
{
	const struct pk__front_hooks *h;

	if (__builtin_expect(atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__READY, 1))
		return 0;
	h = atomic_load_explicit(&front, memory_order_acquire);
	return h ? h->ensure_init() : -ENODEV;
}

int pk__front_init(const struct pk_config *cfg)
{
	const struct pk__front_hooks *h = atomic_load_explicit(&front, memory_order_acquire);

	return h ? h->init(cfg) : -ENODEV;
}

bool pk__init_settle(unsigned ms)
{
	const struct pk__front_hooks *h = atomic_load_explicit(&front, memory_order_acquire);

	if (h)
		return h->init_settle(ms);
	return atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__READY;
}

int pk__front_printk(int level, const char *fmt, ...)
{
	const struct pk__front_hooks *h = atomic_load_explicit(&front, memory_order_acquire);
	va_list ap;
	int ret;

	if (!h)
		return -ENODEV;
	va_start(ap, fmt);
	ret = h->vprintk(level, fmt, ap);
	va_end(ap);
	return ret;
}

void pk__crash_stack_register(void (*fn)(void))
{
	/* Release: pairs with pk__crash_stack_lazy()'s acquire load of the hook. */
	atomic_store_explicit(&pk__crash_stack_fn, fn, memory_order_release);
}

uint32_t pk__tid(void)
{
	uint32_t gen = atomic_load_explicit(&pk__g.fork_gen, memory_order_relaxed);

	if (!pk__self.tid || pk__self.fork_gen != gen) {
		pk__self.tid = (uint32_t)syscall(SYS_gettid);
		pk__self.fork_gen = gen;
	}
	return pk__self.tid;
}

void pk__thread_name(const char *name)
{
	char comm[16];

	/* From the thread itself: a prctl(), where naming another thread writes to /proc. */
	snprintf(comm, sizeof(comm), "%s", name);
	pthread_setname_np(pthread_self(), comm);
}

uint64_t pk__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t pk__self_inflight(unsigned lane)
{
	uint64_t min = PK__NO_SEQ;
	unsigned i, n = pk__self.wdepth;

	for (i = 0; i < n && i < PK__ARRAY_SIZE(pk__self.wseq); i++)
		if (pk__self.wlane[i] == lane && pk__self.wseq[i] < min)
			min = pk__self.wseq[i];
	return min;
}

const char *pk_strerror(int err)
{
	const char *desc;

	/*
	 * What the error means for every public call that returns it (the
	 * Return: sections of include/printk/ and docs/man): the C library's
	 * words, then what libprintk means by it, call by call where they
	 * differ.  A code that also comes from a system call (a console's
	 * connect(2), a store file's open(2)) keeps the C library's words
	 * first, so the text is true whichever returned it.
	 */
	if (err == INT_MIN)	/* has no negation; no errno is that large */
		return "unknown error";
	switch (err < 0 ? -err : err) {
	case 0:		return "success";
	case ENOBUFS:	return "No buffer space available (pk_printk(): the record was lost, "
			       "the store overrun while it was written)";
	case EAGAIN:	return "Resource temporarily unavailable (libprintk: a thread it needs "
			       "could not be started, another thread's initialisation did not "
			       "finish, or a file changed while it was opened; try again)";
	case EALREADY:	return "Operation already in progress (pk_init(): this thread is "
			       "initialising the library already)";
	case ENODEV:	return "No such device (libprintk: no store in use: not initialised, "
			       "shut down, or the store was changed or released)";
	case EPROTO:	return "Protocol error (a store file: another format version)";
	case EBUSY:	return "Device or resource busy (pk_printk(): another thread is "
			       "panicking; pk_init(), pk_console_unregister(), "
			       "pk_console_reopen(): a caller, a write or a rotation stayed in "
			       "the store or console it waited for)";
	case EPIPE:	return "Broken pipe (a console's reader went away)";
	case ETIMEDOUT:	return "Connection timed out (pk_flush(): a console had not caught "
			       "up by the deadline)";
	}
	/*
	 * Every other errno: the C library's description.  Not strerror():
	 * strerrordesc_np() looks nothing up (no locale, no buffer, no lock;
	 * it indexes glibc's constant table), so this stays callable from a
	 * signal handler.  NULL for a number glibc does not know.
	 */
	desc = strerrordesc_np(err < 0 ? -err : err);
	return desc ? desc : "unknown error";
}
