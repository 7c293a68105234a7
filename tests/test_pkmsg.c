// SPDX-License-Identifier: MIT
/*
 * pkmsg, the command: each output format, the filters, timestamps, gaps,
 * --stats, -C while a writer runs, -w and -W following a live store, exit
 * codes, and util-linux dmesg -F reading pkmsg --syslog output; -n, --since
 * and --until, --grep, --color and the pager (under a pseudo-terminal);
 * stores of lanes: the merged order, the lane in -J and -r, drops per
 * lane, --show-cursor and --after-cursor, following, refusals.
 *
 * The built pkmsg is PKMSG_PATH; dmesg is DMESG_PATH where CMake found it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "format/format.h"
#include "store/lanes.h"
#include "store/store.h"
#include "lanesfile.h"
#include "testutil.h"

#ifndef PKMSG_PATH
#error "PKMSG_PATH must name the built pkmsg"
#endif

#define STORE_SIZE	(256u << 10)
/* A child that takes longer than this has hung (a hang guard only). */
#define CHILD_MS	60000
#define NMSG		16

/* pkmsg's argv: PKMSG_PATH, then the arguments. */
#define ARGV(...)	((const char *const[]){ PKMSG_PATH, __VA_ARGS__, NULL })

static char *g_store;		/* the main store, made once */
static uint32_t g_tid_b;	/* the tid of its second thread */

/* pkmsg ARGS... -F store: exit 0 and its stdout (caller frees). */
static char *pkmsg_ok(const char *const argv[])
{
	char *out, *err;
	int rc = tu_run(argv, NULL, &out, &err);

	if (rc != 0)
		fail_msg("pkmsg exited %d: %s", rc, err);
	free(err);
	return out;
}

#define PKMSG_OK(...) pkmsg_ok(ARGV(__VA_ARGS__))

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Does @out hold a line containing @needle? */
static bool has(const char *out, const char *needle)
{
	return strstr(out, needle) != NULL;
}

static void *thread_b(void *p)
{
	int i;

	*(uint32_t *)p = (uint32_t)syscall(SYS_gettid);
	for (i = 0; i < 3; i++)
		pk_printk(PK_NOTICE, "thread-b %d\n", i);
	return NULL;
}

static void init_store(const char *path, unsigned flags)
{
	struct pk_config cfg;

	pk_config_init(&cfg);
	cfg.buffer_path = path;
	cfg.buffer_size = STORE_SIZE;
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT | flags;
	assert_int_equal(pk_init(&cfg), 0);
}

/*
 * The main store: seq 0..15 "msg i level i%8", 16..18 thread-b (notice),
 * 19 a two-line record (info), 20 control and non-UTF-8 bytes (err).
 */
static int setup(void **state)
{
	pthread_t th;
	int i;

	(void)state;
	g_store = tu_tmp_path("pkmsg");
	init_store(g_store, 0);
	for (i = 0; i < NMSG; i++)
		pk_printk(i % 8, "msg %d level %d\n", i, i % 8);
	pthread_create(&th, NULL, thread_b, &g_tid_b);
	pthread_join(th, NULL);
	pk_printk(PK_INFO, "line one\nline two\n");
	pk_printk(PK_ERR, "esc \x1b[31m bs\\ tab\t hi\xff\n");
	pk_shutdown();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(g_store);
	free(g_store);
	return 0;
}

static void test_human(void **state)
{
	char *out = PKMSG_OK("-F", g_store);
	char line[64];
	int i;

	(void)state;
	assert_int_equal(count_lines(out), NMSG + 3 + 2 + 1);
	for (i = 0; i < NMSG; i++) {
		snprintf(line, sizeof(line), "] msg %d level %d\n", i, i % 8);
		assert_true(has(out, line));
	}
	assert_true(out[0] == '[');
	/* A continuation line is indented by the prefix's width, as dmesg does. */
	assert_true(has(out, "] line one\n               line two\n["));
	/* Control bytes escaped, never raw; printable text untouched. */
	assert_true(has(out, "] esc \\x1b[31m bs\\ tab\t hi\\xff\n"));
	assert_null(strchr(out, '\x1b'));
	free(out);
}

static void test_raw(void **state)
{
	char *out = PKMSG_OK("--raw", "-F", g_store);
	unsigned long long seq, ts;
	int prio, n = 0;
	char flag;
	const char *p;

	(void)state;
	assert_int_equal(count_lines(out), NMSG + 3 + 1 + 1);
	for (p = out; *p; p = strchr(p, '\n') + 1) {
		assert_int_equal(sscanf(p, "%d,%llu,%llu,%c;", &prio, &seq, &ts, &flag), 4);
		assert_int_equal(seq, (unsigned long long)n);
		if (n < NMSG)
			assert_int_equal(prio, 8 + n % 8);	/* facility user */
		assert_int_equal(flag, '-');
		n++;
	}
	assert_true(has(out, ",-;msg 3 level 3\n"));
	assert_true(has(out, ",-;line one\\x0aline two\n"));
	assert_true(has(out, ",-;esc \\x1b[31m bs\\x5c tab\\x09 hi\\xff\n"));
	free(out);
}

static void test_json(void **state)
{
	char *out = PKMSG_OK("--json", "-F", g_store);
	char want[128];
	const char *p;
	int n = 0;

	(void)state;
	assert_int_equal(count_lines(out), NMSG + 5);
	for (p = out; *p; p = strchr(p, '\n') + 1) {
		snprintf(want, sizeof(want), "{\"seq\":%d,\"ts_us\":", n++);
		assert_memory_equal(p, want, strlen(want));
		assert_memory_equal(strchr(p, '\n') - 1, "}", 1);
	}
	assert_true(has(out, "\"level\":3,\"facility\":1,"));
	assert_true(has(out, "\"text\":\"msg 3 level 3\"}"));
	assert_true(has(out, "\"text\":\"line one\\nline two\"}"));
	assert_true(has(out, "\"text\":\"esc \\u001b[31m bs\\\\ tab\\t hi\\ufffd\"}"));
	snprintf(want, sizeof(want), "\"pid\":%d,\"tid\":%u,\"text\":\"thread-b 0\"",
		 (int)getpid(), g_tid_b);
	assert_true(has(out, want));
	free(out);
	/* With -T the wall-clock time is added. */
	out = PKMSG_OK("--json", "-T", "-F", g_store);
	assert_true(has(out, "\"time_us\":"));
	free(out);
}

static void test_syslog(void **state)
{
	char *out = PKMSG_OK("--syslog", "-F", g_store);

	(void)state;
	assert_int_equal(count_lines(out), NMSG + 3 + 2 + 1);
	assert_memory_equal(out, "<8>[", 4);
	assert_true(has(out, "\n<11>["));
	assert_true(has(out, "] msg 3 level 3\n<12>["));
	assert_true(has(out, "\n<13>["));	/* thread-b, notice */
	free(out);
}

/* Which "msg i" lines does @out hold?  Bit i. */
static unsigned msgs_in(const char *out)
{
	unsigned mask = 0;
	char want[32];
	int i;

	for (i = 0; i < NMSG; i++) {
		snprintf(want, sizeof(want), "msg %d level", i);
		if (has(out, want))
			mask |= 1u << i;
	}
	return mask;
}

static unsigned levels_mask(unsigned levels)
{
	unsigned m = 0;
	int i;

	for (i = 0; i < NMSG; i++)
		if (levels & (1u << (i % 8)))
			m |= 1u << i;
	return m;
}

static void test_level_filter(void **state)
{
	static const struct { const char *list; unsigned levels; } cases[] = {
		{ "err,warn", 0x18 }, { "0-2", 0x07 }, { "err+", 0x0f }, { "+notice", 0xe0 },
		{ "warning", 0x10 }, { "7", 0x80 }, { "EMERG,debug", 0x81 }, { "crit-info", 0x7c },
	};
	static const char *const bad[] = { "bogus", "5-2", "8", "", "err,", "err++" };
	size_t i;

	(void)state;
	for (i = 0; i < PK__ARRAY_SIZE(cases); i++) {
		char *out = PKMSG_OK("--level", cases[i].list, "-F", g_store);

		assert_int_equal(msgs_in(out), levels_mask(cases[i].levels));
		/* thread-b records are notice (5). */
		assert_int_equal(has(out, "thread-b 0"), (cases[i].levels >> 5) & 1);
		free(out);
	}
	for (i = 0; i < PK__ARRAY_SIZE(bad); i++) {
		const char *const argv[] = { PKMSG_PATH, "-l", bad[i], "-F", g_store, NULL };
		char *o, *e;

		assert_int_equal(tu_run(argv, NULL, &o, &e), 2);
		assert_string_equal(o, "");
		assert_true(has(e, "bad level list"));
		free(o);
		free(e);
	}
	/* Given twice, the lists add up, as dmesg's do. */
	{
		char *out = PKMSG_OK("-l", "err", "--level", "warn", "-F", g_store);

		assert_int_equal(msgs_in(out), levels_mask(0x18));
		free(out);
	}
}

