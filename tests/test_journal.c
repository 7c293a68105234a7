// SPDX-License-Identifier: MIT
/*
 * test_journal - the journal console (console/journal.c, PK_FMT_JOURNAL in
 * format/format.c) against a real systemd-journald, read back with
 * journalctl -o json.
 *
 * If no journald listens on /run/systemd/journal/socket, the test starts
 * one itself (as root, when /lib/systemd/systemd-journald is installed:
 * Debian's "systemd" package), with rate limiting off through
 * /run/systemd/journald.conf.d, and stops it at the end.  Where journald
 * cannot run, every case is skipped (exit 77) with the reason, unless
 * PK_TEST_JOURNAL=1 (CI) makes that a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/format.h"
#include "printk/console.h"
#include "printk/printk.h"
#include "printk/reader.h"
#include "testutil.h"

#define SOCK		"/run/systemd/journal/socket"
#define JOURNALD	"/lib/systemd/systemd-journald"
#define JOURNALCTL	"/usr/bin/journalctl"
#define BURST		10000
#define QLEN		"/proc/sys/net/unix/max_dgram_qlen"
#define DROPIN		"/run/systemd/journald.conf.d/50-libprintk-test.conf"

static pid_t journald_pid;	/* the journald this test started, or 0 */
static const char *why_not;	/* why journald cannot run here */

static bool journal_listens(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX, .sun_path = SOCK };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	ok = !connect(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return ok;
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror(path);
		close(fd);
	}
}

/* A journald to talk to: the one running, or one started here.  */
static bool journal_up(void)
{
	struct stat st;
	long old_qlen = -1;
	char num[24];
	FILE *qlen;
	int i;

	if (journal_listens())
		return true;
	if (why_not)
		return false;
	if (geteuid()) {
		why_not = "no journald listening, and not root to start one";
		return false;
	}
	if (access(JOURNALD, X_OK) || access(JOURNALCTL, X_OK)) {
		why_not = "no journald listening, and no " JOURNALD " (apt-get install systemd)";
		return false;
	}
	/* journald wants its directory and a machine id. */
	mkdir("/run/systemd", 0755);
	mkdir("/run/systemd/journal", 0755);
	mkdir("/run/systemd/journald.conf.d", 0755);
	if (stat("/etc/machine-id", &st) || st.st_size < 32) {
		const char *argv[] = { "/usr/bin/systemd-machine-id-setup", NULL };
		char *out = NULL, *err = NULL;

		tu_run(argv, NULL, &out, &err);
		free(out);
		free(err);
	}
	/* 10,000 records in a burst: no rate limit, and memory only. */
	write_file(DROPIN,
		   "[Journal]\nStorage=volatile\nRateLimitIntervalSec=0\nRateLimitBurst=0\n");
	/*
	 * Its socket takes as many queued datagrams as net.unix.max_dgram_qlen
	 * says when it is made: the kernel's default is 10, systemd sets 512
	 * (sysctl.d/50-default.conf) before journald starts.  So does this
	 * test, for journald's socket alone: the old value is put back.
	 */
	qlen = fopen(QLEN, "r");
	if (qlen && fscanf(qlen, "%ld", &old_qlen) != 1)
		old_qlen = -1;
	if (qlen)
		fclose(qlen);
	if (old_qlen >= 0 && old_qlen < 512)
		write_file(QLEN, "512\n");
	journald_pid = fork();
	if (journald_pid == 0) {
		int null = open("/dev/null", O_RDWR);

		setsid();
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		execl(JOURNALD, JOURNALD, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 100 && journald_pid > 0 && !journal_listens(); i++)
		usleep(50000);
	if (old_qlen >= 0 && old_qlen < 512) {
		snprintf(num, sizeof(num), "%ld\n", old_qlen);
		write_file(QLEN, num);
	}
	if (journal_listens())
		return true;
	why_not = "journald was started but does not listen on " SOCK;
	return false;
}

#define NEED_JOURNAL()                                                                   \
	do {                                                                             \
		const char *must_ = getenv("PK_TEST_JOURNAL");                           \
		if (!journal_up()) {                                                     \
			print_message("%s: skipped\n", why_not);                         \
			assert_false(must_ && !strcmp(must_, "1"));                      \
			skip();                                                          \
		}                                                                        \
	} while (0)

static int setup(void **state)
{
	struct pk_config cfg;

	(void)state;
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.mode = PK_MODE_HANDOFF;
	cfg.buffer_size = 4 << 20;
	return pk_init(&cfg);
}

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	return 0;
}

