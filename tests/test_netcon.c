// SPDX-License-Identifier: MIT
/*
 * The syslog console and the netconsole against forgery and loss, on
 * loopback only: one record is one syslog datagram whatever its text; a
 * daemon whose queue is full costs a bounded wait and a counted, reported
 * loss; a long netconsole line split into datagrams never gives one that
 * starts with text of the record; a host name resolves off the caller's
 * path, a failure is retried, and what was lost meanwhile is reported.
 *
 * getaddrinfo() is interposed (the library is linked in statically): the
 * names *.pktest resolve as the test says, others as the C library does.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "console/resolve.h"
#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

/* ---- the interposed resolver ---- */

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fake_cond = PTHREAD_COND_INITIALIZER;
static bool fake_open;			/* slow.pktest may answer */
static atomic_bool fake_answered;	/* ... and did */
static atomic_int fake_failures_left;	/* flaky.pktest fails this many more times */
static atomic_int fake_calls;

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
	atomic_fetch_add(&fake_calls, 1);
	if (!strcmp(node, "slow.pktest")) {
		/* A resolver that does not answer: until opened, 3 s at most. */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 3;
		pthread_mutex_lock(&fake_lock);
		while (!fake_open &&
		       pthread_cond_timedwait(&fake_cond, &fake_lock, &until) == 0)
			;
		pthread_mutex_unlock(&fake_lock);
		atomic_store(&fake_answered, true);
	} else if (!strcmp(node, "flaky.pktest")) {
		if (atomic_fetch_sub(&fake_failures_left, 1) > 0)
			return EAI_AGAIN;
	} else {
		return EAI_NONAME;
	}
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

/* ---- helpers ---- */

static int init_mode(enum pk_mode mode)
{
	struct pk_config cfg;

	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.mode = mode;
	cfg.buffer_size = 1 << 20;
	return pk_init(&cfg);
}

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	return 0;
}

static const char *mode_name(enum pk_mode m)
{
	return m == PK_MODE_THREAD ? "thread" : m == PK_MODE_LEGACY ? "legacy" : "handoff";
}

static int dgram_server(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	unlink(path);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static int udp_server(unsigned *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), big = 4 << 20;

	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

/* The next datagram within @ms (a hang bound), NUL-terminated; its length or -1. */
static ssize_t recv_within(int fd, char *buf, size_t size, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return -1;
	n = recv(fd, buf, size - 1, MSG_DONTWAIT);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* ---- (a) one record, one datagram ---- */

static uint64_t rng_state;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)rng_state;
}

/*
 * The forgery of the review, then 500 records of seeded random text made
 * of newlines, '<', digits, '>', '[', ']', ':' and letters: each must
 * arrive as exactly one datagram, starting with the console's own
 * "<PRI>pktest[PID]: ", with no newline before its end.  Before, the
 * first record gave two datagrams, the second "<14>pktest[PID]: sshd[1]:
 * Accepted password for root".
 */
