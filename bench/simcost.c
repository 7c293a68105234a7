// SPDX-License-Identifier: MIT
/*
 * simcost.c - the costs pkbench sim's model runs on, measured on this
 * host with the library's own code where there is one, or read from a
 * file or the command line (so that a run can be repeated exactly).
 *
 *   fmt_ns, cs_ns   pk_printk() with no console, and pk__store() of the
 *                   same text: the store's section, the rest the call's
 *                   own part (packing, clock, thread id)
 *   xfer_ns         two threads incrementing one shared counter against
 *                   one: what moving a cache line costs
 *   lane_ns         a store of one lane per CPU: two threads calling
 *                   pk_printk() at once against one, per call (each stores
 *                   in its CPU's lane; what they still share, caches and
 *                   all, measured; 0 on a host with one CPU)
 *   lock_ns         pk__cl_trylock, record begin and end, unlock
 *   wake_ns         pk__futex_wake with nobody waiting (the system call)
 *   wakeup_ns       futex ping-pong between two threads: wake to running
 *   write_ns, write_kb_ns  the file console's write() of 80 and 1024 bytes
 *   rec_overhead    the store's bytes per record beyond its text, from
 *                   how many records a store of this size keeps (its
 *                   whole size over that count, less the text)
 *
 * Each is the median of five rounds; the whole runs in a child with a
 * fresh library (child.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/printk.h>
#include <printk/reader.h>

#include "core/futex.h"
#include "flush/conlock.h"
#include "store/store.h"
#include "sim.h"

#define ROUNDS	5

struct cjob {
	size_t buffer_size;
	int rec_bytes;
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int64_t median(int64_t *v)
{
	qsort(v, ROUNDS, sizeof(*v), cmp_i64);
	return v[ROUNDS / 2];
}

static _Atomic uint64_t shared_ctr __attribute__((aligned(64)));
static _Atomic int go;

static void *bump(void *arg)
{
	long n = (long)arg, i;

	while (!atomic_load(&go))
		;
	for (i = 0; i < n; i++)
		atomic_fetch_add_explicit(&shared_ctr, 1, memory_order_relaxed);
	return NULL;
}

/*
 * ns per step of @fn (n steps, its argument) in each of @threads (1 or 2)
 * threads released at once through `go'.
 */