/* A directory is named for what it is, not "corrupt" (FIFOs and devices: below). */
static void test_not_a_file_named(void **state)
{
	const char *const argv[] = { PKMSG_PATH, "-F", "/tmp", NULL };
	char *o, *e;

	(void)state;
	assert_int_equal(tu_run(argv, NULL, &o, &e), 1);
	assert_true(has(e, "/tmp: a directory, not a store file"));
	free(o);
	free(e);
}

static void test_seq_and_tid_filters(void **state)
{
	char *out, want[32];

	(void)state;
	out = PKMSG_OK("--raw", "--since-seq", "10", "-F", g_store);
	assert_int_equal(count_lines(out), NMSG + 5 - 10);
	assert_memory_equal(out, "10,10,", 6);	/* msg 10: level 2, user */
	free(out);
	out = PKMSG_OK("--since-seq", "1000", "-F", g_store);
	assert_string_equal(out, "");
	free(out);

	snprintf(want, sizeof(want), "%u", g_tid_b);
	out = PKMSG_OK("--tid", want, "-F", g_store);
	assert_int_equal(count_lines(out), 3);
	assert_true(has(out, "] thread-b 0\n"));
	assert_true(has(out, "] thread-b 2\n"));
	free(out);
	out = PKMSG_OK("--tid", want, "--show-tid", "-F", g_store);
	snprintf(want, sizeof(want), "] [T%u] thread-b 1\n", g_tid_b);
	assert_true(has(out, want));
	free(out);

	/* The store was written by this process alone. */
	snprintf(want, sizeof(want), "%d", (int)getpid());
	out = PKMSG_OK("--raw", "--pid", want, "-F", g_store);
	assert_int_equal(count_lines(out), NMSG + 5);
	free(out);
	snprintf(want, sizeof(want), "%d", (int)getpid() + 1);
	out = PKMSG_OK("--pid", want, "-F", g_store);
	assert_string_equal(out, "");
	free(out);
}

static void test_timestamps(void **state)
{
	char *out, wd[8], mon[8];
	int day, h, m, s, year;
	unsigned long sec, usec, dsec, dusec;

	(void)state;
	out = PKMSG_OK("-T", "-F", g_store);
	assert_int_equal(sscanf(out, "[%3s %3s %d %d:%d:%d %d] msg 0 level 0", wd, mon, &day, &h, &m,
				&s, &year), 7);
	assert_true(year >= 2024);
	free(out);
	out = PKMSG_OK("-d", "-F", g_store);
	assert_int_equal(sscanf(out, "[%lu.%lu <%lu.%lu>] msg 0 level 0", &sec, &usec, &dsec, &dusec),
			 4);
	assert_int_equal(dsec, 0);
	assert_int_equal(dusec, 0);	/* the first record has no predecessor */
	free(out);
}

static void test_stats(void **state)
{
	char *out = PKMSG_OK("--stats", "-F", g_store);

	(void)state;
	assert_true(has(out, "live:             no\n"));
	assert_true(has(out, "next seq:         21\n"));
	assert_true(has(out, "stored:           21\n"));
	assert_true(has(out, "overwritten:      0\n"));
	assert_true(has(out, "generation:       1\n"));
	free(out);
}

static void expect_exit(int code, const char *in_err, const char *const argv[])
{
	char *o, *e;

	assert_int_equal(tu_run(argv, NULL, &o, &e), code);
	if (!e || !has(e, in_err)) {
		print_message("pkmsg's stderr: %s\n", e ? e : "(none)");
		fail_msg("pkmsg's stderr lacks '%s'", in_err);
	}
	free(o);
	free(e);
}

/*
 * Long options are taken only as written in full: getopt_long() would read
 * "--since 160" as "--since-seq 160", and a later "--since TIME" filter
 * would then change what an old command line means.  Every abbreviation,
 * with its argument attached, separate or none, is refused with its name.
 */
static void test_no_abbreviations(void **state)
{
	char *out;
	int i;

	(void)state;
	/* --since is a time now: "10" is refused as one, never read as --since-seq. */
	expect_exit(2, "bad time '10' for --since", ARGV("--since", "10", "-F", g_store));
	expect_exit(2, "bad time '10' for --since", ARGV("--since=10", "-F", g_store));
	expect_exit(2, "bad time '160' for --since", ARGV("-S", "160", "-F", g_store));
	expect_exit(2, "is ambiguous", ARGV("--sinc", "10", "-F", g_store));
	expect_exit(2, "'--since-se'", ARGV("--since-se", "10", "-F", g_store));
	expect_exit(2, "'--since-seq'?", ARGV("--since-se=10", "-F", g_store));
	expect_exit(2, "'--unti'", ARGV("--unti", "now", "-F", g_store));
	expect_exit(2, "'--lin'", ARGV("--lin", "3", "-F", g_store));
	expect_exit(2, "'--gre'", ARGV("--gre", "x", "-F", g_store));
	expect_exit(2, "'--col'", ARGV("--col", "-F", g_store));
	expect_exit(2, "'--no-pag'", ARGV("--no-pag", "-F", g_store));
	expect_exit(2, "'--fil'", ARGV("--fil", g_store));
	expect_exit(2, "'--js'", ARGV("--js", "-F", g_store));
	expect_exit(2, "'--stat'", ARGV("-F", g_store, "--stat"));
	expect_exit(2, "'--he'", ARGV("--he"));
	/* An option's argument that looks like an abbreviation is its argument. */
	expect_exit(1, "No such file", (const char *const[]){ PKMSG_PATH, "-F", "--js", NULL });
	/* What getopt_long() refuses is said in a line and a hint, not the whole help. */
	for (i = 0; i < 3; i++) {
		const char *const bad[][4] = { { PKMSG_PATH, "--sinc", "10", NULL },
					       { PKMSG_PATH, "--bogus", NULL },
					       { PKMSG_PATH, "-F", NULL } };
		char *o, *e;

		assert_int_equal(tu_run(bad[i], NULL, &o, &e), 2);
		assert_non_null(e);
		if (has(e, "Usage:") || !has(e, "Try 'pkmsg --help'.") || count_lines(e) != 2) {
			print_message("pkmsg %s: stderr: %s\n", bad[i][1], e);
			fail_msg("pkmsg %s: not one line and a hint", bad[i][1]);
		}
		free(o);
		free(e);
	}
	/* Exact names, and short options, still work. */
	out = PKMSG_OK("--raw", "--since-seq=10", "--file", g_store);
	assert_int_equal(count_lines(out), NMSG + 5 - 10);
	free(out);
	out = PKMSG_OK("-rF", g_store, "--since-seq", "10");
	assert_int_equal(count_lines(out), NMSG + 5 - 10);
	free(out);
}

static void test_exit_codes(void **state)
{
	char *junk = tu_tmp_path("junk"), *old = tu_tmp_path("v2"), *s;
	uint32_t v2 = PK_RING_VERSION - 1;	/* an older libprintk's store */
	FILE *f;
	int i;

	(void)state;
	f = fopen(junk, "w");
	for (i = 0; i < 1000; i++)
		fputs("not a store ", f);
	fclose(f);
	s = tu_read_file(g_store, NULL);
	f = fopen(old, "w");
	fwrite(s, 1, pk__ring_region_size(pk__ring_data_log2_for(STORE_SIZE)), f);
	fclose(f);
	free(s);
	f = fopen(old, "r+");
	fseek(f, offsetof(struct pk_ring_hdr, version), SEEK_SET);
	fwrite(&v2, sizeof(v2), 1, f);
	fclose(f);

	expect_exit(1, "No such file", (const char *const[]){ PKMSG_PATH, "-F", "/nonexistent/x", NULL });
	expect_exit(1, "not a libprintk store", (const char *const[]){ PKMSG_PATH, "-F", junk, NULL });
	{
		char want[128];

		snprintf(want, sizeof(want), "version %u, this pkmsg reads version %u (read it with",
			 PK_RING_VERSION - 1, PK_RING_VERSION);
		expect_exit(1, want, (const char *const[]){ PKMSG_PATH, "-F", old, NULL });
	}
	expect_exit(1, "a device, not a store file", (const char *const[]){ PKMSG_PATH, "-F", "/dev/null", NULL });
	expect_exit(2, "unrecognized", (const char *const[]){ PKMSG_PATH, "--bogus", NULL });
	expect_exit(2, "unexpected argument", (const char *const[]){ PKMSG_PATH, "-F", junk, "x", NULL });
	expect_exit(2, "bad sequence", (const char *const[]){ PKMSG_PATH, "--since-seq", "-1", NULL });
	expect_exit(2, "bad thread", (const char *const[]){ PKMSG_PATH, "--tid", "x", NULL });
	expect_exit(2, "bad process", (const char *const[]){ PKMSG_PATH, "--pid", "4294967296", NULL });
	expect_exit(2, "choose one", (const char *const[]){ PKMSG_PATH, "--raw", "--json", NULL });
	unsetenv("PK_BUFFER");
	expect_exit(2, "no store file", (const char *const[]){ PKMSG_PATH, NULL });
	expect_exit(0, "", (const char *const[]){ PKMSG_PATH, "--help", NULL });

	/* Without -F, PK_BUFFER names the store. */
	setenv("PK_BUFFER", g_store, 1);
	{
		char *a = PKMSG_OK("--raw"), *b = PKMSG_OK("--raw", "-F", g_store);

		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	unsetenv("PK_BUFFER");
	unlink(junk);
	unlink(old);
	free(junk);
	free(old);
}

/* The open(2)s of @path's inode that @ifd (inotify) saw since the last call. */
static int opens_seen(int ifd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t n;
	int opens = 0;
	char *p;

	while ((n = read(ifd, buf, sizeof(buf))) > 0) {
		for (p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)(void *)p;
			opens += (ev->mask & IN_OPEN) != 0;
		}
	}
	return opens;
}