/* ---- journalctl -o json, one object a line ---- */

/* The value of @key in the JSON object at @obj (one line). */
enum { JV_NONE, JV_STRING, JV_BYTES, JV_MULTI, JV_NULL };
static int jget(const char *obj, const char *key, char *out, size_t cap, size_t *len)
{
	char pat[96];
	const char *p = obj, *eol = strchr(obj, '\n');
	size_t n = 0;

	if (!eol)
		eol = obj + strlen(obj);
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	for (;;) {
		p = strstr(p, pat);
		if (!p || p >= eol)
			return JV_NONE;
		if (p[-1] == '{' || p[-1] == ',')
			break;
		p++;
	}
	p += strlen(pat);
	if (!strncmp(p, "null", 4))
		return JV_NULL;
	if (*p == '[') {
		for (p++; *p && *p != ']'; p++) {
			if (*p == '"')
				return JV_MULTI;
			if (*p >= '0' && *p <= '9') {
				if (n < cap)
					out[n] = (char)strtoul(p, (char **)&p, 10);
				n++;
				p--;
			}
		}
		*len = n;
		return JV_BYTES;
	}
	if (*p != '"')
		return JV_NONE;
	for (p++; *p && *p != '"'; p++) {
		char c = *p;

		if (c == '\\') {
			c = *++p;
			if (c == 'n')
				c = '\n';
			else if (c == 't')
				c = '\t';
			else if (c == 'r')
				c = '\r';
			else if (c == 'u') {
				c = (char)strtoul((char[5]){ p[1], p[2], p[3], p[4], 0 }, NULL, 16);
				p += 4;
			}
		}
		if (n < cap)
			out[n] = c;
		n++;
	}
	if (n < cap)
		out[n] = '\0';
	*len = n;
	return JV_STRING;
}

/* A string field of @obj, "" if it has none (static buffer). */
static const char *jstr(const char *obj, const char *key)
{
	static char buf[4096];
	size_t len;

	if (jget(obj, key, buf, sizeof(buf) - 1, &len) != JV_STRING)
		return "";
	return buf;
}

/* Returns once journald has taken in every entry sent before the call. */
static void jsync(void)
{
	const char *sync[] = { JOURNALCTL, "--sync", NULL };
	char *out = NULL, *err = NULL;

	tu_run(sync, NULL, &out, &err);
	free(out);
	free(err);
}

static char *jctl(const char *ident)
{
	char match[128];
	const char *argv[] = { JOURNALCTL, "-a", "-o", "json", "--no-pager", match, NULL };
	char *out = NULL, *err = NULL;

	snprintf(match, sizeof(match), "SYSLOG_IDENTIFIER=%s", ident);
	jsync();
	tu_run(argv, NULL, &out, &err);
	free(err);
	return out;
}

static size_t lines(const char *s)
{
	size_t n = 0;

	for (; s && (s = strchr(s, '\n')); s++)
		n++;
	return n;
}

/* The entries of @ident once there are @want of them (10 s at most). */
static char *journal_entries(const char *ident, size_t want)
{
	char *out = NULL;
	int i;

	for (i = 0; i < 100; i++) {
		free(out);
		out = jctl(ident);
		if (lines(out) >= want)
			break;
		usleep(100000);
	}
	return out;
}

/* The line of @all whose MESSAGE is @msg. */
static const char *entry_with(const char *all, const char *msg)
{
	const char *p;

	for (p = all; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strcmp(jstr(p, "MESSAGE"), msg))
			return p;
	return NULL;
}

/* The entries of @ident once one says @msg (10 s at most). */
static char *journal_entries_until(const char *ident, const char *msg)
{
	char *out = NULL;
	int i;

	for (i = 0; i < 100; i++) {
		free(out);
		out = jctl(ident);
		if (entry_with(out, msg))
			break;
		usleep(100000);
	}
	return out;
}

static struct pk_console *journal_console(const char *ident)
{
	struct pk_console_driver drv;

	assert_int_equal(pk_console_journal_make(NULL, ident, &drv), 0);
	assert_int_equal(drv.format, PK_FMT_JOURNAL);
	return pk_console_register_driver(&drv, 8);
}

static void make_ident(char *buf, size_t size, const char *what)
{
	snprintf(buf, size, "pkjt-%s-%d-%llu", what, (int)getpid(),
		 (unsigned long long)(tu_now_ns() % 1000000000ull));
}

