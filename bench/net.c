// SPDX-License-Identifier: MIT
/*
 * net.c - pkbench net: the RFC 5424 network console against a real
 * rsyslogd that pkbench starts itself on 127.0.0.1 (imtcp and imrelp on
 * free ports, writing to a file in pkbench's temp dir, its own pid file
 * and work dir; the system's rsyslog is never touched).
 *
 * Per transport (TCP, RELP), R times, each run with a fresh daemon and a
 * fresh library:
 *   1. N records stored from one thread; the time from the first call
 *      until the receiver's file holds all N gives records/s delivered;
 *   2. the daemon is killed (SIGKILL) and M records are logged, each call
 *      timed with clock_gettime: the caller's latency while the receiver
 *      is down (median, p99, max);
 *   3. the daemon is restarted and a record logged every 10 ms: delivery
 *      resumed when the first of them arrives; then what arrived in all (distinct records,
 *      duplicates) against what was stored, and what the console counted
 *      as dropped in its "dropped" notices.
 * Medians over the R runs are reported.  Where rsyslogd or imrelp is not
 * installed, one line says the row is skipped and the exit status is 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include <printk/console.h>

#include "bench.h"

#define NET_RUNS_MAX	16
#define WAIT_MS		120000	/* hang bound of every wait on the daemon */

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

/* imrelp.so in rsyslog's module directory (Debian: rsyslog-relp). */
static const char *imrelp_path(void)
{
	static const char *const paths[] = { "/usr/lib/x86_64-linux-gnu/rsyslog/imrelp.so",
					     "/usr/lib/aarch64-linux-gnu/rsyslog/imrelp.so",
					     "/usr/lib/rsyslog/imrelp.so",
					     "/usr/lib64/rsyslog/imrelp.so",
					     "/usr/local/lib/rsyslog/imrelp.so" };

	return find_exe(paths, sizeof(paths) / sizeof(paths[0]));
}

static unsigned free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	unsigned port = 0;

	if (fd < 0)
		return 0;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

static int tcp_listens(unsigned port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

	if (fd < 0)
		return 0;
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

struct daemon {
	char conf[320], pidf[320], out[320], log[320];
	unsigned tcp, relp;
	pid_t pid;
};

/*
 * imtcp and imrelp on 127.0.0.1, nothing else; every message to @log as
 * APP|MSG.  The main queue is direct, so a message is in the file before
 * imrelp acknowledges it: what the file holds is what was delivered.
 */
static int daemon_config(struct daemon *d, const char *dir, int run)
{
	FILE *f;

	snprintf(d->conf, sizeof(d->conf), "%s/net-rsyslog.conf", dir);
	snprintf(d->pidf, sizeof(d->pidf), "%s/net-rsyslogd.pid", dir);
	snprintf(d->out, sizeof(d->out), "%s/net-rsyslogd.out", dir);
	snprintf(d->log, sizeof(d->log), "%s/net-%d.log", dir, run);
	d->tcp = free_port();
	d->relp = free_port();
	if (!d->tcp || !d->relp || d->tcp == d->relp)
		return -EADDRNOTAVAIL;
	f = fopen(d->conf, "w");
	if (!f)
		return -errno;
	fprintf(f,
		"global(workDirectory=\"%s\" maxMessageSize=\"64k\")\n"
		"main_queue(queue.type=\"Direct\")\n"
		"module(load=\"imtcp\")\n"
		"module(load=\"imrelp\")\n"
		"input(type=\"imtcp\" address=\"127.0.0.1\" port=\"%u\")\n"
		"input(type=\"imrelp\" address=\"127.0.0.1\" port=\"%u\")\n"
		"template(name=\"pkb\" type=\"string\" string=\"%%app-name%%|%%msg%%\\n\")\n"
		"action(type=\"omfile\" file=\"%s\" template=\"pkb\" flushOnTXEnd=\"on\")\n",
		dir, d->tcp, d->relp, d->log);
	return fclose(f) ? -errno : 0;
}

static int wait_listening(struct daemon *d)
{
	uint64_t end = pkb_now_ns() + (uint64_t)WAIT_MS * 1000000u;

	int status;

	while (!tcp_listens(d->tcp) || !tcp_listens(d->relp)) {
		/* A daemon that exited (a bad config, a module missing) will not listen. */
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			d->pid = 0;
			return -ECHILD;
		}
		if (pkb_now_ns() > end)
			return -ETIMEDOUT;
		pkb_sleep_ns(5000000);
	}
	return 0;
}

