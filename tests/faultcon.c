// SPDX-License-Identifier: MIT
/*
 * faultcon - a fault-injecting console, an output checker and bounded
 * children, for test_faults and torture.  See faultcon.h.
 *
 * The fault console tells the records it is offered apart by their text:
 * the library offers a record, then (after a short write) the rest of it,
 * or (after -EAGAIN, -EINTR or 0) the same bytes again; anything else is
 * the next record, and a record left unfinished then is one the library
 * gave up on.  So the console knows, without asking the library, how many
 * records it lost and how many bytes it took: the counters the library
 * keeps must say the same.
 */
#include "faultcon.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

static const char *const fault_names[FC_NR] = {
	[FC_NONE] = "none",
	[FC_EAGAIN] = "EAGAIN",
	[FC_EINTR] = "EINTR",
	[FC_ZERO] = "zero",
	[FC_SHORT] = "short",
	[FC_BIG] = "larger-than-asked",
	[FC_SLOW] = "slow",
	[FC_BLOCK] = "block",
	[FC_EPIPE] = "EPIPE",
	[FC_ENOSPC] = "ENOSPC",
	[FC_ENOSPC_PARTIAL] = "ENOSPC-partial",
	[FC_EAGAIN_ALWAYS] = "EAGAIN-always",
	[FC_ZERO_ALWAYS] = "zero-always",
};

const char *fc_fault_name(enum fc_fault f)
{
	return f < FC_NR ? fault_names[f] : "?";
}

bool fc_fault_permanent(enum fc_fault f)
{
	return f >= FC_EPIPE && f < FC_NR;
}

/* ---- the fault console ---- */

