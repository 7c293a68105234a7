// SPDX-License-Identifier: MIT
/*
 * console.c - the console registry, per-console state and counters, the
 * PK_CONSOLE syntax, and how one record reaches one console.
 *
 * REGISTRY
 *
 * A fixed array of slots, each a console pointer and a count of users.  A
 * user (a printer, possibly in a signal handler) increments the slot's
 * count, then loads the pointer; pk_console_unregister() replaces the
 * pointer with DRAINING, then waits for the count to drop to zero before it
 * frees the console.  Both sides use seq_cst (reg:A, reg:B): either the
 * user sees DRAINING and backs off, or the unregisterer sees the user's
 * count and waits for it.  Register and unregister serialize on a mutex;
 * users never take it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "consoles.h"
#include "flush.h"
#include "internal.h"

#define LMM(label)
#define DRAINING ((struct pk_console *)1)

struct slot {
	_Atomic(struct pk_console *) con;
	_Atomic uint32_t users;
};

static struct slot slots[PK_MAX_CONSOLES];
static _Atomic int nr_consoles;
static _Atomic int max_loglevel;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

struct pk_console *pk__con_get(int i)
{
	struct pk_console *c;

	/*
	 * An empty slot costs one relaxed load, not two atomic RMWs.  Racing
	 * with a registration here only means we see the console next time;
	 * pk__con_register() kicks the flush mode itself once it is in.
	 */
	if (!atomic_load_explicit(&slots[i].con, memory_order_relaxed))
		return NULL;
	/* LMM(reg:A) */
	atomic_fetch_add_explicit(&slots[i].users, 1, memory_order_seq_cst);
	c = atomic_load_explicit(&slots[i].con, memory_order_seq_cst);
	if (!c || c == DRAINING) {
		atomic_fetch_sub_explicit(&slots[i].users, 1, memory_order_release);
		return NULL;
	}
	return c;
}

void pk__con_put(int i)
{
	atomic_fetch_sub_explicit(&slots[i].users, 1, memory_order_release);
}

int pk__con_count(void)
{
	return atomic_load_explicit(&nr_consoles, memory_order_relaxed);
}

int pk__con_loglevel(struct pk_console *c)
{
	int l = atomic_load_explicit(&c->loglevel, memory_order_relaxed);

	return l < 0 ? pk__g.cfg.console_loglevel : l;
}

int pk__con_max_loglevel(void)
{
	return atomic_load_explicit(&max_loglevel, memory_order_relaxed);
}

void pk__con_update_max_loglevel(void)
{
	struct pk_console *c;
	int i, l, max = 0;

	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = pk__con_get(i);
		if (!c)
			continue;
		l = pk__con_loglevel(c);
		if (l > max)
			max = l;
		pk__con_put(i);
	}
	atomic_store_explicit(&max_loglevel, max, memory_order_relaxed);
}

struct pk_console *pk__con_register(const struct pk_console_ops *ops, void *ctx, int loglevel,
				    unsigned fmt)
{
	struct pk_console *c;
	int i;

	if (!ops || !ops->write || loglevel > 8) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->ops = ops;
	c->ctx = ctx;
	atomic_init(&c->loglevel, loglevel < 0 ? -1 : loglevel);
	atomic_init(&c->fmt, fmt);
	pk__ring_reader_init(&c->rd, &pk__g.ring, false);
	if (c->rd.next < pk__g.attach_seq)
		c->rd.next = pk__g.attach_seq;	/* earlier runs' records: pkmsg's */
	c->expect = c->rd.next;
	atomic_init(&c->next_seq, c->rd.next);

	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < PK_MAX_CONSOLES; i++)
		if (!atomic_load_explicit(&slots[i].con, memory_order_relaxed))
			break;
	if (i == PK_MAX_CONSOLES) {
		pthread_mutex_unlock(&reg_lock);
		free(c);
		errno = ENOSPC;
		return NULL;
	}
	c->slot = i;
	if (pk__flush_console_added(c) < 0) {
		pthread_mutex_unlock(&reg_lock);
		free(c);
		errno = EAGAIN;
		return NULL;
	}
	atomic_store_explicit(&slots[i].con, c, memory_order_seq_cst);
	atomic_fetch_add_explicit(&nr_consoles, 1, memory_order_relaxed);
	pk__con_update_max_loglevel();
	pthread_mutex_unlock(&reg_lock);
	/* Print the backlog now, as register_console() does. */
	pk__flush_kick();
	return c;
}

