/* SPDX-License-Identifier: MIT */
/*
 * panic.h - emergency state shared with the flush modes.
 */
#ifndef PK_PANIC_H
#define PK_PANIC_H

#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* How long panic waits for an owner's record boundary before taking over. */
#define PANIC_WAIT_NS	(500 * 1000000ull)

/* Thread that panics or handles a crash; 0 while none does. */
extern _Atomic uint32_t pk__panic_tid;

/*
 * The crash path's guard around each console's driver (flush.c): while
 * pk__panic_jmp_armed, a fault on the panicking thread (the crash handler
 * sees it) jumps back to pk__panic_jmp, and that console is left out of
 * the rest of the report.  Only the panicking thread touches them.
 */
extern sigjmp_buf pk__panic_jmp;
extern volatile sig_atomic_t pk__panic_jmp_armed;

/*
 * The crash happened inside console @con (a struct pk_console), in its
 * write_atomic() if @atomic, else in its write(): the crash path prints
 * it last, and only through a write_atomic() that is not what faulted.
 */
void pk__flush_panic_skip(const void *con, bool atomic);

/* Is a panic or crash under way (normal printing stops)? */
static inline bool pk__panicking(void)
{
	return atomic_load_explicit(&pk__panic_tid, memory_order_acquire) != 0;
}

/* Is another thread than @tid panicking (we must stop printing)? */
static inline bool pk__panicking_other(uint32_t tid)
{
	uint32_t p = atomic_load_explicit(&pk__panic_tid, memory_order_acquire);

	return p && p != tid;
}

#endif /* PK_PANIC_H */