/*
 * What is not a regular file is refused before it is opened, behind a
 * symlink too: opening a FIFO or a device is an act of its own (watched
 * with inotify: no IN_OPEN).  A symlink to a store is still read.
 */
static void test_not_regular_unopened(void **state)
{
	char *fifo = tu_tmp_path("fifo"), *dev = tu_tmp_path("zero"), *lf = tu_tmp_path("lfifo"),
	     *ld = tu_tmp_path("ldev"), *ls = tu_tmp_path("lstore"), *a, *b;
	const char *const targets[] = { fifo, lf, dev, ld };
	struct pk_reader *r;
	bool have_dev;
	int ifd, i, checked = 0;

	(void)state;
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(symlink(fifo, lf), 0);
	assert_int_equal(symlink(g_store, ls), 0);
	/* A node of /dev/zero's device of our own, watched alone (root only). */
	have_dev = mknod(dev, S_IFCHR | 0600, makedev(1, 5)) == 0;
	assert_int_equal(symlink(have_dev ? dev : "/dev/zero", ld), 0);
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(ifd >= 0);
	assert_true(inotify_add_watch(ifd, fifo, IN_OPEN) >= 0);
	if (have_dev)
		assert_true(inotify_add_watch(ifd, dev, IN_OPEN) >= 0);
	/* The watch works: an open of our own is seen. */
	i = open(fifo, O_RDONLY | O_NONBLOCK);
	assert_true(i >= 0);
	close(i);
	assert_int_equal(opens_seen(ifd), 1);

	for (i = 0; i < (int)PK__ARRAY_SIZE(targets); i++) {
		if (!have_dev && targets[i] == dev)
			continue;
		expect_exit(1, "not a store file",
			    (const char *const[]){ PKMSG_PATH, "-F", targets[i], NULL });
		expect_exit(1, "not a store file",
			    (const char *const[]){ PKMSG_PATH, "--stats", "-F", targets[i], NULL });
		/* --follow tries writable (no symlink followed), then read-only. */
		expect_exit(1, "not a store file",
			    (const char *const[]){ PKMSG_PATH, "-w", "-F", targets[i], NULL });
		errno = 0;
		r = pk_reader_open_file(targets[i]);
		assert_null(r);
		assert_int_equal(errno, EINVAL);
		r = pk_reader_open_file_flags(targets[i], PK_READER_WRITABLE);
		assert_null(r);
		assert_int_equal(errno, targets[i] == lf || targets[i] == ld ? ELOOP : EINVAL);
		checked++;
	}
	/* -C writes: a symlink is refused as such, unopened. */
	expect_exit(1, "symbolic links", (const char *const[]){ PKMSG_PATH, "-C", "-F", lf, NULL });
	assert_int_equal(opens_seen(ifd), 0);
	print_message("%d non-regular targets refused unopened%s\n", checked,
		      have_dev ? "" : " (no device node: not root)");

	/* A symlink to a store: read as the store itself. */
	a = PKMSG_OK("--raw", "-F", ls);
	b = PKMSG_OK("--raw", "-F", g_store);
	assert_string_equal(a, b);
	assert_true(count_lines(a) > 0);
	free(a);
	free(b);
	expect_exit(1, "symbolic links", (const char *const[]){ PKMSG_PATH, "-C", "-F", ls, NULL });

	close(ifd);
	unlink(ls);
	unlink(ld);
	unlink(lf);
	unlink(dev);
	unlink(fifo);
	free(ls);
	free(ld);
	free(lf);
	free(dev);
	free(fifo);
}

/* A record whose writer died before committing shows as a gap. */
static void test_dropped_line(void **state)
{
	char *path = tu_tmp_path("pkmsg-gap"), *out;
	int status;
	pid_t pid;

	(void)state;
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		init_store(path, 0);
		pk_printk(PK_INFO, "before\n");
		atomic_fetch_add(&pk__lane(0)->h->seq_head, 2);	/* two writers died */
		pk_printk(PK_INFO, "after\n");
		_exit(0);
	}
	tu_waitpid(pid, &status, CHILD_MS, "the writer of a store with a gap");
	assert_int_equal(status, 0);
	out = PKMSG_OK("-F", path);
	assert_true(has(out, "] before\n** 2 printk messages dropped **\n["));
	assert_true(has(out, "] after\n"));
	free(out);
	out = PKMSG_OK("--json", "-F", path);
	assert_true(has(out, "\"text\":\"before\"}\n{\"dropped\":2}\n{\"seq\":3,"));
	free(out);
	unlink(path);
	free(path);
}

struct writer {
	_Atomic bool stop;
	_Atomic uint64_t n;
};

/*
 * At most STORM_MAX records, so that CLEAR_STORE never wraps (a wrap would
 * drop records legitimately); paced so that it is still running while
 * pkmsg -C runs on any ordinary machine (the test holds either way).
 */
#define STORM_MAX	40000
#define CLEAR_STORE	(6u << 20)

static void *storm(void *p)
{
	struct writer *w = p;

	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	while (!atomic_load(&w->stop) && atomic_load(&w->n) < STORM_MAX) {
		/* Every 64 records on the next CPU: into every lane there is. */
		if (ncpu > 1 && atomic_load(&w->n) % 64 == 0) {
			CPU_ZERO(&set);
			CPU_SET((int)((atomic_load(&w->n) / 64) % (uint64_t)ncpu), &set);
			sched_setaffinity(0, sizeof(set), &set);
		}
		pk_printk(PK_INFO, "storm %llu\n", (unsigned long long)atomic_load(&w->n));
		atomic_fetch_add(&w->n, 1);
		usleep(5);
	}
	return NULL;
}

static uint64_t next_seq(void)
{
	struct pk_stats st;

	assert_int_equal(pk_stats_get(&st), 0);
	return st.next_seq;
}

/*
 * -C while a writer runs, moving between CPUs: in every lane, older
 * records vanish for new readers, none stored after.
 */
static void test_clear_while_writing(void **state)
{
	char *path = tu_tmp_path("pkmsg-clear"), *out;
	struct writer w = { false, 0 };
	unsigned long long seq, ts, prev[2] = { 0, 0 }, first[2] = { 0, 0 };
	uint64_t s0[2], s1[2], n[2] = { 0, 0 };
	unsigned lane, l;
	pthread_t th;
	const char *p;
	int prio;

	struct pk_config cfg;

	(void)state;
	pk_config_init(&cfg);
	cfg.buffer_path = path;
	cfg.buffer_size = CLEAR_STORE;
	cfg.lanes = 2;
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	assert_int_equal(pk_init(&cfg), 0);
	assert_true(pk__st.lanes.n >= 1 && pk__st.lanes.n <= 2);
	assert_int_equal(pthread_create(&th, NULL, storm, &w), 0);
	assert_true(tu_wait_until(atomic_load(&w.n) >= 200, 60000));
	for (l = 0; l < pk__st.lanes.n; l++)
		s0[l] = pk__ring_next_seq(pk__lane(l));
	free(PKMSG_OK("-C", "-F", path));
	for (l = 0; l < pk__st.lanes.n; l++)
		s1[l] = pk__ring_next_seq(pk__lane(l));
	assert_true(tu_wait_until(atomic_load(&w.n) >= next_seq() + 200 ||
				  atomic_load(&w.n) >= STORM_MAX, 60000));
	atomic_store(&w.stop, true);
	pthread_join(th, NULL);
	out = PKMSG_OK("--stats", "-F", path);
	assert_true(has(out, "overwritten:      0\n"));
	free(out);

	out = PKMSG_OK("--raw", "-F", path);
	for (p = out; *p; p = strchr(p, '\n') + 1) {
		lane = 0;
		if (pk__st.lanes.n > 1)
			assert_int_equal(sscanf(p, "%d,%llu,%llu,-,lane=%u;", &prio, &seq, &ts,
						&lane), 4);
		else
			assert_int_equal(sscanf(p, "%d,%llu,", &prio, &seq), 2);
		assert_true(lane < pk__st.lanes.n);
		if (n[lane]++ == 0)
			first[lane] = seq;
		else
			assert_int_equal(seq, prev[lane] + 1);	/* nothing missing */
		prev[lane] = seq;
	}
	print_message("clear_while_writing: %u lanes, records read in lane 0: %llu, lane 1: %llu\n",
		      pk__st.lanes.n, (unsigned long long)n[0], (unsigned long long)n[1]);
	for (l = 0; l < pk__st.lanes.n; l++) {
		if (!n[l]) {
			/* Every record of the lane was cleared: none came after -C. */
			assert_true(pk__ring_next_seq(pk__lane(l)) <= s1[l]);
			continue;
		}
		assert_true(first[l] >= s0[l]);	/* cleared ones are gone */
		assert_true(first[l] <= s1[l]);	/* nothing stored after -C is */
		assert_int_equal(prev[l] + 1, pk__ring_next_seq(pk__lane(l)));
	}
	free(out);
	out = PKMSG_OK("--stats", "-F", path);
	assert_true(has(out, "live:             yes\n"));
	free(out);
	pk_shutdown();
	unlink(path);
	free(path);
}

