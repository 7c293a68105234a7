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
 */
#include "wfd.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
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
	return PK_WFD_PLAIN;
}

/* Initial-exec TLS: safe to read in a signal handler. */
static __thread __attribute__((tls_model("initial-exec"))) bool sigpipe_blocked_here;

void pk__wfd_sigpipe_blocked(void)
{
	sigpipe_blocked_here = true;
}

/* Take back the SIGPIPE our failed write left pending on this thread. */
static void consume_sigpipe(const sigset_t *pipe_set)
{
	static const struct timespec zero = { 0, 0 };

	while (sigtimedwait(pipe_set, NULL, &zero) < 0 && errno == EINTR)
		;
}

static ssize_t write_pipe(int fd, const void *buf, size_t len)
{
	sigset_t pipe_set, old, pending;
	bool had_pending = false;
	ssize_t n;
	int err;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	if (sigpipe_blocked_here) {
		/* Nothing of the program's can be pending on this thread. */
		n = write(fd, buf, len);
		err = errno;
		if (n < 0 && err == EPIPE)
			consume_sigpipe(&pipe_set);
		errno = err;
		return n;
	}
	if (pthread_sigmask(SIG_BLOCK, &pipe_set, &old) != 0)
		return write(fd, buf, len);
	/*
	 * Unblocked until now, no SIGPIPE can have been pending; already
	 * blocked by the program, one pending is the program's to keep.
	 */
	if (sigismember(&old, SIGPIPE))
		had_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
	n = write(fd, buf, len);
	err = errno;
	if (n < 0 && err == EPIPE && !had_pending)
		consume_sigpipe(&pipe_set);
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
		return write_pipe(fd, buf, len);
	case PK_WFD_PIPE:
		return write_pipe(fd, buf, len);
	case PK_WFD_PLAIN:
	default:
		return write(fd, buf, len);
	}
}
