// SPDX-License-Identifier: MIT
/*
 * child.c - run one scenario in a forked child and read its result back.
 *
 * The parent is single-threaded when it forks, so the child starts clean.
 * The child writes its result struct to a pipe and _exit()s; the parent
 * polls the pipe, keeps the progress line going and kills the child if it
 * runs past its time limit.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

static void describe(int st, char *why, size_t n)
{
	if (WIFSIGNALED(st))
		snprintf(why, n, "child killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else if (WIFEXITED(st))
		snprintf(why, n, "child exited with status %d", WEXITSTATUS(st));
	else
		snprintf(why, n, "child ended with wait status %#x", st);
}

int pkb_child_run(const char *label, double expect_s, double timeout_s,
		  int (*fn)(void *arg, void *out), void *arg, void *out, size_t size,
		  char *why, size_t whylen)
{
	int fds[2], st = 0, timed_out = 0;
	size_t got = 0;
	uint64_t t0 = pkb_now_ns();
	pid_t pid;

	why[0] = '\0';
	if (pipe(fds) < 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(fds[0]);
		close(fds[1]);
		return -e;
	}
	if (pid == 0) {
		int rc;

		close(fds[0]);
		rc = fn(arg, out);
		write_all(fds[1], out, size);
		close(fds[1]);
		_exit(rc & 0xff);
	}
	close(fds[1]);
	for (;;) {
		struct pollfd p = { .fd = fds[0], .events = POLLIN };
		double el = (double)(pkb_now_ns() - t0) / 1e9;
		int r;

		if (el > timeout_s) {
			kill(pid, SIGKILL);
			timed_out = 1;
			break;
		}
		if (expect_s > 0)
			pkb_progress("%s: %.0f s of ~%.0f s", label, el, expect_s);
		else
			pkb_progress("%s: %.1f s", label, el);
		r = poll(&p, 1, 250);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0)
			continue;
		{
			ssize_t n = read(fds[0], (char *)out + got, size - got);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += (size_t)n;
			if (got == size)
				break;
		}
	}
	close(fds[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	pkb_progress_clear();
	if (timed_out) {
		snprintf(why, whylen, "killed after %.0f s (time limit)", timeout_s);
		return -ETIMEDOUT;
	}
	if (got != size) {
		describe(st, why, whylen);
		return -ECHILD;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		describe(st, why, whylen);
	return 0;
}