/*
 * Start pkmsg ARGS with stdout (and with @with_err, stderr) on a pipe.
 * Return its pid; *fd the pipe.
 */
static pid_t spawn_err(const char *const argv[], int *fd, bool with_err)
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		if (with_err)
			dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	*fd = p[0];
	return pid;
}

static pid_t spawn(const char *const argv[], int *fd)
{
	return spawn_err(argv, fd, false);
}

/* Read from @fd into @buf until it holds @needle.  60 s: a hang guard. */
static void read_until(int fd, char *buf, size_t size, size_t *len, const char *needle)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	uint64_t end = tu_now_ns() + 60000000000ull;
	ssize_t n;

	while (!strstr(buf, needle)) {
		if (tu_now_ns() > end)
			fail_msg("pkmsg did not print '%s'; got '%s'", needle, buf);
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = read(fd, buf + *len, size - *len - 1);
		if (n <= 0)
			fail_msg("pkmsg ended before printing '%s'", needle);
		*len += (size_t)n;
		buf[*len] = '\0';
	}
}

/* Interrupt a follower: it dies of the signal, off the waiter count. */
static void stop(pid_t pid, int fd, int sig)
{
	int status;

	kill(pid, sig);
	tu_waitpid(pid, &status, CHILD_MS, sig == SIGINT ? "pkmsg -w after SIGINT" :
						 "pkmsg -W after SIGTERM");
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == sig);
	assert_int_equal(atomic_load(&pk__lane(0)->h->waiters), 0);
	close(fd);
}

static void test_follow(void **state)
{
	char *path = tu_tmp_path("pkmsg-follow");
	static char buf[1 << 16];
	size_t len = 0;
	char want[32];
	const char *p;
	pid_t pid;
	int fd, i;

	(void)state;
	init_store(path, 0);
	pk_printk(PK_INFO, "before\n");
	pid = spawn((const char *const[]){ PKMSG_PATH, "-w", "-F", path, NULL }, &fd);
	buf[0] = '\0';
	read_until(fd, buf, sizeof(buf), &len, "] before\n");
	for (i = 0; i < 50; i++)
		pk_printk(PK_INFO, "follow %d\n", i);
	read_until(fd, buf, sizeof(buf), &len, "] follow 49\n");
	for (i = 0, p = buf; i < 50; i++) {
		snprintf(want, sizeof(want), "] follow %d\n", i);
		p = strstr(p, want);
		assert_non_null(p);	/* all of them, in order */
	}
	stop(pid, fd, SIGINT);

	/* -W: only what comes after it started. */
	len = 0;
	buf[0] = '\0';
	pid = spawn((const char *const[]){ PKMSG_PATH, "-W", "-F", path, NULL }, &fd);
	for (i = 0; i < 6000 && !strstr(buf, "] new "); i++) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t n;

		pk_printk(PK_INFO, "new %d\n", i);
		if (poll(&pfd, 1, 10) > 0 && (n = read(fd, buf + len, sizeof(buf) - len - 1)) > 0) {
			len += (size_t)n;
			buf[len] = '\0';
		}
	}
	read_until(fd, buf, sizeof(buf), &len, "] new ");
	assert_null(strstr(buf, "before"));
	assert_null(strstr(buf, "follow"));
	stop(pid, fd, SIGTERM);
	pk_shutdown();
	unlink(path);
	free(path);
}

/*
 * A store file truncated under a follower (whose mapping then loses its
 * pages): a clear message and exit status 1, not death by SIGBUS.
 */
static void test_follow_truncated(void **state)
{
	char *path = tu_tmp_path("pkmsg-trunc");
	static char buf[1 << 12];
	size_t len = 0;
	int fd, status;
	pid_t pid;

	(void)state;
	if (tu_sanitized_thread()) {
		/*
		 * pkmsg leaves its SIGBUS handler by siglongjmp(); under
		 * ThreadSanitizer, which intercepts both, the child once
		 * printed its message and then never exited (CI).  The plain
		 * and AddressSanitizer builds run this case.
		 */
		free(path);
		tu_skip("ThreadSanitizer and siglongjmp() out of a SIGBUS handler");
	}
	init_store(path, 0);
	pk_printk(PK_INFO, "before\n");
	pk_shutdown();	/* this process must not touch the mapping either */
	pid = spawn_err((const char *const[]){ PKMSG_PATH, "-w", "-F", path, NULL }, &fd, true);
	buf[0] = '\0';
	read_until(fd, buf, sizeof(buf), &len, "] before\n");
	assert_int_equal(truncate(path, 0), 0);
	read_until(fd, buf, sizeof(buf), &len, "was truncated while being read");
	tu_waitpid(pid, &status, CHILD_MS, "pkmsg -w on a store truncated under it");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	close(fd);
	unlink(path);
	free(path);
}

/* util-linux dmesg -F reads what pkmsg --syslog writes. */
static void test_dmesg_reads_syslog(void **state)
{
#ifdef DMESG_PATH
	char *sl = tu_tmp_path("syslog"), *out, *dm, *human;
	char want[64];
	static const char *const names[] = { "emerg", "alert", "crit", "err",
					     "warn", "notice", "info", "debug" };
	FILE *f;
	int i;

	(void)state;
	out = PKMSG_OK("--syslog", "-F", g_store);
	f = fopen(sl, "w");
	fputs(out, f);
	fclose(f);
	free(out);

	/* Same lines as pkmsg's own human output, timestamps included. */
	{
		const char *const argv[] = { DMESG_PATH, "-F", sl, "--color=never", NULL };
		char *e;

		assert_int_equal(tu_run(argv, NULL, &dm, &e), 0);
		free(e);
	}
	human = PKMSG_OK("-F", g_store);
	assert_string_equal(dm, human);
	free(dm);
	free(human);

	/* Levels and facility decoded by dmesg itself. */
	{
		const char *const argv[] = { DMESG_PATH, "-F", sl, "-x", "--notime", "--color=never",
					     NULL };
		char *e;

		assert_int_equal(tu_run(argv, NULL, &dm, &e), 0);
		free(e);
	}
	for (i = 0; i < NMSG; i++) {
		snprintf(want, sizeof(want), "user  :%-6s: msg %d level %d\n", names[i % 8], i, i % 8);
		if (!has(dm, want))
			fail_msg("dmesg -x output lacks '%s':\n%s", want, dm);
	}
	assert_true(has(dm, "user  :notice: thread-b 0\n"));
	free(dm);
	unlink(sl);
	free(sl);
#else
	(void)state;
	skip();
#endif
}

/* pkmsg ARGS... -F store, with @env set (NAME=VALUE): exit 0 and its stdout. */
static char *pkmsg_env(const char *const argv[], char *const env[])
{
	extern char **environ;
	char *envp[256], *o, *e;
	size_t n = 0, i;
	int rc;

	for (i = 0; env && env[i]; i++)
		envp[n++] = env[i];
	for (i = 0; environ[i] && n < 255; i++) {
		size_t k = strcspn(environ[i], "="), j;

		for (j = 0; env && env[j]; j++)
			if (!strncmp(env[j], environ[i], k + 1))
				break;
		if (!env || !env[j])
			envp[n++] = environ[i];
	}
	envp[n] = NULL;
	rc = tu_run(argv, envp, &o, &e);
	if (rc != 0)
		fail_msg("pkmsg exited %d: %s", rc, e);
	free(e);
	return o;
}

/*
 * pkmsg @argv with stdin, stdout and stderr on a pseudo-terminal (raw: no
 * newline translation), @env entries set first (NAME=VALUE) or unset
 * (NAME).  What it and its children wrote to the terminal; its wait
 * status in *@status.
 */
