// SPDX-License-Identifier: MIT
/*
 * peers_lttng.c - the LTTng-UST row of the latency table: one tracepoint,
 * pkbench:msg (lttng_tp.h), with the message's two longs, recorded by a
 * recording session of its own.
 *
 * A tracepoint that no session records costs a load and a branch; the row
 * measures the recording path, so it only runs against a session that
 * records the event:
 *
 *   available()  the lttng(1) client is installed and a session daemon
 *                answers ("lttng --no-sessiond list"); pkbench never starts
 *                one (scripts/lttng-session.sh does, when asked to);
 *   open()       in the run's child: creates the session pkb-<pid> with its
 *                trace in pkbench's temporary directory, a per-user channel
 *                sized so that the run's events fit, enables pkbench:*,
 *                starts it, then loads the probes (pkbench-lttng-tp.so,
 *                next to pkbench or installed) with dlopen(3).
 *                liblttng-ust's constructor registers with the session
 *                daemon and waits for it
 *                (LTTNG_UST_REGISTER_TIMEOUT, 10 s unless set); the row
 *                fails unless the tracepoint is then enabled, so no call is
 *                timed unrecorded;
 *   close()      stops the session (the consumer flushes the buffers),
 *                reads the channel's discarded-event count, destroys the
 *                session and removes its trace.
 *
 * pkbench itself is not linked with liblttng-ust: its call site is built
 * with dynamic linkage, and the tracer with its threads exists only in the
 * child that measures this row.  Every lttng(1) command runs with
 * --no-sessiond, so none of them spawns a daemon.
 */
#include <errno.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "lttng_tp.h"

#include "bench.h"
#include "peers.h"

#define PROBES_SO	"pkbench-lttng-tp.so"
#define CHANNEL		"pkb"

extern char **environ;

static char session[64], trace_dir[512];
static void *probes;
static uint64_t discarded;
static int discarded_known;

/*
 * Run lttng(1) with @args (NULL-terminated, after "lttng --no-sessiond"),
 * its stdout and stderr into @out (NUL-terminated, truncated) or nowhere.
 * The exit status, 127 if lttng could not be run, or a negative errno.
 */
static int lttng_cmd(char *out, size_t n, const char *const *args)
{
	const char *argv[16] = { "lttng", "--no-sessiond" };
	posix_spawn_file_actions_t fa;
	int fds[2], st, rc, i;
	size_t got = 0;
	pid_t pid;

	for (i = 0; args[i] && i < 13; i++)
		argv[i + 2] = args[i];
	argv[i + 2] = NULL;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
	rc = posix_spawnp(&pid, "lttng", &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc) {
		close(fds[0]);
		return rc == ENOENT ? 127 : -rc;
	}
	for (;;) {
		char scratch[256];
		char *p = out && got + 1 < n ? out + got : scratch;
		size_t room = out && got + 1 < n ? n - 1 - got : sizeof(scratch);
		ssize_t r = read(fds[0], p, room);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (p != scratch)
			got += (size_t)r;
	}
	close(fds[0]);
	if (out && n)
		out[got] = '\0';
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * The probes' shared object: next to the pkbench executable (the build
 * tree), else where make install puts it, LIBDIR/libprintk, found relative
 * to the executable's directory.
 */
static int probes_path(char *path, size_t n)
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (len <= 0)
		return -1;
	exe[len] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	if (snprintf(path, n, "%s/%s", exe, PROBES_SO) >= (int)n)
		return -1;
	if (access(path, R_OK) == 0)
		return 0;
	if (snprintf(path, n, "%s/%s/%s", exe, PKB_LTTNG_TP_REL, PROBES_SO) >= (int)n)
		return -1;
	return access(path, R_OK) == 0 ? 0 : -1;
}

int pkb_lttng_available(const struct pkb_logger *lg, char *why, size_t n)
{
	char so[PATH_MAX];
	const char *const list[] = { "list", NULL };
	int rc;

	(void)lg;
	if (probes_path(so, sizeof(so)) < 0) {
		snprintf(why, n, "%s not found next to pkbench or in %s", PROBES_SO,
			 PKB_LTTNG_TP_REL);
		return 0;
	}
	rc = lttng_cmd(NULL, 0, list);
	if (rc == 127) {
		snprintf(why, n, "no recording session (no lttng(1): install lttng-tools)");
		return 0;
	}
	if (rc != 0) {
		snprintf(why, n, "no recording session (start lttng-sessiond)");
		return 0;
	}
	return 1;
}

