// SPDX-License-Identifier: MIT
/*
 * syslog.c - console driver: a syslog daemon's datagram socket.
 *
 * The console renders records in PK_FMT_SYSLOG ("<PRI>[ time] text"); each
 * record becomes one datagram "<PRI>IDENT[PID]: text" (RFC 3164 without
 * the timestamp and host, which the daemon adds), as syslog(3) sends one.
 * A newline inside the text goes into the datagram as "
", the escape
 * the rendering uses for every other control byte: a daemon that would
 * keep a newline in its file (rsyslog turns it into "#012", others keep
 * it) cannot be made to show a line the program did not log.  A record
 * without a "<PRI>" prefix (a drop notice, another format) goes out as
 * user.warning.
 *
 * A full queue (a daemon that does not keep up: EAGAIN) costs write() a
 * wait of at most SYSLOG_WAIT_MS for room, once per stall (no later send
 * waits until one succeeds), and write_atomic() no wait at all; then the
 * datagram is dropped.  Every datagram not sent, for whatever reason, is
 * counted (the console counts a write error), and the next one sent is
 * preceded by "<12>IDENT[PID]: ** N printk messages dropped **".
 *
 * socket(), connect(), poll() and send() are async-signal-safe, unlike
 * syslog(3), which takes a lock; so write_atomic() can run in a crash.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "printk/console.h"
#include "wfd.h"

#define SYSLOG_LINE_MAX	2048
#define SYSLOG_WAIT_MS	100	/* write() waits this long for room in the daemon's queue */

extern char *program_invocation_short_name;

struct syslog_ctx {
	int fd;
	struct sockaddr_un addr;
	char ident[64];
	int pid;
	/* The console's owner (write() and write_atomic() one at a time). */
	uint64_t missed;	/* datagrams not sent since the last one sent */
	bool stalled;		/* the last send found no room: no wait until one does */
	char out[SYSLOG_LINE_MAX];
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
 * The record's header "<PRI>" (and the console's "[time] ", left to the
 * daemon) at @t, if there is one: sets *@pri and returns where the text
 * starts; else returns @t.
 */
static const char *skip_header(const char *t, const char *end, unsigned long *pri)
{
	unsigned long v = 0;
	const char *q = t + 1;

	if (t >= end || *t != '<')
		return t;
	while (q < end && *q >= '0' && *q <= '9' && v < 1000)
		v = v * 10 + (unsigned long)(*q++ - '0');
	if (q >= end || *q != '>' || q == t + 1 || v >= 192)
		return t;
	*pri = v;
	t = q + 1;
	if (t < end && *t == '[') {	/* the console's timestamp: the daemon stamps */
		q = memchr(t, ']', (size_t)(end - t));
		if (q)
			t = q + 1 + (q + 1 < end && q[1] == ' ');
	}
	return t;
}

/* Is there a record header at @t (a line that starts a new record)? */
static bool at_header(const char *t, const char *end)
{
	unsigned long pri;

	return skip_header(t, end, &pri) != t;
}

/*
 * send() one datagram.  The daemon restarted: connect to its new socket
 * and send again, once.  Its queue full (EAGAIN): in write() (@may_wait)
 * wait for room up to SYSLOG_WAIT_MS, once per stall (until a send
 * succeeds again no later one waits); in write_atomic() not at all.
 * Return: 0 or a negative errno, never -EAGAIN.
 */
static int send_dgram(struct syslog_ctx *s, const char *m, size_t len, bool may_wait)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLOUT };
	bool reconnected = false;
	uint64_t deadline = 0, now;
	struct timespec ts;

	for (;;) {
		if (send(s->fd, m, len, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) {
			s->stalled = false;
			return 0;
		}
		if (errno == EINTR)
			continue;
		if ((errno == ECONNREFUSED || errno == ENOTCONN || errno == ENOENT) &&
		    !reconnected) {
			/* The daemon restarted: its socket is a new one. */
			reconnected = true;
			if (syslog_connect(s) < 0)
				return -ENOTCONN;
			pfd.fd = s->fd;
			continue;
		}
		if (errno != EAGAIN && errno != ENOBUFS)
			return -errno;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		if (!deadline)
			deadline = now + SYSLOG_WAIT_MS * 1000000ull;
		if (!may_wait || s->stalled || now >= deadline) {
			s->stalled = true;
			return -ETIMEDOUT;
		}
		if (poll(&pfd, 1, (int)((deadline - now + 999999) / 1000000)) < 0 && errno != EINTR)
			return -errno;
	}
}