static char *run_pty(const char *const argv[], const char *const env[], int *status)
{
	size_t len = 0, size = 1 << 16;
	char *buf = malloc(size);
	uint64_t end = tu_now_ns() + 60000000000ull;
	struct termios tio;
	int master, slave, i;
	pid_t pid;

	assert_non_null(buf);
	assert_int_equal(openpty(&master, &slave, NULL, NULL, NULL), 0);
	assert_int_equal(tcgetattr(slave, &tio), 0);
	cfmakeraw(&tio);
	assert_int_equal(tcsetattr(slave, TCSANOW, &tio), 0);
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(master);
		setsid();
		ioctl(slave, TIOCSCTTY, 0);
		dup2(slave, 0);
		dup2(slave, 1);
		dup2(slave, 2);
		if (slave > 2)
			close(slave);
		for (i = 0; env && env[i]; i++) {
			if (strchr(env[i], '='))
				putenv((char *)env[i]);
			else
				unsetenv(env[i]);
		}
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(slave);
	for (;;) {
		struct pollfd pfd = { master, POLLIN, 0 };
		ssize_t n;

		if (tu_now_ns() > end)
			fail_msg("%s under a terminal did not end; got '%.*s'", argv[0], (int)len,
				 buf);
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (len + 1 == size)
			assert_non_null(buf = realloc(buf, size *= 2));
		n = read(master, buf + len, size - len - 1);
		if (n <= 0)	/* EIO: every descriptor of the terminal is closed */
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(master);
	tu_waitpid(pid, status, CHILD_MS, argv[0]);
	return buf;
}

/* run_pty(), which must exit 0. */
static char *pty_ok(const char *const argv[], const char *const env[])
{
	int status;
	char *out = run_pty(argv, env, &status);

	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("pkmsg under a terminal: status %#x, output '%s'", status, out);
	return out;
}

/* -n N: the last N of the records the filters pass. */
static void test_lines(void **state)
{
	char *out;

	(void)state;
	out = PKMSG_OK("-n", "3", "-F", g_store);
	/* The last three: thread-b 2, the two-line record, the escapes (err). */
	assert_int_equal(count_lines(out), 4);
	assert_true(has(out, "] thread-b 2\n"));
	assert_true(has(out, "] line one\n"));
	assert_true(has(out, "] esc "));
	assert_false(has(out, "thread-b 1"));
	free(out);
	out = PKMSG_OK("--lines=2", "-l", "err", "-F", g_store);
	assert_int_equal(count_lines(out), 2);
	assert_true(has(out, "] msg 11 level 3\n"));
	assert_true(has(out, "] esc "));
	free(out);
	out = PKMSG_OK("-n", "0", "-F", g_store);
	assert_string_equal(out, "");
	free(out);
	/* More than there are: all of them. */
	out = PKMSG_OK("-n", "1000", "-r", "-F", g_store);
	assert_int_equal(count_lines(out), NMSG + 5);
	free(out);
	/* With --since-seq: the last of those from there on. */
	out = PKMSG_OK("-n", "100", "--since-seq", "18", "-r", "-F", g_store);
	assert_int_equal(count_lines(out), 3);
	free(out);
	out = PKMSG_OK("-n", "1", "-g", "level 3", "-F", g_store);
	assert_int_equal(count_lines(out), 1);
	assert_true(has(out, "] msg 11 level 3\n"));
	free(out);
	expect_exit(2, "bad number of lines 'x'", ARGV("-n", "x", "-F", g_store));
	expect_exit(2, "bad number of lines '-1'", ARGV("-n", "-1", "-F", g_store));
	expect_exit(2, "exclude each other", ARGV("-n", "1", "-W", "-F", g_store));
}

/* -n N -w: the last N, then what comes. */
static void test_lines_follow(void **state)
{
	char *path = tu_tmp_path("pkmsg-tail");
	static char buf[1 << 16];
	size_t len = 0;
	pid_t pid;
	int fd, i;

	(void)state;
	init_store(path, 0);
	for (i = 0; i < 5; i++)
		pk_printk(PK_INFO, "old %d\n", i);
	pid = spawn(ARGV("-n", "2", "-w", "-F", path), &fd);
	buf[0] = '\0';
	read_until(fd, buf, sizeof(buf), &len, "] old 4\n");
	pk_printk(PK_INFO, "new one\n");
	read_until(fd, buf, sizeof(buf), &len, "] new one\n");
	assert_true(has(buf, "] old 3\n"));
	assert_false(has(buf, "old 2"));
	assert_int_equal(count_lines(buf), 3);
	stop(pid, fd, SIGTERM);

	/* -n 0 -w: only the new ones. */
	len = 0;
	buf[0] = '\0';
	pid = spawn(ARGV("-n", "0", "-w", "-F", path), &fd);
	for (i = 0; i < 6000 && !strstr(buf, "] later "); i++) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t n;

		pk_printk(PK_INFO, "later %d\n", i);
		if (poll(&pfd, 1, 10) > 0 && (n = read(fd, buf + len, sizeof(buf) - len - 1)) > 0) {
			len += (size_t)n;
			buf[len] = '\0';
		}
	}
	read_until(fd, buf, sizeof(buf), &len, "] later ");
	assert_false(has(buf, "old"));
	assert_false(has(buf, "new one"));
	stop(pid, fd, SIGTERM);
	pk_shutdown();
	unlink(path);
	free(path);
}

/* Relative times, around the main store's records (made moments ago). */
static void test_since_until_relative(void **state)
{
	/* Times beyond what 64 bits of nanoseconds hold are as far as they go. */
	static const char *const all[] = { "10 min ago", "-10min", "1h 30min ago", "yesterday",
					   "-2 days", "@0", "200000 days ago", "-300000 d",
					   "1000-01-01", NULL };
	static const char *const none[] = { "+1h", "tomorrow", "+10 minutes", "+200000 days",
					    "@10000000000", "2500-01-01 00:00", NULL };
	char *out;
	int i;

	(void)state;
	for (i = 0; all[i]; i++) {
		out = PKMSG_OK("--since", all[i], "-r", "-F", g_store);
		if (count_lines(out) != NMSG + 5)
			fail_msg("--since '%s' printed '%s'", all[i], out);
		free(out);
		out = PKMSG_OK("--until", all[i], "-r", "-F", g_store);
		if (*out)
			fail_msg("--until '%s' printed '%s'", all[i], out);
		free(out);
	}
	for (i = 0; none[i]; i++) {
		out = PKMSG_OK("-S", none[i], "-r", "-F", g_store);
		if (*out)
			fail_msg("--since '%s' printed '%s'", none[i], out);
		free(out);
		out = PKMSG_OK("-U", none[i], "-r", "-F", g_store);
		if (count_lines(out) != NMSG + 5)
			fail_msg("--until '%s' printed '%s'", none[i], out);
		free(out);
	}
	out = PKMSG_OK("--since", "-1h", "--until", "now", "-r", "-F", g_store);
	assert_int_equal(count_lines(out), NMSG + 5);
	free(out);
	out = PKMSG_OK("--until", "yesterday", "-F", g_store);
	assert_string_equal(out, "");
	free(out);
}

/* Local date and time of @t in @fmt. */
static void local_fmt(char *buf, size_t size, time_t t, const char *fmt)
{
	struct tm tm;

	assert_non_null(localtime_r(&t, &tm));
	assert_true(strftime(buf, size, fmt, &tm) > 0);
}

/*
 * Absolute times: "early" in one second, "late" 200 ms or more into the
 * next, T.  --since T is "late" alone, --until T "early" alone, in each
 * spelling of T; a day is from its midnight.
 */
static void test_since_until_absolute(void **state)
{
	static const char *const forms[] = { "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%H:%M:%S",
					     "@%s" };
	char *path = tu_tmp_path("pkmsg-abs"), when[64], day_t[16], day_now[16], *out;
	struct timespec ts;
	time_t t, today;
	size_t i;

	(void)state;
	init_store(path, 0);
	pk_printk(PK_INFO, "early\n");
	clock_gettime(CLOCK_REALTIME, &ts);
	t = ts.tv_sec + 1;
	do {
		usleep(20000);
		clock_gettime(CLOCK_REALTIME, &ts);
	} while (ts.tv_sec < t || (ts.tv_sec == t && ts.tv_nsec < 200000000));
	pk_printk(PK_INFO, "late\n");
	pk_shutdown();
	today = time(NULL);
	local_fmt(day_t, sizeof(day_t), t, "%Y-%m-%d");
	local_fmt(day_now, sizeof(day_now), today, "%Y-%m-%d");
	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		local_fmt(when, sizeof(when), t, forms[i]);
		/* HH:MM:SS is today's: not when midnight came between. */
		if (!strcmp(forms[i], "%H:%M:%S") && strcmp(day_t, day_now))
			continue;
		out = PKMSG_OK("--since", when, "-F", path);
		if (count_lines(out) != 1 || !has(out, "] late\n"))
			fail_msg("--since '%s' printed '%s'", when, out);
		free(out);
		out = PKMSG_OK("--until", when, "-F", path);
		if (count_lines(out) != 1 || !has(out, "] early\n"))
			fail_msg("--until '%s' printed '%s'", when, out);
		free(out);
	}
	/* A day alone is its midnight; HH:MM takes no seconds. */
	local_fmt(when, sizeof(when), t - 1, "%Y-%m-%d");
	out = PKMSG_OK("--since", when, "-F", path);
	assert_int_equal(count_lines(out), 2);
	free(out);
	out = PKMSG_OK("--until", when, "-F", path);
	assert_string_equal(out, "");
	free(out);
	local_fmt(when, sizeof(when), t - 1, "%Y-%m-%d %H:%M");
	out = PKMSG_OK("--since", when, "-F", path);
	assert_int_equal(count_lines(out), 2);
	free(out);
	unlink(path);
	free(path);
}