static uint64_t seq_of(const char *text)
{
	struct pk_reader *r = pk_reader_open();
	struct pk_record rec;
	uint64_t seq = UINT64_MAX;

	assert_non_null(r);
	while (pk_reader_next(r, &rec) == 1)
		if (!strcmp(rec.text, text))
			seq = rec.seq;
	pk_reader_close(r);
	return seq;
}

/* ---- cases ---- */

static void test_fields(void **state)
{
	static struct pk_module jmod = { "jtest_mod", PK_DEBUG, PK_DEBUG, 0, 0, 0 };
	char ident[64], msg[128], want[32], at[16];
	const char *e;
	char *all;
	struct pk_console *con;

	(void)state;
	NEED_JOURNAL();
	make_ident(ident, sizeof(ident), "fields");
	con = journal_console(ident);
	assert_non_null(con);
	snprintf(msg, sizeof(msg), "fields test %s", ident);
	pk_printk_fields(PK_ERR, PK_FIELDS({ "REQUEST_ID", "42" }, { "USER_NAME", "bob" }),
			 "%s\n", msg);
	(void)pk_module_register(&jmod);
	pk_printk_mod(&jmod, PK_INFO, "module test\n");
	pk_notice("located %s\n", ident); snprintf(at, sizeof(at), "%d", __LINE__);
	assert_int_equal(pk_flush(5000), 0);
	all = journal_entries(ident, 3);
	assert_non_null(all);
	e = entry_with(all, msg);
	assert_non_null(e);
	assert_string_equal(jstr(e, "PRIORITY"), "3");
	assert_string_equal(jstr(e, "SYSLOG_FACILITY"), "1");
	assert_string_equal(jstr(e, "SYSLOG_IDENTIFIER"), ident);
	snprintf(want, sizeof(want), "%d", (int)getpid());
	assert_string_equal(jstr(e, "SYSLOG_PID"), want);
	assert_string_equal(jstr(e, "_PID"), want);
	snprintf(want, sizeof(want), "%d", (int)gettid());
	assert_string_equal(jstr(e, "TID"), want);
	snprintf(want, sizeof(want), "%llu", (unsigned long long)seq_of(msg));
	assert_string_equal(jstr(e, "PRINTK_SEQ"), want);
	assert_string_equal(jstr(e, "REQUEST_ID"), "42");
	assert_string_equal(jstr(e, "USER_NAME"), "bob");
	assert_string_equal(jstr(e, "_TRANSPORT"), "journal");
	/* No module, no call site known: not said. */
	assert_string_equal(jstr(e, "PRINTK_MODULE"), "");
	assert_string_equal(jstr(e, "CODE_FILE"), "");
	assert_string_equal(jstr(e, "PRINTK_FIELDS_SKIPPED"), "");
	e = entry_with(all, "module test");
	assert_non_null(e);
	assert_string_equal(jstr(e, "PRINTK_MODULE"), "jtest_mod");
	assert_string_equal(jstr(e, "PRIORITY"), "6");
	/* A level macro's call site. */
	snprintf(msg, sizeof(msg), "located %s", ident);
	e = entry_with(all, msg);
	assert_non_null(e);
	assert_string_equal(jstr(e, "CODE_LINE"), at);
	assert_string_equal(jstr(e, "CODE_FUNC"), "test_fields");
	assert_non_null(strstr(jstr(e, "CODE_FILE"), "test_journal.c"));
	assert_string_equal(jstr(e, "PRIORITY"), "5");
	pk_module_unregister(&jmod);
	free(all);
	assert_int_equal(pk_console_unregister(con), 0);
}

/* Each level is its PRIORITY; the spec syntax names the console. */
static void test_priorities(void **state)
{
	char ident[64], spec[160], msg[64];
	struct pk_console_stats st;
	struct pk_console *con;
	const char *e;
	char *all;
	int l;

	(void)state;
	NEED_JOURNAL();
	make_ident(ident, sizeof(ident), "prio");
	snprintf(spec, sizeof(spec), "journal@8,app=%s,name=jprio", ident);
	assert_int_equal(pk_console_register_spec(spec), 1);
	con = pk_console_find("jprio");
	assert_non_null(con);
	for (l = PK_EMERG; l <= PK_DEBUG; l++)
		pk_printk(l, "level %d\n", l);
	assert_int_equal(pk_flush(5000), 0);
	all = journal_entries(ident, 8);
	for (l = PK_EMERG; l <= PK_DEBUG; l++) {
		char want[4];

		snprintf(msg, sizeof(msg), "level %d", l);
		e = entry_with(all, msg);
		assert_non_null(e);
		snprintf(want, sizeof(want), "%d", l);
		assert_string_equal(jstr(e, "PRIORITY"), want);
	}
	free(all);
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	assert_int_equal(st.write_errors, 0);
	assert_int_equal(pk_console_unregister(con), 0);
	/* fmt= makes no sense for this console; app= is its identifier. */
	assert_int_equal(pk_console_register_spec("journal,fmt=json"), 0);
	assert_int_equal(pk_console_register_spec("journal:"), 0);
}

