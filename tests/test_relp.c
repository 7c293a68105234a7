// SPDX-License-Identifier: MIT
/*
 * RFC 5424 syslog over RELP (PK_SYSLOG_RELP, syslog+relp://) against a
 * real rsyslogd with imrelp that the test starts itself on the loopback,
 * on a free port, writing what it receives to a file in the test's
 * directory: order and content, at-least-once across a kill -9 of the
 * daemon in the middle of a storm, a receiver that is not there yet, a
 * fork child (under ThreadSanitizer, which starts no thread there: its
 * record counted as a write error), names that do not resolve, a
 * resolver that does not answer and one that fails for a while.  Cases
 * that need the daemon skip (77) where rsyslogd or imrelp is not
 * installed, unless PK_TEST_RELP=1 (CI) says they must run.
 *
 * getaddrinfo() is interposed (the library is linked in statically; librelp
 * is handed numeric addresses alone): the names *.pktest resolve as the
 * test says, to 127.0.0.1; others as the C library does.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "console/relp.h"
#include "console/resolve.h"
#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

#define FACILITY	LOG_LOCAL3

/*
 * LeakSanitizer: librelp leaks the frame of a send that fails on a broken
 * connection (relpSessRawSendCommand() returns without freeing its
 * sendbuf), one per lost connection.  Not this library's memory.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:librelp.so\n";
}

/* ---- the interposed resolver ---- */

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fake_cond = PTHREAD_COND_INITIALIZER;
static bool fake_open;			/* slow.pktest may answer */
static atomic_bool fake_answered;	/* ... and did */
static atomic_int fake_failures_left;	/* flaky.pktest fails this many more times */
static atomic_int fake_calls;		/* lookups of flaky.pktest */

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
		struct addrinfo **res)
{
	static int (*real)(const char *, const char *, const struct addrinfo *,
			   struct addrinfo **);
	struct addrinfo h = hints ? *hints : (struct addrinfo){ 0 };
	struct timespec until;
	size_t nl = node ? strlen(node) : 0;

	if (!real)
		real = (int (*)(const char *, const char *, const struct addrinfo *,
				struct addrinfo **))dlsym(RTLD_NEXT, "getaddrinfo");
	if (nl < 7 || strcmp(node + nl - 7, ".pktest"))
		return real(node, service, hints, res);
	if (h.ai_flags & AI_NUMERICHOST)
		return EAI_NONAME;
	if (!strcmp(node, "slow.pktest")) {
		/* A resolver that does not answer: until opened, 30 s at most. */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 30;
		pthread_mutex_lock(&fake_lock);
		while (!fake_open &&
		       pthread_cond_timedwait(&fake_cond, &fake_lock, &until) == 0)
			;
		pthread_mutex_unlock(&fake_lock);
		atomic_store(&fake_answered, true);
	} else if (!strcmp(node, "flaky.pktest")) {
		atomic_fetch_add(&fake_calls, 1);
		if (atomic_fetch_sub(&fake_failures_left, 1) > 0)
			return EAI_AGAIN;
	} else {
		return EAI_NONAME;
	}
	h.ai_family = AF_INET;
	h.ai_flags |= AI_NUMERICHOST;
	return real("127.0.0.1", service, &h, res);
}

static void fake_set_open(bool open)
{
	pthread_mutex_lock(&fake_lock);
	fake_open = open;
	pthread_cond_broadcast(&fake_cond);
	pthread_mutex_unlock(&fake_lock);
}

static const char *find_exe(const char *const *paths, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (access(paths[i], R_OK) == 0)
			return paths[i];
	return NULL;
}

static const char *rsyslogd_path(void)
{
	static const char *const paths[] = { "/usr/sbin/rsyslogd", "/sbin/rsyslogd",
					     "/usr/local/sbin/rsyslogd" };

	return find_exe(paths, sizeof(paths) / sizeof(paths[0]));
}

/* imrelp.so in rsyslog's default module directory (Debian: rsyslog-relp). */
static const char *imrelp_path(void)
{
	static const char *const paths[] = { "/usr/lib/x86_64-linux-gnu/rsyslog/imrelp.so",
					     "/usr/lib/aarch64-linux-gnu/rsyslog/imrelp.so",
					     "/usr/lib/rsyslog/imrelp.so",
					     "/usr/lib64/rsyslog/imrelp.so",
					     "/usr/local/lib/rsyslog/imrelp.so" };

	return find_exe(paths, sizeof(paths) / sizeof(paths[0]));
}

/* PK_TEST_RELP=1 (CI): the cases must run, never skip. */
static bool must_run(void)
{
	const char *must = getenv("PK_TEST_RELP");

	return must && !strcmp(must, "1");
}

