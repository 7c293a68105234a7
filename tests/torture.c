// SPDX-License-Identifier: MIT
/*
 * torture - seeded, reproducible torture of libprintk's promises:
 *
 *   a crash gets everything out; pk_printk() is safe from any context; no
 *   caller is stuck printing.
 *
 * Each scenario runs many times per flush mode, every run in a forked
 * child that cannot outlive the program and is killed if it hangs.  The
 * program prints, per scenario and mode, "<scenario> <mode>: N runs, F
 * failures", a line with the seed of each failing run, and at the end
 * "torture: N runs, F failures, seed S"; it exits 1 if anything failed.
 * SIGINT or SIGTERM ends the program after the run in progress: the counts
 * so far are printed as above, with "stopped after R of N runs" on the
 * cut scenario, and it exits 1 with failures, 3 without.
 *
 *   torture [--seed S] [--ci] [--runs N] [--scale F] [--scenario A,B]
 *           [--mode M,N] [--one SCENARIO:MODE:SEED] [--list] [--verbose]
 *
 * --ci (or PK_TORTURE_CI=1) runs the bounded version CI can afford.
 * TT_KEEP=1 keeps the output files of failing runs; TT_GDB=1 prints the
 * stacks of a child that hung before it is killed.
 */
#include "torture.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

struct fc_report *tt_rep;

static const struct scenario *const scenarios[] = {
	&tt_crash, &tt_sigabrt, &tt_panic_parked, &tt_sigkill_store,
	&tt_signal_storm, &tt_fork_storm, &tt_filtered_flood, &tt_cancel_storm,
	&tt_error_flood,
};
#define NSCEN (sizeof(scenarios) / sizeof(scenarios[0]))

static const enum pk_mode all_modes[] = { PK_MODE_HANDOFF, PK_MODE_LEGACY, PK_MODE_THREAD };

/* ---- helpers for the scenarios ---- */

static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t rng_next(struct rng *g)
{
	g->s += 0x9e3779b97f4a7c15ull;
	return splitmix(g->s);
}

uint64_t rng_below(struct rng *g, uint64_t n)
{
	return n ? rng_next(g) % n : 0;
}

const char *tt_mode_name(enum pk_mode m)
{
	return m == PK_MODE_HANDOFF ? "handoff" : m == PK_MODE_LEGACY ? "legacy" : "thread";
}

static bool parse_mode(const char *s, enum pk_mode *m)
{
	size_t i;

	for (i = 0; i < 3; i++) {
		if (!strcmp(s, tt_mode_name(all_modes[i]))) {
			*m = all_modes[i];
			return true;
		}
	}
	return false;
}

static void vappend(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t len = strlen(buf);

	if (len + 3 < size && len)
		len += (size_t)snprintf(buf + len, size - len, "; ");
	if (len < size)
		vsnprintf(buf + len, size - len, fmt, ap);
}

bool tt_fail(struct trun *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vappend(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	return false;
}

void tt_note(struct trun *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->note, sizeof(r->note), fmt, ap);
	va_end(ap);
}

void tt_child_init(enum pk_mode mode, unsigned flags, size_t size, const char *path)
{
	struct rlimit no_core = { 0, 0 };
	struct pk_config cfg;

	setrlimit(RLIMIT_CORE, &no_core);
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | (flags & TT_ATEXIT ? 0 : PK_CFG_NO_ATEXIT) | (flags & ~TT_ATEXIT);
	cfg.mode = mode;
	cfg.buffer_size = size;
	cfg.buffer_path = path;
	cfg.console_loglevel = 7;	/* debug is filtered */
	if (pk_init(&cfg))
		_exit(90);
}

bool tt_wait(struct trun *r, pid_t pid, int timeout_ms, int *status)
{
	if (fc_wait(pid, timeout_ms, status) == -ETIMEDOUT)
		return tt_fail(r, "hung: killed after %d ms", timeout_ms);
	return true;
}