static void test_syslog_one_datagram(void **state)
{
	static const char alphabet[] = "\n\n\n<<>>0123456789[]: abcsshd";
	char *path = tu_tmp_path("netcon-syslog"), text[300], buf[8192], head[64];
	struct pk_console_driver drv;
	struct pk_console *con;
	unsigned i, j, len, got = 0;
	const char *seed = getenv("PK_TEST_SEED");
	int srv, hl, big = 4 << 20;

	(void)state;
	rng_state = seed ? strtoull(seed, NULL, 0) : 0x5eed22ull;
	if (!rng_state)
		rng_state = 1;
	assert_int_equal(init_mode(PK_MODE_HANDOFF), 0);
	srv = dgram_server(path);
	setsockopt(srv, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	assert_int_equal(pk_console_syslog_make(path, "pktest", &drv), 0);
	con = pk_console_register_driver(&drv, -1);
	assert_non_null(con);
	hl = snprintf(head, sizeof(head), "pktest[%d]: ", (int)getpid());
	pk_info("login failed for user %s\n", "bob\nsshd[1]: Accepted password for root");
	assert_int_equal(pk_flush(5000), 0);
	assert_true(recv_within(srv, buf, sizeof(buf), 5000) > 0);
	if (strncmp(buf, "<14>", 4) || strncmp(buf + 4, head, (size_t)hl) ||
	    !strstr(buf, "login failed for user bob\\x0asshd[1]: Accepted password for root"))
		fail_msg("not the whole record in one datagram: \"%s\"", buf);
	if (recv_within(srv, buf, sizeof(buf), 200) >= 0)
		fail_msg("a second datagram: \"%s\"", buf);
	for (i = 0; i < 500; i++) {
		len = 1 + rnd() % (sizeof(text) - 2);
		for (j = 0; j < len; j++)
			text[j] = alphabet[rnd() % (sizeof(alphabet) - 1)];
		text[len] = '\0';
		pk_info("%s\n", text);
		assert_int_equal(pk_flush(5000), 0);
		for (j = 0; recv_within(srv, buf, sizeof(buf), j ? 0 : 5000) >= 0; j++) {
			char *p = strchr(buf, '>');

			got++;
			if (buf[0] != '<' || !p || strncmp(p + 1, head, (size_t)hl) ||
			    strchr(buf, '\n'))
				fail_msg("record %u: a datagram not the console's own: \"%s\" (text "
					 "\"%s\")", i, buf, text);
		}
		if (got != i + 1)
			fail_msg("record %u gave %u datagrams (text \"%s\")", i, got - i, text);
	}
	print_message("syslog: 501 records, 501 datagrams (seed 0x%llx)\n",
		      (unsigned long long)(seed ? strtoull(seed, NULL, 0) : 0x5eed22ull));
	close(srv);
	unlink(path);
	free(path);
}

/* ---- (b) a daemon's queue full ---- */

/*
 * 100 records into a unix socket nobody reads (the kernel queues 10, as
 * the review's): the calls return (a hang bound), then after the queue
 * is read the next record arrives after "** N printk messages dropped **",
 * so that the datagrams read plus N are all 100, and N is the console's
 * write errors.  Before, 11 arrived and the rest was gone without a word.
 */
static void full_queue(enum pk_mode mode)
{
	char *path = tu_tmp_path("netcon-full"), buf[4096];
	struct pk_console_driver drv;
	struct pk_console_stats st;
	struct pk_console *con;
	unsigned i, got = 0, notes = 0;
	unsigned long long n, dropped = 0;
	uint64_t t0, t1;
	bool after = false;
	int srv;

	assert_int_equal(init_mode(mode), 0);
	srv = dgram_server(path);
	assert_int_equal(pk_console_syslog_make(path, "pktest", &drv), 0);
	con = pk_console_register_driver(&drv, -1);
	assert_non_null(con);
	t0 = tu_now_ns();
	for (i = 0; i < 100; i++)
		assert_true(pk_info("queued %u\n", i) > 0);
	assert_int_equal(pk_flush(20000), 0);
	t1 = tu_now_ns();
	while (recv_within(srv, buf, sizeof(buf), 0) >= 0) {
		if (strstr(buf, "]: queued "))
			got++;
		else if (sscanf(strstr(buf, "]: ") ? strstr(buf, "]: ") + 3 : buf,
				"** %llu printk messages dropped **", &n) == 1)
			dropped += n, notes++;
	}
	pk_info("after\n");
	assert_int_equal(pk_flush(5000), 0);
	while (recv_within(srv, buf, sizeof(buf), after ? 200 : 5000) >= 0) {
		if (strstr(buf, "]: after"))
			after = true;
		else if (sscanf(strstr(buf, "]: ") ? strstr(buf, "]: ") + 3 : buf,
				"** %llu printk messages dropped **", &n) == 1)
			dropped += n, notes++;
	}
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	print_message("%s: 100 records into a queue of 10: %u arrived, %llu reported dropped in "
		      "%u notice(s), %llu write errors; the 100 calls and flush took %.1f ms\n",
		      mode_name(mode), got, dropped, notes, (unsigned long long)st.write_errors,
		      (double)(t1 - t0) / 1e6);
	assert_true(after);
	assert_true(notes >= 1);
	assert_int_equal(got + dropped, 100);
	assert_int_equal(st.write_errors, dropped);
	pk_shutdown();
	close(srv);
	unlink(path);
	free(path);
}

static void test_syslog_full_queue(void **state)
{
	(void)state;
	full_queue(PK_MODE_HANDOFF);
	full_queue(PK_MODE_LEGACY);
	full_queue(PK_MODE_THREAD);
}

/* ---- (c) a long netconsole line ---- */

/*
 * Records whose rendering puts a forged "[    9.999999] sshd: ..." header
 * at every offset around the 1400-byte split: no datagram may start with it;
 * each after the first of a record starts with "ncfrag=OFFSET/TOTAL ",
 * and the pieces put together give the record back.  Before, the second
 * datagram started with the forged header.
 */
static void test_netconsole_split(void **state)
{
	static const char forged[] = "[    9.999999] sshd[1]: Accepted password for root\n";
	char text[2000], buf[2048], *whole;
	struct pk_console_driver drv;
	size_t wl, off, total;
	unsigned port, j, dgrams = 0, frags = 0;
	ssize_t n;
	int srv;

	(void)state;
	assert_int_equal(init_mode(PK_MODE_HANDOFF), 0);
	srv = udp_server(&port);
	assert_int_equal(pk_console_net_make("127.0.0.1", port, &drv), 0);
	assert_non_null(pk_console_register_driver(&drv, -1));
	whole = malloc(1 << 16);
	assert_non_null(whole);
	/*
	 * A record holds at most 1024 bytes of text: past 1400 rendered
	 * bytes only with escapes, four bytes to a byte, as an attacker would.
	 */
	for (j = 0; j < 40; j++) {
		memset(text, 'a', j % 4);
		memset(text + j % 4, '\x01', 340 + j / 4);
		strcpy(text + j % 4 + 340 + j / 4, forged);
		pk_info("%s", text);
		assert_int_equal(pk_flush(5000), 0);
		/* The record's first datagram, then its fragments. */
		n = recv_within(srv, buf, sizeof(buf), 5000);
		assert_true(n > 0);
		dgrams++;
		if (buf[0] != '[' || !strncmp(buf, forged, 15))
			fail_msg("j=%u: the first datagram is not the record's: \"%.60s\"", j, buf);
		memcpy(whole, buf, (size_t)n);
		wl = (size_t)n;
		while ((n = recv_within(srv, buf, sizeof(buf), 200)) > 0) {
			int used = 0;

			dgrams++;
			frags++;
			if (!strncmp(buf, "[    9.999999]", 14))
				fail_msg("j=%u: a datagram starts with the forged header", j);
			/* "ncfrag=OFFSET/TOTAL " (%n, not a blank, which would skip the text's) */
			if (sscanf(buf, "ncfrag=%zu/%zu%n", &off, &total, &used) != 2 ||
			    buf[used++] != ' ' || off != wl)
				fail_msg("j=%u: not a continuation at %zu: \"%.40s\"", j, wl, buf);
			memcpy(whole + wl, buf + used, (size_t)n - (size_t)used);
			wl += (size_t)n - (size_t)used;
			assert_true(wl <= total);
		}
		whole[wl] = '\0';
		if (!strstr(whole, forged) || whole[wl - 1] != '\n')
			fail_msg("j=%u: the pieces do not give the record back: %zu bytes, ending "
				 "\"%s\"", j, wl, whole + (wl > 80 ? wl - 80 : 0));
	}
	print_message("netconsole: 40 records past 1400 bytes, %u datagrams, %u continuations, "
		      "none starting with the record's text\n", dgrams, frags);
	free(whole);
	close(srv);
}

/* ---- (h) names resolved off the caller's path ---- */

/*
 * Log records until one arrives at @srv; the datagrams before it must be
 * one drop notice counting @before plus the probes lost.
 */
static void until_resolved(int srv, unsigned before, const char *what)
{
	char buf[2048];
	unsigned probes = 0;
	unsigned long long n, dropped = 0;
	bool arrived = false;
	ssize_t len;

	while (!arrived && probes < 2000) {
		pk_info("probe %u\n", probes++);
		assert_int_equal(pk_flush(5000), 0);
		while (!arrived && (len = recv_within(srv, buf, sizeof(buf), 10)) > 0) {
			const char *p = strstr(buf, "** ");

			if (p && sscanf(p, "** %llu printk messages dropped **", &n) == 1)
				dropped += n;
			else if (strstr(buf, "] probe "))
				arrived = true;
		}
	}
	assert_true(arrived);
	print_message("%s: %u records before and %u probes while resolving; %llu reported "
		      "dropped\n", what, before, probes - 1, dropped);
	assert_int_equal(dropped, before + probes - 1);
}

/*
 * A resolver that does not answer (slow.pktest, 3 s at most): registering
 * the console returns while it is still asked (before, it waited the 3
 * s inside the call); records logged meanwhile are counted and reported
 * once it answers.
 */
static void test_resolve_slow(void **state)
{
	char spec[64];
	unsigned port, i;
	bool answered;
	int srv;

	(void)state;
	atomic_store(&pk__resolve_retry_ms, 20);
	fake_set_open(false);
	atomic_store(&fake_answered, false);
	atomic_store(&fake_calls, 0);
	assert_int_equal(init_mode(PK_MODE_HANDOFF), 0);
	srv = udp_server(&port);
	snprintf(spec, sizeof(spec), "net:slow.pktest:%u", port);
	assert_int_equal(pk_console_register_spec(spec), 1);
	/* Not answered yet: the call did not wait for the answer. */
	answered = atomic_load(&fake_answered);
	if (answered)
		fail_msg("registering waited for the resolver's answer");
	for (i = 0; i < 5; i++)
		assert_true(pk_info("while resolving %u\n", i) > 0);
	assert_int_equal(pk_flush(5000), 0);
	fake_set_open(true);
	until_resolved(srv, 5, "slow resolver");
	close(srv);
}

/*
 * A name that fails twice (EAI_AGAIN) then resolves: before, the console
 * was refused for the life of the process; now it is made, retried, and
 * prints, after a notice of what was lost meanwhile.
 */
static void test_resolve_retried(void **state)
{
	char spec[64];
	unsigned port, i;
	int srv;

	(void)state;
	atomic_store(&pk__resolve_retry_ms, 20);
	atomic_store(&fake_failures_left, 1000000);	/* failing until told */
	atomic_store(&fake_calls, 0);
	assert_int_equal(init_mode(PK_MODE_LEGACY), 0);
	srv = udp_server(&port);
	snprintf(spec, sizeof(spec), "netconsole://flaky.pktest:%u", port);
	assert_int_equal(pk_console_register_spec(spec), 1);
	for (i = 0; i < 3; i++)
		assert_true(pk_info("while failing %u\n", i) > 0);
	assert_int_equal(pk_flush(5000), 0);
	i = (unsigned)atomic_load(&fake_calls);
	atomic_store(&fake_failures_left, 2);	/* two more failures, then an answer */
	until_resolved(srv, 3, "failing, then twice more");
	assert_true((unsigned)atomic_load(&fake_calls) >= i + 3);
	close(srv);
}

/*
 * RFC 5424 over TCP to a name a resolver is slow to answer: registering
 * returns at once, and the messages logged meanwhile wait in the
 * console's queue and all arrive once the name resolves (none lost).
 */
static void test_resolve_slow_tcp(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	char spec[80], *all = NULL;
	size_t len = 0;
	unsigned i, seen = 0;
	int lfd, cfd = -1;
	char buf[4096];
	uint64_t end;
	ssize_t n;

	(void)state;
	atomic_store(&pk__resolve_retry_ms, 20);
	fake_set_open(false);
	atomic_store(&fake_answered, false);
	assert_int_equal(init_mode(PK_MODE_HANDOFF), 0);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
	snprintf(spec, sizeof(spec), "syslog+tcp://slow.pktest:%u", ntohs(sa.sin_port));
	assert_int_equal(pk_console_register_spec(spec), 1);
	if (atomic_load(&fake_answered))
		fail_msg("registering waited for the resolver's answer");
	for (i = 0; i < 5; i++)
		assert_true(pk_info("queued while resolving %u\n", i) > 0);
	fake_set_open(true);
	/* The next writes connect and send the queue (a hang bound). */
	assert_true(tu_wait_until((pk_info("nudge\n"), pk_flush(5000),
				   (cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0), 10000));
	end = tu_now_ns() + 20000000000ull;	/* a hang bound */
	while (seen < 5 && tu_now_ns() < end) {
		n = recv(cfd, buf, sizeof(buf) - 1, 0);
		if (n <= 0) {
			pk_info("nudge\n");
			pk_flush(5000);
			usleep(10000);
			continue;
		}
		all = realloc(all, len + (size_t)n + 1);
		assert_non_null(all);
		memcpy(all + len, buf, (size_t)n);
		len += (size_t)n;
		all[len] = '\0';
		for (seen = 0, i = 0; i < 5; i++) {
			snprintf(buf, sizeof(buf), "queued while resolving %u", i);
			seen += strstr(all, buf) != NULL;
		}
	}
	if (seen < 5)
		fail_msg("%u of 5 arrived; received: %.300s", seen, all ? all : "(nothing)");
	print_message("syslog over TCP: %u of 5 messages logged while resolving arrived\n", seen);
	assert_int_equal(seen, 5);
	assert_null(strstr(all, "dropped"));
	free(all);
	close(cfd);
	close(lfd);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_syslog_one_datagram, teardown),
		cmocka_unit_test(test_syslog_full_queue),
		cmocka_unit_test_teardown(test_netconsole_split, teardown),
		cmocka_unit_test_teardown(test_resolve_slow, teardown),
		cmocka_unit_test_teardown(test_resolve_retried, teardown),
		cmocka_unit_test_teardown(test_resolve_slow_tcp, teardown),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
