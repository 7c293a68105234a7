// SPDX-License-Identifier: MIT
/*
 * file.c - console driver: append to a file, optionally fsync()ing each
 * write so that a power cut loses nothing already printed.  write(2) and
 * fsync(2) are async-signal-safe, so the same function is write_atomic.
 * The path may name a FIFO: opening it does not wait for a reader (no
 * reader: -ENXIO), and a reader that goes away gives -EPIPE, not SIGPIPE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "printk/console.h"
#include "wfd.h"

struct file_ctx {
	int fd;
	enum pk__wfd_kind kind;
	unsigned flags;
};

static long file_write(void *ctx, const char *buf, size_t len)
{
	struct file_ctx *f = ctx;
	ssize_t n = pk__wfd_write(f->fd, f->kind, buf, len);

	if (n < 0)
		return -errno;
	if ((f->flags & PK_FILE_FSYNC) && fsync(f->fd) < 0)
		return -errno;
	return n;
}

static void file_release(void *ctx)
{
	struct file_ctx *f = ctx;

	close(f->fd);
	free(f);
}

static const struct pk_console_ops file_ops = {
	.name = "file",
	.write = file_write,
	.write_atomic = file_write,
	.release = file_release,
};

int pk_console_file_make(const char *path, unsigned flags, struct pk_console_driver *out)
{
	struct file_ctx *f;
	int fd;

	if (!path || !*path || !out || (flags & ~PK_FILE_FSYNC))
		return -EINVAL;
	/* O_NONBLOCK only for the open: a FIFO without a reader fails at once. */
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644);
	if (fd < 0)
		return -errno;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	f = malloc(sizeof(*f));
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	f->fd = fd;
	f->kind = pk__wfd_kind(fd);
	f->flags = flags;
	out->ops = &file_ops;
	out->format = PK_FMT_HUMAN;
	out->ctx = f;
	return 0;
}
