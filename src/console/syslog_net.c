// SPDX-License-Identifier: MIT
/*
 * syslog_net.c - console driver: RFC 5424 messages (rfc5424.c) to a
 * syslog receiver over a unix datagram socket, UDP, or TCP with RFC 6587
 * octet-counting framing ("LEN SP MSG").
 *
 * NEVER BLOCKS
 *
 * A console's write() may run in a pk_printk() caller (handoff and legacy
 * modes), so every socket is non-blocking and every send uses
 * MSG_DONTWAIT | MSG_NOSIGNAL.  TCP connects in the background: write()
 * starts a non-blocking connect() and looks (poll with a zero timeout)
 * whether it completed each time it is called; an attempt that has not
 * completed within connect_timeout_ms is abandoned.  After a failed
 * attempt or a lost connection the next one waits 100 ms, doubling up to
 * retry_max_ms.
 *
 * TCP QUEUE AND LOSS
 *
 * Each message is appended, framed, to a send queue of queue_size bytes,
 * and as much of the queue as the socket takes is sent.  While the
 * receiver is slow, connecting or down, messages wait in the queue and go
 * out, in order, once the connection is (back) up: the next write() sends
 * them.  A message that finds the queue full is not sent: write() returns
 * -ENOBUFS (connected) or -ENOTCONN (not connected), which the console
 * counts in its write_errors, and the driver counts it as missed.  Before
 * the next message it queues, it queues one notice
 *
 *   <PRI>1 - HOST APP PROCID - [printk@32473 dropped="N"] ** N printk messages dropped **
 *
 * (facility's warning), the same notice the console sends when records
 * were overwritten in the store before it printed them.  So every record
 * reaches the receiver or is counted, in-band, where it is missing, with
 * one exception plain TCP syslog cannot avoid: bytes the kernel accepted
 * that the receiver never read when it died.  A receiver closing the
 * connection (a daemon stopped or restarted) is noticed before the next
 * send (POLLRDHUP), so what is queued then goes to the next connection;
 * only a message cut in the middle when the connection broke is lost, and
 * counted.
 *
 * DATAGRAMS
 *
 * Unix and UDP send one datagram per message, nothing queued.  A send
 * that fails is counted as missed and reported the same way before the
 * next one that succeeds.  UDP learns of a refused datagram only from the
 * next send's ECONNREFUSED (one ICMP error may stand for several
 * datagrams): that counts one, and the send is retried once.  A unix
 * socket whose daemon restarted is connected again, as the RFC 3164
 * console does.
 *
 * CRASH CONTEXT
 *
 * Everything write() calls is async-signal-safe (socket, connect, poll,
 * send, getsockopt, close, clock_gettime), so write_atomic is the same
 * function: unix and UDP print at a crash; TCP prints when it is
 * connected (queued messages are sent first; a connect started in the
 * crash completes too late), and what the socket does not take before the
 * process dies is lost.  One flag keeps two calls out of the driver at
 * once (a crash or signal in the middle of a write(), or an emergency
 * print from another thread): the second returns -EBUSY, counted by the
 * console.
 *
 * Memory ordering: busy:A (acquire, taking the flag) pairs with busy:B
 * (release, leaving it): the state a call leaves behind is seen whole by
 * the next call, on whatever thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "printk/console.h"
#include "relp.h"
#include "resolve.h"
#include "rfc5424.h"

#define LMM(label)

#define FRAME_PREFIX	12	/* "8192 " and room to spare */
#define RETRY_MIN_MS	100u

extern char *program_invocation_short_name;

enum state { DOWN, CONNECTING, UP };

struct snet {
	int transport;
	int fd;
	enum state state;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	struct pk__rfc5424_id id;
	atomic_bool busy;
	struct pk__resolver *res;	/* UDP, TCP: the host's name (resolve.c) */
	bool resolved;			/* @addr is the host's */

	/* TCP */
	uint64_t retry_at_ns, deadline_ns;
	unsigned backoff_ms, retry_max_ms, connect_timeout_ms;
	char *q;		/* queue: bytes [qhead, qhead + qlen) */
	size_t qsize, qhead, qlen;
	size_t head_left;	/* bytes of the frame at qhead still to send; 0: at a boundary */

