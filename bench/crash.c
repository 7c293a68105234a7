// SPDX-License-Identifier: MIT
/*
 * crash.c - how many records survive an abort().
 *
 * For each logger, a forked child opens it on a fresh file (libprintk with
 * its crash handler installed, except where the row says otherwise), logs
 * N records and calls abort().  The parent waits for the child and counts
 * the records that reached the file.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "peers.h"

#define CRASH_TIMEOUT_NS	(60ull * 1000000000u)

static void crash_child(const struct pkb_logger *lg, const char *path, long n)
{
	long i;
	int rc;

	/* No core file: this abort() is on purpose. */
	setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
	rc = lg->open(lg, path, PKB_OPEN_CRASH);
	if (rc < 0)
		_exit(100);
	for (i = 0; i < n; i++)
		lg->log(i, 4096 + i * 64);
	abort();
}

static int wait_child(pid_t pid, int *st)
{
	uint64_t t0 = pkb_now_ns();

	for (;;) {
		pid_t r = waitpid(pid, st, WNOHANG);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (pkb_now_ns() - t0 > CRASH_TIMEOUT_NS) {
			kill(pid, SIGKILL);
			waitpid(pid, st, 0);
			return -ETIMEDOUT;
		}
		pkb_sleep_ns(10000000u);
	}
}

int pkb_crash_run(const struct pkb_crash_opts *o, struct pkb_crash_result *res, int max)
{
	const char *dir = pkb_tmpdir();
	int l, nres = 0, total = 0, k = 0;

	for (l = 0; l < pkb_nloggers; l++)
		if (pkb_loggers[l].tables & PKB_IN_CRASH)
			total++;
	for (l = 0; l < pkb_nloggers && nres < max; l++) {
		const struct pkb_logger *lg = &pkb_loggers[l];
		struct pkb_crash_result *r;
		char path[512];
		pid_t pid;
		int st = 0, rc;
		long n;

		if (!(lg->tables & PKB_IN_CRASH))
			continue;
		r = &res[nres++];
		k++;
		memset(r, 0, sizeof(*r));
		snprintf(r->name, sizeof(r->name), "%s", lg->name);
		if (!lg->available(lg, r->why, sizeof(r->why))) {
			r->status = 1;
			continue;
		}
		pkb_progress("crash %d/%d: %s, %ld records then abort()", k, total, lg->name,
			     o->records);
		pkb_peer_size_store((unsigned long)o->records);
		snprintf(path, sizeof(path), "%s/crash-%d.log", dir, l);
		unlink(path);
		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			r->status = -errno;
			snprintf(r->why, sizeof(r->why), "fork: %s", strerror(errno));
			continue;
		}
		if (pid == 0)
			crash_child(lg, path, o->records);
		rc = wait_child(pid, &st);
		pkb_progress_clear();
		r->logged = o->records;
		if (rc < 0) {
			r->status = rc;
			snprintf(r->why, sizeof(r->why), "child: %s", strerror(-rc));
		} else if (WIFEXITED(st)) {
			r->status = -ECHILD;
			snprintf(r->why, sizeof(r->why), "child exited with %d before abort()",
				 WEXITSTATUS(st));
		} else if (WIFSIGNALED(st)) {
			r->term_signal = WTERMSIG(st);
		}
		n = pkb_count_lines(path, PKB_PEER_MARK);
		r->found = n < 0 ? 0 : n;
		r->crash_report = pkb_count_lines(path, "SIGABRT") > 0;
		unlink(path);
	}
	return nres;
}