struct pk_console *pk_console_register(const struct pk_console_ops *ops, void *ctx, int loglevel)
{
	int ret = pk__ensure_init();

	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	return pk__con_register(ops, ctx, loglevel, PK_FMT_HUMAN);
}

struct pk_console *pk_console_register_driver(const struct pk_console_driver *drv, int loglevel)
{
	struct pk_console *c;
	int ret;

	if (!drv || !drv->ops) {
		errno = EINVAL;
		return NULL;
	}
	ret = pk__ensure_init();
	if (ret < 0) {
		errno = -ret;
		c = NULL;
	} else {
		c = pk__con_register(drv->ops, drv->ctx, loglevel, drv->format);
	}
	if (!c && drv->ops->release)
		drv->ops->release(drv->ctx);
	return c;
}

/*
 * Consoles detached while a thread was stuck inside their write(): never
 * freed, since that thread may come back to them; kept here.
 */
static struct pk_console *abandoned[PK_MAX_CONSOLES * 4];
static unsigned nr_abandoned;

static int abandon(struct pk_console *c)
{
	if (nr_abandoned < PK__ARRAY_SIZE(abandoned))
		abandoned[nr_abandoned++] = c;
	return -EBUSY;
}

/* Detach slot @i and free its console once nobody uses it.  reg_lock held. */
static int unregister_slot(int i)
{
	struct pk_console *c = atomic_load_explicit(&slots[i].con, memory_order_relaxed);
	struct timespec nap = { 0, 1000000 };
	int waited;

	/* LMM(reg:B) */
	atomic_store_explicit(&slots[i].con, DRAINING, memory_order_seq_cst);
	atomic_fetch_sub_explicit(&nr_consoles, 1, memory_order_relaxed);
	pk__con_update_max_loglevel();
	if (pk__flush_console_removing(c) < 0)
		return abandon(c);	/* its printer is stuck inside write() */
	for (waited = 0; atomic_load_explicit(&slots[i].users, memory_order_seq_cst); waited++) {
		if (waited == 5000)
			return abandon(c);	/* someone is stuck inside its write() */
		nanosleep(&nap, NULL);
	}
	atomic_store_explicit(&slots[i].con, NULL, memory_order_release);
	pk__con_update_max_loglevel();
	if (c->ops->release)
		c->ops->release(c->ctx);
	free(c);
	return 0;
}

int pk_console_unregister(struct pk_console *con)
{
	int i, ret = -EINVAL;

	if (!con)
		return -EINVAL;
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		if (atomic_load_explicit(&slots[i].con, memory_order_relaxed) == con) {
			ret = unregister_slot(i);
			break;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	return ret;
}

void pk__con_unregister_all(void)
{
	struct pk_console *c;
	int i;

	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = atomic_load_explicit(&slots[i].con, memory_order_relaxed);
		if (c && c != DRAINING)
			unregister_slot(i);
	}
	pthread_mutex_unlock(&reg_lock);
}

int pk_console_set_format(struct pk_console *con, unsigned fmt)
{
	if (!con || PK_FMT_KIND(fmt) > PK_FMT_RAW || (fmt & ~(0xffu | PK_FMT_F_TID)))
		return -EINVAL;
	atomic_store_explicit(&con->fmt, fmt, memory_order_relaxed);
	return 0;
}

