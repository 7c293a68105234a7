// SPDX-License-Identifier: MIT
/*
 * netconsole.c - console driver: each console write as one UDP datagram,
 * like Linux's netconsole.  The socket is non-blocking and sends never
 * raise SIGPIPE: a dead or unreachable peer turns into an error return
 * (counted by the console), never into a stall.  sendto() is
 * async-signal-safe, so the same function is write_atomic.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "printk/console.h"

#define NET_DGRAM_MAX	1400	/* stay below a typical path MTU */

struct net_ctx {
	int fd;
	struct sockaddr_storage addr;
	socklen_t addrlen;
};

static long net_write(void *ctx, const char *buf, size_t len)
{
	struct net_ctx *n = ctx;
	size_t chunk = len < NET_DGRAM_MAX ? len : NET_DGRAM_MAX;
	ssize_t r = send(n->fd, buf, chunk, MSG_DONTWAIT | MSG_NOSIGNAL);

	return r < 0 ? -errno : (long)r;
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

int pk_console_net_make(const char *host, unsigned port, struct pk_console_driver *out)
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
	out->ops = &net_ops;
	out->ctx = n;
	out->format = PK_FMT_HUMAN;
	return 0;
}
