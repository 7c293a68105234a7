/* SPDX-License-Identifier: MIT */
/*
 * atomics.h - fence helpers that ThreadSanitizer can follow.
 *
 * TSan does not model atomic_thread_fence() (gcc refuses to compile it
 * under -fsanitize=thread).  A release fence followed by relaxed stores
 * synchronizes exactly like release stores, and relaxed loads followed by
 * an acquire fence like acquire loads, for every load that reads one of
 * those stores.  So in TSan builds the fences vanish and the accesses they
 * order carry the ordering themselves; the synchronization TSan checks is
 * the one the fences provide in normal builds.
 */
#ifndef PK_ATOMICS_H
#define PK_ATOMICS_H

#include <stdatomic.h>

#if defined(__SANITIZE_THREAD__)
#define PK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PK_TSAN 1
#endif
#endif

#ifdef PK_TSAN
#define pk__fence_release()	((void)0)
#define pk__fence_acquire()	((void)0)
#define PK_MO_FENCED_STORE	memory_order_release
#define PK_MO_FENCED_LOAD	memory_order_acquire
#else
#define pk__fence_release()	atomic_thread_fence(memory_order_release)
#define pk__fence_acquire()	atomic_thread_fence(memory_order_acquire)
#define PK_MO_FENCED_STORE	memory_order_relaxed
#define PK_MO_FENCED_LOAD	memory_order_relaxed
#endif

#endif /* PK_ATOMICS_H */