static int64_t race_ns(void *(*fn)(void *), int threads, long n)
{
	pthread_t t[2];
	uint64_t t0;
	int i;

	atomic_store(&go, 0);
	for (i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, fn, (void *)n);
	t0 = pkb_now_ns();
	atomic_store(&go, 1);
	for (i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return (int64_t)((pkb_now_ns() - t0) / (uint64_t)n);
}

/* ns per increment of one shared counter by @threads threads. */
static int64_t bump_ns(int threads, long n)
{
	return race_ns(bump, threads, n);
}

static _Atomic uint32_t ping __attribute__((aligned(64)));
static _Atomic int pong_stop;

static void *pong(void *arg)
{
	uint32_t v = 1;

	(void)arg;
	while (!atomic_load(&pong_stop)) {
		while (atomic_load(&ping) != v && !atomic_load(&pong_stop))
			pk__futex_wait(&ping, v - 1, 10000000);
		if (atomic_load(&pong_stop))
			break;
		atomic_store(&ping, v + 1);
		pk__futex_wake(&ping, 1);
		v += 2;
	}
	return NULL;
}

/* Half a futex round trip between two threads that sleep in between. */
static int64_t pingpong_ns(int n)
{
	pthread_t t;
	uint64_t t0;
	uint32_t v = 0;
	int i;

	atomic_store(&ping, 0);
	atomic_store(&pong_stop, 0);
	pthread_create(&t, NULL, pong, NULL);
	t0 = pkb_now_ns();
	for (i = 0; i < n; i++) {
		atomic_store(&ping, v + 1);
		pk__futex_wake(&ping, 1);
		while (atomic_load(&ping) != v + 2)
			pk__futex_wait(&ping, v + 1, 10000000);
		v += 2;
	}
	atomic_store(&pong_stop, 1);
	atomic_fetch_add(&ping, 1);
	pk__futex_wake(&ping, 1);
	pthread_join(t, NULL);
	return (int64_t)((pkb_now_ns() - t0) / (uint64_t)n / 2);
}

static int64_t write_ns(const struct pk_console_driver *d, const char *buf, size_t len, int n)
{
	uint64_t t0 = pkb_now_ns();
	int i;

	for (i = 0; i < n; i++)
		d->ops->write(d->ctx, buf, len);
	return (int64_t)((pkb_now_ns() - t0) / (uint64_t)n);
}

static int cost_child(void *arg, void *out)
{
	const struct cjob *j = arg;
	struct pkb_sim_costs *c = out;
	int64_t v[8][ROUNDS];
	struct pk_config cfg;
	struct pk_console_driver fd;
	struct pk__conlock lock;
	struct pk_stats st;
	char text[1100], path[600];
	_Atomic uint32_t word = 0;
	uint64_t seq, t0;
	int r, i, n = 20000;

	memset(c, 0, sizeof(*c));
	pk_config_init(&cfg);
	cfg.buffer_path = NULL;
	cfg.buffer_size = j->buffer_size;
	cfg.flags = PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.consoles = NULL;
	if (pk_init(&cfg) < 0)
		return 1;
	memset(text, 'x', sizeof(text));
	snprintf(path, sizeof(path), "%s/simcost.log", pkb_tmpdir());
	if (pk_console_file_make(path, 0, &fd) < 0)
		return 1;
	for (r = 0; r < ROUNDS; r++) {
		t0 = pkb_now_ns();
		for (i = 0; i < n; i++)
			pk_printk(PK_INFO, "storm: worker %2d call %8lu: the quick brown fox jumps over "
				  "the lazy dog\n", 1, (unsigned long)i);
		v[0][r] = (int64_t)((pkb_now_ns() - t0) / (uint64_t)n);
		t0 = pkb_now_ns();
		for (i = 0; i < n; i++)
			pk__store(PK_INFO, 0, text, (size_t)j->rec_bytes - 1, NULL, &seq);
		v[1][r] = (int64_t)((pkb_now_ns() - t0) / (uint64_t)n);
		v[2][r] = bump_ns(2, 2000000) - bump_ns(1, 2000000);
		memset(&lock, 0, sizeof(lock));
		t0 = pkb_now_ns();
		for (i = 0; i < n; i++) {
			pk__cl_trylock(&lock, 1, false);
			pk__cl_record_begin(&lock);
			pk__cl_record_end(&lock, true);
			pk__cl_unlock(&lock, 1);
		}
		v[3][r] = (int64_t)((pkb_now_ns() - t0) / (uint64_t)n);
		t0 = pkb_now_ns();
		for (i = 0; i < n; i++)
			pk__futex_wake(&word, 1);
		v[4][r] = (int64_t)((pkb_now_ns() - t0) / (uint64_t)n);
		v[5][r] = pingpong_ns(500);
		v[6][r] = write_ns(&fd, text, 80, 2000);
		v[7][r] = write_ns(&fd, text, 1024, 2000);
	}
	c->cs_ns = median(v[1]);
	c->fmt_ns = median(v[0]) - c->cs_ns;
	if (c->fmt_ns < 1)
		c->fmt_ns = 1;
	c->xfer_ns = median(v[2]);
	if (c->xfer_ns < 0)
		c->xfer_ns = 0;
	c->lock_ns = median(v[3]);
	c->wake_ns = median(v[4]);
	c->wakeup_ns = median(v[5]);
	c->write_ns = median(v[6]);
	c->write_kb_ns = (median(v[7]) - c->write_ns) * 1024 / (1024 - 80);
	if (c->write_kb_ns < 0)
		c->write_kb_ns = 0;
	pk_stats_get(&st);
	/*
	 * The model's capacity is buffer_size / (rec_bytes + rec_overhead):
	 * the whole store's bytes, header and descriptors included, over the
	 * records it keeps (the data ring is a power of two, about half).
	 */
	if (st.next_seq > st.oldest_seq)
		c->rec_overhead = (int64_t)(j->buffer_size / (st.next_seq - st.oldest_seq)) -
				  j->rec_bytes;
	if (c->rec_overhead < 0)
		c->rec_overhead = 0;
	c->measured = 1;
	if (fd.ops->release)
		fd.ops->release(fd.ctx);
	unlink(path);
	pk_shutdown();
	return 0;
}

static void *lane_caller(void *arg)
{
	long n = (long)arg, i;

	while (!atomic_load(&go))
		;
	for (i = 0; i < n; i++)
		pk_printk(PK_INFO, "storm: worker %2d call %8lu: the quick brown fox jumps over "
			  "the lazy dog\n", 1, (unsigned long)i);
	return NULL;
}

/* ns per pk_printk() of each of @threads threads calling at once. */
static int64_t lane_call_ns(int threads, long n)
{
	return race_ns(lane_caller, threads, n);
}

/*
 * lane_ns, in a child of its own: the default store of lanes needs a
 * data ring of 256 KiB at least for two lanes, larger than the store the
 * other costs (its capacity) are measured on.
 */
static int lane_child(void *arg, void *out)
{
	int64_t *lane_ns = out, v[ROUNDS];
	struct pk_config cfg;
	struct pk_store_info info;
	struct pk_reader *rd;
	int r;

	(void)arg;
	*lane_ns = -1;
	pk_config_init(&cfg);
	cfg.buffer_path = NULL;
	cfg.buffer_size = 1u << 20;
	cfg.flags = PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.consoles = NULL;
	cfg.lanes = 0;		/* one per CPU, whatever PK_LANES says */
	if (pk_init(&cfg) < 0)
		return 1;
	rd = pk_reader_open();
	if (!rd || pk_reader_info(rd, &info) < 0)
		return 1;
	pk_reader_close(rd);
	if (info.lanes < 2) {
		/* One CPU: no other CPU stores at the same time. */
		*lane_ns = 0;
		pk_shutdown();
		return 0;
	}
	lane_call_ns(1, 20000);		/* every page of the store touched once */
	for (r = 0; r < ROUNDS; r++)
		v[r] = lane_call_ns(2, 200000) - lane_call_ns(1, 200000);
	*lane_ns = median(v);
	if (*lane_ns < 0)
		*lane_ns = 0;
	pk_shutdown();
	return 0;
}

int pkb_sim_costs_measure(struct pkb_sim_costs *c, size_t buffer_size, int rec_bytes)
{
	struct cjob j = { buffer_size, rec_bytes };
	char why[160];
	int64_t lane_ns = -1;
	int rc;

	if (!pkb_tmpdir()[0])
		return -EIO;
	rc = pkb_child_run("sim: measuring costs", 3, 120, cost_child, &j, c, sizeof(*c), why,
			   sizeof(why));
	if (rc < 0)
		return rc;
	if (!c->measured)
		return -EIO;
	rc = pkb_child_run("sim: measuring the lanes' cost", 3, 120, lane_child, NULL, &lane_ns,
			   sizeof(lane_ns), why, sizeof(why));
	if (rc < 0)
		return rc;
	if (lane_ns < 0)
		return -EIO;
	c->lane_ns = lane_ns;
	return 0;
}

static const struct {
	const char *name;
	size_t off;
} fields[] = {
	{ "fmt_ns", offsetof(struct pkb_sim_costs, fmt_ns) },
	{ "cs_ns", offsetof(struct pkb_sim_costs, cs_ns) },
	{ "xfer_ns", offsetof(struct pkb_sim_costs, xfer_ns) },
	{ "lane_ns", offsetof(struct pkb_sim_costs, lane_ns) },
	{ "lock_ns", offsetof(struct pkb_sim_costs, lock_ns) },
	{ "wake_ns", offsetof(struct pkb_sim_costs, wake_ns) },
	{ "wakeup_ns", offsetof(struct pkb_sim_costs, wakeup_ns) },
	{ "write_ns", offsetof(struct pkb_sim_costs, write_ns) },
	{ "write_kb_ns", offsetof(struct pkb_sim_costs, write_kb_ns) },
	{ "rec_overhead", offsetof(struct pkb_sim_costs, rec_overhead) },
};
#define NFIELDS	(sizeof(fields) / sizeof(fields[0]))

/* One "name=value" (value in ns, or bytes for rec_overhead). */
static int set_one(struct pkb_sim_costs *c, const char *tok, char *why, size_t n)
{
	const char *eq = strchr(tok, '=');
	char *end;
	long long v;
	size_t i, len;

	if (!eq) {
		snprintf(why, n, "'%s' is not name=value", tok);
		return -EINVAL;
	}
	len = (size_t)(eq - tok);
	errno = 0;
	v = strtoll(eq + 1, &end, 10);
	if (errno || end == eq + 1 || *end || v < 0 || v > 10000000000LL) {
		snprintf(why, n, "'%s': the value must be a whole number of ns, 0 to 10^10", tok);
		return -EINVAL;
	}
	for (i = 0; i < NFIELDS; i++) {
		if (strlen(fields[i].name) == len && !strncmp(tok, fields[i].name, len)) {
			*(int64_t *)((char *)c + fields[i].off) = v;
			return 0;
		}
	}
	snprintf(why, n, "unknown cost '%.*s' (known: fmt_ns cs_ns xfer_ns lane_ns lock_ns wake_ns "
		 "wakeup_ns write_ns write_kb_ns rec_overhead)", (int)len, tok);
	return -EINVAL;
}

int pkb_sim_costs_set(struct pkb_sim_costs *c, const char *spec, char *why, size_t n)
{
	char buf[1024], *tok, *save = NULL;
	int rc;

	if (strlen(spec) >= sizeof(buf)) {
		snprintf(why, n, "cost list too long");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ", \t\n", &save); tok; tok = strtok_r(NULL, ", \t\n", &save)) {
		rc = set_one(c, tok, why, n);
		if (rc < 0)
			return rc;
	}
	c->measured = 0;
	return 0;
}