/* A bad time names itself, its option and the forms taken. */
static void test_bad_times(void **state)
{
	static const char *const bad[] = { "160", "", "2026-02-30", "2026-13-01", "25:00",
					   "12:60", "10 parsecs ago", "ago", " now", "-", "+x",
					   "@", "@x", "yesterdays", "2026-12-06 04:40:00x" };
	char want[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), "bad time '%s' for --since: expected YYYY-MM-DD",
			 bad[i]);
		expect_exit(2, want, ARGV("--since", bad[i], "-F", g_store));
	}
	expect_exit(2, "bad time 'x' for --until", ARGV("-U", "x", "-F", g_store));
	expect_exit(2, "'SPAN ago'", ARGV("-U", "x", "-F", g_store));
	expect_exit(2, "--since is later than --until",
		    ARGV("-S", "now", "-U", "-1h", "-F", g_store));
	expect_exit(2, "--until and --follow", ARGV("-U", "now", "-w", "-F", g_store));
}

/* --grep: POSIX extended, case folded unless the pattern has capitals. */
static void test_grep(void **state)
{
	char *out;

	(void)state;
	out = PKMSG_OK("-g", "msg 1[0-2] ", "-F", g_store);
	assert_int_equal(count_lines(out), 3);
	assert_true(has(out, "] msg 10 level 2\n") && has(out, "] msg 12 level 4\n"));
	free(out);
	out = PKMSG_OK("--grep=^msg (3|5) ", "-F", g_store);
	assert_int_equal(count_lines(out), 2);
	free(out);
	out = PKMSG_OK("-g", "MSG 1[0-2] ", "-F", g_store);
	assert_string_equal(out, "");
	free(out);
	out = PKMSG_OK("-g", "MSG 1[0-2] ", "--case-sensitive=no", "-F", g_store);
	assert_int_equal(count_lines(out), 3);
	free(out);
	out = PKMSG_OK("-g", "msg", "-F", g_store);
	assert_int_equal(count_lines(out), NMSG);
	free(out);
	out = PKMSG_OK("-g", "Thread-B", "--case-sensitive=no", "-F", g_store);
	assert_int_equal(count_lines(out), 3);
	free(out);
	out = PKMSG_OK("-g", "thread-b", "--case-sensitive", "-F", g_store);
	assert_int_equal(count_lines(out), 3);
	free(out);
	out = PKMSG_OK("-g", "Thread-b", "--case-sensitive=yes", "-F", g_store);
	assert_string_equal(out, "");
	free(out);
	/* The whole text: a second line matches too, and prints its record. */
	out = PKMSG_OK("-g", "line two", "-F", g_store);
	assert_int_equal(count_lines(out), 2);
	free(out);
	expect_exit(2, "bad regular expression '(' for --grep",
		    ARGV("-g", "(", "-F", g_store));
	expect_exit(2, "bad --case-sensitive 'maybe'",
		    ARGV("-g", "x", "--case-sensitive=maybe", "-F", g_store));
}

#define ERR3	"\033[31mmsg 3 level 3\033[0m"

/* --color: the level's color around the escaped text, for a terminal only. */
static void test_color(void **state)
{
	char *out;

	(void)state;
	/* auto on a terminal; the text's own ESC stays escaped inside the color. */
	out = pty_ok(ARGV("-P", "-F", g_store),
		     (const char *const[]){ "NO_COLOR", "TERM=xterm", NULL });
	assert_true(has(out, ERR3));
	assert_true(has(out, "] \033[7;31mmsg 0 level 0\033[0m"));	/* emerg */
	assert_true(has(out, "] \033[7;31mmsg 1 level 1\033[0m"));	/* alert */
	assert_true(has(out, "] \033[1;31mmsg 2 level 2\033[0m"));	/* crit */
	assert_true(has(out, "] \033[1mmsg 4 level 4\033[0m"));	/* warn */
	assert_true(has(out, "] msg 5 level 5\n"));	/* notice, info, debug plain */
	assert_true(has(out, "] msg 6 level 6\n"));
	assert_true(has(out, "] msg 7 level 7\n"));
	assert_true(has(out, "\033[31mesc \\x1b[31m bs\\ tab\t hi\\xff\033[0m\n"));
	free(out);
	/* NO_COLOR, TERM=dumb and never turn auto off on a terminal. */
	out = pty_ok(ARGV("-P", "-F", g_store),
		     (const char *const[]){ "NO_COLOR=1", "TERM=xterm", NULL });
	assert_true(has(out, "] msg 3 level 3\n"));
	assert_null(strchr(out, '\033'));
	free(out);
	out = pty_ok(ARGV("-P", "-F", g_store),
		     (const char *const[]){ "NO_COLOR", "TERM=dumb", NULL });
	assert_null(strchr(out, '\033'));
	free(out);
	out = pty_ok(ARGV("-P", "--color=never", "-F", g_store),
		     (const char *const[]){ "NO_COLOR", "TERM=xterm", NULL });
	assert_true(has(out, "] msg 3 level 3\n"));
	assert_null(strchr(out, '\033'));
	free(out);
	/* NO_COLOR set empty counts as unset. */
	out = pty_ok(ARGV("-P", "--color", "-F", g_store),
		     (const char *const[]){ "NO_COLOR=", "TERM=xterm", NULL });
	assert_true(has(out, ERR3));
	free(out);
	/* Into a file: auto and bare --color do not color, always does. */
	out = PKMSG_OK("-F", g_store);
	assert_null(strchr(out, '\033'));
	free(out);
	out = PKMSG_OK("--color", "-F", g_store);
	assert_null(strchr(out, '\033'));
	free(out);
	out = pkmsg_env(ARGV("--color=always", "-F", g_store),
			(char *const[]){ "NO_COLOR=1", NULL });
	assert_true(has(out, ERR3));
	free(out);
	out = PKMSG_OK("-Lalways", "-F", g_store);
	assert_true(has(out, ERR3));
	free(out);
	/* Never JSON, kmsg or syslog. */
	out = PKMSG_OK("--color=always", "-J", "-F", g_store);
	assert_null(strchr(out, '\033'));
	free(out);
	out = PKMSG_OK("--color=always", "-r", "-F", g_store);
	assert_null(strchr(out, '\033'));
	free(out);
	out = PKMSG_OK("--color=always", "--syslog", "-F", g_store);
	assert_null(strchr(out, '\033'));
	free(out);
	expect_exit(2, "bad color 'yes': expected auto, always or never",
		    ARGV("--color=yes", "-F", g_store));
}

/* A pager that notes it ran, LESS as it saw it, and what it was given. */
static char *make_pager(const char *dir)
{
	char *path = tu_join(dir, "pager.sh");
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "#!/bin/sh\nprintf 'LESS=%%s\\n' \"${LESS-unset}\" > '%s/ran'\n"
		"cat > '%s/paged'\n", dir, dir);
	fclose(f);
	assert_int_equal(chmod(path, 0700), 0);
	return path;
}

/*
 * The pager: $PAGER on a terminal, LESS defaulted as journalctl does, not
 * with --no-pager or -P, not with -w, not into a file, not with PAGER=cat.
 */
static void test_pager(void **state)
{
	char *dir = tu_make_dir("pkmsg-pager", 0700), *pager = make_pager(dir);
	char *ran = tu_join(dir, "ran"), *paged = tu_join(dir, "paged"), *out, *s, env[512];
	const char *envs[4] = { env, "LESS", "NO_COLOR", NULL };
	static char buf[1 << 16];
	size_t len = 0;
	int status;

	(void)state;
	snprintf(env, sizeof(env), "PAGER=%s", pager);
	out = pty_ok(ARGV("-F", g_store), envs);
	free(out);
	s = tu_read_file(ran, NULL);
	assert_non_null(s);
	assert_string_equal(s, "LESS=FRSXMK\n");
	free(s);
	s = tu_read_file(paged, NULL);
	assert_non_null(s);
	assert_int_equal(count_lines(s), NMSG + 6);
	/* The color is decided on the terminal, before the pager: less -R shows it. */
	assert_true(has(s, ERR3));
	free(s);
	unlink(ran);
	unlink(paged);

	/* A LESS of the user's own stays. */
	envs[1] = "LESS=iR";
	out = pty_ok(ARGV("-F", g_store), envs);
	free(out);
	s = tu_read_file(ran, NULL);
	assert_non_null(s);
	assert_string_equal(s, "LESS=iR\n");
	free(s);
	unlink(ran);
	unlink(paged);

	/* --no-pager, -P: straight to the terminal. */
	out = pty_ok(ARGV("--no-pager", "-F", g_store), envs);
	assert_true(has(out, "] msg 15 level 7"));
	free(out);
	out = pty_ok(ARGV("-P", "-F", g_store), envs);
	assert_true(has(out, "] msg 15 level 7"));
	free(out);
	assert_int_equal(access(ran, F_OK), -1);

	/* Into a file: no pager. */
	out = pkmsg_env(ARGV("-F", g_store),
			(char *const[]){ env, NULL });
	assert_int_equal(count_lines(out), NMSG + 6);
	free(out);
	assert_int_equal(access(ran, F_OK), -1);

	/* PAGER=cat, or empty: none. */
	out = pty_ok(ARGV("-F", g_store),
		     (const char *const[]){ "PAGER=cat", NULL });
	assert_true(has(out, "] msg 15 level 7"));
	free(out);
	out = pty_ok(ARGV("-F", g_store),
		     (const char *const[]){ "PAGER=", NULL });
	assert_true(has(out, "] msg 15 level 7"));
	free(out);

	/* -w: never, on a terminal too.  Stopped once it printed the lot. */
	{
		int master, slave;
		pid_t pid;

		assert_int_equal(openpty(&master, &slave, NULL, NULL, NULL), 0);
		pid = tu_fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(master);
			setsid();
			ioctl(slave, TIOCSCTTY, 0);
			dup2(slave, 1);
			setenv("PAGER", pager, 1);
			execl(PKMSG_PATH, PKMSG_PATH, "-w", "-F", g_store, (char *)NULL);
			_exit(127);
		}
		close(slave);
		buf[0] = '\0';
		read_until(master, buf, sizeof(buf), &len, "hi\\xff");
		kill(pid, SIGTERM);
		tu_waitpid(pid, &status, CHILD_MS, "pkmsg -w on a terminal");
		close(master);
		assert_int_equal(access(ran, F_OK), -1);
	}
	unlink(pager);
	rmdir(dir);
	free(pager);
	free(ran);
	free(paged);
	free(dir);
}