/* Newlines and control bytes keep their bytes (the binary form). */
static void test_multiline_binary(void **state)
{
	static const char bin[] = "bin\x01\x02\x1b[31mred\x7f end";
	char ident[64], got[256];
	struct pk_console *con;
	const char *e, *p;
	char *all;
	size_t len;
	int found = 0;

	(void)state;
	NEED_JOURNAL();
	make_ident(ident, sizeof(ident), "bin");
	con = journal_console(ident);
	pk_info("first line\nsecond line\n\tthird\n");
	pk_printk_fields(PK_INFO, PK_FIELDS({ "NOTE", "a\nb" }), "%s\n", bin);
	assert_int_equal(pk_flush(5000), 0);
	all = journal_entries(ident, 2);
	e = entry_with(all, "first line\nsecond line\n\tthird");
	assert_non_null(e);
	for (p = all; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (jget(p, "MESSAGE", got, sizeof(got), &len) != JV_BYTES)
			continue;
		assert_int_equal(len, sizeof(bin) - 1);
		assert_memory_equal(got, bin, len);
		assert_string_equal(jstr(p, "NOTE"), "a\nb");
		found++;
	}
	assert_int_equal(found, 1);
	free(all);
	assert_int_equal(pk_console_unregister(con), 0);
}

/*
 * Keys journald refuses, as a store file may hold them: raised, mapped,
 * or left out and counted (format.c's rendering sent by the driver).
 */
static void test_field_keys(void **state)
{
	const struct pk_field f[] = {
		{ "user-name", "u" }, { "_HIDDEN", "h" }, { "9LIVES", "c" },
		{ "PRIORITY", "0" }, { "OK_KEY", "k" },
		/* Families journald gives a meaning of their own. */
		{ "SYSLOG_RAW", "<0>forged" }, { "SYSLOG_TIMESTAMP", "Jan  1 00:00:00" },
		{ "CODE_COLUMN", "9" }, { "OBJECT_PID", "1" },
	};
	struct pk_format_opts fo = { .fmt = PK_FMT_JOURNAL };
	struct pk_record r = { 0 };
	struct pk_console_driver drv;
	char ident[64], buf[4096];
	const char *e;
	char *all;
	size_t n;

	(void)state;
	NEED_JOURNAL();
	make_ident(ident, sizeof(ident), "keys");
	r.seq = 77;
	r.level = PK_NOTICE;
	r.facility = 3;
	r.pid = 1234;
	r.tid = 1235;
	r.text = "keys";
	r.len = 4;
	r.fields = f;
	r.nfields = 9;
	n = pk__format_record(buf, sizeof(buf), &r, &fo);
	assert_memory_equal(buf, "PRIORITY=5\n", 11);
	assert_int_equal(pk_console_journal_make(NULL, ident, &drv), 0);
	assert_int_equal(drv.ops->write(drv.ctx, buf, n), (long)n);
	/* Plain text (not an entry) becomes the MESSAGE of one. */
	assert_int_equal(drv.ops->write(drv.ctx, "plain\ntext\n", 11), 11);
	drv.ops->release(drv.ctx);
	all = journal_entries(ident, 2);
	e = entry_with(all, "keys");
	assert_non_null(e);
	assert_string_equal(jstr(e, "USER_NAME"), "u");
	assert_string_equal(jstr(e, "OK_KEY"), "k");
	assert_string_equal(jstr(e, "PRIORITY"), "5");
	assert_string_equal(jstr(e, "SYSLOG_FACILITY"), "3");
	assert_string_equal(jstr(e, "PRINTK_SEQ"), "77");
	assert_string_equal(jstr(e, "PRINTK_FIELDS_SKIPPED"), "7");
	assert_string_equal(jstr(e, "_HIDDEN"), "");
	assert_string_equal(jstr(e, "SYSLOG_RAW"), "");
	assert_string_equal(jstr(e, "SYSLOG_TIMESTAMP"), "");
	assert_string_equal(jstr(e, "CODE_COLUMN"), "");
	assert_string_equal(jstr(e, "OBJECT_PID"), "");
	e = entry_with(all, "plain\ntext");
	assert_non_null(e);
	assert_string_equal(jstr(e, "PRIORITY"), "4");
	free(all);
}

