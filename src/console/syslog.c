// SPDX-License-Identifier: MIT
/*
 * syslog.c - console driver: a syslog daemon's datagram socket.
 *
 * The console renders records in PK_FMT_SYSLOG ("<PRI>[ time] text"); each
 * line becomes one datagram "<PRI>IDENT[PID]: text" (RFC 3164 without the
 * timestamp and host, which the daemon adds).  A line without a "<PRI>"
 * prefix (a drop notice) goes out as user.warning.  socket(), connect()
 * and send() are async-signal-safe, unlike syslog(3), which takes a lock;
 * so the same function is write_atomic.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "printk/console.h"

#define SYSLOG_LINE_MAX	2048

extern char *program_invocation_short_name;

struct syslog_ctx {
	int fd;
	struct sockaddr_un addr;
	char ident[64];
	int pid;
};

static int syslog_connect(struct syslog_ctx *s)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&s->addr, sizeof(s->addr)) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (s->fd >= 0)
		close(s->fd);
	s->fd = fd;
	return 0;
}

/* Put @n in decimal at @p; return the end. */
static char *put_uint(char *p, unsigned long n)
{
	char tmp[24];
	int i = 0;

	do
		tmp[i++] = (char)('0' + n % 10);
	while (n /= 10);
	while (i)
		*p++ = tmp[--i];
	return p;
}

/*
 * One line of a PK_FMT_SYSLOG rendering as one datagram.  A line without
 * "<PRI>" continues the record of the line before it (the text held a
 * newline) and takes its priority, *@pri.
 */
static long send_line(struct syslog_ctx *s, const char *line, size_t len, unsigned long *pri)
{
	char out[SYSLOG_LINE_MAX], *p = out;
	const char *t = line, *end = line + len;
	size_t ident_len = strlen(s->ident), room;
	ssize_t n;

	if (t < end && *t == '<') {
		unsigned long v = 0;
		const char *q = t + 1;

		while (q < end && *q >= '0' && *q <= '9' && v < 1000)
			v = v * 10 + (unsigned long)(*q++ - '0');
		if (q < end && *q == '>' && q > t + 1 && v < 192) {
			*pri = v;
			t = q + 1;
			if (t < end && *t == '[') {	/* the console's timestamp: the daemon stamps */
				q = memchr(t, ']', (size_t)(end - t));
				if (q)
					t = q + 1 + (q + 1 < end && q[1] == ' ');
			}
		}
	}
	*p++ = '<';
	p = put_uint(p, *pri);
	*p++ = '>';
	memcpy(p, s->ident, ident_len);
	p += ident_len;
	*p++ = '[';
	p = put_uint(p, (unsigned long)s->pid);
	*p++ = ']';
	*p++ = ':';
	*p++ = ' ';
	room = sizeof(out) - (size_t)(p - out);
	if ((size_t)(end - t) < room)
		room = (size_t)(end - t);
	memcpy(p, t, room);
	p += room;
	n = send(s->fd, out, (size_t)(p - out), MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0 && (errno == ECONNREFUSED || errno == ENOTCONN || errno == ENOENT)) {
		/* The daemon restarted: its socket is a new one. */
		if (syslog_connect(s) == 0)
			n = send(s->fd, out, (size_t)(p - out), MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	return n < 0 ? -errno : (long)len;
}

static long syslog_write(void *ctx, const char *buf, size_t len)
{
	struct syslog_ctx *s = ctx;
	const char *p = buf, *end = buf + len, *nl;
	unsigned long pri = 8 + 4;	/* user.warning, until a line says */
	long ret;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (nl > p) {
			ret = send_line(s, p, (size_t)(nl - p), &pri);
			if (ret < 0)
				return p == buf ? ret : (long)(p - buf);
		}
		p = nl + 1;
	}
	return (long)len;
}

static void syslog_release(void *ctx)
{
	struct syslog_ctx *s = ctx;

	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

static const struct pk_console_ops syslog_ops = {
	.name = "syslog",
	.write = syslog_write,
	.write_atomic = syslog_write,
	.release = syslog_release,
};

int pk_console_syslog_make(const char *socket_path, const char *ident,
			   struct pk_console_driver *out)
{
	struct syslog_ctx *s;
	const char *path = socket_path ? socket_path : "/dev/log";
	int ret;

	if (!out || strlen(path) >= sizeof(s->addr.sun_path))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fd = -1;
	s->addr.sun_family = AF_UNIX;
	strcpy(s->addr.sun_path, path);
	snprintf(s->ident, sizeof(s->ident), "%s",
		 ident ? ident : program_invocation_short_name ? program_invocation_short_name : "pk");
	s->pid = (int)getpid();
	ret = syslog_connect(s);
	if (ret < 0) {
		free(s);
		return ret;
	}
	memset(out, 0, sizeof(*out));
	out->ops = &syslog_ops;
	out->ctx = s;
	out->format = PK_FMT_SYSLOG;
	return 0;
}