/* ---- stores of lanes, made directly (lanesfile.h) ---- */

#define NKEYS	300

/*
 * pkmsg -J output @out must be exactly @keys[from..n), each line with
 * its seq in its lane and its lane; dropped lines are not expected.
 */
static void expect_json_keys(const char *out, const struct key *keys, unsigned from, unsigned n)
{
	const char *p = out, *t;
	unsigned long long seq;
	unsigned lane, i;
	char want[64];

	for (i = from; i < n; i++) {
		if (sscanf(p, "{\"seq\":%llu,\"lane\":%u,", &seq, &lane) != 2)
			fail_msg("line %u of pkmsg -J: '%.80s'", i, p);
		t = strstr(p, "\"text\":\"");
		assert_non_null(t);
		snprintf(want, sizeof(want), "\"text\":\"%s\"}\n", keys[i].text);
		if (seq != keys[i].seq || lane != keys[i].lane || strncmp(t, want, strlen(want)))
			fail_msg("record %u: got seq %llu lane %u '%.40s', wanted seq %llu lane %u %s",
				 i, seq, lane, t, (unsigned long long)keys[i].seq, keys[i].lane, want);
		p = strchr(p, '\n') + 1;
	}
	assert_string_equal(p, "");
}

/*
 * A post-mortem store of 4 lanes whose timestamps interleave: pkmsg -F
 * prints it in exactly the key order (ts, lane, seq), each record's lane
 * beside its seq in -J and -r, the human lines in the same order; -n N
 * the last N of that order; --stats names the lanes.
 */
static void test_lanes_order(void **state)
{
	char *path = tu_tmp_path("pkmsg-lanes"), *out, want[128];
	struct key *keys = calloc(NKEYS, sizeof(*keys));
	const char *p;
	unsigned i;

	(void)state;
	interleaved_store(path, keys, NKEYS, 777u, 2000000000ull);
	out = PKMSG_OK("-J", "-F", path);
	expect_json_keys(out, keys, 0, NKEYS);
	free(out);
	out = PKMSG_OK("-r", "-F", path);
	for (i = 0, p = out; i < NKEYS; i++) {
		snprintf(want, sizeof(want), "14,%llu,%llu,-,lane=%u;%s\n",
			 (unsigned long long)keys[i].seq, (unsigned long long)(keys[i].ts / 1000),
			 keys[i].lane, keys[i].text);
		p = strstr(p, want);
		if (!p)
			fail_msg("pkmsg -r: no '%s' after record %u", want, i);
	}
	free(out);
	out = PKMSG_OK("-F", path);
	assert_int_equal(count_lines(out), NKEYS);
	for (i = 0, p = out; i < NKEYS; i++) {
		snprintf(want, sizeof(want), "] %s\n", keys[i].text);
		p = strstr(p, want);
		assert_non_null(p);
	}
	free(out);
	out = PKMSG_OK("-n", "7", "-J", "-F", path);
	expect_json_keys(out, keys, NKEYS - 7, NKEYS);
	free(out);
	out = PKMSG_OK("-n", "5", "-g", "-l1$", "-J", "-F", path);
	assert_int_equal(count_lines(out), 5);
	free(out);
	out = PKMSG_OK("--stats", "-F", path);
	assert_true(has(out, "lanes:            4\n"));
	assert_true(has(out, "stored:           300\n"));
	free(out);
	out = PKMSG_OK("--stats", "-F", g_store);
	assert_true(has(out, "lanes:            1\n"));
	free(out);
	unlink(path);
	free(keys);
	free(path);
}

/*
 * The cursor line --show-cursor prints last: the cursor, in *@cur (out
 * of line: gcc 12 takes pkmsg_ok()'s buffer for dangling).
 */
static __attribute__((noinline)) void cursor_of(const char *out, char *cur, size_t size)
{
	const char *c = strstr(out, "-- cursor: ");
	size_t n;

	assert_non_null(c);
	c += strlen("-- cursor: ");
	n = strcspn(c, "\n");
	assert_true(n < size);
	memcpy(cur, c, n);
	cur[n] = '\0';
	assert_string_equal(c + n, "\n");	/* the last line */
}

/* @out without its cursor line (out of line: gcc 12 takes PKMSG_OK's buffer for dangling). */
static __attribute__((noinline)) void cut_cursor(char *out)
{
	char *c = strstr(out, "-- cursor: ");

	assert_non_null(c);
	*c = '\0';
}

/*
 * --show-cursor and --after-cursor: a cursor pkmsg printed after some
 * records resumes at exactly the rest, none twice, none missing, by pkmsg
 * and by pk_reader_seek_cursor() alike; one taken by a reader too.
 * --since-seq is refused for a store of several lanes, pointing at them;
 * a malformed or foreign cursor is a usage error.
 */
static void test_lanes_cursor(void **state)
{
	char *path = tu_tmp_path("pkmsg-cursor"), *out, cur[PK_READER_CURSOR_MAX], arg[1500];
	struct key *keys = calloc(NKEYS, sizeof(*keys));
	struct pk_reader *r;
	struct pk_record rec;
	unsigned i, k;

	(void)state;
	interleaved_store(path, keys, NKEYS, 777u, 2000000000ull);
	/* The whole store, then its cursor: nothing after it. */
	out = PKMSG_OK("-J", "--show-cursor", "-F", path);
	cursor_of(out, cur, sizeof(cur));
	assert_int_equal(strncmp(cur, "pk1:g=1:l=4:s=", 14), 0);
	free(out);
	snprintf(arg, sizeof(arg), "--after-cursor=%s", cur);
	out = PKMSG_OK(arg, "-F", path);
	assert_string_equal(out, "");
	free(out);
	/* -n N --show-cursor, then the rest from another cursor. */
	for (k = 1; k < NKEYS; k += 73) {
		r = pk_reader_open_file(path);
		assert_non_null(r);
		for (i = 0; i < k; i++)
			assert_int_equal(pk_reader_next(r, &rec), 1);
		assert_true(pk_reader_cursor(r, cur, sizeof(cur)) > 0);
		pk_reader_close(r);
		snprintf(arg, sizeof(arg), "--after-cursor=%s", cur);
		out = PKMSG_OK("-J", arg, "-F", path);
		expect_json_keys(out, keys, k, NKEYS);
		free(out);
		/* The same with its argument apart, and a cursor pkmsg printed resumes it. */
		out = PKMSG_OK("-J", "--show-cursor", "--after-cursor", cur, "-F", path);
		cursor_of(out, cur, sizeof(cur));
		cut_cursor(out);
		expect_json_keys(out, keys, k, NKEYS);
		free(out);
	}
	/* A cursor of a dump with filters: after every record read, printed or not. */
	out = PKMSG_OK("-g", "^r1", "--show-cursor", "-F", path);
	cursor_of(out, cur, sizeof(cur));
	free(out);
	r = pk_reader_open_file(path);
	assert_int_equal(pk_reader_seek_cursor(r, cur), 0);
	assert_int_equal(pk_reader_next(r, &rec), 0);
	pk_reader_close(r);

	expect_exit(2, "--since-seq: this store has 4 lanes", ARGV("--since-seq", "3", "-F", path));
	expect_exit(2, "--after-cursor=CURSOR", ARGV("--since-seq", "3", "-F", path));
	expect_exit(2, "cursor 'pk1:g=1:l=2:s=0,0' is malformed or not of this store (a store of "
		    "4 lanes, generation 1)", ARGV("--after-cursor=pk1:g=1:l=2:s=0,0", "-F", path));
	expect_exit(2, "is malformed", ARGV("--after-cursor", "junk", "-F", path));
	expect_exit(2, "--after-cursor excludes", ARGV("--after-cursor", "x", "--since-seq", "1",
						       "-F", path));
	expect_exit(2, "--after-cursor excludes", ARGV("--after-cursor", "x", "-W", "-F", path));
	expect_exit(2, "exclude --clear and --stats", ARGV("--show-cursor", "--stats", "-F", path));
	expect_exit(2, "'--show-cursor'?", ARGV("--show-cur", "-F", path));
	/* A store of one lane: --since-seq still, and cursors too. */
	out = PKMSG_OK("-r", "--since-seq", "19", "--show-cursor", "-F", g_store);
	assert_int_equal(count_lines(out), 3);
	cursor_of(out, cur, sizeof(cur));
	assert_string_equal(cur, "pk1:g=1:l=1:s=21");
	free(out);
	out = PKMSG_OK("-r", "--after-cursor=pk1:g=1:l=1:s=19", "-F", g_store);
	assert_int_equal(count_lines(out), 2);
	assert_true(has(out, ",19,"));
	assert_false(has(out, "lane="));
	free(out);
	unlink(path);
	free(keys);
	free(path);
}