/*
 * An entry larger than a datagram may be goes through a sealed memfd.
 * The driver asks for an 8 MiB send buffer, capped at twice wmem_max: an
 * entry above that cannot be a datagram.  Also one of 300 KiB.
 */
static void test_large(void **state)
{
	struct pk_console_driver drv;
	char ident[64], *buf, *all, *got;
	size_t sizes[2] = { 300 << 10, 0 }, size, len, hdr, i, k;
	unsigned long wmem = 212992;
	FILE *f = fopen("/proc/sys/net/core/wmem_max", "r");

	(void)state;
	NEED_JOURNAL();
	if (f) {
		if (fscanf(f, "%lu", &wmem) != 1)
			wmem = 212992;
		fclose(f);
	}
	sizes[1] = 2 * wmem + (64 << 10);
	if (sizes[1] > (8u << 20) + (64 << 10))
		sizes[1] = (8u << 20) + (64 << 10);
	make_ident(ident, sizeof(ident), "large");
	assert_int_equal(pk_console_journal_make(NULL, ident, &drv), 0);
	for (k = 0; k < 2; k++) {
		size = sizes[k];
		buf = malloc(size + 64);
		got = malloc(size + 1);
		assert_non_null(buf);
		hdr = (size_t)sprintf(buf, "PRIORITY=6\nPK_BIG=%zu\nMESSAGE=", k);
		for (i = 0; i < size; i++)
			buf[hdr + i] = (char)('a' + (i * 7 + k) % 26);
		buf[hdr + size] = '\n';
		assert_int_equal(drv.ops->write(drv.ctx, buf, hdr + size + 1),
				 (long)(hdr + size + 1));
		all = journal_entries(ident, k + 1);
		assert_non_null(all);
		assert_int_equal(jget(all + (k ? strlen(all) - strlen(strrchr(all, '{')) : 0),
				      "MESSAGE", got, size + 1, &len), JV_STRING);
		assert_int_equal(len, size);
		assert_memory_equal(got, buf + hdr, size);
		print_message("a message of %zu bytes reached journald\n", size);
		free(all);
		free(buf);
		free(got);
	}
	drv.ops->release(drv.ctx);
}

/*
 * BURST records in order.  Paced (a flush every 4 records, and every 256
 * a journalctl --sync, which returns once journald has read what was sent
 * before it: never more queued than the socket's 512 datagrams, however
 * slowly a loaded machine runs journald), none may be lost; flooded, every
 * record is either in the journal or counted in a drop notice that is.
 */
static void burst(bool paced, unsigned *got, unsigned long long *dropped,
		  unsigned long long *errors)
{
	char ident[64];
	struct pk_console_stats st;
	struct pk_console *con;
	const char *p;
	long last = -1, v;
	char *all;
	unsigned i;

	make_ident(ident, sizeof(ident), paced ? "paced" : "flood");
	con = journal_console(ident);
	assert_non_null(con);
	for (i = 0; i < BURST; i++) {
		pk_info("burst %u\n", i);
		if (paced && i % 4 == 3)
			pk_flush(1000);
		if (paced && i % 256 == 255)
			jsync();
	}
	assert_int_equal(pk_flush(10000), 0);
	usleep(200000);
	pk_info("burst end\n");	/* carries a pending drop notice */
	assert_int_equal(pk_flush(5000), 0);
	all = journal_entries_until(ident, "burst end");
	*got = 0;
	*dropped = 0;
	for (p = all; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *m = jstr(p, "MESSAGE");

		if (!strncmp(m, "burst ", 6) && strcmp(m, "burst end")) {
			v = strtol(m + 6, NULL, 10);
			assert_true(v > last);	/* in order, once */
			last = v;
			(*got)++;
		}
		/* A notice's, or a record's that carries the count before it. */
		if (*jstr(p, "PRINTK_DROPPED"))
			*dropped += strtoull(jstr(p, "PRINTK_DROPPED"), NULL, 10);
	}
	assert_non_null(entry_with(all, "burst end"));
	free(all);
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	*errors = st.write_errors;
	assert_int_equal(pk_console_unregister(con), 0);
}

