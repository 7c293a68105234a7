// SPDX-License-Identifier: MIT
/*
 * stint.c - pass-through console driver that measures printing stints.
 *
 * write() is called by one thread at a time, the console's owner, and
 * ownership changes hands through libprintk's console lock, which orders
 * one owner's accesses before the next owner's: the state below needs no
 * lock of its own.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "stint.h"

struct pkb_stint {
	struct pk_console_driver inner;
	const _Atomic uint64_t *stop_at;
	int (*is_caller)(uint32_t tid);
	uint32_t cur_tid;
	uint64_t cur_writes;	/* writes of the current stint before the stop */
	uint64_t cur_start;
	uint64_t cur_end;
	struct pkb_stint_stats st;
};

static void close_stint(struct pkb_stint *s)
{
	if (!s->cur_writes || !s->is_caller(s->cur_tid))
		return;
	s->st.stints++;
	if (s->cur_writes > s->st.max_writes) {
		s->st.max_writes = s->cur_writes;
		s->st.max_ns = s->cur_end - s->cur_start;
		s->st.max_tid = s->cur_tid;
	}
}

static long stint_write(void *ctx, const char *buf, size_t len)
{
	struct pkb_stint *s = ctx;
	uint32_t tid = (uint32_t)gettid();
	uint64_t t0 = pkb_now_ns(), stop;
	long n;

	if (tid != s->cur_tid) {
		close_stint(s);
		s->cur_tid = tid;
		s->cur_writes = 0;
		s->cur_start = t0;
	}
	n = s->inner.ops->write(s->inner.ctx, buf, len);
	stop = atomic_load_explicit(s->stop_at, memory_order_relaxed);
	if (!stop || t0 < stop) {
		s->cur_writes++;
		s->cur_end = pkb_now_ns();
	}
	return n;
}

static long stint_write_atomic(void *ctx, const char *buf, size_t len)
{
	struct pkb_stint *s = ctx;

	return s->inner.ops->write_atomic(s->inner.ctx, buf, len);
}

static void stint_release(void *ctx)
{
	struct pkb_stint *s = ctx;

	if (s->inner.ops->release)
		s->inner.ops->release(s->inner.ctx);
	free(s);
}

static const struct pk_console_ops stint_ops = {
	.name = "stint",
	.write = stint_write,
	.write_atomic = stint_write_atomic,
	.release = stint_release,
};

static const struct pk_console_ops stint_ops_noatomic = {
	.name = "stint",
	.write = stint_write,
	.release = stint_release,
};

struct pkb_stint *pkb_stint_make(const struct pk_console_driver *inner,
				 const _Atomic uint64_t *stop_at, int (*is_caller)(uint32_t tid),
				 struct pk_console_driver *out)
{
	struct pkb_stint *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->inner = *inner;
	s->stop_at = stop_at;
	s->is_caller = is_caller;
	out->ops = inner->ops->write_atomic ? &stint_ops : &stint_ops_noatomic;
	out->ctx = s;
	return s;
}

void pkb_stint_get(struct pkb_stint *s, struct pkb_stint_stats *st)
{
	close_stint(s);
	s->cur_writes = 0;
	*st = s->st;
}
