// SPDX-License-Identifier: MIT
/*
 * The syslog and netconsole drivers, against receivers this test runs on
 * the loopback and a socket of its own, and against a real syslog daemon
 * when one listens on /dev/log.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

static int setup(void **state)
{
	struct pk_config cfg;

	(void)state;
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.mode = PK_MODE_HANDOFF;
	cfg.buffer_size = 64 << 10;
	return pk_init(&cfg);
}

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	return 0;
}

/* Receive datagrams for up to a second into @buf, concatenated. */
static size_t recv_all(int fd, char *buf, size_t size, size_t want_lines)
{
	struct timeval tv = { 0, 200000 };
	size_t len = 0, lines = 0;
	ssize_t n;
	int tries = 0;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (lines < want_lines && tries < 10 && len + 1 < size) {
		n = recv(fd, buf + len, size - len - 1, 0);
		if (n <= 0) {
			tries++;
			continue;
		}
		len += (size_t)n;
		if (buf[len - 1] != '\n')
			buf[len++] = '\n';	/* syslog datagrams carry no newline */
		lines++;
	}
	buf[len] = '\0';
	return len;
}

static void test_netconsole_loopback(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct pk_console_stats st;
	struct pk_console *con;
	struct pk_console_driver drv;
	char buf[8192], spec[64];
	int i;

	(void)state;
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	getsockname(fd, (struct sockaddr *)&sa, &sl);
	snprintf(spec, sizeof(spec), "net:127.0.0.1:%u", ntohs(sa.sin_port));
	assert_int_equal(pk_console_register_spec(spec), 1);
	pk_err("over the network %d\n", 1);
	pk_info("and again %d\n", 2);
	assert_int_equal(pk_flush(5000), 0);
	recv_all(fd, buf, sizeof(buf), 2);
	assert_non_null(strstr(buf, "] over the network 1\n"));
	assert_non_null(strstr(buf, "] and again 2\n"));
	/* The peer goes away: writes fail, are counted, and nothing stalls. */
	close(fd);
	assert_int_equal(pk_console_net_make("127.0.0.1", ntohs(sa.sin_port), &drv), 0);
	con = pk_console_register_driver(&drv, -1);
	assert_non_null(con);
	for (i = 0; i < 20; i++)
		pk_info("nobody listens %d\n", i);
	assert_int_equal(pk_flush(5000), 0);
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	print_message("dead peer: %llu records, %llu write errors\n",
		      (unsigned long long)st.records, (unsigned long long)st.write_errors);
	assert_true(st.write_errors >= 1);
	assert_int_equal(st.next_seq, 22);
	/* Bad addresses. */
	assert_int_equal(pk_console_net_make("127.0.0.1", 0, &drv), -EINVAL);
	/* A name is resolved off the caller's path: made at once (test_netcon.c). */
	assert_int_equal(pk_console_net_make("no-such-host.invalid", 9, &drv), 0);
	drv.ops->release(drv.ctx);
	assert_int_equal(pk_console_register_spec("net:127.0.0.1,net:[::1:5,net:x:99999"), 0);
}