bool tt_died_of(struct trun *r, int status, int sig)
{
	char st[64];

	if (WIFSIGNALED(status) && WTERMSIG(status) == sig)
		return true;
	fc_status_str(status, st, sizeof(st));
	return tt_fail(r, "child ended with %s, not signal %d", st, sig);
}

bool tt_exited_clean(struct trun *r, int status)
{
	char st[64], msg[1500];
	bool ok = true;
	size_t i;

	if (atomic_load(&tt_rep->failed)) {
		memcpy(msg, tt_rep->msg, sizeof(msg) - 1);
		msg[sizeof(msg) - 1] = '\0';
		for (i = 0; msg[i]; i++)
			if (msg[i] == '\n')
				msg[i] = msg[i + 1] ? '|' : '\0';
		ok = tt_fail(r, "%s", msg);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fc_status_str(status, st, sizeof(st));
		ok = tt_fail(r, "child ended with %s", st);
	}
	return ok;
}

struct acc *acc_new(unsigned nw, uint64_t nc)
{
	struct acc *a = fc_shared(sizeof(*a) + (size_t)nw * nc);

	a->nw = nw;
	a->nc = nc;
	return a;
}

void acc_free(struct acc *a)
{
	fc_unshare(a, sizeof(*a) + (size_t)a->nw * a->nc);
}

uint64_t acc_missing(const struct acc *a, const struct tally *t, unsigned w0, unsigned w1,
		     char *first, size_t size)
{
	uint64_t n = 0, c;
	unsigned w;

	for (w = w0; w < w1 && w < a->nw; w++) {
		for (c = 0; c < a->nc; c++) {
			if (!acc_get(a, w, c) || tally_seen(t, w, c))
				continue;
			if (!n && first)
				snprintf(first, size, "w=%u c=%llu", w, (unsigned long long)c);
			n++;
		}
	}
	return n;
}

bool tt_check_stored(struct trun *r, const struct acc *a, const struct tally *t, const char *what,
		     unsigned dups_ok)
{
	char desc[512], first[64] = "";
	uint64_t missing = acc_missing(a, t, 0, a->nw, first, sizeof(first));
	bool ok = true;

	tally_describe(t, desc, sizeof(desc));
	if (t->disorder || t->corrupt || t->out_of_range || t->dups > dups_ok)
		ok = tt_fail(r, "%s: damaged output (%u duplicates allowed): %s", what, dups_ok, desc);
	if (missing > t->dropped)
		ok = tt_fail(r,
			     "%s: %llu stored records missing (first %s), only %llu counted as "
			     "dropped: %s",
			     what, (unsigned long long)missing, first, (unsigned long long)t->dropped,
			     desc);
	return ok;
}

size_t tt_text(char *buf, size_t size, unsigned w, uint64_t c, struct rng *g)
{
	size_t n = tu_make_text(buf, size - 1, w, c, (size_t)rng_below(g, 60));

	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}

size_t tt_text_safe(char *buf, size_t size, unsigned w, uint64_t c, unsigned pad)
{
	static const char hex[] = "0123456789abcdef";
	char digits[24];
	size_t n = 0, k;
	uint32_t sum;
	int i;

	if (size < 64 + (size_t)pad)
		return 0;
	buf[n++] = 'w';
	buf[n++] = '=';
	for (k = 0, i = 0; !k || w; w /= 10, k++)
		digits[i++] = (char)('0' + w % 10);
	while (i)
		buf[n++] = digits[--i];
	buf[n++] = ' ';
	buf[n++] = 'c';
	buf[n++] = '=';
	for (k = 0, i = 0; !k || c; c /= 10, k++)
		digits[i++] = (char)('0' + c % 10);
	while (i)
		buf[n++] = digits[--i];
	memcpy(buf + n, " pad=", 5);
	n += 5;
	for (k = 0; k < pad; k++)
		buf[n++] = (char)('a' + (k * 7 + pad) % 26);
	sum = tu_sum(buf, n);
	memcpy(buf + n, " sum=", 5);
	n += 5;
	for (i = 7; i >= 0; i--)
		buf[n++] = hex[(sum >> (i * 4)) & 15];
	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}

