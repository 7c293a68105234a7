// SPDX-License-Identifier: MIT
/*
 * test_deferred - deferred formatting: lines stored as their format and
 * arguments (packages) print exactly what formatting at the call prints,
 * on consoles in every mode and in a killed process's store read by pkmsg;
 * what cannot be deferred is formatted at the call and counted; a damaged
 * package is reported, never trusted.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>

#include <cmocka.h>

#include "format/format.h"
#include "store/store.h"
#include "printk/console.h"
#include "printk/printk.h"
#include "printk/reader.h"
#include "testutil.h"

/*
 * The corpus: every call is made twice, deferred and eager, and the two
 * consoles must match line for line.  Strings given by %s are changed
 * after each call: a package holds its own copy.
 */
static char scratch[64];

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wunknown-warning-option"
#pragma GCC diagnostic ignored "-Wformat"
#pragma GCC diagnostic ignored "-Wformat-overflow"
#pragma GCC diagnostic ignored "-Wformat-extra-args"
static void corpus(void)
{
	static const char big[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	char longs[1500];
	int i;

	memset(longs, 'L', sizeof(longs) - 1);
	longs[sizeof(longs) - 1] = '\0';
	strcpy(scratch, "scratch before");
	pk_info("plain line\n");
	pk_info("ints %d %i %u %ld %lld %hhd %hd %jd %zd %td %o %#x %X %b\n", -1, INT_MIN,
		UINT_MAX, LONG_MIN, LLONG_MAX, 300, 70000, (intmax_t)-5, (ssize_t)-6,
		(ptrdiff_t)7, 8u, 255u, 0xabcu, 5u);
	pk_info("widths [%5d] [%-5d] [%05d] [%+d] [% d] [%.3d] [%*d] [%-*d] [%.*d]\n", 1, 2, 3, 4,
		5, 6, 7, 8, -9, 10, 11, 12);
	pk_info("floats %f %e %g %a %.0f %#g %10.3e %-10.2f| %F %E %G %A\n", 3.14159, 2.5e-300,
		1e100, 1.0, 0.5, 1.0, -123.456, 7.25, INFINITY, NAN, -0.0, 0x1p-1074);
	pk_info("long doubles %Lf %Le %Lg %La %.30Lf\n", 1.1L, 3e4000L, -0.1L, 2.0L, 1.0L / 3);
	pk_info("strings [%s] [%10s] [%-10s] [%.3s] [%s] [%.*s]\n", scratch, "right", "left",
		"precision", "", 5, big);
	strcpy(scratch, "scratch after");
	pk_info("null [%s] [%.3s] [%10s]\n", (char *)NULL, (char *)NULL, (char *)NULL);
	pk_info("chars %c%c%c %lc [%5c]\n", 'a', 'b', 'c', (wint_t)0x20ac, 'z');
	pk_info("pointer %p %p %10p\n", (void *)scratch, (void *)NULL, (void *)0x1234);
	errno = ENOENT;
	pk_info("errno %m %#m [%20m]\n");
	errno = 0;
	pk_info("percent 100%% %5%|\n");
	pk_info("long string %s\n", longs);		/* cut at PK_RECORD_MAX */
	pk_info("%s%s\n", longs + 800, longs + 800);	/* cut, both copied */
	pk_info("unknown %y %5k %s\n", "after unknowns");
	pk_info("kept %d", 1);				/* open, ends in a conversion: eager */
	pk_cont(" joined %d\n", 2);			/* continuation: eager */
	/* Open lines that end in the format's own character: packages. */
	pk_info("open %d literal", 3);
	pk_cont(" joined %d\n", 4);			/* made text, then extended */
	pk_info("open %s, then %ld units", scratch, 5L);
	pk_printk(PK_INFO, "ended by the next record %d.", 6);
	pk_info("percent %d%%", 7);
	pk_cont("\n");					/* ends it */
	pk_info("open by its argument: %s", "ended\n");	/* ends in %s: eager, closed */
	pk_cont(" not joined\n");
	pk_info("%s tail", longs);			/* cut: complete */
	pk_cont(" after the cut\n");
	pk_info("%2$s %1$s\n", "b", "a");		/* positional: eager */
	pk_info("wide %ls\n", L"string");		/* wide string: eager */
	pk_printk(PK_LEVEL_KERNEL, "kernel ip %pI4\n", "\x0a\x00\x00\x01");	/* %p extension */
	for (i = 0; i < 8; i++)
		pk_printk(i, "level %d of %s\n", i, "eight");
	pk_printk(PK_LEVEL_DEFAULT, "\0014prefixed level\n");
}
#pragma GCC diagnostic pop

static char *run_corpus(enum pk_mode mode, bool eager, uint64_t *eager_count)
{
	struct pk_config cfg;
	struct tu_capture *cap;
	struct pk_console *con;
	struct pk_stats st;
	char *text;

	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT | (eager ? PK_CFG_EAGER : 0);
	cfg.mode = mode;
	cfg.console_loglevel = 8;
	assert_int_equal(pk_init(&cfg), 0);
	cap = tu_capture_new(0);
	con = pk_console_register(&tu_capture_ops, cap, 8);
	assert_non_null(con);
	pk_console_set_format(con, PK_FMT_KMSG);
	corpus();
	assert_int_equal(pk_flush(5000), 0);
	assert_int_equal(pk_stats_get(&st), 0);
	*eager_count = st.eager;
	pk_shutdown();
	text = tu_capture_text(cap);
	tu_capture_free(cap);
	return text;
}

/* The kmsg rendering without its timestamp, seq and lane, which differ by run. */
static void strip_prefixes(char *s)
{
	char *out = s, *line = s, *semi, *nl;

	while (*line) {
		nl = strchr(line, '\n');
		if (!nl)
			nl = line + strlen(line);
		semi = memchr(line, ';', (size_t)(nl - line));
		if (semi && line[0] != ' ') {
			/* "level,seq,ts,flags;text": keep the level and flags, drop seq and ts. */
			char *c1 = memchr(line, ',', (size_t)(semi - line));
			char *c3 = c1 ? memchr(c1 + 1, ',', (size_t)(semi - c1 - 1)) : NULL;

			c3 = c3 ? memchr(c3 + 1, ',', (size_t)(semi - c3 - 1)) : NULL;
			if (c1 && c3) {
				/* And ",lane=L" after the flags: the lane is the CPU's, by run. */
				char *ln = memchr(c3 + 1, ',', (size_t)(semi - c3 - 1));
				size_t a = (size_t)(c1 - line), b = (size_t)((ln ? ln : nl) - c3);

				memmove(out, line, a);
				memmove(out + a, c3, b);
				out += a + b;
				if (ln) {
					memmove(out, semi, (size_t)(nl - semi));
					out += nl - semi;
				}
				line = *nl ? nl + 1 : nl;
				if (*nl)
					*out++ = '\n';
				continue;
			}
		}
		memmove(out, line, (size_t)(nl - line) + (*nl ? 1 : 0));
		out += (nl - line) + (*nl ? 1 : 0);
		line = *nl ? nl + 1 : nl;
	}
	*out = '\0';
}

/* Which formats end an open line in a character of their own (format.h). */
static void test_open_literal(void **state)
{
	static const struct { const char *fmt; bool open; } cases[] = {
		{ "plain", true }, { "plain\n", false }, { "", false }, { "%d", false },
		{ "%d units", true }, { "%s", false }, { "%s.", true }, { "%c", false },
		{ "100%%", true }, { "%%d", true }, { "%5.2f%%", true }, { "%-*.*s|", true },
		{ "%lld", false }, { "%zu bytes", true }, { "%p", false }, { "%pS", false },
		{ "%pISpc", false }, { "%pS .", true }, { "%p4cc", false }, { "x %", false },
		{ "x %l", false }, { "a\nb", true }, { "a\n%d\n", false }, { "%m", false },
		{ "%m!", true },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (pk__fmt_open_literal(cases[i].fmt) != cases[i].open)
			fail_msg("\"%s\": %s", cases[i].fmt,
				 cases[i].open ? "ends in its own character" : "does not");
}

static void test_consoles_match_eager(void **state)
{
	static const enum pk_mode modes[] = { PK_MODE_HANDOFF, PK_MODE_LEGACY, PK_MODE_THREAD };
	uint64_t n_def, n_eager;
	char *def, *eag;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		def = run_corpus(modes[i], false, &n_def);
		eag = run_corpus(modes[i], true, &n_eager);
		strip_prefixes(def);
		strip_prefixes(eag);
		if (strcmp(def, eag)) {
			print_message("deferred:\n%s\neager:\n%s\n", def, eag);
			fail_msg("mode %zu: deferred and eager consoles differ", i);
		}
		assert_non_null(strstr(def, "scratch before"));	/* copied at the call */
		assert_non_null(strstr(def, "errno No such file or directory ENOENT"));
		/*
		 * Formatted at the call: the open line that ends in a
		 * conversion, the one whose argument ends it and the one too
		 * long for a package, the 5 continuations (the one joining a
		 * package makes it text), the positional and wide ones, the
		 * kernel %p extension, and the two whose strings make a
		 * package longer than a record.
		 */
		assert_int_equal(n_def, 13);
		assert_int_equal(n_eager, 38);	/* every call of the corpus */
		assert_non_null(strstr(def, "open 3 literal joined 4\n"));
		assert_non_null(strstr(def, "units\n"));
		assert_null(strstr(def, "ended not joined"));
		print_message("mode %zu: %zu bytes identical; formatted at the call: %llu of the "
			      "deferred run's records, %llu of the eager run's\n", i, strlen(def),
			      (unsigned long long)n_def, (unsigned long long)n_eager);
		free(def);
		free(eag);
	}
}

/* PK_EAGER=1 in the environment formats everything at the call. */
static void test_env_eager(void **state)
{
	struct pk_stats st0, st1;

	(void)state;
	setenv("PK_EAGER", "1", 1);
	setenv("PK_CONSOLE", "", 1);
	assert_int_equal(pk_init(NULL), 0);
	assert_int_equal(pk_stats_get(&st0), 0);
	assert_int_equal(pk_info("eager %d\n", 1), 7);	/* eager: the text's length */
	assert_int_equal(pk_stats_get(&st1), 0);
	assert_int_equal(st1.eager, st0.eager + 1);
	/* Only what was stored counts: not a refusal, not an empty continuation. */
	{
		int x = 0;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat"
		assert_int_equal(pk_printk(PK_INFO, "n%n\n", &x), -EINVAL);
#pragma GCC diagnostic pop
		assert_int_equal(pk_cont("%s", ""), 0);
		assert_int_equal(pk_stats_get(&st1), 0);
		assert_int_equal(st1.eager, st0.eager + 1);
	}
	pk_shutdown();
	unsetenv("PK_EAGER");
	assert_int_equal(pk_init(NULL), 0);
	assert_int_equal(pk_stats_get(&st0), 0);
	assert_true(pk_info("deferred %d\n", 1) > 0);
	assert_int_equal(pk_stats_get(&st1), 0);
	assert_int_equal(st1.eager, st0.eager);
	pk_shutdown();
	unsetenv("PK_CONSOLE");
}

/*
 * A process stores deferred records into a store file, changes the
 * strings it gave, and is killed with SIGKILL; pkmsg, another process,
 * formats the records from the file.
 */
static void test_postmortem_pkmsg(void **state)
{
	char *path = tu_tmp_path("deferred-store"), *out, cmd[4096 + 64];
	char *outpath = tu_tmp_path("deferred-out");
	int status, i;
	pid_t pid;

	(void)state;
	unlink(path);
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pk_config cfg;
		char s[32];

		pk_config_init(&cfg);
		cfg.buffer_path = path;
		cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
		if (pk_init(&cfg))
			_exit(3);
		for (i = 0; i < 100; i++) {
			snprintf(s, sizeof(s), "string %d", i);
			errno = EACCES;
			pk_printk(PK_NOTICE, "rec %d [%s] %.2f %Le %p %m %c\n", i, s, i / 4.0,
				  (long double)i, (void *)(uintptr_t)(i * 4096), 'A' + i % 26);
			strcpy(s, "overwritten");
		}
		kill(getpid(), SIGKILL);
		_exit(4);
	}
	tu_waitpid(pid, &status, 30000, "the writer");
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	snprintf(cmd, sizeof(cmd), "%s -F %s -r > %s 2>&1", PKMSG_PATH, path, outpath);
	assert_int_equal(system(cmd), 0);
	out = tu_read_file(outpath, NULL);
	assert_non_null(out);
	for (i = 0; i < 100; i++) {
		char want[256];

		errno = EACCES;
		snprintf(want, sizeof(want), ";rec %d [string %d] %.2f %Le %p %m %c\n", i, i,
			 i / 4.0, (long double)i, (void *)(uintptr_t)(i * 4096), 'A' + i % 26);
		if (!strstr(out, want))
			fail_msg("pkmsg did not print \"%s\" from the killed process's store:\n%s",
				 want, out);
	}
	assert_null(strstr(out, "overwritten"));
	free(out);
	unlink(outpath);
	unlink(path);
	free(outpath);
	free(path);
}