static uint32_t gettid_(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* Is this write the rest (or a retry) of the record being written? */
static bool continues(const struct fc_console *fc, const char *buf, size_t len)
{
	return fc->cur_valid && fc->cur_taken < fc->cur_len && len == fc->cur_len - fc->cur_taken &&
	       !memcmp(buf, fc->cur + fc->cur_taken, len);
}

static void start_record(struct fc_console *fc, const char *buf, size_t len)
{
	size_t l = len && buf[len - 1] == '\n' ? len - 1 : len;
	unsigned w;
	uint64_t c;

	if (fc->cur_valid)
		fc->lost++;	/* the library gave the last one up */
	fc->cur = realloc(fc->cur, len + 1);
	TU_CHECK(fc->cur);
	memcpy(fc->cur, buf, len);
	fc->cur_len = len;
	fc->cur_taken = 0;
	fc->cur_calls = 0;
	fc->cur_valid = true;
	fc->cur_fault = FC_NONE;
	fc->records++;
	if (fc_parse_line(buf, l, &w, &c) == 1) {
		fc->test_records++;
		if (fc->plan)
			fc->cur_fault = fc->plan(fc, w, c);
	}
	fc->injected[fc->cur_fault]++;
}

static void take(struct fc_console *fc, size_t n)
{
	fc->bytes += n;
	fc->cur_taken += n;
	if (fc->cur_taken < fc->cur_len)
		return;
	if (fc->len + fc->cur_len + 1 > fc->cap) {
		fc->cap = (fc->len + fc->cur_len + 1) * 2;
		fc->text = realloc(fc->text, fc->cap);
		TU_CHECK(fc->text);
	}
	memcpy(fc->text + fc->len, fc->cur, fc->cur_len);
	fc->len += fc->cur_len;
	fc->text[fc->len] = '\0';
	fc->cur_valid = false;
}

/* A permanent error: the record is over, lost to this console. */
static long give_up(struct fc_console *fc, long err)
{
	fc->lost++;
	fc->cur_valid = false;
	return err;
}

static long fc_write(void *ctx, const char *buf, size_t len)
{
	struct fc_console *fc = ctx;
	struct timespec ts;
	size_t n = len;
	long ret;

	pthread_mutex_lock(&fc->lock);
	fc->calls++;
	if (!continues(fc, buf, len))
		start_record(fc, buf, len);
	fc->cur_calls++;
	switch (fc->cur_fault) {
	case FC_EAGAIN:
	case FC_EINTR:
	case FC_ZERO:
		if (fc->cur_calls == 1) {
			ret = fc->cur_fault == FC_EAGAIN ? -EAGAIN : fc->cur_fault == FC_EINTR ? -EINTR : 0;
			goto out;
		}
		break;
	case FC_SHORT:
		n = len < FC_SHORT_BYTES ? len : FC_SHORT_BYTES;
		break;
	case FC_SLOW:
		if (fc->cur_calls == 1) {
			pthread_mutex_unlock(&fc->lock);
			ts.tv_sec = fc->slow_ms / 1000;
			ts.tv_nsec = (long)(fc->slow_ms % 1000) * 1000000;
			while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
				;
			pthread_mutex_lock(&fc->lock);
		}
		break;
	case FC_BLOCK:
		if (fc->cur_calls == 1 && !fc->released) {
			atomic_store(&fc->blocked_tid, gettid_());
			atomic_fetch_add(&fc->blocks, 1);
			while (!fc->released)
				pthread_cond_wait(&fc->cond, &fc->lock);
			atomic_store(&fc->blocked_tid, 0);
		}
		break;
	case FC_EPIPE:
		ret = give_up(fc, -EPIPE);
		goto out;
	case FC_ENOSPC:
		ret = give_up(fc, -ENOSPC);
		goto out;
	case FC_ENOSPC_PARTIAL:
		if (fc->cur_calls == 1 && len > 1) {
			n = len / 2;
			break;
		}
		ret = give_up(fc, -ENOSPC);
		goto out;
	case FC_EAGAIN_ALWAYS:
		ret = -EAGAIN;
		goto out;
	case FC_ZERO_ALWAYS:
		ret = 0;
		goto out;
	default:
		break;
	}
	take(fc, n);
	ret = fc->cur_fault == FC_BIG ? (long)n + 64 : (long)n;
out:
	pthread_mutex_unlock(&fc->lock);
	return ret;
}

const struct pk_console_ops fc_ops = {
	.name = "faulty",
	.write = fc_write,
};

struct fc_console *fc_new(fc_plan_fn plan, unsigned param)
{
	struct fc_console *fc = calloc(1, sizeof(*fc));

	TU_CHECK(fc);
	pthread_mutex_init(&fc->lock, NULL);
	pthread_cond_init(&fc->cond, NULL);
	fc->plan = plan;
	fc->param = param;
	fc->slow_ms = 50;
	return fc;
}

void fc_release(struct fc_console *fc)
{
	pthread_mutex_lock(&fc->lock);
	fc->released = true;
	pthread_cond_broadcast(&fc->cond);
	pthread_mutex_unlock(&fc->lock);
}

void fc_settle(struct fc_console *fc)
{
	pthread_mutex_lock(&fc->lock);
	if (fc->cur_valid)
		fc->lost++;
	fc->cur_valid = false;
	pthread_mutex_unlock(&fc->lock);
}

char *fc_text(struct fc_console *fc)
{
	char *s;

	pthread_mutex_lock(&fc->lock);
	s = strdup(fc->text ? fc->text : "");
	pthread_mutex_unlock(&fc->lock);
	TU_CHECK(s);
	return s;
}

void fc_free(struct fc_console *fc)
{
	if (!fc)
		return;
	free(fc->cur);
	free(fc->text);
	pthread_cond_destroy(&fc->cond);
	pthread_mutex_destroy(&fc->lock);
	free(fc);
}

/* ---- the output checker ---- */

int fc_parse_line(const char *line, size_t len, unsigned *w, uint64_t *c)
{
	const char *p;

	/* "[    1.234567] " and "[T1234] " prefixes */
	while (len && line[0] == '[') {
		p = memchr(line, ']', len);
		if (!p || (size_t)(p - line) + 2 > len || p[1] != ' ')
			break;
		len -= (size_t)(p - line) + 2;
		line = p + 2;
	}
	if (len >= 2 && line[0] == 'w' && line[1] == '=')
		return tu_check_text(line, len, w, c) == 0 ? 1 : -1;
	if (len >= 5 && memmem(line, len, " sum=", 5))
		return -1;	/* the end of a record whose start is damaged */
	return 0;
}

void tally_init(struct tally *t, unsigned nw, uint64_t nc)
{
	memset(t, 0, sizeof(*t));
	t->nw = nw;
	t->nc = nc;
	t->seen = calloc((size_t)nw * nc + 1, 1);
	t->last = calloc(nw + 1, sizeof(*t->last));
	TU_CHECK(t->seen && t->last);
}

void tally_free(struct tally *t)
{
	free(t->seen);
	free(t->last);
	t->seen = NULL;
	t->last = NULL;
}

static void note_bad(struct tally *t, const char *what, const char *line, size_t len)
{
	if (t->bad[0])
		return;
	snprintf(t->bad, sizeof(t->bad), "%s: \"%.*s\"", what, (int)(len > 120 ? 120 : len), line);
}

static void tally_line(struct tally *t, const char *line, size_t len)
{
	unsigned long long n;
	unsigned w;
	uint64_t c;
	uint8_t *s;
	int r;

	r = fc_parse_line(line, len, &w, &c);
	if (r < 0) {
		t->corrupt++;
		note_bad(t, "corrupt", line, len);
		return;
	}
	if (r == 0) {
		const char *p = memmem(line, len, "** ", 3);

		if (p && sscanf(p, "** %llu printk messages dropped **", &n) == 1) {
			t->notices++;
			t->dropped += n;
		} else {
			t->other++;
		}
		return;
	}
	if (w >= t->nw || c >= t->nc) {
		t->out_of_range++;
		note_bad(t, "unknown writer or counter", line, len);
		return;
	}
	t->records++;
	s = &t->seen[(size_t)w * t->nc + c];
	if (*s) {
		t->dups++;
		note_bad(t, "duplicate", line, len);
	} else if (c + 1 < t->last[w]) {
		t->disorder++;
		note_bad(t, "out of order", line, len);
	}
	if (*s < 255)
		(*s)++;
	if (c + 1 > t->last[w])
		t->last[w] = c + 1;
}

void tally_text(struct tally *t, const char *text)
{
	const char *p = text, *nl;

	while (*p) {
		nl = strchr(p, '\n');
		if (!nl) {
			tally_line(t, p, strlen(p));
			break;
		}
		tally_line(t, p, (size_t)(nl - p));
		p = nl + 1;
	}
}

unsigned tally_seen(const struct tally *t, unsigned w, uint64_t c)
{
	if (w >= t->nw || c >= t->nc)
		return 0;
	return t->seen[(size_t)w * t->nc + c];
}

bool tally_damaged(const struct tally *t)
{
	return t->dups || t->disorder || t->corrupt || t->out_of_range;
}

void tally_describe(const struct tally *t, char *buf, size_t size)
{
	snprintf(buf, size,
		 "%llu records, %llu duplicated, %llu out of order, %llu corrupt, %llu unknown, "
		 "%llu drop notices (%llu dropped), %llu other lines%s%s",
		 (unsigned long long)t->records, (unsigned long long)t->dups,
		 (unsigned long long)t->disorder, (unsigned long long)t->corrupt,
		 (unsigned long long)t->out_of_range, (unsigned long long)t->notices,
		 (unsigned long long)t->dropped, (unsigned long long)t->other, t->bad[0] ? "; first " : "",
		 t->bad);
}

/* ---- children ---- */

pid_t fc_fork(void)
{
	pid_t parent = getpid(), pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);	/* the parent died before prctl() */
		tu_default_crash_signals();
	}
	return pid;
}