static void test_burst_paced(void **state)
{
	unsigned long long dropped, errors;
	unsigned got;

	(void)state;
	NEED_JOURNAL();
	burst(true, &got, &dropped, &errors);
	print_message("paced: %u of %u in the journal, %llu reported dropped, %llu write errors\n",
		      got, BURST, dropped, errors);
	assert_int_equal(got, BURST);
	assert_int_equal(dropped, 0);
}

static void test_burst_flood(void **state)
{
	unsigned long long dropped, errors;
	unsigned got;

	(void)state;
	NEED_JOURNAL();
	burst(false, &got, &dropped, &errors);
	print_message("flood: %u of %u in the journal, %llu reported dropped, %llu write errors\n",
		      got, BURST, dropped, errors);
	assert_int_equal(got + dropped, BURST);
}

static int bind_dgram(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	unlink(path);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static void write_entry(struct pk_console_driver *drv, const char *e, long want)
{
	assert_int_equal(drv->ops->write(drv->ctx, e, strlen(e)), want);
}

static void recv_entry(int fd, const char *want)
{
	char buf[512];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

/*
 * No journald needed: a socket of the test's own at the path given.  A
 * restarted journal (a new socket at the path) is reconnected to; a full
 * socket drops at once, counted, and the next entry sent is preceded by
 * the count.  Bad arguments are refused.
 */
static void test_reconnect_drops(void **state)
{
	static const char one[] = "PRIORITY=6\nMESSAGE=one\n";
	struct pk_console_driver drv;
	char *path = tu_tmp_path("jsock"), longp[200];
	int srv, i, lost = 0;
	long ret;

	(void)state;
	assert_int_equal(pk_console_journal_make(path, "recon", &drv), -ENOENT);
	memset(longp, 'x', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	assert_int_equal(pk_console_journal_make(longp, NULL, &drv), -EINVAL);
	assert_int_equal(pk_console_journal_make("", NULL, &drv), -EINVAL);
	assert_int_equal(pk_console_journal_make(path, NULL, NULL), -EINVAL);
	srv = bind_dgram(path);
	assert_int_equal(pk_console_journal_make(path, "recon", &drv), 0);
	write_entry(&drv, one, (long)strlen(one));
	recv_entry(srv, "SYSLOG_IDENTIFIER=recon\nPRIORITY=6\nMESSAGE=one\n");
	/* journald restarted: its socket is a new one. */
	close(srv);
	srv = bind_dgram(path);
	write_entry(&drv, one, (long)strlen(one));
	recv_entry(srv, "SYSLOG_IDENTIFIER=recon\nPRIORITY=6\nMESSAGE=one\n");
	/* Nobody reads: the queue fills, and entries are dropped at once. */
	for (i = 0; i < 100000; i++) {
		ret = drv.ops->write_atomic(drv.ctx, one, strlen(one));
		if (ret < 0) {
			assert_int_equal(ret, -ENOBUFS);
			lost++;
			if (lost == 5)
				break;
		}
	}
	assert_int_equal(lost, 5);
	while (recv(srv, longp, sizeof(longp), MSG_DONTWAIT) > 0)
		;
	write_entry(&drv, "PRIORITY=3\nMESSAGE=after\n", 25);
	recv_entry(srv, "SYSLOG_IDENTIFIER=recon\nPRIORITY=3\nMESSAGE=after\nPRINTK_DROPPED=5\n");
	assert_true(recv(srv, longp, sizeof(longp), MSG_DONTWAIT) < 0);
	drv.ops->release(drv.ctx);
	close(srv);
	unlink(path);
	free(path);
}

/* Fill @srv's queue through @drv: until the next write is dropped. */
static void fill_queue(struct pk_console_driver *drv)
{
	static const char one[] = "PRIORITY=6\nMESSAGE=one\n";
	int i;

	for (i = 0; i < 100000; i++)
		if (drv->ops->write(drv->ctx, one, strlen(one)) < 0)
			return;
	fail_msg("the socket's queue never filled");
}

/* Empty @srv's queue, then send one entry: it carries the count @want. */
static void expect_notice(struct pk_console_driver *drv, int srv, const char *want)
{
	char buf[512];

	while (recv(srv, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	write_entry(drv, "PRIORITY=3\nMESSAGE=after\n", 25);
	snprintf(buf, sizeof(buf), "SYSLOG_IDENTIFIER=cnt\nPRIORITY=3\nMESSAGE=after\n"
		 "PRINTK_DROPPED=%s\n", want);
	recv_entry(srv, buf);
	assert_true(recv(srv, buf, sizeof(buf), MSG_DONTWAIT) < 0);
}

/*
 * A dropped entry counts as one, whatever its text says: only the
 * console's own drop notice, exactly as pk__format_dropped() writes it,
 * stands for its N.  A record's text or a crash report holding
 * "\nPRINTK_DROPPED=N" does not.
 */
static void test_drop_count_exact(void **state)
{
	static const char bin_msg[] = "PRIORITY=6\nSYSLOG_FACILITY=1\nMESSAGE\n"
				      "\x18\0\0\0\0\0\0\0x\nPRINTK_DROPPED=1000000\n";
	static const char plain[] = "report line\nPRINTK_DROPPED=77\n";
	static const char notice[] = "PRIORITY=4\nMESSAGE=** 3 printk messages dropped **\n"
				     "PRINTK_DROPPED=3\n";
	struct pk_console_driver drv;
	char *path = tu_tmp_path("jcnt"), buf[512];
	int srv;

	(void)state;
	srv = bind_dgram(path);
	assert_int_equal(pk_console_journal_make(path, "cnt", &drv), 0);
	/* The record whose binary MESSAGE holds the string: 1 (+1 for the filler). */
	fill_queue(&drv);
	assert_int_equal(drv.ops->write(drv.ctx, bin_msg, sizeof(bin_msg) - 1), -ENOBUFS);
	expect_notice(&drv, srv, "2");
	/* Plain text (a crash report) holding it: 1 as well. */
	fill_queue(&drv);
	assert_int_equal(drv.ops->write_atomic(drv.ctx, plain, sizeof(plain) - 1), -ENOBUFS);
	expect_notice(&drv, srv, "2");
	/* The console's own notice of 3: 3 (+1). */
	fill_queue(&drv);
	assert_int_equal(drv.ops->write(drv.ctx, notice, sizeof(notice) - 1), -ENOBUFS);
	expect_notice(&drv, srv, "4");
	/* The console's own notice sent after a drop: one notice, the counts summed. */
	fill_queue(&drv);
	while (recv(srv, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	write_entry(&drv, notice, (long)sizeof(notice) - 1);
	recv_entry(srv, "SYSLOG_IDENTIFIER=cnt\nPRIORITY=4\nMESSAGE=** 4 printk messages "
		   "dropped **\nPRINTK_DROPPED=4\n");
	assert_true(recv(srv, buf, sizeof(buf), MSG_DONTWAIT) < 0);
	/* A count left at release goes out as a notice of its own. */
	fill_queue(&drv);
	while (recv(srv, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	drv.ops->release(drv.ctx);
	recv_entry(srv, "SYSLOG_IDENTIFIER=cnt\nPRIORITY=4\nMESSAGE=** 1 printk messages "
		   "dropped **\nPRINTK_DROPPED=1\n");
	close(srv);
	unlink(path);
	free(path);
}

/*
 * A reader slower than the writer (one datagram every 2 ms): a write
 * waits for room (100 ms at most, once per stall) instead of dropping at
 * once.  What the test asserts is the accounting, which holds however the
 * host schedules the reader: every entry received, or counted by a
 * PRINTK_DROPPED field of a later entry or the release notice.  How many
 * got in by waiting is printed (300 of 300 on an idle host; without the
 * wait, nearly all were dropped).
 */
struct slow_reader {
	int fd;
	unsigned got;
	unsigned long long dropped;
	_Atomic bool stop;
};

static void slow_reader_take(struct slow_reader *r, const char *buf, ssize_t n)
{
	const char *d;

	if (n <= 0)
		return;
	if (memmem(buf, (size_t)n, "MESSAGE=one\n", 12))
		r->got++;
	d = memmem(buf, (size_t)n, "PRINTK_DROPPED=", 15);
	if (d)
		r->dropped += strtoull(d + 15, NULL, 10);
}

static void *slow_reader_main(void *arg)
{
	struct slow_reader *r = arg;
	char buf[512];
	ssize_t n;

	while (!atomic_load(&r->stop)) {
		n = recv(r->fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n > 0)
			buf[n] = '\0';
		slow_reader_take(r, buf, n);
		usleep(2000);
	}
	return NULL;
}

static void test_slow_reader_waits(void **state)
{
	static const char one[] = "PRIORITY=6\nMESSAGE=one\n";
	struct slow_reader r = { .got = 0 };
	struct pk_console_driver drv;
	char *path = tu_tmp_path("jslow"), buf[512];
	uint64_t t0, longest = 0, d;
	pthread_t t;
	ssize_t n;
	int i, failed = 0;

	(void)state;
	r.fd = bind_dgram(path);
	assert_int_equal(pk_console_journal_make(path, "slow", &drv), 0);
	assert_int_equal(pthread_create(&t, NULL, slow_reader_main, &r), 0);
	for (i = 0; i < 300; i++) {
		t0 = tu_now_ns();
		if (drv.ops->write(drv.ctx, one, strlen(one)) < 0)
			failed++;
		d = tu_now_ns() - t0;
		longest = d > longest ? d : longest;
	}
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	/* The rest, then the release notice with whatever count is left. */
	while ((n = recv(r.fd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
		buf[n] = '\0';
		slow_reader_take(&r, buf, n);
	}
	drv.ops->release(drv.ctx);
	while ((n = recv(r.fd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
		buf[n] = '\0';
		slow_reader_take(&r, buf, n);
	}
	print_message("slow reader: %u of 300 received, %d writes dropped (%llu counted), "
		      "longest write %.1f ms\n", r.got, failed, r.dropped, (double)longest / 1e6);
	assert_int_equal(r.got + r.dropped, 300);
	assert_int_equal(r.dropped, (unsigned long long)failed);
	close(r.fd);
	unlink(path);
	free(path);
}

/*
 * A journal console keeps journald's protocol: in raw, a text beginning
 * "PRIORITY=" would go out as the entry's own fields.  No other console
 * takes the protocol.
 */
static void test_format_fixed(void **state)
{
	struct pk_console_driver drv;
	struct pk_console *con, *other;
	char *path = tu_tmp_path("jfmt");
	int srv, fd;

	(void)state;
	srv = bind_dgram(path);
	assert_int_equal(pk_console_journal_make(path, "fmt", &drv), 0);
	con = pk_console_register_driver(&drv, 8);
	assert_non_null(con);
	assert_int_equal(pk_console_set_format(con, PK_FMT_RAW), -EINVAL);
	assert_int_equal(pk_console_set_format(con, PK_FMT_HUMAN), -EINVAL);
	assert_int_equal(pk_console_set_format(con, PK_FMT_JOURNAL), 0);
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pk_console_fd_make(fd, &drv), 0);
	other = pk_console_register_driver(&drv, 8);
	assert_non_null(other);
	assert_int_equal(pk_console_set_format(other, PK_FMT_JOURNAL), -EINVAL);
	assert_int_equal(pk_console_set_format(other, PK_FMT_RAW), 0);
	assert_int_equal(pk_console_unregister(other), 0);
	assert_int_equal(pk_console_unregister(con), 0);
	close(fd);
	close(srv);
	unlink(path);
	free(path);
}

/* The crash handler prints through write_atomic(), in a signal handler. */
static void test_crash(void **state)
{
	char ident[64];
	struct pk_console *con;
	const char *p;
	char *all;
	pid_t pid;
	int status, report = 0;

	(void)state;
	NEED_JOURNAL();
	make_ident(ident, sizeof(ident), "crash");
	pid = tu_fork();
	if (pid == 0) {
		tu_default_crash_signals();
		con = journal_console(ident);
		if (!con || pk_crash_handler_install())
			_exit(2);
		pk_err("before the crash\n");
		pk_flush(1000);
		{
			volatile int *bad = mmap(NULL, 4096, PROT_NONE,
						 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			*bad = 1;
		}
		_exit(3);
	}
	assert_true(pid > 0);
	assert_true(tu_waitpid(pid, &status, 20000, "crashing child") == pid);
	assert_true(WIFSIGNALED(status));
	all = journal_entries(ident, 3);
	assert_non_null(entry_with(all, "before the crash"));
	for (p = all; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strstr(jstr(p, "MESSAGE"), "Unable to handle SIGSEGV"))
			report++;
	assert_true(report >= 1);
	free(all);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_priorities, setup, teardown),
		cmocka_unit_test_setup_teardown(test_multiline_binary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_field_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_burst_paced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_burst_flood, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reconnect_drops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drop_count_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slow_reader_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_format_fixed, setup, teardown),
	};
	int ret = TU_RUN_GROUP(tests, NULL, NULL, argc, argv);

	if (journald_pid > 0) {
		kill(journald_pid, SIGTERM);
		waitpid(journald_pid, NULL, 0);
		unlink(DROPIN);
	}
	return ret;
}