static int daemon_start(struct daemon *d)
{
	const char *exe = rsyslogd_path();
	int fd;

	unlink(d->pidf);
	d->pid = fork();
	if (d->pid < 0)
		return -errno;
	if (d->pid == 0) {
		fd = open(d->out, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(exe, "rsyslogd", "-n", "-f", d->conf, "-i", d->pidf, (char *)NULL);
		_exit(127);
	}
	return wait_listening(d);
}

static void daemon_kill(struct daemon *d, int sig)
{
	int status;

	if (d->pid <= 0)
		return;
	kill(d->pid, sig);
	while (waitpid(d->pid, &status, 0) < 0 && errno == EINTR)
		;
	d->pid = 0;
}

/*
 * What the receiver's file holds for one app: read on from where the last
 * call stopped, whole lines only, so polling a growing file costs what was
 * added.  Records are "net I"; a bitmap tells first copies from resends.
 */
struct scan {
	const char *path;
	char prefix[40];
	long off;
	unsigned char *seen;
	unsigned n;		/* records "net I", I < n */
	uint64_t lines, distinct, dups, dropped, last;
};

static void scan_more(struct scan *s)
{
	FILE *f = fopen(s->path, "r");
	char *line = NULL, *p;
	size_t cap = 0, plen = strlen(s->prefix);
	ssize_t len;
	unsigned long v;

	if (!f)
		return;
	if (fseek(f, s->off, SEEK_SET) == 0) {
		while ((len = getline(&line, &cap, f)) > 0) {
			if (line[len - 1] != '\n')
				break;	/* half written: read again next time */
			s->off += len;
			if (strncmp(line, s->prefix, plen))
				continue;
			p = line + plen;
			if (sscanf(p, " net %lu", &v) == 1) {
				s->lines++;
				if (v < s->n && !s->seen[v]++)
					s->distinct++;
				else if (v < s->n)
					s->dups++;
			} else if (sscanf(p, " last %lu", &v) == 1) {
				s->last++;
			} else if ((p = strstr(p, "** ")) && sscanf(p, "** %lu", &v) == 1 &&
				   strstr(p, "printk messages dropped")) {
				s->dropped += v;
			}
		}
	}
	free(line);
	fclose(f);
}

/* Poll until @done(s) or the hang bound; 0 or -ETIMEDOUT. */
static int scan_until(struct scan *s, int (*done)(const struct scan *, uint64_t), uint64_t want)
{
	uint64_t end = pkb_now_ns() + (uint64_t)WAIT_MS * 1000000u;

	for (;;) {
		scan_more(s);
		if (done(s, want))
			return 0;
		if (pkb_now_ns() > end)
			return -ETIMEDOUT;
		pkb_sleep_ns(2000000);
	}
}

static int got_distinct(const struct scan *s, uint64_t want)
{
	return s->distinct >= want;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static const char *const tname[] = { "TCP", "RELP" };

/* One run of one transport: fills @r; < 0 with r->error when it could not finish. */
static int net_one(const struct pkb_net_opts *o, int t, int run, struct pkb_net_result *r)
{
	struct pk_rfc5424_opts ro = { .transport = t ? PK_SYSLOG_RELP : PK_SYSLOG_TCP,
				      .host = "127.0.0.1", .facility = LOG_LOCAL3,
				      .retry_max_ms = 200, .connect_timeout_ms = 1000 };
	struct daemon d = { .pid = 0 };
	struct pk_console_driver drv;
	struct pk_console *con = NULL;
	struct pk_config cfg;
	struct scan s = { .n = (unsigned)(o->records + o->down) };
	uint64_t *lat = NULL, t0, q;
	char app[32];
	long i;
	int rc;

	memset(r, 0, sizeof(*r));
	r->transport = t;
	snprintf(app, sizeof(app), "pkbnet-%s-%d", t ? "relp" : "tcp", run);
	rc = daemon_config(&d, pkb_tmpdir(), run);
	if (rc < 0) {
		snprintf(r->error, sizeof(r->error), "rsyslog.conf: %s", strerror(-rc));
		return rc;
	}
	s.path = d.log;
	snprintf(s.prefix, sizeof(s.prefix), "%s|", app);
	s.seen = calloc(s.n, 1);
	lat = calloc((size_t)o->down, sizeof(*lat));
	if (!s.seen || !lat) {
		rc = -ENOMEM;
		snprintf(r->error, sizeof(r->error), "out of memory");
		goto out;
	}
	rc = daemon_start(&d);
	if (rc < 0) {
		snprintf(r->error, sizeof(r->error), "rsyslogd did not listen on 127.0.0.1:%u and :%u",
			 d.tcp, d.relp);
		goto out;
	}
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.buffer_size = 16u << 20;	/* the store holds every record of a run */
	rc = pk_init(&cfg);
	if (rc < 0) {
		snprintf(r->error, sizeof(r->error), "pk_init: %s", strerror(-rc));
		goto out;
	}
	/*
	 * A queue that holds every record of the run: the rate is what the
	 * transport delivers, not what a full queue lets through (the default
	 * 256 KiB fills in a few thousand records and drops the rest).
	 */
	ro.queue_size = (size_t)(o->records + o->down + 64) * 512;
	ro.port = t ? d.relp : d.tcp;
	ro.app_name = app;
	rc = pk_console_rfc5424_make(&ro, &drv);
	if (rc < 0) {
		snprintf(r->error, sizeof(r->error), "pk_console_rfc5424_make: %s", strerror(-rc));
		goto shut;
	}
	con = pk_console_register_driver(&drv, PK_DEBUG);
	if (!con) {
		rc = -EIO;
		snprintf(r->error, sizeof(r->error), "pk_console_register_driver failed");
		goto shut;
	}

	/* 1. Delivered: first call to the N-th record in the receiver's file. */
	t0 = pkb_now_ns();
	for (i = 0; i < o->records; i++)
		pk_printk(PK_INFO, "net %ld\n", i);
	r->store_s = (double)(pkb_now_ns() - t0) / 1e9;
	rc = scan_until(&s, got_distinct, (uint64_t)o->records);
	r->deliver_s = (double)(pkb_now_ns() - t0) / 1e9;
	if (rc < 0) {
		snprintf(r->error, sizeof(r->error), "%llu of %ld records arrived in %ds",
			 (unsigned long long)s.distinct, o->records, WAIT_MS / 1000);
		goto shut;
	}
	r->rate = (double)o->records / r->deliver_s;

	/* 2. The receiver down: each call timed. */
	daemon_kill(&d, SIGKILL);
	for (i = 0; i < o->down; i++) {
		q = pkb_now_ns();
		pk_printk(PK_INFO, "net %ld\n", o->records + i);
		lat[i] = pkb_now_ns() - q;
	}
	qsort(lat, (size_t)o->down, sizeof(*lat), cmp_u64);
	r->lat_med = lat[(o->down - 1) / 2];
	r->lat_p99 = lat[(size_t)((double)(o->down - 1) * 0.99)];
	r->lat_max = lat[o->down - 1];

	/* 3. Back up: delivery resumed when a record logged after the restart arrives. */
	rc = daemon_start(&d);
	if (rc < 0) {
		snprintf(r->error, sizeof(r->error),
			 "restarted rsyslogd did not listen on 127.0.0.1:%u and :%u", d.tcp,
			 d.relp);
		goto shut;
	}
	/*
	 * TCP reconnects in the background of later writes, so a record every
	 * 10 ms until one arrives: the time a logging program sees.
	 */
	t0 = pkb_now_ns();
	for (i = 0; !r->resumed; i++) {
		if (pkb_now_ns() - t0 > (uint64_t)WAIT_MS * 1000000u)
			break;
		pk_printk(PK_INFO, "last %ld\n", i);
		pkb_sleep_ns(10000000);
		scan_more(&s);
		r->resumed = s.last > 0;
	}
	r->resume_s = (double)(pkb_now_ns() - t0) / 1e9;
	/* The console is done with what it holds once unregistered (RELP drains). */
	pk_flush(5000);
	pk_console_unregister(con);
	con = NULL;
	pkb_sleep_ns(200000000);	/* the daemon writes what it took */
	scan_more(&s);
	r->stored = (uint64_t)(o->records + o->down);
	r->distinct = s.distinct;
	r->dups = s.dups;
	r->dropped = s.dropped;
	r->lost = r->stored - s.distinct > s.dropped ? r->stored - s.distinct - s.dropped : 0;
	rc = 0;
	if (!r->resumed) {
		rc = -ETIMEDOUT;
		snprintf(r->error, sizeof(r->error), "delivery did not resume in %ds",
			 WAIT_MS / 1000);
	} else if (t && s.distinct < r->stored) {
		/* RELP is at-least-once: every record stored must have arrived. */
		rc = -EPROTO;
		snprintf(r->error, sizeof(r->error), "RELP: %llu of %llu records arrived",
			 (unsigned long long)s.distinct, (unsigned long long)r->stored);
	}
shut:
	if (con)
		pk_console_unregister(con);
	pk_shutdown();
out:
	daemon_kill(&d, SIGTERM);
	free(s.seen);
	free(lat);
	r->status = rc;
	return rc;
}

/* The median of @n values of the field at @off in @res (of one transport). */
static double med(const struct pkb_net_result *res, int n, double (*get)(const struct pkb_net_result *))
{
	double v[NET_RUNS_MAX];
	int i;

	for (i = 0; i < n; i++)
		v[i] = get(&res[i]);
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double g_rate(const struct pkb_net_result *r) { return r->rate; }
static double g_med(const struct pkb_net_result *r) { return (double)r->lat_med; }
static double g_p99(const struct pkb_net_result *r) { return (double)r->lat_p99; }
static double g_max(const struct pkb_net_result *r) { return (double)r->lat_max; }
static double g_resume(const struct pkb_net_result *r) { return r->resume_s; }
static double g_distinct(const struct pkb_net_result *r) { return (double)r->distinct; }
static double g_dups(const struct pkb_net_result *r) { return (double)r->dups; }
static double g_dropped(const struct pkb_net_result *r) { return (double)r->dropped; }
static double g_lost(const struct pkb_net_result *r) { return (double)r->lost; }

int pkb_net_run(const struct pkb_net_opts *o)
{
	static struct pkb_net_result res[2][NET_RUNS_MAX];
	char b1[16], b2[16], b3[16];
	int t, i, ok[2] = { 0, 0 }, status = 0, resumed;

	if (!rsyslogd_path() || !imrelp_path()) {
		printf("network: skipped: %s is not installed (Debian: apt-get install rsyslog "
		       "rsyslog-relp)\n", rsyslogd_path() ? "rsyslog's imrelp" : "rsyslogd");
		return 0;
	}
	for (i = 0; i < o->runs; i++) {
		for (t = 0; t < 2; t++) {
			struct pkb_net_result r;

			pkb_progress("network: %s run %d of %d", tname[t], i + 1, o->runs);
			if (net_one(o, t, 2 * i + t, &r) < 0) {
				pkb_progress_clear();
				fprintf(stderr, "pkbench: network %s run %d: %s\n", tname[t],
					i + 1, r.error);
				status = 1;
				if (!r.rate)
					continue;	/* nothing measured */
			}
			res[t][ok[t]++] = r;
		}
	}
	pkb_progress_clear();
	printf("\nnetwork console -> rsyslogd on 127.0.0.1 (imtcp, imrelp; killed with SIGKILL "
	       "and restarted)\n"
	       "  %ld records from one thread, then %ld while the receiver is down; "
	       "medians of %d runs\n\n",
	       o->records, o->down, o->runs);
	printf("  %-5s %12s  %-26s  %-9s %9s %7s %8s %6s\n", "", "delivered",
	       "receiver down: pk_printk()", "resumed", "arrived", "dups", "dropped", "lost");
	printf("  %-5s %12s  %8s %8s %8s  %-9s %9s %7s %8s %6s\n", "", "records/s", "median",
	       "p99", "max", "after", "of stored", "", "notices", "");
	for (t = 0; t < 2; t++) {
		int n = ok[t];

		if (!n) {
			printf("  %-5s no run finished\n", tname[t]);
			continue;
		}
		resumed = 0;
		for (i = 0; i < n; i++)
			resumed += res[t][i].resumed;
		printf("  %-5s %12.0f  %8s %8s %8s  ", tname[t], med(res[t], n, g_rate),
		       pkb_fmt_ns(b1, sizeof(b1), (uint64_t)med(res[t], n, g_med)),
		       pkb_fmt_ns(b2, sizeof(b2), (uint64_t)med(res[t], n, g_p99)),
		       pkb_fmt_ns(b3, sizeof(b3), (uint64_t)med(res[t], n, g_max)));
		if (resumed == n)
			printf("%-9s", pkb_fmt_ns(b1, sizeof(b1),
						  (uint64_t)(med(res[t], n, g_resume) * 1e9)));
		else
			printf("%d of %d  ", resumed, n);
		printf(" %9.0f %7.0f %8.0f %6.0f\n", med(res[t], n, g_distinct),
		       med(res[t], n, g_dups), med(res[t], n, g_dropped), med(res[t], n, g_lost));
	}
	printf("\n  stored = %ld; arrived: distinct records in the receiver's file; dups: "
	       "resent copies;\n  dropped: the console's in-band notices; lost: neither "
	       "arrived nor counted\n",
	       o->records + o->down);
	return status;
}
