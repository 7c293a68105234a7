// SPDX-License-Identifier: MIT
/*
 * netconsole.c - console driver: each console write as one UDP datagram,
 * like Linux's netconsole.  The socket is non-blocking and sends never
 * raise SIGPIPE: a dead or unreachable peer turns into an error return
 * (counted by the console), never into a stall.  sendto() is
 * async-signal-safe, so write_atomic() can run in a crash.
 *
 * A write longer than NET_DGRAM_MAX (1400) bytes goes out as several
 * datagrams, all sent by the one call (the console hands over one record
 * at a time): the first as it is, each one after it starting with
 * "ncfrag=OFFSET/TOTAL " (OFFSET and TOTAL in bytes of the write), so that
 * no datagram but a record's first starts with text of the record: a
 * record's bytes, escapes included, cannot make a datagram that starts
 * like another record.  A datagram after the first that cannot be sent
 * ends the record there (counted as one record lost).
 *
 * The extended form (pk_console_netext_make()) is Linux's extended
 * netconsole: each record in the /dev/kmsg format, "6,seq,usec,-;text\n",
 * one datagram per record.  A record over MAX_PRINT_CHUNK (1000) bytes
 * goes out in fragments, each with the record's header and
 * ",ncfrag=<offset>/<total>" before the ';', offset and total counting
 * bytes of the text after the header (its newline included), as
 * drivers/net/netconsole.c does.  The fragments are built in a buffer of
 * the driver's (write() and write_atomic() of one console never run at
 * once on it except after a panic's takeover, whose old owner never
 * writes again).  If a fragment after the first cannot be sent, the rest
 * of the record is dropped (a receiver sees an incomplete set), counted,
 * and the write counts as done: sending it all again would repeat what
 * went out.
 *
 * Loss.  A full socket buffer (EAGAIN) costs write() a wait of at most
 * NET_WAIT_MS for room, once per stall (until a send succeeds no later
 * one waits), and write_atomic() none.  A write not sent (a full buffer,
 * or the peer's refusal of an earlier datagram, ECONNREFUSED, which fails
 * this send) is counted, and the next datagram that goes out is preceded
 * by one saying "** N printk messages dropped **".
 *
 * A host name (not a numeric address) is resolved on a thread of the
 * driver's (resolve.c), not in the caller: until it resolves (retried
 * after a failure for as long as the console lives), the console has no
 * socket and counts each write as lost; the socket is made and connected
 * by the first write after (socket() and connect() are async-signal-safe).
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "printk/console.h"
#include "resolve.h"
#include "wfd.h"

#define NET_DGRAM_MAX	1400	/* stay below a typical path MTU */
#define NET_WAIT_MS	100	/* write() waits this long for room in the socket buffer */

#define MAX_PRINT_CHUNK	1000	/* extended: a datagram's most, as Linux's netconsole */

