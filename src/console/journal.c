// SPDX-License-Identifier: MIT
/*
 * journal.c - console driver: systemd-journald's native protocol on its
 * datagram socket (/run/systemd/journal/socket).
 *
 * The console renders records in PK_FMT_JOURNAL (format.c: one entry of
 * fields, PRIORITY= first); this driver adds SYSLOG_IDENTIFIER= and sends
 * each console write as one datagram.  A write that is not an entry (the
 * crash path writes its report as plain text to every console, and a
 * console may be set to another format) goes out as the MESSAGE of an
 * entry at PRIORITY=4, in the protocol's binary form.
 *
 * An entry too large for a datagram (EMSGSIZE) is written to a memfd,
 * sealed, and the descriptor sent with SCM_RIGHTS, as sd-journal does.
 * The protocol is written by hand because the driver must be
 * async-signal-safe (write_atomic() runs in a crash handler), and
 * sd_journal_send() allocates: socket(), connect(), sendmsg(),
 * memfd_create(), write(), fcntl() and close() are plain system calls.
 *
 * Sends are MSG_DONTWAIT.  A full socket buffer (journald behind, or the
 * kernel's net.unix.max_dgram_qlen reached) costs a write a wait of at
 * most JOURNAL_WAIT_MS for room, once per stall: after a wait that ran
 * out, no write waits until one gets in again (the syslog console's rule).
 * The crash path's writes wait too: journald is local, and a crash report
 * is worth that much.  An entry still not sent, or any other failure,
 * drops it; every entry not sent is counted (the console counts a write
 * error), and the next entry sent carries PRINTK_DROPPED=N, the count,
 * as a field of its own: a separate notice entry would take the one slot
 * journald had just freed and leave the record to fail, and with
 * journald behind the journal filled with notices (414 of 427 entries).
 * The console's own drop notice (a record "** N printk messages dropped
 * **") goes out with the two counts summed; the count left when the
 * console is released goes out as a notice entry of its own.  A journald
 * that restarted has a new socket: as the syslog console does, the
 * driver connects once more and sends again, once per entry.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "printk/console.h"

#define JOURNAL_SOCKET	"/run/systemd/journal/socket"
#define JOURNAL_SNDBUF	(8 * 1024 * 1024)	/* as sd-journal asks; the kernel caps it */
#define IDENT_MAX	63
#define JOURNAL_WAIT_MS	100	/* a write waits this long for room in journald's queue */

extern char *program_invocation_short_name;

struct journal_ctx {
	int fd;
	struct sockaddr_un addr;
	char ident[sizeof("SYSLOG_IDENTIFIER=\n") + IDENT_MAX];
	size_t ident_len;
	/* The console's owner (write() and write_atomic() one at a time). */
	uint64_t missed;	/* entries not sent since the last one sent */
	bool stalled;		/* a wait for room ran out: none until a send gets in */
};

static int journal_connect(struct journal_ctx *s)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), sz = JOURNAL_SNDBUF;

	if (fd < 0)
		return -errno;
	/* Best effort: a larger buffer takes a longer burst. */
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
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

/*
 * The entry too large for a datagram: into a memfd, sealed so that
 * journald can trust its size and contents, and the descriptor sent.
 * Return: 0 or a negative errno (-ENOBUFS: no room in the socket).
 */