/* Run one lttng command of the session; on failure say which in pkb_peer_why. */
static int session_cmd(const char *const *args)
{
	char out[512];
	int rc = lttng_cmd(out, sizeof(out), args);

	if (rc != 0) {
		char *msg = out, *nl;

		/* The first line of lttng's complaint is the useful one. */
		if (!strncmp(msg, "Error: ", 7))
			msg += 7;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = '\0';
		snprintf(pkb_peer_why, sizeof(pkb_peer_why), "lttng %.20s: %.90s", args[0],
			 rc < 0 ? strerror(-rc) : *msg ? msg : "failed");
		return -1;
	}
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void remove_trace(void)
{
	if (trace_dir[0])
		nftw(trace_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	trace_dir[0] = '\0';
}

static void destroy_session(void)
{
	const char *const destroy[] = { "destroy", session, NULL };

	if (session[0])
		lttng_cmd(NULL, 0, destroy);
	session[0] = '\0';
	remove_trace();
}

/*
 * Per-CPU sub-buffers large enough that every event of the run fits in one
 * CPU's buffer even if the consumer daemon read none of it during the run:
 * an event is 16 bytes of payload after a header of at most 16, so 8
 * sub-buffers of records * 32 / 4 hold it twice over.
 */
static unsigned long subbuf_size(void)
{
	unsigned long want = (unsigned long)(pkb_peer_records ? pkb_peer_records : 10000) * 32 / 4;
	unsigned long size = 64ul << 10;

	while (size < want && size < (64ul << 20))
		size <<= 1;
	return size;
}

int pkb_lttng_open(const struct pkb_logger *lg, const char *path, unsigned flags)
{
	char so[PATH_MAX], out_opt[600], subbuf[64];
	const char *const create[] = { "create", session, out_opt, NULL };
	const char *const channel[] = { "enable-channel", "--userspace", "--session", session,
					"--subbuf-size", subbuf, "--num-subbuf", "8",
					"--buffers-uid", CHANNEL, NULL };
	const char *const event[] = { "enable-event", "--userspace", "--session", session,
				      "--channel", CHANNEL, "pkbench:*", NULL };
	const char *const start[] = { "start", session, NULL };
	uint64_t deadline;

	(void)lg;
	(void)path;
	(void)flags;
	discarded = 0;
	discarded_known = 0;
	if (probes_path(so, sizeof(so)) < 0) {
		snprintf(pkb_peer_why, sizeof(pkb_peer_why), "%s not found", PROBES_SO);
		return -ENOENT;
	}
	snprintf(session, sizeof(session), "pkb-%ld", (long)getpid());
	snprintf(trace_dir, sizeof(trace_dir), "%s/lttng-%ld", pkb_tmpdir(), (long)getpid());
	snprintf(out_opt, sizeof(out_opt), "--output=%s", trace_dir);
	snprintf(subbuf, sizeof(subbuf), "%lu", subbuf_size());
	if (session_cmd(create) < 0) {
		session[0] = '\0';
		remove_trace();
		return -EIO;
	}
	if (session_cmd(channel) < 0 || session_cmd(event) < 0 || session_cmd(start) < 0)
		goto fail;

	/* Registration: liblttng-ust's constructor waits for the daemon's "done". */
	setenv("LTTNG_UST_REGISTER_TIMEOUT", "10000", 0);
	probes = dlopen(so, RTLD_NOW);
	if (!probes) {
		snprintf(pkb_peer_why, sizeof(pkb_peer_why), "dlopen: %s", dlerror());
		goto fail;
	}
	deadline = pkb_now_ns() + 10 * 1000000000ull;
	while (!lttng_ust_tracepoint_enabled(pkbench, msg)) {
		if (pkb_now_ns() > deadline) {
			snprintf(pkb_peer_why, sizeof(pkb_peer_why),
				 "pkbench:msg not enabled 10 s after loading the probes "
				 "(the process did not register with the session daemon)");
			goto fail;
		}
		pkb_sleep_ns(10 * 1000000ull);
	}
	return 0;
fail:
	destroy_session();
	/* The probes stay loaded: dlclose(3) of a provider is not safe. */
	return -EIO;
}

void pkb_lttng_log(long a, long b)
{
	lttng_ust_tracepoint(pkbench, msg, a, b);
}

/* Sum the "Discarded events: N" lines lttng list prints for the session's channels. */
static void read_discarded(void)
{
	char out[8192];
	const char *const list[] = { "list", session, NULL };
	const char *p;

	if (lttng_cmd(out, sizeof(out), list) != 0)
		return;
	for (p = out; (p = strstr(p, "Discarded events:")); ) {
		p += strlen("Discarded events:");
		discarded += strtoull(p, NULL, 10);
		discarded_known = 1;
	}
}

void pkb_lttng_close(void)
{
	const char *const stop[] = { "stop", session, NULL };

	if (!session[0])
		return;
	lttng_cmd(NULL, 0, stop);	/* waits until the consumer has the data */
	read_discarded();
	destroy_session();
}

int pkb_lttng_count(uint64_t calls, uint64_t *found, uint64_t *dropped)
{
	if (!discarded_known)
		return -1;
	*dropped = discarded;
	*found = calls >= discarded ? calls - discarded : 0;
	return 0;
}
