// SPDX-License-Identifier: MIT
/*
 * throttle.c - console driver wrapper: makes any console behave like a
 * serial line of B bytes per second.  A write of N bytes returns no
 * earlier than N / B seconds after it started (and after the previous
 * write's line time ran out), as a UART that the CPU feeds byte by byte.
 * 115200 baud with 8N1 framing moves 11520 bytes a second.
 *
 * Only the owner of the console calls write(), so the line state needs no
 * lock.  write_atomic() (panic, crash) paces the same way with
 * clock_nanosleep(), which is async-signal-safe: a slow line is no faster
 * in an emergency.
 */
#include <errno.h>
#include <string.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "printk/console.h"

struct throttle_ctx {
	struct pk_console_driver inner;
	unsigned long bps;
	uint64_t line_free_ns;		/* when the line has sent everything */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static long paced(struct throttle_ctx *t, const char *buf, size_t len,
		  long (*fn)(void *, const char *, size_t))
{
	uint64_t start = now_ns();
	long n;

	if (t->line_free_ns > start)
		start = t->line_free_ns;
	n = fn(t->inner.ctx, buf, len);
	/* A driver that claims more than it was given paces for what it was given. */
	if (n > 0 && (unsigned long)n > len)
		n = (long)len;
	if (n > 0) {
		t->line_free_ns = start + (uint64_t)n * 1000000000ull / t->bps;
		sleep_until(t->line_free_ns);
	}
	return n;
}

static long throttle_write(void *ctx, const char *buf, size_t len)
{
	struct throttle_ctx *t = ctx;

	return paced(t, buf, len, t->inner.ops->write);
}

static long throttle_write_atomic(void *ctx, const char *buf, size_t len)
{
	struct throttle_ctx *t = ctx;

	if (!t->inner.ops->write_atomic)
		return -EOPNOTSUPP;
	return paced(t, buf, len, t->inner.ops->write_atomic);
}

static void throttle_release(void *ctx)
{
	struct throttle_ctx *t = ctx;

	if (t->inner.ops->release)
		t->inner.ops->release(t->inner.ctx);
	free(t);
}

static const struct pk_console_ops throttle_ops = {
	.name = "throttle",
	.write = throttle_write,
	.write_atomic = throttle_write_atomic,
	.release = throttle_release,
};

static const struct pk_console_ops throttle_ops_noatomic = {
	.name = "throttle",
	.write = throttle_write,
	.release = throttle_release,
};

int pk_console_throttle_make(const struct pk_console_driver *inner, unsigned long bytes_per_sec,
			     struct pk_console_driver *out)
{
	struct throttle_ctx *t;

	if (!inner || !inner->ops || !inner->ops->write || !bytes_per_sec || !out)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->inner = *inner;
	t->bps = bytes_per_sec;
	/* @out may be @inner: everything needed from it is in t->inner now. */
	memset(out, 0, sizeof(*out));
	out->ops = t->inner.ops->write_atomic ? &throttle_ops : &throttle_ops_noatomic;
	out->format = t->inner.format;
	out->ctx = t;
	return 0;
}