	uint64_t missed;	/* not sent, not yet reported */
	char msg[FRAME_PREFIX + PK_RFC5424_MSG_MAX];
	char note[256];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void close_fd(struct snet *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->state = DOWN;
}

/* ---- datagrams ---- */

static int dgram_connect(struct snet *s)
{
	int fd = socket(s->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&s->addr, s->addrlen) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close_fd(s);
	s->fd = fd;
	s->state = UP;
	return 0;
}

static int dgram_send1(struct snet *s, const char *m, size_t len)
{
	bool retried = false;

	for (;;) {
		if (s->fd >= 0 && send(s->fd, m, len, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
			return 0;
		if (s->fd >= 0 && errno == ECONNREFUSED && s->transport == PK_SYSLOG_UDP)
			s->missed++;	/* an earlier datagram was refused */
		else if (s->fd >= 0 && !(s->transport == PK_SYSLOG_UNIX &&
					 (errno == ECONNREFUSED || errno == ENOTCONN ||
					  errno == ENOENT)))
			return -errno;
		if (retried)
			return s->fd >= 0 ? -errno : -ENOTCONN;
		retried = true;
		/* UDP: the error is spent; unix: the daemon's socket is a new one. */
		if (s->transport == PK_SYSLOG_UNIX && dgram_connect(s) < 0)
			return -ENOTCONN;
	}
}

static long dgram_write(struct snet *s, const char *m, size_t len)
{
	size_t nlen;
	int ret;

	if (s->missed) {
		nlen = pk__rfc5424_dropped(&s->id, s->missed, s->note, sizeof(s->note));
		if (dgram_send1(s, s->note, nlen) == 0)
			s->missed = 0;
	}
	ret = dgram_send1(s, m, len);
	if (ret < 0)
		s->missed++;
	return ret;
}

/* ---- TCP ---- */

static void tcp_failed(struct snet *s, uint64_t now)
{
	close_fd(s);
	s->retry_at_ns = now + (uint64_t)s->backoff_ms * 1000000ull;
	s->backoff_ms = s->backoff_ms * 2 > s->retry_max_ms ? s->retry_max_ms : s->backoff_ms * 2;
	/* A frame cut in the middle is lost: the receiver drops its start. */
	if (s->head_left) {
		s->qhead += s->head_left;
		s->qlen -= s->head_left;
		s->head_left = 0;
		s->missed++;
	}
}

static void tcp_up(struct snet *s)
{
	s->state = UP;
	s->backoff_ms = RETRY_MIN_MS;
}

/* Move the connection's state on, without waiting. */
static void tcp_step(struct snet *s, uint64_t now)
{
	struct pollfd pfd;
	int err = 0;
	socklen_t el = sizeof(err);
	char junk[256];

	if (s->state == UP) {
		/* A receiver sends nothing: readable means it closed (or reset). */
		pfd = (struct pollfd){ .fd = s->fd, .events = POLLIN | POLLRDHUP };
		if (poll(&pfd, 1, 0) <= 0)
			return;
		if (!(pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)) &&
		    recv(s->fd, junk, sizeof(junk), MSG_DONTWAIT) > 0)
			return;
		tcp_failed(s, now);
	}
	if (s->state == DOWN) {
		if (now < s->retry_at_ns || !s->resolved)
			return;
		s->fd = socket(s->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (s->fd < 0) {
			tcp_failed(s, now);
			return;
		}
		if (connect(s->fd, (struct sockaddr *)&s->addr, s->addrlen) == 0) {
			tcp_up(s);
			return;
		}
		if (errno != EINPROGRESS) {
			tcp_failed(s, now);
			return;
		}
		s->state = CONNECTING;
		s->deadline_ns = now + (uint64_t)s->connect_timeout_ms * 1000000ull;
	}
	pfd = (struct pollfd){ .fd = s->fd, .events = POLLOUT };
	if (poll(&pfd, 1, 0) == 1) {
		if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && !err)
			tcp_up(s);
		else
			tcp_failed(s, now);
	} else if (now >= s->deadline_ns) {
		tcp_failed(s, now);
	}
}

/* Frame bytes: "LEN " and the message, at the frame starting at @p. */
static size_t frame_len(const char *p)
{
	size_t n = 0, digits = 0;

	while (p[digits] >= '0' && p[digits] <= '9')
		n = n * 10 + (size_t)(p[digits++] - '0');
	return digits + 1 + n;
}

/* Send what the socket takes. */
static void tcp_flush(struct snet *s, uint64_t now)
{
	ssize_t n;
	size_t take;

	while (s->state == UP && s->qlen) {
		n = send(s->fd, s->q + s->qhead, s->qlen, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				tcp_failed(s, now);
			return;
		}
		while (n > 0) {
			if (!s->head_left)
				s->head_left = frame_len(s->q + s->qhead);
			take = (size_t)n < s->head_left ? (size_t)n : s->head_left;
			s->qhead += take;
			s->qlen -= take;
			s->head_left -= take;
			n -= (ssize_t)take;
		}
	}
	if (!s->qlen)
		s->qhead = 0;
}

/* Append "LEN " @m (which lies at s->msg + FRAME_PREFIX) if it fits. */
static bool tcp_queue(struct snet *s, char *m, size_t len)
{
	char pre[FRAME_PREFIX];
	int i = sizeof(pre);
	size_t n = len, plen;

	pre[--i] = ' ';
	do
		pre[--i] = (char)('0' + n % 10);
	while (n /= 10);
	plen = sizeof(pre) - (size_t)i;
	if (s->qsize - s->qlen < plen + len)
		return false;
	if (s->qsize - s->qhead - s->qlen < plen + len) {
		memmove(s->q, s->q + s->qhead, s->qlen);
		s->qhead = 0;
	}
	memcpy(s->q + s->qhead + s->qlen, pre + i, plen);
	memcpy(s->q + s->qhead + s->qlen + plen, m, len);
	s->qlen += plen + len;
	return true;
}

static long tcp_write(struct snet *s, char *m, size_t len)
{
	uint64_t now = mono_ns();
	size_t nlen;
	long ret = 0;

	tcp_step(s, now);
	tcp_flush(s, now);	/* the backlog first: a full queue may empty */
	if (s->missed) {
		nlen = pk__rfc5424_dropped(&s->id, s->missed, s->note, sizeof(s->note));
		if (tcp_queue(s, s->note, nlen))
			s->missed = 0;
	}
	if (!tcp_queue(s, m, len)) {
		s->missed++;
		ret = s->state == UP ? -ENOBUFS : -ENOTCONN;
	}
	tcp_flush(s, now);
	return ret;
}

/* ---- the driver ---- */

/*
 * Before a write: the host's address once its name resolved (a UDP
 * socket connected then).  Until then TCP queues (tcp_step() stays DOWN)
 * and UDP counts each message as missed.
 */
static void snet_resolved(struct snet *s)
{
	if (s->resolved || !s->res || !pk__resolve_get(s->res, &s->addr, &s->addrlen))
		return;
	s->resolved = true;
	if (s->transport == PK_SYSLOG_UDP)
		dgram_connect(s);
}

static long snet_write(void *ctx, const char *buf, size_t len)
{
	struct snet *s = ctx;
	char *m = s->msg + FRAME_PREFIX;
	size_t mlen;
	long ret;

	/* LMM(busy:A) pairs with LMM(busy:B) below. */
	if (atomic_exchange_explicit(&s->busy, true, memory_order_acquire))
		return -EBUSY;
	snet_resolved(s);
	mlen = pk__rfc5424_render(&s->id, buf, len, m, PK_RFC5424_MSG_MAX);
	if (!mlen)
		ret = -EMSGSIZE;
	else if (s->transport == PK_SYSLOG_TCP)
		ret = tcp_write(s, m, mlen);
	else
		ret = dgram_write(s, m, mlen);
	/* LMM(busy:B) pairs with LMM(busy:A): what this call did is seen by the next. */
	atomic_store_explicit(&s->busy, false, memory_order_release);
	return ret < 0 ? ret : (long)len;
}

/* Unregistering: give queued messages a last second to leave. */
static void snet_release(void *ctx)
{
	struct snet *s = ctx;
	uint64_t end = mono_ns() + 1000000000ull, now;
	struct pollfd pfd;

	while (s->transport == PK_SYSLOG_TCP && s->qlen && (now = mono_ns()) < end) {
		tcp_step(s, now);
		tcp_flush(s, now);
		if (s->state == DOWN && s->retry_at_ns >= end)
			break;
		pfd = (struct pollfd){ .fd = s->fd, .events = POLLOUT };
		if (s->fd < 0 || poll(&pfd, 1, 10) < 0)
			usleep(10000);
	}
	close_fd(s);
	pk__resolve_release(s->res);
	free(s->q);
	free(s);
}

static const struct pk_console_ops snet_ops = {
	.name = "syslog5424",
	.write = snet_write,
	.write_atomic = snet_write,
	.release = snet_release,
};

static int resolve(struct snet *s, const struct pk_rfc5424_opts *o)
{
	struct sockaddr_un *un = (struct sockaddr_un *)&s->addr;
	const char *path = o->host ? o->host : "/dev/log";
	int ret;

	if (o->transport == PK_SYSLOG_UNIX) {
		if (!*path || strlen(path) >= sizeof(un->sun_path))
			return -EINVAL;
		un->sun_family = AF_UNIX;
		strcpy(un->sun_path, path);
		s->addrlen = sizeof(*un);
		return 0;
	}
	if (!o->host || !*o->host || o->port > 65535)
		return -EINVAL;
	/* A name resolves on a thread of its own: see resolve.h. */
	ret = pk__resolve_start(&s->res, o->host, o->port ? o->port : 514,
				o->transport == PK_SYSLOG_TCP ? SOCK_STREAM : SOCK_DGRAM);
	if (ret < 0)
		return ret;
	s->resolved = pk__resolve_get(s->res, &s->addr, &s->addrlen);
	return 0;
}

int pk_console_rfc5424_make(const struct pk_rfc5424_opts *o, struct pk_console_driver *out)
{
	char host[256];
	struct snet *s;
	int ret;

	if (!o || !out || o->transport < PK_SYSLOG_UNIX || o->transport > PK_SYSLOG_RELP ||
	    o->facility < 0 || o->facility > (23 << 3) || (o->facility & 7) ||
	    (o->flags & ~PK_RFC5424_BOM))
		return -EINVAL;
	if (o->transport == PK_SYSLOG_RELP)
		return pk__relp_make(o, out);	/* relp.c */
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fd = -1;
	s->transport = o->transport;
	ret = resolve(s, o);
	if (ret < 0)
		goto fail;
	s->id.facility = o->facility ? o->facility >> 3 : -1;
	s->id.bom = o->flags & PK_RFC5424_BOM;
	s->id.pid = (unsigned)getpid();
	if (!o->hostname && gethostname(host, sizeof(host)) == 0)
		host[sizeof(host) - 1] = '\0';
	else
		snprintf(host, sizeof(host), "%s", o->hostname ? o->hostname : "-");
	pk__rfc5424_id_names(&s->id, host, o->app_name ? o->app_name :
				program_invocation_short_name);
	s->connect_timeout_ms = o->connect_timeout_ms ? o->connect_timeout_ms : 1000;
	s->retry_max_ms = o->retry_max_ms ? o->retry_max_ms : 5000;
	if (s->retry_max_ms < RETRY_MIN_MS)
		s->retry_max_ms = RETRY_MIN_MS;
	s->backoff_ms = RETRY_MIN_MS;
	if (o->transport == PK_SYSLOG_TCP) {
		s->qsize = o->queue_size ? o->queue_size : 256u << 10;
		if (s->qsize < FRAME_PREFIX + PK_RFC5424_MSG_MAX)
			s->qsize = FRAME_PREFIX + PK_RFC5424_MSG_MAX;
		s->q = malloc(s->qsize);
		ret = -ENOMEM;
		if (!s->q)
			goto fail;
		tcp_step(s, mono_ns());	/* start connecting now */
	} else if (o->transport == PK_SYSLOG_UNIX || s->resolved) {
		ret = dgram_connect(s);
		/* A unix socket with no daemon yet: connected at the first write. */
		if (ret < 0 && o->transport == PK_SYSLOG_UDP)
			goto fail;
	}
	memset(out, 0, sizeof(*out));
	out->ops = &snet_ops;
	out->ctx = s;
	out->format = PK_FMT_JSON | PK_FMT_F_RFC3339;
	return 0;
fail:
	pk__resolve_release(s->res);
	free(s->q);
	free(s);
	return ret;
}