/* A damaged package in a live store: read as a marker, never trusted. */
static void test_damaged_package(void **state)
{
	static const unsigned char bad[][24] = {
		{ 9, 0, 3, 0, 0, 0, 0, 0, 'x', 'y', '\n' },		/* version */
		{ 1, 0, 40, 0, 0, 0, 0, 0, 'x', 'y', '\n' },		/* format longer */
		{ 1, 0, 3, 0, 0, 0, 0, 0, 1, 2, 3, '%', 's', '\n' },	/* string cut */
		{ 1, 1, 3, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, '%', 'p', '\n' }, /* kernel %p */
		{ 1, 0, 3, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7, 'x', '\n' }, /* bytes left */
	};
	static const uint32_t lens[] = { 11, 11, 14, 19, 19 };
	struct pk_ring_meta m = { .ts_ns = 1, .tid = 1, .level = 6, .facility = 1,
				  .flags = PK__REC_PACKED };
	struct pk_reader *r;
	struct pk_record rec;
	uint64_t seq, first = 0;
	size_t i;

	(void)state;
	setenv("PK_CONSOLE", "", 1);
	assert_int_equal(pk_init(NULL), 0);
	m.pid = (uint32_t)getpid();
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		assert_int_equal(pk__ring_write(pk__lane(0), &m, (const char *)bad[i], lens[i], false,
						&seq), 0);
		if (!i)
			first = seq;
	}
	r = pk_reader_open();
	assert_non_null(r);
	pk_reader_seek(r, first);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		assert_int_equal(pk_reader_next(r, &rec), 1);
		assert_string_equal(rec.text, "<a packed record that cannot be decoded>");
		assert_true(rec.flags & PK_REC_TRUNC);
		assert_int_equal(rec.flags & PK__REC_PACKED, 0);
	}
	pk_reader_close(r);
	pk_shutdown();
	unsetenv("PK_CONSOLE");
}