/* One datagram (bounded wait: a hang); its length, or -1. */
static ssize_t recv_one(int fd, char *buf, size_t size)
{
	struct timeval tv = { 5, 0 };
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(fd, buf, size - 1, 0);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/*
 * Receive one record of the extended netconsole, in as many fragments as
 * it takes; check each fragment's header against the first and the
 * offsets against what came; return the text reassembled (its newline
 * included) in @text and the number of datagrams.
 */
static unsigned recv_ext_record(int fd, char *text, size_t size, unsigned *level,
				unsigned long long *seq)
{
	char dg[2048], head[128], first[128] = "";
	unsigned long long s, us, off, total = 0, got = 0;
	unsigned lv, frags = 0;
	const char *semi;
	ssize_t n;
	char flag;
	int k;

	do {
		n = recv_one(fd, dg, sizeof(dg));
		assert_true(n > 0);
		assert_true(n <= 1000);			/* Linux's MAX_PRINT_CHUNK */
		semi = memchr(dg, ';', (size_t)n);
		assert_non_null(semi);
		assert_true((size_t)(semi - dg) < sizeof(head));
		memcpy(head, dg, (size_t)(semi - dg));
		head[semi - dg] = '\0';
		k = sscanf(head, "%u,%llu,%llu,%c,ncfrag=%llu/%llu", &lv, &s, &us, &flag, &off,
			   &total);
		assert_true(k == 4 || k == 6);
		if (k == 4) {				/* whole: no fragments */
			assert_int_equal(frags, 0);
			memcpy(text, semi + 1, (size_t)(dg + n - semi - 1));
			text[dg + n - semi - 1] = '\0';
			*level = lv;
			*seq = s;
			return 1;
		}
		/* Every fragment: the record's own header, then its offset. */
		if (!frags)
			snprintf(first, sizeof(first), "%u,%llu,%llu,%c", lv, s, us, flag);
		assert_int_equal(strncmp(head, first, strlen(first)), 0);
		assert_int_equal(off, got);
		assert_true(got + (size_t)(dg + n - semi - 1) <= total && total < size);
		memcpy(text + got, semi + 1, (size_t)(dg + n - semi - 1));
		got += (size_t)(dg + n - semi - 1);
		frags++;
	} while (got < total);
	text[got] = '\0';
	*level = lv;
	*seq = s;
	return frags;
}

static void test_netconsole_ext(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	char spec[96], text[8192], want[4096], big[1100];
	unsigned level, frags;
	unsigned long long seq, seq0;
	int line;
	size_t i;

	(void)state;
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	getsockname(fd, (struct sockaddr *)&sa, &sl);
	snprintf(spec, sizeof(spec), "netconsole+ext://127.0.0.1:%u", ntohs(sa.sin_port));
	assert_int_equal(pk_console_register_spec(spec), 1);

	/*
	 * A short record: one datagram, "LEVEL,SEQ,USEC,-;text\n", and the
	 * level macro's call site as dictionary lines.
	 */
	line = __LINE__ + 1;
	pk_err("short %d\n", 1);
	assert_int_equal(pk_flush(5000), 0);
	assert_int_equal(recv_ext_record(fd, text, sizeof(text), &level, &seq0), 1);
	assert_int_equal(level & 7, PK_ERR);
	snprintf(want, sizeof(want), "short 1\n CODE_FILE=%s\n CODE_LINE=%d\n"
		 " CODE_FUNC=test_netconsole_ext\n", __FILE__, line);
	assert_string_equal(text, want);

	/* 1023 bytes of text: over 1000 with its header, two fragments. */
	for (i = 0; i < 1023; i++)
		big[i] = (char)('a' + i % 26);
	big[1023] = '\0';
	/* pk_printk(): no call site, the text alone decides the fragments. */
	pk_printk(PK_INFO, "%s\n", big);
	assert_int_equal(pk_flush(5000), 0);
	frags = recv_ext_record(fd, text, sizeof(text), &level, &seq);
	assert_int_equal(frags, 2);
	assert_int_equal(seq, seq0 + 1);
	assert_int_equal(level & 7, PK_INFO);
	snprintf(want, sizeof(want), "%s\n", big);
	assert_string_equal(text, want);

	/* 600 control bytes escaped as \x01 (2400 bytes): three fragments. */
	memset(big, 1, 600);
	big[600] = '\0';
	pk_printk(PK_WARNING, "%s\n", big);
	assert_int_equal(pk_flush(5000), 0);
	frags = recv_ext_record(fd, text, sizeof(text), &level, &seq);
	assert_int_equal(frags, 3);
	assert_int_equal(seq, seq0 + 2);
	for (i = 0; i < 600; i++)
		memcpy(want + 4 * i, "\\x01", 4);
	strcpy(want + 2400, "\n");
	assert_string_equal(text, want);
	print_message("extended netconsole: 1, 2 and 3 datagrams for records of 8, 1024 and "
		      "2401 bytes of text\n");

	/* The plain form by its URL, the default port, and bad ones. */
	assert_int_equal(pk_console_register_spec("netconsole://127.0.0.1"), 1);
	assert_int_equal(pk_console_register_spec("netconsole://,netconsole+ext://127.0.0.1:0,"
						  "netconsole://127.0.0.1:99999,"
						  "netconsole+ext://[::1,netconsole://127.0.0.1:x"),
			 0);
	close(fd);
}

static void test_syslog_socket(void **state)
{
	char *path = tu_tmp_path("syslog"), buf[8192], spec[200];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	(void)state;
	strcpy(sa.sun_path, path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	snprintf(spec, sizeof(spec), "syslog:%s", path);
	assert_int_equal(pk_console_register_spec(spec), 1);
	pk_err("disk %s failed\n", "sda");
	pk_notice("two\nlines\n");
	assert_int_equal(pk_flush(5000), 0);
	recv_all(fd, buf, sizeof(buf), 2);
	/*
	 * facility user (1), err (3): <11>; notice (5): <13>; one datagram a
	 * record, its newline escaped as the rendering escapes control bytes
	 */
	assert_non_null(strstr(buf, "<11>test_netsys["));
	assert_non_null(strstr(buf, "]: disk sda failed\n<13>test_netsys["));
	assert_non_null(strstr(buf, "]: two\\x0alines\n"));
	assert_null(strstr(buf, "] ["));	/* the console's timestamp is left to the daemon */
	close(fd);
	unlink(path);
	free(path);
}

/*
 * Whether a daemon listens on /dev/log. The socket file alone says nothing:
 * one left behind by a daemon that has gone refuses connections.
 */
static int syslog_daemon_listens(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = "/dev/log" };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), ok;

	if (fd < 0)
		return 0;
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/* Read /var/log/syslog until it holds @a and @b (up to 5 s); NULL if not. */
static char *syslog_with(const char *a, const char *b)
{
	char *log;
	int i;

	for (i = 0; i < 50; i++) {
		log = tu_read_file("/var/log/syslog", NULL);
		if (log && strstr(log, a) && strstr(log, b))
			return log;
		free(log);
		usleep(100000);
	}
	return NULL;
}

/*
 * A real daemon (rsyslogd, started by CI) writing /var/log/syslog.  A line
 * sent by the C library's syslog(3) calibrates: if it arrives, the
 * console's must arrive too.  If it does not, the daemon writes elsewhere
 * and the test is skipped, unless PK_TEST_SYSLOG=1 says a daemon writing
 * that file must be there (CI sets it once it has seen one do so).
 */
static void test_real_syslog_daemon(void **state)
{
	const char *must = getenv("PK_TEST_SYSLOG");
	bool required = must && !strcmp(must, "1");
	char token[64], control[80], want[96], *log;

	(void)state;
	if (!syslog_daemon_listens() || access("/var/log/syslog", R_OK)) {
		assert_false(required);
		print_message("no syslog daemon on /dev/log and no /var/log/syslog: skipped\n");
		skip();
	}
	snprintf(token, sizeof(token), "pktest-%d-%llu", (int)getpid(),
		 (unsigned long long)tu_now_ns());
	snprintf(control, sizeof(control), "%s-control", token);
	snprintf(want, sizeof(want), "%s reached the daemon", token);
	openlog("test_netsys", LOG_NDELAY, LOG_USER);
	syslog(LOG_ERR, "%s", control);
	closelog();
	assert_int_equal(pk_console_register_spec("syslog"), 1);
	pk_err("%s reached the daemon\n", token);
	assert_int_equal(pk_flush(5000), 0);
	log = syslog_with(control, want);
	if (!log && !required) {
		log = tu_read_file("/var/log/syslog", NULL);
		if (!log || !strstr(log, control)) {
			free(log);
			print_message("the daemon does not write /var/log/syslog: skipped\n");
			skip();
		}
	}
	assert_non_null(log);
	assert_non_null(strstr(log, control));
	assert_non_null(strstr(log, want));
	free(log);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_netconsole_loopback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_netconsole_ext, setup, teardown),
		cmocka_unit_test_setup_teardown(test_syslog_socket, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real_syslog_daemon, setup, teardown),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