/*
 * Lost records are reported for their lane: a seq a dead writer took in
 * lane 2 shows as one dropped record of lane 2, before its next record
 * and nowhere else, in every format.
 */
static void test_lanes_dropped(void **state)
{
	char *path = tu_tmp_path("pkmsg-lanegap"), *out;
	struct lanes_file f;

	(void)state;
	lf_create(&f, path, 4, 13);
	lf_put(&f, 0, 1000, "zero a");
	lf_put(&f, 2, 2000, "two a");
	atomic_fetch_add(&f.ls.lane[2].h->seq_head, 1);		/* a writer died */
	lf_put(&f, 1, 3000, "one a");
	lf_put(&f, 2, 4000, "two b");
	lf_put(&f, 3, 5000, "three a");
	lf_close(&f);
	out = PKMSG_OK("-F", path);
	assert_true(has(out, "] one a\n** 1 printk messages dropped in lane 2 **\n[    0.000004] two b\n"));
	assert_int_equal(tu_count(out, "dropped"), 1);
	free(out);
	out = PKMSG_OK("-J", "-F", path);
	assert_true(has(out, "\"text\":\"one a\"}\n{\"dropped\":1,\"lane\":2}\n{\"seq\":2,\"lane\":2,"));
	free(out);
	out = PKMSG_OK("-r", "-F", path);
	assert_true(has(out, "one a\n** 1 printk messages dropped in lane 2 **\n14,2,4,-,lane=2;two b\n"));
	free(out);
	unlink(path);
	free(path);
}

/*
 * Stores of lanes pkmsg cannot read say why: a lane count out of range, a
 * lane of another version (named, with both versions).
 */
static void test_lanes_refused(void **state)
{
	char *path = tu_tmp_path("pkmsg-lanebad");
	struct lanes_file f;

	(void)state;
	lf_create(&f, path, 4, 13);
	f.ls.lane[0].h->lanes = 65;
	lf_close(&f);
	expect_exit(1, "corrupt store header: 65 lanes (a store has 1 to 64)", ARGV("-F", path));
	lf_create(&f, path, 4, 13);
	f.ls.lane[2].h->version = 8;
	lf_close(&f);
	expect_exit(1, "lane 2 of the store file has format version 8, this libprintk reads "
		    "version 10", ARGV("-F", path));
	lf_create(&f, path, 4, 13);
	lf_close(&f);
	assert_int_equal(truncate(path, (off_t)(f.size - 512)), 0);
	expect_exit(1, "store file is truncated", ARGV("-F", path));
	unlink(path);
	free(path);
}

/*
 * pkmsg -w on a store of 4 lanes whose writer is alive: records stored
 * in any lane come out in order, each once; -W only the new ones; the
 * cursor it prints when interrupted is where it stopped.
 */
static void test_lanes_follow(void **state)
{
	char *path = tu_tmp_path("pkmsg-lanefollow"), want[64], cur[PK_READER_CURSOR_MAX];
	static char buf[1 << 16];
	struct pk_config cfg;
	struct lanes_file f;
	struct pk_reader *r;
	struct pk_record rec;
	size_t len = 0;
	const char *p;
	pid_t pid;
	int fd, i;

	(void)state;
	pk_config_init(&cfg);
	cfg.buffer_path = path;
	cfg.buffer_size = 64u << 10;
	assert_int_equal(pk__persist_open_lanes(&cfg, 4, &f.mem, &f.size, &f.fd), 0);
	assert_int_equal(pk__lanes_attach(&f.ls, f.mem, f.size), 0);
	assert_int_equal(f.ls.n, 4);
	lf_put(&f, 1, tu_now_ns(), "before");
	pid = spawn((const char *const[]){ PKMSG_PATH, "-w", "--show-cursor", "-F", path, NULL },
		    &fd);
	buf[0] = '\0';
	read_until(fd, buf, sizeof(buf), &len, "] before\n");
	for (i = 0; i < 40; i++) {
		snprintf(want, sizeof(want), "lanes %d", i);
		lf_put(&f, (unsigned)(i * 3) % 4, tu_now_ns(), want);
	}
	read_until(fd, buf, sizeof(buf), &len, "] lanes 39\n");
	for (i = 0, p = buf; i < 40; i++) {
		snprintf(want, sizeof(want), "] lanes %d\n", i);
		p = strstr(p, want);
		assert_non_null(p);	/* all of them, in order */
		assert_int_equal(tu_count(buf, want), 1);
	}
	kill(pid, SIGINT);
	read_until(fd, buf, sizeof(buf), &len, "-- cursor: ");
	read_until(fd, buf, sizeof(buf), &len, "\n-- cursor: pk1:g=1:l=4:s=");
	{
		int status;

		tu_waitpid(pid, &status, CHILD_MS, "pkmsg -w after SIGINT");
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
	}
	{
		ssize_t n;

		while ((n = read(fd, buf + len, sizeof(buf) - len - 1)) > 0)
			len += (size_t)n;
		buf[len] = '\0';
	}
	close(fd);
	cursor_of(strstr(buf, "-- cursor: "), cur, sizeof(cur));
	r = pk_reader_open_file(path);
	assert_int_equal(pk_reader_seek_cursor(r, cur), 0);
	assert_int_equal(pk_reader_next(r, &rec), 0);	/* it stopped after all of them */
	lf_put(&f, 2, tu_now_ns(), "after");
	assert_int_equal(pk_reader_wait(r, 5000), 1);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_string_equal(rec.text, "after");
	pk_reader_close(r);
	/* A dump by a read-only reader of the live store: all of it, in order, at once. */
	{
		uint64_t t0 = tu_now_ns();
		char *out = PKMSG_OK("-F", path);

		assert_true(tu_now_ns() - t0 < 2000000000ull);
		assert_int_equal(count_lines(out), 42);
		for (i = 0, p = out; i < 40; i++) {
			snprintf(want, sizeof(want), "] lanes %d\n", i);
			p = strstr(p, want);
			assert_non_null(p);
		}
		assert_non_null(strstr(p, "] after\n"));
		free(out);
	}

	/* -W: only what comes after it started. */
	len = 0;
	buf[0] = '\0';
	pid = spawn((const char *const[]){ PKMSG_PATH, "-W", "-F", path, NULL }, &fd);
	for (i = 0; i < 6000 && !strstr(buf, "] new "); i++) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t n;

		snprintf(want, sizeof(want), "new %d", i);
		lf_put(&f, (unsigned)i % 4, tu_now_ns(), want);
		if (poll(&pfd, 1, 10) > 0 && (n = read(fd, buf + len, sizeof(buf) - len - 1)) > 0) {
			len += (size_t)n;
			buf[len] = '\0';
		}
	}
	read_until(fd, buf, sizeof(buf), &len, "] new ");
	assert_null(strstr(buf, "before"));
	assert_null(strstr(buf, "lanes "));
	assert_null(strstr(buf, "after"));
	kill(pid, SIGTERM);
	{
		int status;

		tu_waitpid(pid, &status, CHILD_MS, "pkmsg -W after SIGTERM");
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	}
	close(fd);
	pk__persist_close(f.mem, f.size, f.fd);
	unlink(path);
	free(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_human),
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_syslog),
		cmocka_unit_test(test_level_filter),
		cmocka_unit_test(test_not_a_file_named),
		cmocka_unit_test(test_seq_and_tid_filters),
		cmocka_unit_test(test_timestamps),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_no_abbreviations),
		cmocka_unit_test(test_not_regular_unopened),
		cmocka_unit_test(test_dropped_line),
		cmocka_unit_test(test_clear_while_writing),
		cmocka_unit_test(test_follow),
		cmocka_unit_test(test_follow_truncated),
		cmocka_unit_test(test_dmesg_reads_syslog),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_lines_follow),
		cmocka_unit_test(test_since_until_relative),
		cmocka_unit_test(test_since_until_absolute),
		cmocka_unit_test(test_bad_times),
		cmocka_unit_test(test_grep),
		cmocka_unit_test(test_color),
		cmocka_unit_test(test_pager),
		cmocka_unit_test(test_lanes_order),
		cmocka_unit_test(test_lanes_cursor),
		cmocka_unit_test(test_lanes_dropped),
		cmocka_unit_test(test_lanes_refused),
		cmocka_unit_test(test_lanes_follow),
	};

	return TU_RUN_GROUP(tests, setup, teardown, argc, argv);
}
