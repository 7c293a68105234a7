// SPDX-License-Identifier: MIT
/*
 * fd.c - console driver: write(2) to a file descriptor.  The descriptor is
 * not closed on release.  Writing is async-signal-safe, so the same
 * function serves as write_atomic.  A pipe or socket with no reader gives
 * -EPIPE, never SIGPIPE (wfd.h).
 */
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "printk/console.h"
#include "wfd.h"

struct fd_ctx {
	int fd;
	enum pk__wfd_kind kind;
};

static long fd_write(void *ctx, const char *buf, size_t len)
{
	struct fd_ctx *c = ctx;
	ssize_t n = pk__wfd_write(c->fd, c->kind, buf, len);

	return n < 0 ? -errno : n;
}

static void fd_release(void *ctx)
{
	free(ctx);
}

static const struct pk_console_ops fd_ops = {
	.name = "fd",
	.write = fd_write,
	.write_atomic = fd_write,
	.release = fd_release,
};

int pk_console_fd_make(int fd, struct pk_console_driver *out)
{
	struct fd_ctx *c;

	if (fd < 0 || !out)
		return -EINVAL;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = fd;
	c->kind = pk__wfd_kind(fd);
	memset(out, 0, sizeof(*out));
	out->ops = &fd_ops;
	out->format = PK_FMT_HUMAN;
	out->ctx = c;
	return 0;
}