void (*fc_on_hang)(pid_t pid);

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int fc_wait(pid_t pid, int timeout_ms, int *status)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	uint64_t deadline = tu_now_ns() + (uint64_t)timeout_ms * 1000000ull, now;
	struct timespec nap = { 0, 2000000 };
	pid_t r;

	for (;;) {
		r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			if (fd >= 0)
				close(fd);
			*status = 0;
			return -errno;
		}
		now = tu_now_ns();
		if (now >= deadline) {
			if (fc_on_hang)
				fc_on_hang(pid);
			kill(pid, SIGKILL);
			while (waitpid(pid, status, 0) < 0 && errno == EINTR)
				;
			if (fd >= 0)
				close(fd);
			return -ETIMEDOUT;
		}
		if (fd >= 0) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			uint64_t left_ms = (deadline - now) / 1000000ull + 1;

			poll(&pfd, 1, left_ms > 1000 ? 1000 : (int)left_ms);
		} else {
			nanosleep(&nap, NULL);	/* no pidfd: look again soon */
		}
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

void fc_status_str(int status, char *buf, size_t size)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, size, "status 0x%x", status);
}

void *fc_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	TU_CHECK(p != MAP_FAILED);
	return p;
}

void fc_unshare(void *p, size_t size)
{
	munmap(p, size);
}

struct fc_report *fc_report_new(void)
{
	return fc_shared(sizeof(struct fc_report));
}

void fc_report_reset(struct fc_report *r)
{
	atomic_store(&r->failed, 0);
	atomic_store(&r->len, 0);
	memset(r->msg, 0, sizeof(r->msg));
}

void fc_report_free(struct fc_report *r)
{
	fc_unshare(r, sizeof(*r));
}

void fc_failf(struct fc_report *r, const char *fmt, ...)
{
	char line[1024];
	size_t n, at;
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	n = k < 0 ? 0 : (size_t)k < sizeof(line) - 1 ? (size_t)k : sizeof(line) - 2;
	line[n++] = '\n';
	atomic_fetch_add(&r->failed, 1);
	at = atomic_fetch_add(&r->len, n);
	/* The buffer was zeroed: what fits stays NUL-terminated. */
	if (at + n < sizeof(r->msg))
		memcpy(r->msg + at, line, n);
}
