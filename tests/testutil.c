// SPDX-License-Identifier: MIT
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "printk/printk.h"

/* Which sanitizer this build has: gcc says so with macros, clang with __has_feature. */
#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_THREAD__) || __has_feature(thread_sanitizer)
#define TU_TSAN 1
#else
#define TU_TSAN 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define TU_ASAN 1
#else
#define TU_ASAN 0
#endif

int tu_sanitized_thread(void)
{
	return TU_TSAN;
}

int tu_sanitized_address(void)
{
	return TU_ASAN;
}

double tu_scale(void)
{
	const char *e = getenv("PK_TEST_SCALE");
	double f = e && *e ? atof(e) : 1.0;

	return f > 0 ? f : 1.0;
}

unsigned tu_scaled(unsigned n)
{
	double v = n * tu_scale();

	return v < 1 ? 1 : (unsigned)v;
}

double tu_seconds(double dflt)
{
	const char *e = getenv("PK_TEST_SECONDS");

	if (e && *e)
		return atof(e);
	dflt *= tu_scale();
	return TU_TSAN || TU_ASAN ? dflt / 2 : dflt;
}

int tu__skipped;

/*
 * Is case @name selected by the command line?  The cases some pattern
 * names (all of them if no pattern does), less those a '-' pattern names.
 */
static bool selected(const char *name, int argc, char **argv)
{
	bool include = false, in = false;
	int i;

	for (i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		include = true;
		if (!fnmatch(argv[i], name, 0))
			in = true;
	}
	if (!include)
		in = true;
	for (i = 1; i < argc; i++)
		if (argv[i][0] == '-' && !fnmatch(argv[i] + 1, name, 0))
			in = false;
	return in;
}

const char *tu_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int tu_run_group(const char *name, const struct CMUnitTest *tests, size_t n,
		 CMFixtureFunction setup, CMFixtureFunction teardown, int argc, char **argv)
{
	struct CMUnitTest *sel = calloc(n ? n : 1, sizeof(*sel));
	size_t i, k = 0;
	int failed;

	for (i = 0; i < n; i++)
		if (selected(tests[i].name, argc, argv))
			sel[k++] = tests[i];
	if (!k) {
		fprintf(stderr, "%s: the arguments select none of its %zu cases\n", name, n);
		free(sel);
		return 1;
	}
	tu__skipped = 0;
	failed = _cmocka_run_group_tests(name, sel, k, setup, teardown);
	free(sel);
	if (failed)
		return 1;
	if ((size_t)tu__skipped == k) {
		fprintf(stderr, "%s: every case skipped\n", name);
		return TU_SKIP_CODE;
	}
	return 0;
}

void tu_default_crash_signals(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS };
	struct sigaction dfl;
	size_t i;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &dfl, NULL);
}

pid_t tu_fork(void)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		/* Async-signal-safe calls only: the parent may have threads. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(126);	/* the parent is already gone */
		tu_default_crash_signals();
	}
	return pid;
}

void tu_backoff(unsigned *round)
{
	struct timespec ts = { 0, 0 };

	if (*round < 10) {
		sched_yield();
	} else {
		ts.tv_nsec = *round < 20 ? 10000 : *round < 30 ? 100000 : 1000000;
		nanosleep(&ts, NULL);
	}
	(*round)++;
}

