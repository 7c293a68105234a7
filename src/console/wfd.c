// SPDX-License-Identifier: MIT
/*
 * wfd.c - writing a console's descriptor without SIGPIPE (see wfd.h).
 *
 * For a pipe there is no flag like MSG_NOSIGNAL, so SIGPIPE is blocked in
 * the calling thread around the write(2).  A write to a pipe with no reader
 * then leaves a SIGPIPE pending for this thread, which is taken back with
 * a zero-timeout sigtimedwait() before the old mask returns, unless one was
 * already pending before the write (that one is not ours to take).  If
 * another SIGPIPE is sent to the process in that window, one of the two is
 * lost: the same narrow race every library using this technique accepts.
 *
 * A regular file gets the same treatment for SIGXFSZ: a write past
 * RLIMIT_FSIZE raises it, and its default action kills the process.  With
 * the signal blocked the write fails with EFBIG instead (the kernel first
 * writes what fits, a short write, then EFBIG), which the console counts;
 * the SIGXFSZ it raised is taken back as SIGPIPE's is.
 */
#include "wfd.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum pk__wfd_kind pk__wfd_kind(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return PK_WFD_PLAIN;	/* a bad fd fails in write(2) with EBADF */
	if (S_ISSOCK(st.st_mode))
		return PK_WFD_SOCKET;
	if (S_ISFIFO(st.st_mode))
		return PK_WFD_PIPE;
	if (S_ISREG(st.st_mode))
		return PK_WFD_FILE;
	return PK_WFD_PLAIN;
}

/* Initial-exec TLS: safe to read in a signal handler. */
static __thread __attribute__((tls_model("initial-exec"))) bool signals_blocked_here;

void pk__wfd_sigpipe_blocked(void)
{
	signals_blocked_here = true;
}

/* Take back the one signal in @set our failed write left pending on this thread. */
static void consume(int sig)
{
	static const struct timespec zero = { 0, 0 };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	while (sigtimedwait(&set, NULL, &zero) < 0 && errno == EINTR)
		;
}

/* The signal a write that failed with @err raised: SIGPIPE, SIGXFSZ, or 0. */
static int raised(ssize_t n, int err)
{
	if (n >= 0)
		return 0;
	return err == EPIPE ? SIGPIPE : err == EFBIG ? SIGXFSZ : 0;
}

/*
 * write(2) with SIGPIPE and SIGXFSZ blocked in the calling thread; if the
 * write failed with EPIPE or EFBIG, the signal it raised is taken back,
 * unless one was pending before (blocked by the program, and its own).
 */
static ssize_t write_careful(int fd, const void *buf, size_t len)
{
	sigset_t set, old, pending;
	ssize_t n;
	int err, sig;

	if (signals_blocked_here) {
		/* Nothing of the program's can be pending on this thread. */
		n = write(fd, buf, len);
		err = errno;
		sig = raised(n, err);
		if (sig)
			consume(sig);
		errno = err;
		return n;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigaddset(&set, SIGXFSZ);
	if (pthread_sigmask(SIG_BLOCK, &set, &old) != 0)
		return write(fd, buf, len);
	/*
	 * Unblocked until now, no such signal can have been pending; already
	 * blocked by the program, one pending is the program's to keep.
	 */
	sigemptyset(&pending);
	if (sigismember(&old, SIGPIPE) || sigismember(&old, SIGXFSZ))
		sigpending(&pending);
	n = write(fd, buf, len);
	err = errno;
	sig = raised(n, err);
	if (sig && !(sigismember(&old, sig) && sigismember(&pending, sig)))
		consume(sig);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return n;
}

ssize_t pk__wfd_write(int fd, enum pk__wfd_kind kind, const void *buf, size_t len)
{
	ssize_t n;

	switch (kind) {
	case PK_WFD_SOCKET:
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n >= 0 || errno != ENOTSOCK)
			return n;
		/* The descriptor was replaced by something else: be careful. */
		return write_careful(fd, buf, len);
	case PK_WFD_PIPE:
	case PK_WFD_FILE:
		return write_careful(fd, buf, len);
	case PK_WFD_PLAIN:
	default:
		return write(fd, buf, len);
	}
}

/* "** N printk messages dropped **\n" or {"dropped":N}\n: N. */
uint64_t pk__wfd_notice_count(const char *buf, size_t len)
{
	static const char head[] = "** ", tail[] = " printk messages dropped **\n";
	static const char jhead[] = "{\"dropped\":", jtail[] = "}\n";
	const char *p, *end = buf + len, *t;
	size_t tl;
	uint64_t n = 0;

	if (len > sizeof(head) - 1 && !memcmp(buf, head, sizeof(head) - 1)) {
		p = buf + sizeof(head) - 1;
		t = tail;
		tl = sizeof(tail) - 1;
	} else if (len > sizeof(jhead) - 1 && !memcmp(buf, jhead, sizeof(jhead) - 1)) {
		p = buf + sizeof(jhead) - 1;
		t = jtail;
		tl = sizeof(jtail) - 1;
	} else {
		return 0;
	}
	if (p == end || *p < '0' || *p > '9')
		return 0;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (n > (UINT64_MAX - 9) / 10)
			return 0;
		n = n * 10 + (uint64_t)(*p - '0');
	}
	return (size_t)(end - p) == tl && !memcmp(p, t, tl) ? n : 0;
}