/*
 * A signal handler logs deferred records while the main thread is in the
 * middle of its own (packing or storing): every record of both is stored
 * intact, checked by its text.
 */
static volatile sig_atomic_t hits;

static void on_alarm(int sig)
{
	char s[48];
	unsigned n = (unsigned)hits;

	(void)sig;
	tu_make_text(s, sizeof(s), 1, n, 8);
	pk_info("%s %u\n", s, n);
	hits = (sig_atomic_t)(n + 1);
}

static void test_signal_storm(void **state)
{
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	struct pk_config cfg;
	struct pk_reader *r;
	struct pk_record rec;
	char s[64];
	unsigned w, main_n = 0, got_main = 0, got_sig = 0, n;
	uint64_t c, expect_main = 0;
	uint64_t t_end;

	(void)state;
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	/*
	 * 50000 records and their call sites (some 190 bytes each) must not
	 * wrap, in the one lane this thread may use all along (a lane has
	 * 1/N of the store: docs/lanes.md).
	 */
	cfg.buffer_size = 64 << 20;
	assert_int_equal(pk_init(&cfg), 0);
	hits = 0;
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	t_end = tu_now_ns() + (uint64_t)(tu_seconds(1.0) * 1e9);
	while (tu_now_ns() < t_end && main_n < 50000) {
		tu_make_text(s, sizeof(s), 0, main_n, 16);
		pk_info("%s %u\n", s, main_n);
		main_n++;
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_DFL);
	r = pk_reader_open();
	assert_non_null(r);
	while (pk_reader_next(r, &rec) == 1) {
		char *sp = strrchr(rec.text, ' ');

		assert_non_null(sp);
		if (tu_check_text(rec.text, (size_t)(sp - rec.text), &w, &c) != 0)
			fail_msg("torn or wrong record: '%s'", rec.text);
		n = (unsigned)strtoul(sp + 1, NULL, 10);
		assert_int_equal(n, c);
		if (w == 0) {
			assert_int_equal(c, expect_main);	/* in order, none missing */
			expect_main++;
			got_main++;
		} else {
			got_sig++;
		}
	}
	pk_reader_close(r);
	print_message("%u records from the main thread, %u from the signal handler (%d signals)\n",
		      got_main, got_sig, (int)hits);
	assert_int_equal(got_main, main_n);
	assert_int_equal(got_sig, (unsigned)hits);
	assert_true(hits > 0);
	pk_shutdown();
}