static int send_memfd(struct journal_ctx *s, const struct iovec *iov, int n)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr mh = { .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	const char *p;
	size_t left;
	ssize_t w;
	int mfd, i, ret = 0;

	mfd = memfd_create("pk-journal", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return -errno;
	for (i = 0; i < n && !ret; i++) {
		for (p = iov[i].iov_base, left = iov[i].iov_len; left; p += w, left -= (size_t)w) {
			w = write(mfd, p, left);
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w <= 0) {
				ret = w < 0 ? -errno : -EIO;
				break;
			}
		}
	}
	if (!ret && fcntl(mfd, F_ADD_SEALS,
			  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		ret = -errno;
	if (!ret) {
		memset(cbuf, 0, sizeof(cbuf));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &mfd, sizeof(int));
		while (sendmsg(s->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			if (errno == EINTR)
				continue;
			ret = errno == EAGAIN ? -ENOBUFS : -errno;
			break;
		}
	}
	close(mfd);
	return ret;
}

/*
 * One entry, @n pieces.  The journal restarted: connect to its new socket
 * and send again, once.  Too large for a datagram: through a memfd.  No
 * room: wait for it, up to JOURNAL_WAIT_MS, once per stall.
 * Return: 0 or a negative errno, never -EAGAIN (the console would retry
 * at once): a full socket is -ENOBUFS.
 */
static int send_entry(struct journal_ctx *s, const struct iovec *iov, int n)
{
	struct msghdr mh = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n };
	struct pollfd pfd = { .fd = s->fd, .events = POLLOUT };
	bool reconnected = false;
	uint64_t deadline = 0, now;
	struct timespec ts;
	int ret;

	for (;;) {
		if (sendmsg(s->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) {
			s->stalled = false;
			return 0;
		}
		if (errno == EINTR)
			continue;
		if ((errno == ECONNREFUSED || errno == ENOTCONN || errno == ENOENT) &&
		    !reconnected) {
			reconnected = true;
			if (journal_connect(s) < 0)
				return -ENOTCONN;
			pfd.fd = s->fd;
			continue;
		}
		if (errno == EMSGSIZE) {
			ret = send_memfd(s, iov, n);
			if (ret != -ENOBUFS)
				return ret;
		} else if (errno != EAGAIN) {
			return -errno;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		if (!deadline)
			deadline = now + JOURNAL_WAIT_MS * 1000000ull;
		if (s->stalled || now >= deadline) {
			s->stalled = true;
			return -ENOBUFS;
		}
		if (poll(&pfd, 1, (int)((deadline - now + 999999) / 1000000)) < 0 && errno != EINTR)
			return -errno;
	}
}

/* Put @v in decimal at @p; return the end. */
static char *put_u64(char *p, uint64_t v)
{
	char tmp[24];
	int i = 0;

	do
		tmp[i++] = (char)('0' + v % 10);
	while (v /= 10);
	while (i)
		*p++ = tmp[--i];
	return p;
}

/* A drop notice entry for @n records, as pk__format_dropped() writes one. */
static int send_notice(struct journal_ctx *s, uint64_t n)
{
	char note[128], *p = note;
	struct iovec iov[2];

	memcpy(p, "PRIORITY=4\nMESSAGE=** ", 22);
	p = put_u64(p + 22, n);
	memcpy(p, " printk messages dropped **\nPRINTK_DROPPED=", 43);
	p = put_u64(p + 43, n);
	*p++ = '\n';
	iov[0] = (struct iovec){ s->ident, s->ident_len };
	iov[1] = (struct iovec){ note, (size_t)(p - note) };
	return send_entry(s, iov, 2);
}

/* Digits at *@p (before @end) as a number; false for none, or more than 19. */
static bool take_u64(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;

	for (*v = 0; *p < end && **p >= '0' && **p <= '9' && *p - s < 19; (*p)++)
		*v = *v * 10 + (uint64_t)(**p - '0');
	return *p > s && (*p == end || **p < '0' || **p > '9');
}

/*
 * The console's own drop notice (pk__format_dropped()) stands for its N
 * records: N; any other write: 0.  Only the notice whole, exactly as
 * written there, is taken: a record's entry always has SYSLOG_FACILITY
 * second, and a text or a crash report that merely holds the words (a
 * binary MESSAGE may hold "\nPRINTK_DROPPED=") must not forge a count.
 */
static uint64_t notice_count(const char *buf, size_t len)
{
	static const char head[] = "PRIORITY=4\nMESSAGE=** ";
	static const char mid[] = " printk messages dropped **\nPRINTK_DROPPED=";
	const char *p = buf + sizeof(head) - 1, *end = buf + len;
	uint64_t n, again;

	if (len < sizeof(head) - 1 || memcmp(buf, head, sizeof(head) - 1) ||
	    !take_u64(&p, end, &n) || (size_t)(end - p) < sizeof(mid) - 1 ||
	    memcmp(p, mid, sizeof(mid) - 1))
		return 0;
	p += sizeof(mid) - 1;
	if (!take_u64(&p, end, &again) || again != n || end - p != 1 || *p != '\n')
		return 0;
	return n;
}

static long journal_send(struct journal_ctx *s, const char *buf, size_t len)
{
	static const char plain_hdr[] = "PRIORITY=4\nMESSAGE\n";
	uint64_t n, notice = notice_count(buf, len);
	char dropped[48], *p;
	unsigned char le[8];
	struct iovec iov[6];
	size_t tlen = len;
	int ret, i, cnt;

	if (notice) {
		/* The console's own notice: with what this driver dropped. */
		ret = send_notice(s, notice + s->missed);
		if (ret < 0) {
			s->missed += notice;
			return ret;
		}
		s->missed = 0;
		return (long)len;
	}
	iov[0] = (struct iovec){ s->ident, s->ident_len };
	if (len >= 9 && !memcmp(buf, "PRIORITY=", 9)) {
		iov[1] = (struct iovec){ (void *)buf, len };
		cnt = 2;
	} else {
		/* Plain text: the MESSAGE of an entry, its last newline left out. */
		if (tlen && buf[tlen - 1] == '\n')
			tlen--;
		for (n = tlen, i = 0; i < 8; i++, n >>= 8)
			le[i] = (unsigned char)(n & 0xff);
		iov[1] = (struct iovec){ (void *)plain_hdr, sizeof(plain_hdr) - 1 };
		iov[2] = (struct iovec){ le, 8 };
		iov[3] = (struct iovec){ (void *)buf, tlen };
		iov[4] = (struct iovec){ (void *)"\n", 1 };
		cnt = 5;
	}
	if (s->missed) {
		/* The count of entries dropped before this one: a field of it. */
		p = dropped;
		if (iov[cnt - 1].iov_len &&
		    ((const char *)iov[cnt - 1].iov_base)[iov[cnt - 1].iov_len - 1] != '\n')
			*p++ = '\n';
		memcpy(p, "PRINTK_DROPPED=", 15);
		p = put_u64(p + 15, s->missed);
		*p++ = '\n';
		iov[cnt++] = (struct iovec){ dropped, (size_t)(p - dropped) };
	}
	ret = send_entry(s, iov, cnt);
	if (ret < 0) {
		s->missed++;
		return ret;
	}
	s->missed = 0;
	return (long)len;
}

static long journal_write(void *ctx, const char *buf, size_t len)
{
	return journal_send(ctx, buf, len);
}

/* The same send: a function of its own, so that a crash in write() can be told apart. */
static long journal_write_atomic(void *ctx, const char *buf, size_t len)
{
	return journal_send(ctx, buf, len);
}

static void journal_release(void *ctx)
{
	struct journal_ctx *s = ctx;

	if (s->fd >= 0) {
		/* What was dropped since the last entry sent: said once more. */
		if (s->missed) {
			s->stalled = false;
			(void)send_notice(s, s->missed);
		}
		close(s->fd);
	}
	free(s);
}

static const struct pk_console_ops journal_ops = {
	.name = "journal",
	.write = journal_write,
	.write_atomic = journal_write_atomic,
	.release = journal_release,
};

int pk_console_journal_make(const char *socket_path, const char *ident,
			    struct pk_console_driver *out)
{
	const char *path = socket_path ? socket_path : JOURNAL_SOCKET;
	const char *id = ident ? ident : program_invocation_short_name;
	struct journal_ctx *s;
	size_t i, n;
	int ret;

	if (!out || !*path || strlen(path) >= sizeof(s->addr.sun_path))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fd = -1;
	s->addr.sun_family = AF_UNIX;
	strcpy(s->addr.sun_path, path);
	if (!id || !*id)
		id = "pk";
	memcpy(s->ident, "SYSLOG_IDENTIFIER=", 18);
	n = strnlen(id, IDENT_MAX);
	/* A control byte would end the field early: '_' instead. */
	for (i = 0; i < n; i++)
		s->ident[18 + i] = (unsigned char)id[i] < 0x20 || id[i] == 0x7f ? '_' : id[i];
	s->ident[18 + n] = '\n';
	s->ident_len = 18 + n + 1;
	ret = journal_connect(s);
	if (ret < 0) {
		free(s);
		return ret;
	}
	memset(out, 0, sizeof(*out));
	out->ops = &journal_ops;
	out->ctx = s;
	out->format = PK_FMT_JOURNAL;
	return 0;
}