int pk_console_set_loglevel(struct pk_console *con, int loglevel)
{
	if (!con || loglevel > 8)
		return -EINVAL;
	atomic_store_explicit(&con->loglevel, loglevel < 0 ? -1 : loglevel, memory_order_relaxed);
	pk__con_update_max_loglevel();
	return 0;
}

int pk_console_stats_get(struct pk_console *con, struct pk_console_stats *st)
{
	if (!con || !st)
		return -EINVAL;
	st->name = con->ops->name ? con->ops->name : "console";
	st->next_seq = atomic_load_explicit(&con->next_seq, memory_order_acquire);
	st->records = atomic_load_explicit(&con->records, memory_order_relaxed);
	st->notices = atomic_load_explicit(&con->notices, memory_order_relaxed);
	st->bytes = atomic_load_explicit(&con->bytes, memory_order_relaxed);
	st->dropped = atomic_load_explicit(&con->dropped, memory_order_relaxed);
	st->skipped = atomic_load_explicit(&con->skipped, memory_order_relaxed);
	st->write_errors = atomic_load_explicit(&con->write_errors, memory_order_relaxed);
	st->busy_ns = atomic_load_explicit(&con->busy_ns, memory_order_relaxed);
	return 0;
}

/* ---- printing one record ---- */

/* Write all of @buf; a short write is retried with the rest. */
static void con_write(struct pk_console *c, const char *buf, size_t len, bool atomic)
{
	long (*fn)(void *, const char *, size_t) = atomic ? c->ops->write_atomic : c->ops->write;
	uint64_t t0 = pk__now_ns();
	size_t done = 0;
	unsigned again = 0;
	long n;

	while (done < len) {
		n = fn(c->ctx, buf + done, len - done);
		if (n > 0) {
			done += (size_t)n;
		} else if ((n == -EINTR || n == -EAGAIN || n == 0) && ++again < 100) {
			continue;
		} else {
			atomic_fetch_add_explicit(&c->write_errors, 1, memory_order_relaxed);
			break;
		}
	}
	atomic_fetch_add_explicit(&c->busy_ns, pk__now_ns() - t0, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->bytes, done, memory_order_relaxed);
	pk__share_add(pk__tid(), done, pk__self.printer);
}

bool pk__con_pending(struct pk_console *c)
{
	return pk__ring_readable(&pk__g.ring, atomic_load_explicit(&c->next_seq, memory_order_acquire));
}

/*
 * The counters are updated before next_seq is published (release), so
 * that whoever sees a console caught up (pk_flush, stats) also sees the
 * counts of every record up to there.
 */
static void publish(struct pk_console *c)
{
	atomic_store_explicit(&c->next_seq, c->expect, memory_order_release);
}

static void print_dropped(struct pk_console *c, char *buf, uint64_t gap, unsigned fmt, bool atomic)
{
	size_t len = pk__format_dropped(buf, PK_FORMAT_MAX, gap, fmt);

	atomic_fetch_add_explicit(&c->dropped, gap, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->notices, 1, memory_order_relaxed);
	con_write(c, buf, len, atomic);
}

enum pk__emit pk__con_emit(struct pk_console *c, struct pk__con_scratch *scratch, bool atomic)
{
	struct pk_ring_rec *rec = scratch ? &scratch->rec : &c->rec;
	char *buf = scratch ? scratch->buf : c->buf;
	struct pk_format_opts fo = { 0 };
	struct pk_record r;
	uint64_t gap;