static void need_daemon(void)
{
	if (rsyslogd_path() && imrelp_path())
		return;
	if (must_run())
		fail_msg("PK_TEST_RELP=1 but rsyslogd or imrelp is missing "
			 "(Debian: apt-get install rsyslog rsyslog-relp)");
	tu_skip("rsyslogd with imrelp is not installed (Debian: apt-get install rsyslog-relp)");
}

static int setup(void **state)
{
	struct pk_config cfg;

	(void)state;
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.mode = PK_MODE_HANDOFF;
	cfg.buffer_size = 8 << 20;
	return pk_init(&cfg);
}

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	return 0;
}

static unsigned free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	close(fd);
	return ntohs(sa.sin_port);
}

static bool tcp_listens(unsigned port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	bool ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;

	close(fd);
	return ok;
}

/* ---- the daemon ---- */

struct daemon {
	char dir[256], conf[300], pidf[300], fields[300];
	unsigned port;
	pid_t pid;
};

/*
 * imrelp on 127.0.0.1:@port; every message to fields.log as
 * PRI|APP|SD|MSG.  The main queue is direct: a message is in the file
 * before imrelp acknowledges it, so a kill -9 loses nothing acknowledged.
 */
static void daemon_config(struct daemon *d, unsigned port)
{
	char *dir = tu_tmp_path("relp");
	FILE *f;

	assert_non_null(dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(d->dir, sizeof(d->dir), "%s", dir);
	free(dir);
	snprintf(d->conf, sizeof(d->conf), "%s/rsyslog.conf", d->dir);
	snprintf(d->pidf, sizeof(d->pidf), "%s/rsyslogd.pid", d->dir);
	snprintf(d->fields, sizeof(d->fields), "%s/fields.log", d->dir);
	d->port = port ? port : free_port();
	f = fopen(d->conf, "w");
	assert_non_null(f);
	fprintf(f,
		"global(workDirectory=\"%s\" maxMessageSize=\"64k\")\n"
		"main_queue(queue.type=\"Direct\")\n"
		"module(load=\"imrelp\")\n"
		"input(type=\"imrelp\" address=\"127.0.0.1\" port=\"%u\")\n"
		"template(name=\"fields\" type=\"string\" string=\"%%pri%%|%%app-name%%|"
		"%%structured-data%%|%%msg%%\\n\")\n"
		"action(type=\"omfile\" file=\"%s\" template=\"fields\" flushOnTXEnd=\"on\")\n",
		d->dir, d->port, d->fields);
	fclose(f);
}

static void daemon_start(struct daemon *d)
{
	const char *exe = rsyslogd_path();
	int log;

	unlink(d->pidf);
	d->pid = tu_fork();
	assert_true(d->pid >= 0);
	if (d->pid == 0) {
		char out[320];

		snprintf(out, sizeof(out), "%s/rsyslogd.out", d->dir);
		log = open(out, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (log >= 0) {
			dup2(log, 1);
			dup2(log, 2);
		}
		execl(exe, "rsyslogd", "-n", "-f", d->conf, "-i", d->pidf, (char *)NULL);
		_exit(127);
	}
	assert_true(tu_wait_until(tcp_listens(d->port), 20000));
}

static void daemon_kill(struct daemon *d, int sig)
{
	int status;

	if (d->pid <= 0)
		return;
	kill(d->pid, sig);
	tu_waitpid(d->pid, &status, 20000, "rsyslogd");
	d->pid = 0;
}

static void daemon_clean(struct daemon *d)
{
	char cmd[300];

	daemon_kill(d, SIGTERM);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->dir);
	if (system(cmd) != 0)
		print_message("could not remove %s\n", d->dir);
}

static char *file_text(const char *path)
{
	char *t = tu_read_file(path, NULL);

	return t ? t : strdup("");
}

/* ---- what arrived ---- */

/* One received line of @app: PRI|APP|[printk@32473 seq="S" tid="T"]|TEXT */
struct got {
	unsigned pri;
	uint64_t seq;
	unsigned lane;	/* lane="L" after seq (a store of several lanes), else 0 */
	char text[128];
};

/* The lines of @app in fields.log, in order; *n of them.  Drop notices count in *dropped. */
static struct got *parse(const char *path, const char *app, size_t *n, uint64_t *dropped)
{
	char *t = file_text(path), *p = t, *nl, prefix[80];
	struct got *g = NULL;
	size_t cap = 0;
	unsigned pri;
	unsigned long long s;
	int k;

	*n = 0;
	*dropped = 0;
	snprintf(prefix, sizeof(prefix), "|%s|", app);
	for (; (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = '\0';
		if (!strstr(p, prefix))
			continue;
		if (strstr(p, "dropped=\"")) {
			*dropped += strtoull(strstr(p, "dropped=\"") + 9, NULL, 10);
			continue;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 1024;
			g = realloc(g, cap * sizeof(*g));
			assert_non_null(g);
		}
		k = 0;
		g[*n].lane = 0;
		snprintf(prefix, sizeof(prefix),
			 "%%u|%s|[printk@32473 seq=\"%%llu\" tid=\"%%*u\"]%%n", app);
		if (sscanf(p, prefix, &pri, &s, &k) != 2 || !k) {
			k = 0;
			snprintf(prefix, sizeof(prefix),
				 "%%u|%s|[printk@32473 seq=\"%%llu\" lane=\"%%u\" tid=\"%%*u\"]%%n",
				 app);
			if (sscanf(p, prefix, &pri, &s, &g[*n].lane, &k) != 3 || !k)
				fail_msg("a line that is not as sent: \"%s\"", p);
		}
		/* The level macro's call site (printk.h, SOURCE LOCATIONS), if any. */
		if (!strncmp(p + k, "[code@32473 ", 12)) {
			char *e = strstr(p + k, "\"]|");

			if (!e)
				fail_msg("a call site that is not whole: \"%s\"", p);
			k = (int)(e + 2 - p);
		}
		if (p[k] != '|')
			fail_msg("a line that is not as sent: \"%s\"", p);
		k++;
		snprintf(prefix, sizeof(prefix), "|%s|", app);
		g[*n].pri = pri;
		g[*n].seq = s;
		snprintf(g[*n].text, sizeof(g[*n].text), "%s", p + k);
		(*n)++;
	}
	free(t);
	return g;
}

static bool file_has(const char *path, const char *needle)
{
	char *t = file_text(path);
	bool ok = strstr(t, needle) != NULL;

	free(t);
	return ok;
}

static size_t count_in_file(const char *path, const char *needle)
{
	char *t = file_text(path);
	size_t n = tu_count(t, needle);

	free(t);
	return n;
}

static size_t lines_of(const char *path, const char *app)
{
	uint64_t dropped;
	size_t n;

	free(parse(path, app, &n, &dropped));
	return n;
}

static struct pk_console *relp_console(unsigned port, const char *app, size_t queue)
{
	struct pk_rfc5424_opts o = { .transport = PK_SYSLOG_RELP, .host = "127.0.0.1",
				     .port = port, .app_name = app, .facility = FACILITY,
				     .retry_max_ms = 200, .connect_timeout_ms = 1000,
				     .queue_size = queue };
	struct pk_console_driver drv;
	struct pk_console *con;

	assert_int_equal(pk_console_rfc5424_make(&o, &drv), 0);
	con = pk_console_register_driver(&drv, 8);
	assert_non_null(con);
	return con;
}

static uint64_t timed_printk(int level, const char *what, unsigned i)
{
	uint64_t t0 = tu_now_ns();

	pk_printk(level, "%s %u\n", what, i);
	return tu_now_ns() - t0;
}

/*
 * Each of @n records "@what I" (I < @n) arrived at least once, with the
 * level it was printed at ((I % 8) if @levels, else info); the seqs of the
 * first copies are consecutive and in order.  Return: duplicates.
 */
static size_t check_all(const struct got *g, size_t lines, const char *what, unsigned n,
			bool levels)
{
	unsigned char *seen = calloc(n, 1);
	uint64_t *seq = calloc(n, sizeof(*seq));
	uint64_t last[64];
	bool had[64] = { false };
	unsigned *lane = calloc(n, sizeof(*lane));
	size_t i, dups = 0;
	unsigned idx, next = 0;
	char tag[64];
	int k;

	assert_non_null(seen);
	assert_non_null(seq);
	for (i = 0; i < lines; i++) {
		snprintf(tag, sizeof(tag), "%s %%u%%n", what);
		k = 0;
		if (sscanf(g[i].text, tag, &idx, &k) != 1 || g[i].text[k] || idx >= n)
			fail_msg("unexpected text \"%s\"", g[i].text);
		assert_int_equal(g[i].pri, (unsigned)FACILITY + (levels ? idx % 8 : PK_INFO));
		if (seen[idx]++) {
			/* A resent copy: the same record, the same (lane, seq). */
			assert_int_equal(g[i].seq, seq[idx]);
			assert_int_equal(g[i].lane, lane[idx]);
			dups++;
			continue;
		}
		/* First copies come in order: a resend starts at the first unacked. */
		if (idx != next)
			fail_msg("\"%s %u\" arrived before \"%s %u\"", what, idx, what, next);
		next++;
		seq[idx] = g[i].seq;
		lane[idx] = g[i].lane;
		assert_true(g[i].lane < 64);
		/* No gap: seqs count within a lane. */
		if (had[g[i].lane])
			assert_int_equal(seq[idx], last[g[i].lane] + 1);
		had[g[i].lane] = true;
		last[g[i].lane] = seq[idx];
	}
	for (idx = 0; idx < n; idx++)
		if (!seen[idx])
			fail_msg("\"%s %u\" never arrived", what, idx);
	free(seen);
	free(lane);
	free(seq);
	return dups;
}

/* ---- cases ---- */

/* Every record arrives once, in order, with its level, text and structured data. */
static void test_order_and_content(void **state)
{
	struct daemon d = { 0 };
	struct pk_console_stats st;
	struct pk_console *con;
	struct got *g;
	uint64_t dropped;
	size_t lines;
	unsigned i, n = 800;

	(void)state;
	need_daemon();
	daemon_config(&d, 0);
	daemon_start(&d);
	con = relp_console(d.port, "relp-order", 0);
	for (i = 0; i < n; i++)
		pk_printk((int)(i % 8), "order %u\n", i);
	assert_int_equal(pk_flush(5000), 0);
	assert_true(tu_wait_until(lines_of(d.fields, "relp-order") >= n, 30000));
	g = parse(d.fields, "relp-order", &lines, &dropped);
	assert_int_equal(dropped, 0);
	assert_int_equal(check_all(g, lines, "order", n, true), 0);
	assert_int_equal(lines, n);
	free(g);
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	assert_int_equal(st.write_errors, 0);
	assert_int_equal(pk_console_unregister(con), 0);
	daemon_clean(&d);
}

struct storm {
	unsigned n;
	_Atomic unsigned done;
	_Atomic uint64_t max_ns;
};

static void *storm_main(void *arg)
{
	struct storm *s = arg;
	uint64_t t, m;
	unsigned i;

	for (i = 0; i < s->n; i++) {
		t = timed_printk(PK_INFO, "storm", i);
		m = atomic_load(&s->max_ns);
		while (t > m && !atomic_compare_exchange_weak(&s->max_ns, &m, t))
			;
		atomic_store(&s->done, i + 1);
		if (i % 8 == 0)
			usleep(1000);	/* a storm that spans the kill and the restart */
	}
	return NULL;
}

/*
 * kill -9 of the receiver in the middle of a storm, then a new one on the
 * same port: every record arrives (duplicates allowed, counted), no
 * caller blocks, delivery resumes.
 */
static void test_kill_restart(void **state)
{
	struct daemon d = { 0 };
	struct storm s = { .n = tu_scaled(6000) };
	struct pk_console_stats st;
	struct pk_console *con;
	struct got *g;
	pthread_t th;
	uint64_t dropped;
	size_t lines, dups;
	unsigned at_kill, at_restart;

	(void)state;
	need_daemon();
	daemon_config(&d, 0);
	daemon_start(&d);
	con = relp_console(d.port, "relp-kill", 16u << 20);
	assert_int_equal(pthread_create(&th, NULL, storm_main, &s), 0);
	assert_true(tu_wait_until(lines_of(d.fields, "relp-kill") >= s.n / 4, 60000));
	daemon_kill(&d, SIGKILL);
	at_kill = atomic_load(&s.done);
	/* Down for a while: records queue meanwhile. */
	usleep(300000);
	at_restart = atomic_load(&s.done);
	daemon_start(&d);
	assert_int_equal(pthread_join(th, NULL), 0);
	/* The storm went on while the receiver was gone. */
	assert_true(at_kill < s.n);
	assert_true(at_restart > at_kill);
	assert_int_equal(pk_flush(5000), 0);
	assert_true(tu_wait_until(lines_of(d.fields, "relp-kill") >= s.n, 60000));
	/* Let resends of the last window land before counting. */
	usleep(200000);
	g = parse(d.fields, "relp-kill", &lines, &dropped);
	assert_int_equal(dropped, 0);
	dups = check_all(g, lines, "storm", s.n, false);
	free(g);
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	print_message("kill -9: %u records (%u before the kill, %u more while down), %zu lines, "
		      "%zu duplicates, longest call %.3f ms\n", s.n, at_kill, at_restart - at_kill,
		      lines, dups, atomic_load(&s.max_ns) / 1e6);
	assert_int_equal(st.write_errors, 0);
	assert_true(atomic_load(&s.max_ns) < 1000000000ull);	/* a hang bound */
	assert_int_equal(pk_console_unregister(con), 0);
	daemon_clean(&d);
}

/* Nothing listening: callers do not block; records arrive once a server appears. */
static void test_refused_then_server(void **state)
{
	struct daemon d = { 0 };
	struct pk_console_stats st;
	struct pk_console *con;
	struct got *g;
	uint64_t t, max_ns = 0, dropped;
	size_t lines;
	unsigned i, n = 300;

	(void)state;
	need_daemon();
	daemon_config(&d, 0);	/* a free port, nobody on it yet */
	con = relp_console(d.port, "relp-late", 0);
	for (i = 0; i < n; i++) {
		t = timed_printk(PK_INFO, "late", i);
		max_ns = t > max_ns ? t : max_ns;
	}
	assert_int_equal(pk_flush(5000), 0);
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	assert_int_equal(st.write_errors, 0);	/* queued, not lost */
	assert_true(max_ns < 1000000000ull);
	usleep(500000);		/* a few refused attempts */
	daemon_start(&d);
	assert_true(tu_wait_until(lines_of(d.fields, "relp-late") >= n, 30000));
	g = parse(d.fields, "relp-late", &lines, &dropped);
	assert_int_equal(dropped, 0);
	assert_int_equal(check_all(g, lines, "late", n, false), 0);
	free(g);
	assert_int_equal(pk_console_unregister(con), 0);
	daemon_clean(&d);
}

/* A queue too small for a burst while the receiver is away: the loss is counted in-band. */
static void test_queue_full_counted(void **state)
{
	struct daemon d = { 0 };
	struct pk_console_stats st;
	struct pk_console *con;
	uint64_t dropped;
	size_t lines;
	unsigned i, k, n = 2000;
	char tag[64];

	(void)state;
	need_daemon();
	daemon_config(&d, 0);
	con = relp_console(d.port, "relp-full", 1);	/* the smallest queue */
	for (i = 0; i < n; i++)
		pk_info("full %u\n", i);
	assert_int_equal(pk_flush(5000), 0);
	daemon_start(&d);
	/* Until one gets through: each finds the queue full or not, both counted. */
	for (k = 0; k < 600; k++) {
		snprintf(tag, sizeof(tag), "|full end %u\n", k);
		pk_info("full end %u\n", k);
		assert_int_equal(pk_flush(5000), 0);
		if (tu_wait_until(file_has(d.fields, tag), 100))
			break;
	}
	assert_true(k < 600);
	free(parse(d.fields, "relp-full", &lines, &dropped));
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	print_message("queue full: %u records, %zu delivered, %llu reported dropped\n",
		      n + k + 1, lines, (unsigned long long)dropped);
	assert_true(dropped > 0);
	assert_int_equal(st.write_errors, dropped);
	assert_int_equal(lines + dropped, (uint64_t)n + k + 1);
	assert_int_equal(pk_console_unregister(con), 0);
	daemon_clean(&d);
}

/*
 * A fork child gets a sender of its own: its records arrive, the parent's
 * too.  A second console's name does not resolve in the parent at fork()
 * (flaky.pktest, failing): the child looks it up itself (the parent's
 * resolver thread is not in the child), and its record arrives there too.
 */
static void test_fork_child(void **state)
{
	struct daemon d = { 0 };
	struct pk_rfc5424_opts o = { .transport = PK_SYSLOG_RELP, .host = "flaky.pktest",
				     .app_name = "relp-fork-name", .facility = FACILITY,
				     .retry_max_ms = 200, .connect_timeout_ms = 1000 };
	struct pk_console_driver drv;
	struct pk_console *con, *named;
	uint64_t dropped;
	struct got *g;
	size_t lines, i, child_lines = 0;
	int status;
	pid_t pid;
	char *t;

	(void)state;
	need_daemon();
	/*
	 * AddressSanitizer: a thread started in the child (this driver's
	 * sender, the library's rescue thread) can block for good on the
	 * runtime's allocator mutex, left locked by a parent thread that was
	 * allocating at fork() (seen in gdb: both threads in
	 * SizeClassAllocator64::GetFromAllocator from pthread_getattr_np, at
	 * their start).  The plain, clang and ThreadSanitizer builds run it.
	 */
	if (tu_sanitized_address())
		tu_skip("AddressSanitizer's allocator can hang threads of a fork child");
	daemon_config(&d, 0);
	daemon_start(&d);
	con = relp_console(d.port, "relp-fork", 0);
	atomic_store(&pk__resolve_retry_ms, 20);
	atomic_store(&fake_failures_left, 1000000);	/* failing in the parent */
	o.port = d.port;
	assert_int_equal(pk_console_rfc5424_make(&o, &drv), 0);
	named = pk_console_register_driver(&drv, 8);
	assert_non_null(named);
	pk_info("parent before\n");
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pk_console_stats st;
		int bad;

		atomic_store(&fake_failures_left, 0);	/* resolves in the child */
		pk_info("child says hello\n");
		pk_flush(5000);
		/* ThreadSanitizer: no sender in the child, the record is counted. */
		bad = tu_sanitized_thread() &&
		      (pk_console_stats_get(con, &st) || st.write_errors != 1 ||
		       pk_console_stats_get(named, &st) || st.write_errors != 1);
		pk_shutdown();	/* release: drains the child's queue */
		_exit(bad);
	}
	assert_int_equal(tu_waitpid(pid, &status, 30000, "child"), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	atomic_store(&fake_failures_left, 0);	/* and now in the parent */
	pk_info("parent after\n");
	assert_int_equal(pk_flush(5000), 0);
	assert_true(tu_wait_until(count_in_file(d.fields, "|parent after\n") == 2 &&
				  (tu_sanitized_thread() ||
				   count_in_file(d.fields, "|child says hello\n") == 2), 30000));
	t = file_text(d.fields);
	assert_int_equal(tu_count(t, "|parent before\n"), 2);
	assert_int_equal(tu_count(t, "|child says hello\n"), tu_sanitized_thread() ? 0 : 2);
	free(t);
	/* One of each on the named console: the child's went there, not twice elsewhere. */
	g = parse(d.fields, "relp-fork-name", &lines, &dropped);
	for (i = 0; i < lines; i++)
		child_lines += !strcmp(g[i].text, "child says hello");
	free(g);
	assert_int_equal(dropped, 0);
	assert_int_equal(lines, tu_sanitized_thread() ? 2 : 3);
	assert_int_equal(child_lines, tu_sanitized_thread() ? 0 : 1);
	assert_int_equal(pk_console_unregister(named), 0);
	assert_int_equal(pk_console_unregister(con), 0);
	daemon_clean(&d);
}

/* Names that do not resolve, and the spec syntax. */
static void test_names_and_spec(void **state)
{
	struct pk_rfc5424_opts o = { .transport = PK_SYSLOG_RELP, .host = "nxdomain.pktest" };
	struct pk_console_driver drv;
	unsigned port = free_port();
	char spec[128];
	struct tu_grab gr;
	char *err;
	int ret;

	(void)state;
	atomic_store(&pk__resolve_retry_ms, 20);
	/* Made at once: the name is looked up, and retried, on a thread. */
	ret = pk_console_rfc5424_make(&o, &drv);
	if (ret == -EPROTONOSUPPORT && !must_run())
		tu_skip("libprintk was built without librelp");
	assert_int_equal(ret, 0);
	drv.ops->release(drv.ctx);
	o.host = "";
	assert_int_equal(pk_console_rfc5424_make(&o, &drv), -EINVAL);
	o.host = "127.0.0.1";
	o.port = 70000;
	assert_int_equal(pk_console_rfc5424_make(&o, &drv), -EINVAL);
	/* Registered; the sender says on stderr, once, that the name does not resolve. */
	tu_grab_start(&gr);
	ret = pk_console_register_spec("syslog+relp://nxdomain.pktest:514");
	pk_info("for a name that does not resolve\n");
	assert_true(tu_wait_until(file_has(gr.path, "does not resolve"), 10000));
	usleep(300000);		/* more failed lookups: still said once */
	err = tu_grab_end(&gr);
	assert_int_equal(ret, 1);
	assert_int_equal(tu_count(err, "syslog+relp://nxdomain.pktest:514: the name does not "
				  "resolve"), 1);
	free(err);
	assert_int_equal(pk_console_register_spec("syslog+relp://"), 0);
	assert_int_equal(pk_console_register_spec("syslog+relp://[::1"), 0);
	/* Valid: registered even with nobody listening (delivery is later). */
	snprintf(spec, sizeof(spec), "syslog+relp://127.0.0.1:%u", port);
	assert_int_equal(pk_console_register_spec(spec), 1);
	snprintf(spec, sizeof(spec), "syslog+relp://[::1]:%u", port);
	assert_int_equal(pk_console_register_spec(spec), 1);
	pk_info("nobody hears this\n");
	/* teardown's pk_shutdown() releases them within its bounded wait. */
}

/*
 * librelp is loaded when the first RELP console is made (relp.c, LIBRELP).
 * Where it cannot be, making one fails with -EPROTONOSUPPORT and a line on
 * stderr naming the library and why; nothing else is registered.  Once it
 * is there, the next make loads it.  Runs first in its process: the
 * library stays loaded once a make succeeded.
 */
static void test_library_missing(void **state)
{
	struct pk_rfc5424_opts o = { .transport = PK_SYSLOG_RELP, .host = "127.0.0.1",
				     .port = free_port() };
	struct pk_console_driver drv;
	const char *soname = pk__relp_soname;
	struct tu_grab gr;
	char *err;
	int ret;

	(void)state;
	pk__relp_soname = "libprintk-test-no-such-librelp.so.0";
	tu_grab_start(&gr);
	ret = pk_console_rfc5424_make(&o, &drv);
	err = tu_grab_end(&gr);
	pk__relp_soname = soname;
	assert_int_equal(ret, -EPROTONOSUPPORT);
	if (strstr(err, "was built without it") && !must_run()) {
		free(err);
		return;		/* no RELP in this build: said, and that is all */
	}
	assert_int_equal(tu_count(err, "syslog over RELP needs "
				  "libprintk-test-no-such-librelp.so.0, which could not be loaded ("), 1);
	assert_non_null(strstr(err, "cannot open shared object file"));
	free(err);
	/* The real one, found now: made, and released again. */
	assert_int_equal(pk_console_rfc5424_make(&o, &drv), 0);
	drv.ops->release(drv.ctx);
}

/*
 * A fork() while another thread is loading librelp (its lock held, here
 * for as long as the test wants): the child's own make must not wait for
 * that thread, which the child does not have.
 */
static atomic_int load_held, load_go;

static void hold_load(void)
{
	atomic_store(&load_held, 1);
	while (!atomic_load(&load_go))
		usleep(1000);
}

/* A make, released again if it was made (librelp may be loaded already). */
static int make_release(void)
{
	struct pk_rfc5424_opts o = { .transport = PK_SYSLOG_RELP, .host = "127.0.0.1",
				     .port = 9 };
	struct pk_console_driver drv;
	int ret = pk_console_rfc5424_make(&o, &drv);

	if (ret == 0)
		drv.ops->release(drv.ctx);
	return ret;
}

static void *load_in_thread(void *arg)
{
	*(int *)arg = make_release();
	return NULL;
}

static void test_fork_during_load(void **state)
{
	const char *soname = pk__relp_soname;
	int status, tret = 0;
	pthread_t t;
	pid_t pid;

	(void)state;
	/*
	 * A library that is not there: a load fails at once (or finds the
	 * real one loaded by an earlier case: then the make succeeds).
	 */
	pk__relp_soname = "libprintk-test-no-such-librelp.so.0";
	pk__relp_load_hook = hold_load;
	atomic_store(&load_held, 0);
	atomic_store(&load_go, 0);
	assert_int_equal(pthread_create(&t, NULL, load_in_thread, &tret), 0);
	while (!atomic_load(&load_held))
		usleep(1000);
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int ret;

		pk__relp_load_hook = NULL;
		ret = make_release();
		_exit(ret == 0 || ret == -EPROTONOSUPPORT ? 0 : 1);
	}
	tu_waitpid(pid, &status, 10000, "the child that loads librelp");
	atomic_store(&load_go, 1);
	pthread_join(t, NULL);
	pk__relp_load_hook = NULL;
	pk__relp_soname = soname;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(tret == 0 || tret == -EPROTONOSUPPORT);
}

/* ---- names resolved off the caller's path ---- */

static struct daemon first_d;

static int first_teardown(void **state)
{
	(void)state;
	fake_set_open(true);
	pk_shutdown();
	unsetenv("PK_CONSOLE");
	if (first_d.dir[0])
		daemon_clean(&first_d);
	return 0;
}

/*
 * A resolver that does not answer (slow.pktest, 30 s at most) for the
 * console of PK_CONSOLE: the first pk_printk(), which initialises the
 * library and makes the console, returns without waiting for it (before,
 * it waited the 30 s), and so do the calls after; the records logged
 * meanwhile are queued, and all arrive at the receiver once the name
 * resolves, in order, none dropped.
 */
static void test_resolve_slow_first_call(void **state)
{
	struct daemon *d = &first_d;
	struct pk_console_stats st;
	struct pk_console *con;
	uint64_t dt, first_ns, max_ns = 0, dropped;
	unsigned i, n = 200;
	struct got *g;
	size_t lines;
	char spec[160];

	(void)state;
	need_daemon();
	atomic_store(&pk__resolve_retry_ms, 20);
	fake_set_open(false);
	atomic_store(&fake_answered, false);
	daemon_config(d, 0);
	daemon_start(d);
	pk_shutdown();		/* the next call initialises, from PK_CONSOLE */
	snprintf(spec, sizeof(spec), "syslog+relp://slow.pktest:%u,facility=local3,"
		 "app=relp-slow,name=relp-slow", d->port);
	assert_int_equal(setenv("PK_CONSOLE", spec, 1), 0);
	first_ns = timed_printk(PK_INFO, "slow", 0);
	for (i = 1; i < n; i++) {
		dt = timed_printk(PK_INFO, "slow", i);
		max_ns = dt > max_ns ? dt : max_ns;
	}
	print_message("resolver not answering: first pk_printk() %.3f ms, the next %u at most "
		      "%.3f ms\n", first_ns / 1e6, n - 1, max_ns / 1e6);
	if (atomic_load(&fake_answered))
		fail_msg("the first call waited for the resolver's answer (%.3f s)",
			 first_ns / 1e9);
	assert_true(first_ns < 2000000000ull);	/* a hang bound: the resolver takes 30 s */
	assert_true(max_ns < 2000000000ull);
	con = pk_console_find("relp-slow");
	assert_non_null(con);
	assert_int_equal(pk_flush(5000), 0);
	usleep(200000);
	assert_int_equal(lines_of(d->fields, "relp-slow"), 0);	/* nowhere to send yet */
	fake_set_open(true);
	assert_true(tu_wait_until(lines_of(d->fields, "relp-slow") >= n, 30000));
	g = parse(d->fields, "relp-slow", &lines, &dropped);
	assert_int_equal(dropped, 0);
	assert_int_equal(check_all(g, lines, "slow", n, false), 0);
	assert_int_equal(lines, n);
	free(g);
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	assert_int_equal(st.write_errors, 0);	/* queued, none lost */
}

/*
 * A name whose lookups fail (EAI_AGAIN) for a while, then resolves:
 * before, the console could not be made at all (-EHOSTUNREACH, dropped for
 * the life of the process); now it is made, the lookup is retried, stderr
 * says once that the name does not resolve, and every record logged
 * meanwhile arrives once it does.
 */
static void test_resolve_fails_then_succeeds(void **state)
{
	struct daemon d = { 0 };
	struct pk_rfc5424_opts o = { .transport = PK_SYSLOG_RELP, .host = "flaky.pktest",
				     .app_name = "relp-flaky", .facility = FACILITY,
				     .retry_max_ms = 200, .connect_timeout_ms = 1000 };
	struct pk_console_driver drv;
	struct pk_console_stats st;
	struct pk_console *con;
	struct tu_grab gr;
	uint64_t dt, max_ns = 0, dropped;
	unsigned i, n = 300, calls;
	struct got *g;
	size_t lines;
	char *err;
	int ret;

	(void)state;
	need_daemon();
	atomic_store(&pk__resolve_retry_ms, 20);
	atomic_store(&fake_failures_left, 1000000);	/* failing until told */
	atomic_store(&fake_calls, 0);
	daemon_config(&d, 0);
	o.port = d.port;
	daemon_start(&d);
	tu_grab_start(&gr);
	ret = pk_console_rfc5424_make(&o, &drv);
	if (ret) {
		free(tu_grab_end(&gr));
		fail_msg("a name that does not resolve yet: %d (%s)", ret, strerror(-ret));
	}
	con = pk_console_register_driver(&drv, 8);
	assert_non_null(con);
	for (i = 0; i < n; i++) {
		dt = timed_printk(PK_INFO, "flaky", i);
		max_ns = dt > max_ns ? dt : max_ns;
	}
	assert_int_equal(pk_flush(5000), 0);
	/* Failed and retried (20 ms doubling), said on stderr. */
	assert_true(tu_wait_until(atomic_load(&fake_calls) >= 5, 20000));
	assert_true(tu_wait_until(file_has(gr.path, "does not resolve"), 10000));
	calls = (unsigned)atomic_load(&fake_calls);
	assert_int_equal(lines_of(d.fields, "relp-flaky"), 0);
	atomic_store(&fake_failures_left, 2);	/* two more failures, then an answer */
	assert_true(tu_wait_until(lines_of(d.fields, "relp-flaky") >= n, 30000));
	err = tu_grab_end(&gr);
	print_message("failing resolver: %u lookups before it answered, longest call %.3f ms; "
		      "stderr: %s", (unsigned)atomic_load(&fake_calls), max_ns / 1e6, err);
	assert_true((unsigned)atomic_load(&fake_calls) >= calls + 3);
	assert_int_equal(tu_count(err, "libprintk: syslog+relp://flaky.pktest:"), 1);
	assert_non_null(strstr(err, "the name does not resolve"));
	free(err);
	assert_true(max_ns < 2000000000ull);	/* a hang bound */
	g = parse(d.fields, "relp-flaky", &lines, &dropped);
	assert_int_equal(dropped, 0);
	assert_int_equal(check_all(g, lines, "flaky", n, false), 0);
	assert_int_equal(lines, n);
	free(g);
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	assert_int_equal(st.write_errors, 0);
	assert_int_equal(pk_console_unregister(con), 0);
	daemon_clean(&d);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		/* First: no RELP console may have loaded librelp before it. */
		cmocka_unit_test_setup_teardown(test_library_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork_during_load, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names_and_spec, setup, teardown),
		cmocka_unit_test_setup_teardown(test_order_and_content, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_then_server, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue_full_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork_child, setup, teardown),
		cmocka_unit_test_teardown(test_resolve_slow_first_call, first_teardown),
		cmocka_unit_test_setup_teardown(test_resolve_fails_then_succeeds, setup, teardown),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
