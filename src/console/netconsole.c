// SPDX-License-Identifier: MIT
/*
 * netconsole.c - console driver: each console write as one UDP datagram,
 * like Linux's netconsole.  The socket is non-blocking and sends never
 * raise SIGPIPE: a dead or unreachable peer turns into an error return
 * (counted by the console), never into a stall.  sendto() is
 * async-signal-safe, so the same function is write_atomic.
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
 * of the record is dropped (a receiver sees an incomplete set) and the
 * write counts as done: sending it all again would repeat what went out.
 */
#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "printk/console.h"

#define NET_DGRAM_MAX	1400	/* stay below a typical path MTU */

#define MAX_PRINT_CHUNK	1000	/* extended: a datagram's most, as Linux's netconsole */

struct net_ctx {
	int fd;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char frag[MAX_PRINT_CHUNK];	/* extended: one fragment being built */
};

static long net_write(void *ctx, const char *buf, size_t len)
{
	struct net_ctx *n = ctx;
	size_t chunk = len < NET_DGRAM_MAX ? len : NET_DGRAM_MAX;
	ssize_t r = send(n->fd, buf, chunk, MSG_DONTWAIT | MSG_NOSIGNAL);

	return r < 0 ? -errno : (long)r;
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

static long netext_write(void *ctx, const char *buf, size_t len)
{
	struct net_ctx *n = ctx;
	const char *semi = memchr(buf, ';', len < MAX_PRINT_CHUNK ? len : MAX_PRINT_CHUNK);
	size_t head, body, off = 0, h, chunk;
	ssize_t r;

	/* One datagram, or not a kmsg-format record (fmt= changed): as the plain driver. */
	if (len <= MAX_PRINT_CHUNK || !semi || (size_t)(semi - buf) + 64 > MAX_PRINT_CHUNK)
		return net_write(ctx, buf, len);
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
		r = send(n->fd, n->frag, h + chunk, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0)
			return off ? (long)len : -errno;
		off += chunk;
	}
	return (long)len;
}

static void net_release(void *ctx)
{
	struct net_ctx *n = ctx;

	close(n->fd);
	free(n);
}

static const struct pk_console_ops net_ops = {
	.name = "netconsole",
	.write = net_write,
	.write_atomic = net_write,
	.release = net_release,
};

static const struct pk_console_ops netext_ops = {
	.name = "netconsole+ext",
	.write = netext_write,
	.write_atomic = netext_write,
	.release = net_release,
};

static int net_make(const char *host, unsigned port, bool ext, struct pk_console_driver *out)
{
	struct addrinfo hints = { 0 }, *res;
	struct net_ctx *n;
	char serv[8];
	int ret;

	if (!host || !*host || !port || port > 65535 || !out)
		return -EINVAL;
	hints.ai_socktype = SOCK_DGRAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(serv, sizeof(serv), "%u", port);
	ret = getaddrinfo(host, serv, &hints, &res);
	if (ret)
		return ret == EAI_SYSTEM ? -errno : -EHOSTUNREACH;
	n = calloc(1, sizeof(*n));
	if (!n) {
		freeaddrinfo(res);
		return -ENOMEM;
	}
	n->fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (n->fd < 0) {
		ret = -errno;
		freeaddrinfo(res);
		free(n);
		return ret;
	}
	memcpy(&n->addr, res->ai_addr, res->ai_addrlen);
	n->addrlen = res->ai_addrlen;
	freeaddrinfo(res);
	/* Connected, so that ICMP "port unreachable" comes back as an error. */
	if (connect(n->fd, (struct sockaddr *)&n->addr, n->addrlen) < 0) {
		ret = -errno;
		close(n->fd);
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