void tt_watch_init(struct tt_watch *w, const struct acc *a, tt_text_fn get, void *arg)
{
	tally_init(&w->t, a->nw, a->nc);
	w->off = 0;
	w->get = get;
	w->arg = arg;
}

void tt_watch_free(struct tt_watch *w)
{
	tally_free(&w->t);
}

/* Tally the complete lines added since the last look.  Return: the output's length. */
static size_t watch_update(struct tt_watch *w)
{
	char *text = w->get(w->arg), *end;
	size_t len = strlen(text);

	if (len > w->off) {
		end = memrchr(text + w->off, '\n', len - w->off);
		if (end) {
			end[1] = '\0';
			tally_text(&w->t, text + w->off);
			w->off = (size_t)(end + 1 - text);
		}
	}
	free(text);
	return len;
}

bool tt_child_printed(struct tt_watch *w, const struct acc *a, unsigned w0, unsigned w1,
		      const char *what, int stall_ms, int total_ms)
{
	double t0 = tt_ms(), last_t = t0;
	uint64_t missing, pause_us = 100;
	size_t len, last_len = 0;
	char first[64], desc[512];

	for (;;) {
		len = watch_update(w);
		first[0] = '\0';
		missing = acc_missing(a, &w->t, w0, w1, first, sizeof(first));
		if (missing <= w->t.dropped)
			return true;
		if (len != last_len) {
			last_len = len;
			last_t = tt_ms();
		}
		if (tt_ms() - last_t > stall_ms || tt_ms() - t0 > total_ms) {
			tally_describe(&w->t, desc, sizeof(desc));
			fc_failf(tt_rep,
				 "%s: stranded: %llu stored records unprinted (first %s) and nothing "
				 "printed for %.0f ms, before any pk_flush: %s",
				 what, (unsigned long long)missing, first, tt_ms() - last_t, desc);
			return false;
		}
		tt_usleep(pause_us);
		if (pause_us < 10000)
			pause_us *= 2;
	}
}

static long sink_write(void *ctx, const char *buf, size_t len)
{
	struct tt_sink *s = ctx;
	size_t at = atomic_load_explicit(&s->len, memory_order_relaxed);

	if (len > s->cap - at)
		return -ENOSPC;
	memcpy(s->buf + at, buf, len);
	/* Publishes the bytes to tt_sink_text()'s acquire load. */
	atomic_store_explicit(&s->len, at + len, memory_order_release);
	return (long)len;
}

const struct pk_console_ops tt_sink_ops = {
	.name = "sink",
	.write = sink_write,
	.write_atomic = sink_write,
};

struct tt_sink *tt_sink_new(size_t cap)
{
	struct tt_sink *s = calloc(1, sizeof(*s));
	void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);

	TU_CHECK(s && p != MAP_FAILED);
	s->buf = p;
	s->cap = cap;
	return s;
}

char *tt_sink_text(void *sink)
{
	struct tt_sink *s = sink;
	size_t len = atomic_load_explicit(&s->len, memory_order_acquire);
	char *t = malloc(len + 1);

	TU_CHECK(t);
	memcpy(t, s->buf, len);
	t[len] = '\0';
	return t;
}

void tt_discard(const char *path, bool ok)
{
	if (!ok && getenv("TT_KEEP")) {
		printf("     kept %s\n", path);
		return;
	}
	unlink(path);
}

double tt_ms(void)
{
	static uint64_t t0;

	if (!t0)
		t0 = tu_now_ns();
	return (double)(tu_now_ns() - t0) / 1e6;
}

void tt_usleep(uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void tt_crash_now(void)
{
	volatile int *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	*p = 1;
}

/* ---- the driver ---- */

/* TT_GDB=1: print every thread's stack of a child that hung (gdb must be installed). */
static void dump_stacks(pid_t pid)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd),
		 "gdb -p %d -batch -ex 'thread apply all bt' 2>/dev/null | grep -E '^(#|Thread)' >&2",
		 (int)pid);
	fprintf(stderr, "torture: stacks of hung child %d:\n", (int)pid);
	if (system(cmd) != 0)
		fprintf(stderr, "torture: (gdb failed)\n");
}