	fo.fmt = atomic_load_explicit(&c->fmt, memory_order_relaxed);
	if (pk__ring_read(&c->rd, rec) <= 0) {
		/* The reader may have moved over lost records: report them now. */
		if (c->rd.next <= c->expect)
			return PK_EMIT_NONE;
		gap = c->rd.next - c->expect;
		c->expect = c->rd.next;
		print_dropped(c, buf, gap, fo.fmt, atomic);
		publish(c);
		return PK_EMIT_PRINTED;
	}
	gap = rec->seq - c->expect;
	c->expect = rec->seq + 1;
	if (gap)
		print_dropped(c, buf, gap, fo.fmt, atomic);
	/*
	 * Another process's record in a shared store (a fork child's, or one
	 * of several programs writing one file) is for its own consoles.
	 */
	if (rec->meta.level >= pk__con_loglevel(c) ||
	    rec->meta.pid != atomic_load_explicit(&pk__g.pid, memory_order_relaxed)) {
		atomic_fetch_add_explicit(&c->skipped, 1, memory_order_relaxed);
		publish(c);
		return gap ? PK_EMIT_PRINTED : PK_EMIT_SKIPPED;
	}
	r.seq = rec->seq;
	r.ts_ns = rec->meta.ts_ns;
	r.level = rec->meta.level;
	r.tid = rec->meta.tid;
	r.pid = rec->meta.pid;
	r.flags = rec->meta.flags;
	r.facility = rec->meta.facility;
	r.text = rec->text;
	r.len = rec->len;
	con_write(c, buf, pk__format_record(buf, PK_FORMAT_MAX, &r, &fo), atomic);
	atomic_fetch_add_explicit(&c->records, 1, memory_order_relaxed);
	publish(c);
	return PK_EMIT_PRINTED;
}

/* ---- printer shares ---- */

#define SHARES 512

static struct {
	_Atomic uint32_t tid;
	_Atomic unsigned printer;
	_Atomic uint64_t bytes, records;
} shares[SHARES];

void pk__share_add(uint32_t tid, uint64_t bytes, bool printer_thread)
{
	unsigned i, h = (tid * 2654435761u) % SHARES;
	uint32_t cur;

	for (i = 0; i < SHARES; i++, h = (h + 1) % SHARES) {
		cur = atomic_load_explicit(&shares[h].tid, memory_order_relaxed);
		if (cur != tid) {
			if (cur)
				continue;
			if (!atomic_compare_exchange_strong_explicit(&shares[h].tid, &cur, tid,
								     memory_order_relaxed,
								     memory_order_relaxed) &&
			    cur != tid)
				continue;
		}
		if (printer_thread)
			atomic_store_explicit(&shares[h].printer, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&shares[h].bytes, bytes, memory_order_relaxed);
		atomic_fetch_add_explicit(&shares[h].records, 1, memory_order_relaxed);
		return;
	}
	/* Table full: more than SHARES printing threads; not counted per thread. */
}

void pk__share_reset(void)
{
	unsigned i;

	for (i = 0; i < SHARES; i++) {
		atomic_store_explicit(&shares[i].bytes, 0, memory_order_relaxed);
		atomic_store_explicit(&shares[i].records, 0, memory_order_relaxed);
	}
}

int pk_printer_shares(struct pk_printer_share *out, int max)
{
	int i, n = 0;
	uint64_t b;

	for (i = 0; i < SHARES; i++) {
		uint32_t tid = atomic_load_explicit(&shares[i].tid, memory_order_relaxed);

		b = atomic_load_explicit(&shares[i].bytes, memory_order_relaxed);
		if (!tid || !b)
			continue;
		if (out && n < max) {
			out[n].tid = tid;
			out[n].printer_thread = atomic_load_explicit(&shares[i].printer,
								     memory_order_relaxed);
			out[n].bytes = b;
			out[n].records = atomic_load_explicit(&shares[i].records,
							      memory_order_relaxed);
		}
		n++;
	}
	return n;
}

/* ---- PK_CONSOLE ---- */

/* HOST:PORT or [IPV6]:PORT */
static int net_entry(char *s, struct pk_console_driver *drv)
{
	char *colon, *end, *host = s;
	unsigned long port;

	if (*s == '[') {
		end = strchr(s, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		*end = '\0';
		host = s + 1;
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		*colon = '\0';
	}
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || !port || port > 65535 || !*host)
		return -EINVAL;
	return pk_console_net_make(host, (unsigned)port, drv);
}