pid_t tu_waitpid(pid_t pid, int *status, int timeout_ms, const char *what)
{
	uint64_t end = tu_now_ns() + (uint64_t)timeout_ms * 1000000ull;
#ifdef SYS_pidfd_open
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
#else
	int pfd = -1;
#endif
	unsigned round = 0;
	pid_t r;

	for (;;) {
		r = waitpid(pid, status, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (r == 0 && tu_now_ns() >= end) {
			kill(pid, SIGKILL);
			while (waitpid(pid, status, 0) < 0 && errno == EINTR)
				;
			if (pfd >= 0)
				close(pfd);
			fail_msg("%s: child %d still running after %d ms: killed", what, (int)pid,
				 timeout_ms);
		}
		if (pfd >= 0) {
			struct pollfd p = { pfd, POLLIN, 0 };
			uint64_t left = (end - tu_now_ns()) / 1000000 + 1;

			poll(&p, 1, left > 1000 ? 1000 : (int)left);
		} else {
			tu_backoff(&round);
		}
	}
	if (pfd >= 0)
		close(pfd);
	if (r != pid)
		fail_msg("%s: waitpid(%d): %s", what, (int)pid, strerror(errno));
	return r;
}

uint64_t tu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint32_t tu_sum(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint32_t h = 2166136261u;

	while (len--)
		h = (h ^ *s++) * 16777619u;
	return h;
}

size_t tu_make_text(char *buf, size_t size, unsigned w, uint64_t c, size_t pad)
{
	int n = snprintf(buf, size, "w=%u c=%llu pad=", w, (unsigned long long)c);
	size_t i;

	for (i = 0; i < pad && (size_t)n + 20 < size; i++)
		buf[n++] = (char)('a' + (w + c + i) % 26);
	n += snprintf(buf + n, size - (size_t)n, " sum=%08x", tu_sum(buf, (size_t)n));
	return (size_t)n;
}

int tu_check_text(const char *in, size_t len, unsigned *w, uint64_t *c)
{
	char text[2048];
	unsigned long long cc;
	unsigned ww, sum;
	const char *p;

	/*
	 * A copy of the line: sscanf() takes the length of its whole input,
	 * and @in may be a line of a capture tens of MB long.
	 */
	if (len < 14 || len >= sizeof(text))
		return -1;
	memcpy(text, in, len);
	text[len] = '\0';
	p = text + len - 13;
	if (memcmp(p, " sum=", 5) || sscanf(p + 5, "%8x", &sum) != 1)
		return -1;
	if (tu_sum(text, (size_t)(p - text)) != sum)
		return -1;
	if (sscanf(text, "w=%u c=%llu ", &ww, &cc) != 2)
		return -1;
	*w = ww;
	*c = cc;
	return 0;
}

char *tu_tmp_path(const char *tag)
{
	static unsigned n;
	const char *dir = getenv("TMPDIR");
	char *p;

	if (!dir || !*dir)
		dir = "/tmp";
	if (asprintf(&p, "%s/pktest-%s-%d-%u", dir, tag, (int)getpid(), n++) < 0)
		return NULL;
	unlink(p);
	return p;
}

char *tu_read_file(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
}

static long capture_write(void *ctx, const char *buf, size_t len)
{
	struct tu_capture *c = ctx;

	if (c->hook)
		c->hook(c);
	if (c->delay_us)
		usleep(c->delay_us);
	pthread_mutex_lock(&c->lock);
	if (c->len + len + 1 > c->cap) {
		c->cap = (c->len + len + 1) * 2;
		c->buf = realloc(c->buf, c->cap);
	}
	memcpy(c->buf + c->len, buf, len);
	c->len += len;
	c->buf[c->len] = '\0';
	if (c->writes == c->tcap) {
		c->tcap = c->tcap ? c->tcap * 2 : 1024;
		c->tids = realloc(c->tids, c->tcap * sizeof(*c->tids));
	}
	c->tids[c->writes++] = (uint32_t)syscall(SYS_gettid);
	pthread_mutex_unlock(&c->lock);
	return (long)len;
}

const struct pk_console_ops tu_capture_ops = {
	.name = "capture",
	.write = capture_write,
};

struct tu_capture *tu_capture_new(unsigned delay_us)
{
	struct tu_capture *c = calloc(1, sizeof(*c));

	pthread_mutex_init(&c->lock, NULL);
	c->delay_us = delay_us;
	return c;
}

char *tu_capture_text(struct tu_capture *c)
{
	char *s;

	pthread_mutex_lock(&c->lock);
	s = strdup(c->buf ? c->buf : "");
	pthread_mutex_unlock(&c->lock);
	return s;
}

void tu_capture_clear(struct tu_capture *c)
{
	assert_int_equal(pk_flush(10000), 0);
	pthread_mutex_lock(&c->lock);
	c->len = 0;
	if (c->buf)
		c->buf[0] = '\0';
	pthread_mutex_unlock(&c->lock);
}

int tu_run(const char *const argv[], char *const envp[], char **out, char **err)
{
	char *opath = tu_tmp_path("out"), *epath = tu_tmp_path("err"), what[200];
	int status, fd, i, n = 0;
	pid_t pid;

	for (i = 0; argv[i] && n < (int)sizeof(what) - 1; i++)
		n += snprintf(what + n, sizeof(what) - (size_t)n, "%s%s", i ? " " : "", argv[i]);
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fd = open(opath, O_CREAT | O_WRONLY | O_TRUNC, 0600);
		dup2(fd, 1);
		fd = open(epath, O_CREAT | O_WRONLY | O_TRUNC, 0600);
		dup2(fd, 2);
		if (envp)
			execve(argv[0], (char *const *)argv, envp);
		else
			execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	tu_waitpid(pid, &status, 60000, what);
	if (!WIFEXITED(status))
		fail_msg("%s: ended by signal %d", what, WIFSIGNALED(status) ? WTERMSIG(status) : -1);
	*out = tu_read_file(opath, NULL);
	*err = tu_read_file(epath, NULL);
	assert_non_null(*out);
	assert_non_null(*err);
	unlink(opath);
	unlink(epath);
	free(opath);
	free(epath);
	return WEXITSTATUS(status);
}

void tu_capture_free(struct tu_capture *c)
{
	free(c->buf);
	free(c->tids);
	free(c);
}

bool tu_tagged_in_order(const char *text, const char *tag, unsigned n)
{
	char want[64];
	const char *p = text, *q;
	unsigned i;

	for (i = 0; i < n; i++) {
		snprintf(want, sizeof(want), "%s %u\n", tag, i);
		q = strstr(p, want);
		if (!q)
			return false;
		p = q + strlen(want);
		if (strstr(p, want))
			return false;	/* twice */
	}
	return true;
}

size_t tu_count(const char *s, const char *needle)
{
	size_t n = 0;
	const char *p = s;

	while ((p = strstr(p, needle))) {
		n++;
		p += strlen(needle);
	}
	return n;
}

/* The next seq of @con and of the store; 0 if either cannot be read. */
static int seqs(struct pk_console *con, uint64_t *con_next, uint64_t *store_next)
{
	struct pk_console_stats st;
	struct pk_stats ps;

	if (pk_console_stats_get(con, &st) < 0 || pk_stats_get(&ps) < 0)
		return -1;
	*con_next = st.next_seq;
	*store_next = ps.next_seq;
	return 0;
}

int tu_printing_or_caught_up_to(struct pk_console *const *cons, int n, uint64_t target,
				int timeout_ms)
{
	uint64_t con_next, store_next, last, moved_ns;
	unsigned round;
	int i;

	for (i = 0; i < n; i++) {
		if (seqs(cons[i], &con_next, &store_next) < 0)
			return 0;
		if (target)
			store_next = target;
		last = con_next;
		moved_ns = tu_now_ns();
		round = 0;
		while (con_next < store_next) {
			if (con_next != last) {
				last = con_next;
				moved_ns = tu_now_ns();
				round = 0;
			} else if (tu_now_ns() - moved_ns > (uint64_t)timeout_ms * 1000000ull) {
				print_message("console %d stranded: it stands at seq %llu, short of "
					      "%llu, and nothing printed for %d ms\n", i,
					      (unsigned long long)con_next,
					      (unsigned long long)store_next, timeout_ms);
				return 0;
			}
			tu_backoff(&round);
			if (seqs(cons[i], &con_next, &store_next) < 0)
				return 0;
			if (target)
				store_next = target;
		}
	}
	return 1;
}

int tu_printing_or_caught_up(struct pk_console *const *cons, int n, int timeout_ms)
{
	return tu_printing_or_caught_up_to(cons, n, 0, timeout_ms);
}

int tu_parse_lines(const char *text, unsigned writers, struct tu_lines *r)
{
	uint64_t *next = calloc(writers ? writers : 1, sizeof(*next));
	const char *p = text, *nl, *t;
	char head[96];
	unsigned long long n;
	unsigned w;
	uint64_t c;

	memset(r, 0, sizeof(*r));
	if (!next)
		return -1;
	for (; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		/*
		 * sscanf() takes the length of its whole input first: on the
		 * line alone, or parsing a big capture is quadratic (minutes
		 * for the tens of MB a storm prints).
		 */
		if (nl - p < (ptrdiff_t)sizeof(head))
			memcpy(head, p, (size_t)(nl - p));
		head[nl - p < (ptrdiff_t)sizeof(head) ? nl - p : 0] = '\0';
		if (sscanf(head, "** %llu printk messages dropped **", &n) == 1) {
			r->notices++;
			r->dropped += n;
		} else if ((t = strstr(p, "w=")) && t < nl) {
			if (tu_check_text(t, (size_t)(nl - t), &w, &c) < 0 || w >= writers) {
				if (r->corrupt++ < 3)
					print_message("corrupt line: %.*s\n", (int)(nl - p), p);
			} else {
				r->lines++;
				if (c < next[w]) {
					if (r->dups + r->disorder < 3)
						print_message("writer %u: counter %llu after %llu\n", w,
							      (unsigned long long)c,
							      (unsigned long long)next[w] - 1);
					if (c + 1 == next[w])	/* the line before, again */
						r->dups++;
					else
						r->disorder++;
				} else {
					next[w] = c + 1;
				}
			}
		} else {
			r->other++;
		}
		if (!*nl)
			break;
	}
	free(next);
	return (r->corrupt || r->dups || r->disorder) ? -1 : 0;
}

char *tu_join(const char *dir, const char *name)
{
	char *p;

	TU_CHECK(asprintf(&p, "%s/%s", dir, name) >= 0);
	return p;
}

char *tu_make_dir(const char *tag, mode_t mode)
{
	char *d = tu_tmp_path(tag);

	TU_CHECK(d != NULL);
	TU_CHECK(mkdir(d, 0700) == 0);
	TU_CHECK(chmod(d, mode) == 0);	/* no umask */
	return d;
}

void tu_grab_start(struct tu_grab *g)
{
	int fd;

	fflush(stderr);
	g->path = tu_tmp_path("stderr");
	TU_CHECK(g->path != NULL);
	fd = open(g->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	TU_CHECK(fd >= 0);
	g->saved = dup(STDERR_FILENO);
	TU_CHECK(g->saved >= 0);
	TU_CHECK(dup2(fd, STDERR_FILENO) == STDERR_FILENO);
	close(fd);
}

char *tu_grab_end(struct tu_grab *g)
{
	char *s;

	fflush(stderr);
	dup2(g->saved, STDERR_FILENO);
	close(g->saved);
	s = tu_read_file(g->path, NULL);
	TU_CHECK(s != NULL);
	unlink(g->path);
	free(g->path);
	return s;
}