struct opts {
	uint64_t seed;
	bool ci, verbose;
	long runs;		/* < 0: the scenario's own count */
	double scale;
	unsigned scen_mask;	/* bit per scenario */
	unsigned mode_mask;	/* bit per enum pk_mode */
	const char *one;
};

static uint64_t run_seed(uint64_t master, size_t scen, enum pk_mode mode, unsigned i)
{
	return splitmix(master ^ splitmix(scen * 0x1000193ull + (uint64_t)mode * 0x100000001b3ull) ^
			splitmix((uint64_t)i + 1));
}

static void init_run(struct trun *r, enum pk_mode mode, uint64_t seed, const struct opts *o)
{
	memset(r, 0, sizeof(*r));
	r->mode = mode;
	r->seed = seed;
	r->rng.s = seed;
	r->ci = o->ci;
	r->verbose = o->verbose;
	fc_report_reset(tt_rep);
}

static void report_failure(const struct scenario *sc, const struct trun *r, unsigned i, bool print)
{
	if (!print)
		return;
	printf("FAIL %s %s run %u seed 0x%016" PRIx64 ": %s%s%s\n"
	       "     reproduce: torture --one %s:%s:0x%016" PRIx64 "%s\n",
	       sc->name, tt_mode_name(r->mode), i, r->seed, r->note, r->note[0] ? ": " : "", r->why,
	       sc->name, tt_mode_name(r->mode), r->seed, r->ci ? " --ci" : "");
	fflush(stdout);
}

static int run_one(const char *spec, const struct opts *o)
{
	char name[64], mode_s[16];
	unsigned long long seed;
	enum pk_mode mode;
	struct trun r;
	int off = 0;
	size_t i;

	if (sscanf(spec, "%63[^:]:%15[^:]:%n", name, mode_s, &off) != 2 || !off ||
	    !parse_mode(mode_s, &mode)) {
		fprintf(stderr, "torture: --one SCENARIO:MODE:SEED, not \"%s\"\n", spec);
		return 2;
	}
	seed = strtoull(spec + off, NULL, 0);
	for (i = 0; i < NSCEN; i++) {
		if (strcmp(scenarios[i]->name, name))
			continue;
		init_run(&r, mode, (uint64_t)seed, o);
		if (scenarios[i]->run(&r)) {
			printf("%s %s seed 0x%016llx: passed (%s)\n", name, mode_s, seed, r.note);
			return 0;
		}
		report_failure(scenarios[i], &r, 0, true);
		return 1;
	}
	fprintf(stderr, "torture: no scenario \"%s\" (--list)\n", name);
	return 2;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: torture [--seed S] [--ci] [--runs N] [--scale F] [--scenario A,B]\n"
		"               [--mode handoff,legacy,thread] [--one SCENARIO:MODE:SEED]\n"
		"               [--list] [--verbose]\n");
}