static int make_entry(const char *name, size_t len, struct pk_console_driver *drv)
{
	char tmp[512];
	char *end;
	long fd;

	if (len >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, name, len);
	tmp[len] = '\0';
	if (!strcmp(tmp, "stderr"))
		return pk_console_fd_make(STDERR_FILENO, drv);
	if (!strcmp(tmp, "stdout"))
		return pk_console_fd_make(STDOUT_FILENO, drv);
	if (!strncmp(tmp, "fd:", 3)) {
		errno = 0;
		fd = strtol(tmp + 3, &end, 10);
		if (errno || end == tmp + 3 || *end || fd < 0 || fd > 1 << 20)
			return -EINVAL;
		if (fcntl((int)fd, F_GETFD) < 0)
			return -EBADF;
		return pk_console_fd_make((int)fd, drv);
	}
	if (!strncmp(tmp, "file:", 5) && tmp[5])
		return pk_console_file_make(tmp + 5, 0, drv);
	if (!strcmp(tmp, "syslog"))
		return pk_console_syslog_make(NULL, NULL, drv);
	if (!strncmp(tmp, "syslog:", 7) && tmp[7])
		return pk_console_syslog_make(tmp + 7, NULL, drv);
	if (!strncmp(tmp, "net:", 4))
		return net_entry(tmp + 4, drv);
	return -EINVAL;
}

int pk_console_register_spec(const char *spec)
{
	const char *p = spec, *e, *at, *pct, *name_end;
	struct pk_console_driver drv, thr;
	unsigned long bps;
	int level, n = 0, ret;
	char tmp[32];

	if (!spec)
		return -EINVAL;
	for (; *p; p = *e ? e + 1 : e) {
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		if (e == p)
			continue;
		level = -1;
		bps = 0;
		name_end = e;
		pct = memrchr(p, '%', (size_t)(e - p));
		at = memrchr(p, '@', (size_t)(e - p));
		ret = 0;
		if (pct && (!at || pct > at)) {
			bps = strtoul(pct + 1, (char **)&name_end, 10);
			ret = name_end != e || !bps ? -EINVAL : 0;
			name_end = pct;
			at = at && at < pct ? at : NULL;
		}
		if (!ret && at) {
			size_t l = (size_t)(name_end - at - 1);

			if (l >= sizeof(tmp))
				ret = -EINVAL;
			else {
				memcpy(tmp, at + 1, l);
				tmp[l] = '\0';
				ret = pk__parse_level(tmp, &level);
			}
			name_end = at;
		}
		if (!ret)
			ret = make_entry(p, (size_t)(name_end - p), &drv);
		if (!ret && bps) {
			ret = pk_console_throttle_make(&drv, bps, &thr);
			if (!ret)
				drv = thr;
		}
		if (!ret) {
			struct pk_console *c = pk__con_register(drv.ops, drv.ctx, level, drv.format);

			if (!c) {
				ret = -errno;
				if (drv.ops->release)
					drv.ops->release(drv.ctx);
			}
		}
		if (ret < 0) {
			fprintf(stderr, "libprintk: PK_CONSOLE: ignoring \"%.*s\": %s\n", (int)(e - p), p,
				strerror(-ret));
			continue;
		}
		n++;
	}
	return n;
}

/* ---- fork ---- */

void pk__con_atfork_prepare(void)
{
	pthread_mutex_lock(&reg_lock);
}

void pk__con_atfork_parent(void)
{
	pthread_mutex_unlock(&reg_lock);
}

void pk__con_atfork_child(void)
{
	struct pk_console *c;
	int i;

	pthread_mutex_init(&reg_lock, NULL);
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		atomic_store_explicit(&slots[i].users, 0, memory_order_relaxed);
		c = atomic_load_explicit(&slots[i].con, memory_order_relaxed);
		if (c && c != DRAINING) {
			pk__own_reset(&c->own);
			c->has_thread = false;
			atomic_store_explicit(&c->sleeping, 0, memory_order_relaxed);
			atomic_store_explicit(&c->thread_stop, 0, memory_order_relaxed);
		}
	}
}