/*
 * Static packaging: the level macros, through pk_printk_site(), with
 * arguments of every type va_arg would promote; each evaluated once.
 */
static int evaluations;

/* The library's own formatter, as formatting at the call uses it. */
static void fmt_now(char *buf, int size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pk__stbsp_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

static int once(int v)
{
	evaluations++;
	return v;
}

static void test_static_sites(void **state)
{
	static const char *const fmts[] = { "%s|%d\n", "%s=%d\n" };
	struct pk_stats st0, st1;
	struct pk_reader *r;
	struct pk_record rec;
	char want[20][512], arr[8] = "array", *dyn;
	signed char sc = -56;
	unsigned char uc = 200;
	short sh = -1234;
	unsigned short us = 65000;
	char c = 'q';
	_Bool b = 1;
	float f = 1.5f;
	long double ld = -2.25L;
	enum { E_SEVEN = 7 } e = E_SEVEN;
	const char *volatile nul = NULL;
	uint64_t from;
	int i = 0, k = 0, n;

	(void)state;
	setenv("PK_CONSOLE", "", 1);
	assert_int_equal(pk_init(NULL), 0);
	assert_int_equal(pk_stats_get(&st0), 0);
	from = st0.next_seq;
	evaluations = 0;
	pk_info("narrow %hhd %hhu %hd %hu %c %d %d %d\n", sc, uc, sh, us, c, b, e, once(3));
	snprintf(want[k++], 512, "narrow %hhd %hhu %hd %hu %c %d %d %d", sc, uc, sh, us, c, b, e, 3);
	pk_info("signed narrow as int %d %d %u\n", sc, sh, uc);
	snprintf(want[k++], 512, "signed narrow as int %d %d %u", sc, sh, uc);
	pk_info("wide %ld %lu %lld %zu %jd %td\n", -5L, 6UL, LLONG_MIN, (size_t)-1, (intmax_t)9,
		(ptrdiff_t)-10);
	snprintf(want[k++], 512, "wide %ld %lu %lld %zu %jd %td", -5L, 6UL, LLONG_MIN, (size_t)-1,
		 (intmax_t)9, (ptrdiff_t)-10);
	pk_info("real %f %e %Lf %La %g\n", f, 2.5, ld, ld, 1e-5);
	snprintf(want[k++], 512, "real %f %e %Lf %La %g", f, 2.5, ld, ld, 1e-5);
	pk_info("strings %s %.3s %-7s| %s %s %p\n", arr, "abcdef", "x", nul, "lit", (void *)arr);
	snprintf(want[k++], 512, "strings %s %.3s %-7s| %s %s %p", arr, "abcdef", "x", "(null)",
		 "lit", (void *)arr);
	arr[0] = 'A';	/* copied at the call */
	pk_info("star %*d|%.*s|%-*.*s|\n", 6, 42, 2, "precision", 5, 1, "yz");
	snprintf(want[k++], 512, "star %*d|%.*s|%-*.*s|", 6, 42, 2, "precision", 5, 1, "yz");
	pk_info("no arguments\n");
	snprintf(want[k++], 512, "no arguments");
	pk_info("%d %d %d %d %d %d %d %d %d %d %d %d\n", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
	snprintf(want[k++], 512, "1 2 3 4 5 6 7 8 9 10 11 12");
	pk_info("%d %d %d %d %d %d %d %d %d %d %d %d %d %d\n", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
		12, 13, once(14));	/* more than a site takes: pk_printk() */
	snprintf(want[k++], 512, "1 2 3 4 5 6 7 8 9 10 11 12 13 14");
	errno = EPERM;
	pk_err("errno %m after %d\n", once(1));
	errno = EPERM;
	snprintf(want[k++], 512, "errno %m after 1");
	assert_int_equal(pk_stats_get(&st1), 0);
	assert_int_equal(st1.eager, st0.eager);		/* all deferred so far */
	/* Not a literal: the variadic path, once per format. */
	for (n = 0; n < 2; n++) {
		pk_info(fmts[n], n ? "b" : "a", n);
		snprintf(want[k++], 512, n ? "%s=%d" : "%s|%d", n ? "b" : "a", n);
	}
	dyn = strdup("dyn %d\n");
	pk_info(dyn, i++);
	snprintf(want[k++], 512, "dyn 0");
	free(dyn);
	assert_int_equal(i, 1);
	assert_int_equal(evaluations, 3);	/* every argument once */
	/* More arguments than PK__NARGS counted before: still pk_printk(). */
	pk_info("%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d "
		"%d %d %d %d %d %d %d %d %d %d %d %d %d\n", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
		14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
		35, 36, 37, 38, 39, 40);
	snprintf(want[k++], 512, "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 "
		 "25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40");
	/*
	 * A long double the x87 never makes (an unnormal, through a union):
	 * formatted at the call, as glibc would, never stored as a package
	 * a reader would refuse.
	 */
	{
		union { long double ld; unsigned char b[sizeof(long double)]; } u;
		struct pk_stats s0, s1;

		memset(&u, 0, sizeof(u));
		u.b[8] = 0x01;		/* exponent 1, integer bit clear */
		u.b[6] = 0x40;
		assert_int_equal(pk_stats_get(&s0), 0);
		pk_info("unnormal %Lf\n", u.ld);
		assert_int_equal(pk_stats_get(&s1), 0);
		assert_int_equal(s1.eager, s0.eager + 1);
		snprintf(want[k], 512, "unnormal ");
		fmt_now(want[k] + 9, 512 - 9, "%Lf", u.ld);
		k++;
	}
	pk_flush(1000);
	r = pk_reader_open();
	assert_non_null(r);
	pk_reader_seek(r, from);
	for (n = 0; n < k; n++) {
		assert_int_equal(pk_reader_next(r, &rec), 1);
		assert_string_equal(rec.text, want[n]);
	}
	assert_int_equal(pk_reader_next(r, &rec), 0);
	pk_reader_close(r);
	pk_shutdown();
	unsetenv("PK_CONSOLE");
}

/*
 * pk_printk_site() itself: a site is packed only when the signature fits
 * its conversions; otherwise it returns PK_SITE_VARIADIC for good and
 * stores nothing.
 */
static void test_site_signatures(void **state)
{
	static struct pk_site ok, wrong_size, wrong_class, wrong_count, unpackable, refused;
	union pk_arg a[2];
	const unsigned char sig_int[] = { 4 | PK_SIG_SIGNED };
	const unsigned char sig_long[] = { 8 | PK_SIG_SIGNED };
	const unsigned char sig_ptr[] = { 8 | PK_SIG_PTR };
	int v = 77;
	long lv = 5;
	struct pk_stats st0, st1;

	(void)state;
	setenv("PK_CONSOLE", "", 1);
	assert_int_equal(pk_init(NULL), 0);
	memset(a, 0, sizeof(a));
	memcpy(a[0].b, &v, sizeof(v));
	assert_int_equal(pk_stats_get(&st0), 0);
	assert_true(pk_printk_site(&ok, PK_INFO, "v=%d\n", sig_int, 1, a) > 0);
	assert_true(pk_printk_site(&ok, PK_INFO, "v=%d\n", sig_int, 1, a) > 0);
	memcpy(a[0].b, &lv, sizeof(lv));
	assert_int_equal(pk_printk_site(&wrong_size, PK_INFO, "v=%d\n", sig_long, 1, a),
			 PK_SITE_VARIADIC);
	assert_int_equal(pk_printk_site(&wrong_class, PK_INFO, "v=%ld\n", sig_ptr, 1, a),
			 PK_SITE_VARIADIC);
	assert_int_equal(pk_printk_site(&wrong_count, PK_INFO, "v=%d %d\n", sig_int, 1, a),
			 PK_SITE_VARIADIC);
	assert_int_equal(pk_printk_site(&unpackable, PK_INFO, "open %d", sig_int, 1, a),
			 PK_SITE_VARIADIC);
	assert_int_equal(pk_printk_site(&refused, PK_INFO, "%n\n", sig_ptr, 1, a),
			 PK_SITE_VARIADIC);
	/* Decided for good: another call says the same, the format is not read again. */
	assert_int_equal(pk_printk_site(&wrong_size, PK_INFO, "v=%d\n", sig_int, 1, a),
			 PK_SITE_VARIADIC);
	/* The same site with another format pointer: never packed. */
	assert_int_equal(pk_printk_site(&ok, PK_INFO, "v2=%d\n", sig_int, 1, a), PK_SITE_VARIADIC);
	assert_int_equal(pk_stats_get(&st1), 0);
	assert_int_equal(st1.stored, st0.stored + 2);
	pk_shutdown();
	/* Not set up: the caller's pk_printk() initialises. */
	assert_int_equal(pk_printk_site(&ok, PK_INFO, "v=%d\n", sig_int, 1, a), PK_SITE_VARIADIC);
	unsetenv("PK_CONSOLE");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_literal),
		cmocka_unit_test(test_consoles_match_eager),
		cmocka_unit_test(test_env_eager),
		cmocka_unit_test(test_postmortem_pkmsg),
		cmocka_unit_test(test_damaged_package),
		cmocka_unit_test(test_signal_storm),
		cmocka_unit_test(test_static_sites),
		cmocka_unit_test(test_site_signatures),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