static bool parse_list(const char *arg, bool scen, unsigned *mask)
{
	char buf[256], *tok, *save = NULL;
	enum pk_mode m;
	size_t i;

	snprintf(buf, sizeof(buf), "%s", arg);
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!scen) {
			if (!parse_mode(tok, &m))
				return false;
			*mask |= 1u << m;
			continue;
		}
		for (i = 0; i < NSCEN; i++)
			if (!strcmp(scenarios[i]->name, tok))
				break;
		if (i == NSCEN)
			return false;
		*mask |= 1u << i;
	}
	return *mask != 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	const char *e = getenv("PK_TORTURE_CI");
	int i;

	memset(o, 0, sizeof(*o));
	o->seed = splitmix((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ tu_now_ns());
	o->seed &= 0xffffffffull;	/* short enough to type */
	o->runs = -1;
	o->scale = 1;
	o->scen_mask = (1u << NSCEN) - 1;
	o->mode_mask = 7;
	o->ci = e && *e && strcmp(e, "0");
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--ci")) {
			o->ci = true;
		} else if (!strcmp(a, "--full")) {
			o->ci = false;
		} else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
			o->verbose = true;
		} else if (!strcmp(a, "--list")) {
			size_t k;

			for (k = 0; k < NSCEN; k++)
				printf("%-16s %5u / %4u runs per mode (full / --ci): %s\n",
				       scenarios[k]->name, scenarios[k]->full_runs, scenarios[k]->ci_runs,
				       scenarios[k]->what);
			exit(0);
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		} else if (v && !strcmp(a, "--seed")) {
			o->seed = strtoull(v, NULL, 0);
			i++;
		} else if (v && !strcmp(a, "--runs")) {
			o->runs = atol(v);
			i++;
		} else if (v && !strcmp(a, "--scale")) {
			o->scale = atof(v);
			i++;
		} else if (v && !strcmp(a, "--scenario")) {
			if (!parse_list(v, true, &o->scen_mask)) {
				fprintf(stderr, "torture: unknown scenario in \"%s\" (--list)\n", v);
				return 2;
			}
			i++;
		} else if (v && !strcmp(a, "--mode")) {
			if (!parse_list(v, false, &o->mode_mask)) {
				fprintf(stderr, "torture: unknown mode in \"%s\"\n", v);
				return 2;
			}
			i++;
		} else if (v && !strcmp(a, "--one")) {
			o->one = v;
			i++;
		} else {
			usage(stderr);
			return 2;
		}
	}
	return 0;
}

static volatile sig_atomic_t stop_asked;

static void ask_stop(int sig)
{
	(void)sig;
	stop_asked = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = ask_stop, .sa_flags = SA_RESTART };
	uint64_t total = 0, failures = 0;
	struct opts o;
	struct trun r;
	size_t s, m;
	int ret;

	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	tt_rep = fc_report_new();
	tt_ms();
	if (getenv("TT_GDB"))
		fc_on_hang = dump_stacks;
	if (o.one)
		return run_one(o.one, &o);
	printf("torture: seed %" PRIu64 " (%s)%s\n", o.seed, o.ci ? "--ci, bounded" : "full",
	       tu_sanitized_thread() ? ", ThreadSanitizer" :
	       tu_sanitized_address() ? ", AddressSanitizer" : "");
	for (s = 0; s < NSCEN; s++) {
		const struct scenario *sc = scenarios[s];

		if (!(o.scen_mask & (1u << s)))
			continue;
		for (m = 0; m < 3; m++) {
			enum pk_mode mode = all_modes[m];
			unsigned n = o.runs >= 0 ? (unsigned)o.runs : o.ci ? sc->ci_runs : sc->full_runs;
			unsigned i, failed = 0, skipped = 0;
			double t0 = tt_ms();

			if (!(o.mode_mask & (1u << mode)) || stop_asked)
				continue;
			n = (unsigned)(n * o.scale + 0.5);
			if (!n)
				n = 1;
			for (i = 0; i < n && !stop_asked; i++) {
				init_run(&r, mode, run_seed(o.seed, s, mode, i), &o);
				if (sc->run(&r)) {
					skipped += r.skipped;
					if (o.verbose)
						printf("  %s %s run %u: ok (%s)\n", sc->name,
						       tt_mode_name(mode), i, r.note);
					continue;
				}
				failed++;
				report_failure(sc, &r, i, failed <= 10 || o.verbose);
			}
			printf("%s %s: %u runs, %u failures", sc->name, tt_mode_name(mode), i, failed);
			if (skipped)
				printf(", %u skipped (%s)", skipped, r.note);
			if (i < n)
				printf(", stopped after %u of %u runs", i, n);
			printf(" (%.1f s)\n", (tt_ms() - t0) / 1000);
			total += i;
			failures += failed;
		}
	}
	printf("torture: %" PRIu64 " runs, %" PRIu64 " failures, seed %" PRIu64 "\n", total, failures,
	       o.seed);
	fc_report_free(tt_rep);
	return failures ? 1 : stop_asked ? 3 : 0;
}