/*
 * "<PRI>IDENT[PID]: " then @t..@end into s->out, each newline in it as
 * "\x0a" (the library's escape for a control byte): one record, one
 * datagram, one line in any daemon's log.  Cut at SYSLOG_LINE_MAX.
 */
static size_t build(struct syslog_ctx *s, unsigned long pri, const char *t, const char *end)
{
	char *p = s->out, *lim = s->out + sizeof(s->out);
	size_t ident_len = strlen(s->ident);

	*p++ = '<';
	p = put_uint(p, pri);
	*p++ = '>';
	memcpy(p, s->ident, ident_len);
	p += ident_len;
	*p++ = '[';
	p = put_uint(p, (unsigned long)s->pid);
	*p++ = ']';
	*p++ = ':';
	*p++ = ' ';
	for (; t < end && p < lim; t++) {
		if (*t != '\n') {
			*p++ = *t;
		} else if (t + 1 < end) {	/* the last newline ends the datagram */
			if (lim - p < 4)
				break;
			memcpy(p, "\\x0a", 4);
			p += 4;
		}
	}
	return (size_t)(p - s->out);
}

/*
 * Before the next datagram after lost ones: "** N printk messages
 * dropped **" at user.warning.  Return: 0 or the send's error.
 */
static int send_notice(struct syslog_ctx *s, bool may_wait)
{
	char note[64], *p = note;
	size_t len;
	int ret;

	memcpy(p, "** ", 3);
	p = put_uint(p + 3, (unsigned long)s->missed);
	memcpy(p, " printk messages dropped **", 27);
	p += 27;
	len = build(s, 8 + 4, note, p);
	ret = send_dgram(s, s->out, len, may_wait);
	if (!ret)
		s->missed = 0;
	return ret;
}

/*
 * One console write is one record (the console writes a record, or its
 * drop notice, at a time): one datagram, whatever newlines its text
 * held.  Only a line that starts with a record header of its own starts
 * another datagram (a driver called with several records at once); in
 * the syslog rendering a continuation line never does ('<' escaped).
 * A datagram not sent is counted, and said in-band before the next one
 * that is.
 */
static long syslog_send(struct syslog_ctx *s, const char *buf, size_t len, bool may_wait)
{
	const char *p = buf, *end = buf + len, *rec, *t, *nl;
	unsigned long pri;
	uint64_t stood;
	int ret;

	while (p < end) {
		pri = 8 + 4;	/* user.warning, unless the record says */
		rec = p;
		t = skip_header(p, end, &pri);
		/* The record ends before the next line that starts a record. */
		for (nl = memchr(t, '\n', (size_t)(end - t)); nl && nl + 1 < end;
		     nl = memchr(nl + 1, '\n', (size_t)(end - nl - 1)))
			if (at_header(nl + 1, end))
				break;
		p = nl ? nl + 1 : end;
		ret = s->missed ? send_notice(s, may_wait) : 0;
		if (!ret)
			ret = send_dgram(s, s->out, build(s, pri, t, p), may_wait);
		if (ret < 0) {
			/* A notice of the console's own stands for its N records. */
			stood = pk__wfd_notice_count(rec, (size_t)(p - rec));
			s->missed += stood ? stood : 1;
			return rec == buf ? ret : (long)(rec - buf);
		}
	}
	return (long)len;
}

static long syslog_write(void *ctx, const char *buf, size_t len)
{
	return syslog_send(ctx, buf, len, true);
}

static long syslog_write_atomic(void *ctx, const char *buf, size_t len)
{
	return syslog_send(ctx, buf, len, false);
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
	.write_atomic = syslog_write_atomic,
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