struct net_ctx {
	int fd;			/* -1 until the name resolved */
	struct pk__resolver *res;
	/* The console's owner (write() and write_atomic() one at a time). */
	uint64_t missed;	/* not sent since the last datagram sent */
	bool stalled;		/* the last send found no room: no wait until one does */
	char note[64];
	char frag[NET_DGRAM_MAX];	/* one fragment being built */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The socket, once the name resolved.  Return: 0 or a negative errno. */
static int net_socket(struct net_ctx *n)
{
	struct sockaddr_storage addr;
	socklen_t len;
	int fd;

	if (n->fd >= 0)
		return 0;
	if (!pk__resolve_get(n->res, &addr, &len))
		return -EHOSTUNREACH;	/* not (yet) resolved */
	fd = socket(addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* Connected, so that ICMP "port unreachable" comes back as an error. */
	if (connect(fd, (struct sockaddr *)&addr, len) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	n->fd = fd;
	return 0;
}

/* One datagram (see the header's "Loss").  Return: 0 or a negative errno, never -EAGAIN. */
static int send1(struct net_ctx *n, const char *m, size_t len, bool may_wait)
{
	struct pollfd pfd = { .fd = n->fd, .events = POLLOUT };
	uint64_t deadline = 0, now;

	for (;;) {
		if (send(n->fd, m, len, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) {
			n->stalled = false;
			return 0;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != ENOBUFS)
			return -errno;
		now = mono_ns();
		if (!deadline)
			deadline = now + NET_WAIT_MS * 1000000ull;
		if (!may_wait || n->stalled || now >= deadline) {
			n->stalled = true;
			return -ETIMEDOUT;
		}
		if (poll(&pfd, 1, (int)((deadline - now + 999999) / 1000000)) < 0 && errno != EINTR)
			return -errno;
	}
}

/* "<n>" in decimal at @p; returns the length (no NUL).  Signal-safe. */
static size_t put_uint(char *p, size_t n)
{
	char tmp[24];
	size_t i = 0, len;

	do
		tmp[i++] = (char)('0' + n % 10);
	while (n /= 10);
	for (len = i; i; i--)
		*p++ = tmp[i - 1];
	return len;
}

/*
 * Before a record: the socket, and the notice of what was lost before it.
 * Return: 0 or the error that kept them out.
 */
static int net_begin(struct net_ctx *n, bool may_wait)
{
	size_t len = 0;
	int ret = net_socket(n);

	if (ret < 0 || !n->missed)
		return ret;
	/* The console's own notice, as it writes it in every format but JSON. */
	memcpy(n->note + len, "** ", 3);
	len += 3;
	len += put_uint(n->note + len, n->missed);
	memcpy(n->note + len, " printk messages dropped **\n", 28);
	len += 28;
	ret = send1(n, n->note, len, may_wait);
	if (!ret)
		n->missed = 0;
	return ret;
}

/* A write not sent: counted (a notice of the console's own as its N). */
static long lost(struct net_ctx *n, const char *buf, size_t len, int err)
{
	uint64_t stood = pk__wfd_notice_count(buf, len);

	n->missed += stood ? stood : 1;
	return err;
}

static long net_send(struct net_ctx *n, const char *buf, size_t len, bool may_wait)
{
	size_t off, chunk, h;
	int ret = net_begin(n, may_wait);

	if (!ret)
		ret = send1(n, buf, len < NET_DGRAM_MAX ? len : NET_DGRAM_MAX, may_wait);
	if (ret < 0)
		return lost(n, buf, len, ret);
	for (off = NET_DGRAM_MAX; off < len; off += chunk) {
		memcpy(n->frag, "ncfrag=", 7);
		h = 7 + put_uint(n->frag + 7, off);
		n->frag[h++] = '/';
		h += put_uint(n->frag + h, len);
		n->frag[h++] = ' ';
		chunk = len - off < NET_DGRAM_MAX - h ? len - off : NET_DGRAM_MAX - h;
		memcpy(n->frag + h, buf + off, chunk);
		if (send1(n, n->frag, h + chunk, may_wait) < 0) {
			n->missed++;	/* the rest of this record */
			break;
		}
	}
	return (long)len;
}

static long net_write(void *ctx, const char *buf, size_t len)
{
	return net_send(ctx, buf, len, true);
}

static long net_write_atomic(void *ctx, const char *buf, size_t len)
{
	return net_send(ctx, buf, len, false);
}

static long netext_send(struct net_ctx *n, const char *buf, size_t len, bool may_wait)
{
	const char *semi = memchr(buf, ';', len < MAX_PRINT_CHUNK ? len : MAX_PRINT_CHUNK);
	size_t head, body, off = 0, h, chunk;
	int ret;

	/* One datagram, or not a kmsg-format record (fmt= changed): as the plain driver. */
	if (len <= MAX_PRINT_CHUNK || !semi || (size_t)(semi - buf) + 64 > MAX_PRINT_CHUNK)
		return net_send(n, buf, len, may_wait);
	ret = net_begin(n, may_wait);
	if (ret < 0)
		return lost(n, buf, len, ret);
	head = (size_t)(semi - buf);
	body = len - head - 1;
	memcpy(n->frag, buf, head);
	while (off < body) {
		h = head;
		memcpy(n->frag + h, ",ncfrag=", 8);
		h += 8;
		h += put_uint(n->frag + h, off);
		n->frag[h++] = '/';
		h += put_uint(n->frag + h, body);
		n->frag[h++] = ';';
		chunk = body - off < MAX_PRINT_CHUNK - h ? body - off : MAX_PRINT_CHUNK - h;
		memcpy(n->frag + h, semi + 1 + off, chunk);
		ret = send1(n, n->frag, h + chunk, may_wait);
		if (ret < 0) {
			if (!off)
				return lost(n, buf, len, ret);
			n->missed++;	/* the rest of this record */
			break;
		}
		off += chunk;
	}
	return (long)len;
}

static long netext_write(void *ctx, const char *buf, size_t len)
{
	return netext_send(ctx, buf, len, true);
}

static long netext_write_atomic(void *ctx, const char *buf, size_t len)
{
	return netext_send(ctx, buf, len, false);
}

static void net_release(void *ctx)
{
	struct net_ctx *n = ctx;

	if (n->fd >= 0)
		close(n->fd);
	pk__resolve_release(n->res);
	free(n);
}

static const struct pk_console_ops net_ops = {
	.name = "netconsole",
	.write = net_write,
	.write_atomic = net_write_atomic,
	.release = net_release,
};

static const struct pk_console_ops netext_ops = {
	.name = "netconsole+ext",
	.write = netext_write,
	.write_atomic = netext_write_atomic,
	.release = net_release,
};

static int net_make(const char *host, unsigned port, bool ext, struct pk_console_driver *out)
{
	struct net_ctx *n;
	int ret;

	if (!host || !*host || !port || port > 65535 || !out)
		return -EINVAL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->fd = -1;
	ret = pk__resolve_start(&n->res, host, port, SOCK_DGRAM);
	if (ret < 0) {
		free(n);
		return ret;
	}
	/* An address (resolved at once): the socket now, its errors to the caller. */
	ret = pk__resolve_get(n->res, &(struct sockaddr_storage){ 0 }, &(socklen_t){ 0 }) ?
		net_socket(n) : 0;
	if (ret < 0) {
		pk__resolve_release(n->res);
		free(n);
		return ret;
	}
	memset(out, 0, sizeof(*out));
	out->ops = ext ? &netext_ops : &net_ops;
	out->ctx = n;
	out->format = ext ? PK_FMT_KMSG : PK_FMT_HUMAN;
	return 0;
}

int pk_console_net_make(const char *host, unsigned port, struct pk_console_driver *out)
{
	return net_make(host, port, false, out);
}

int pk_console_netext_make(const char *host, unsigned port, struct pk_console_driver *out)
{
	return net_make(host, port, true, out);
}