/* A costs file: name=value per line (or as pkbench sim prints them); # comments. */
int pkb_sim_costs_load(const char *path, struct pkb_sim_costs *c, char *why, size_t n)
{
	FILE *f = fopen(path, "r");
	char line[1024], *hash;
	unsigned seen = 0;
	int rc = 0, ln = 0;
	size_t i;

	if (!f) {
		snprintf(why, n, "%s: %s", path, strerror(errno));
		return -errno;
	}
	memset(c, 0, sizeof(*c));
	while (!rc && fgets(line, sizeof(line), f)) {
		char sub[160];

		ln++;
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		/* The line pkbench sim prints: "costs (...): name=value ..." */
		if (!strncmp(line, "costs", 5) && strchr(line, ':')) {
			char *colon = strchr(line, ':') + 1;

			memmove(line, colon, strlen(colon) + 1);
		}
		rc = pkb_sim_costs_set(c, line, sub, sizeof(sub));
		if (rc < 0)
			snprintf(why, n, "%s:%d: %s", path, ln, sub);
		for (i = 0; i < NFIELDS; i++)
			if (strstr(line, fields[i].name))
				seen |= 1u << i;
	}
	fclose(f);
	if (!rc && seen != (1u << NFIELDS) - 1) {
		for (i = 0; i < NFIELDS; i++)
			if (!(seen & (1u << i)))
				break;
		snprintf(why, n, "%s: no value for %s (a costs file names all ten)", path,
			 fields[i].name);
		rc = -EINVAL;
	}
	return rc;
}

void pkb_sim_costs_print(FILE *f, const struct pkb_sim_costs *c)
{
	size_t i;

	fprintf(f, "costs (%s):", c->measured ? "measured on this host" : "given");
	for (i = 0; i < NFIELDS; i++)
		fprintf(f, " %s=%lld", fields[i].name,
			(long long)*(const int64_t *)((const char *)c + fields[i].off));
	fputc('\n', f);
}
