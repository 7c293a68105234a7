/* SPDX-License-Identifier: MIT */
/*
 * panic.h - emergency state shared with the flush modes.
 */
#ifndef PK_PANIC_H
#define PK_PANIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* How long panic waits for an owner's record boundary before taking over. */
#define PANIC_WAIT_NS	(500 * 1000000ull)

/* Thread that panics or handles a crash; 0 while none does. */
extern _Atomic uint32_t pk__panic_tid;

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
