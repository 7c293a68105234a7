// SPDX-License-Identifier: MIT
/*
 * custom_console.c - a console driver of your own: struct pk_console_ops
 * with write() and write_atomic(), registered with pk_console_register().
 *
 *   ./printk_custom_console
 *
 * The driver here writes to a stdio stream with a tag in front of each
 * record ("app| "), as a program that already owns its output (a GUI log
 * pane, a pipe to a parent, a vendor logging API) would.  It shows why a
 * driver has two write callbacks:
 *
 *   write()         normal context, one thread at a time: may take locks,
 *                   allocate, use stdio.  Here: fputs() and fflush().
 *   write_atomic()  emergencies, pk_panic() and the crash handler: may run
 *                   in a signal handler, and while another thread is stuck
 *                   inside write() holding stdio's lock.  It must be
 *                   async-signal-safe, so here it writes with write(2)
 *                   straight to the descriptor, tagged "app!".
 *   release()       once, after pk_console_unregister() (or at exit), when
 *                   no thread is inside write() any more.
 *
 * Each call gets one record, already rendered (by default as
 * "[    1.234567] text\n").  A driver without write_atomic() is skipped in
 * emergencies while another thread is inside its write().
 */
#include <printk/console.h>
#include <printk/printk.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct tagged_console {
	FILE *out;			/* for write() */
	int fd;				/* the same stream's descriptor, for write_atomic() */
	unsigned long writes;		/* only write() touches it: one caller at a time */
	atomic_ulong atomic_writes;	/* write_atomic() may run beside write() */
};

static long tagged_write(void *ctx, const char *buf, size_t len)
{
	struct tagged_console *tc = ctx;

	if (fputs("app| ", tc->out) == EOF || fwrite(buf, 1, len, tc->out) != len ||
	    fflush(tc->out) == EOF)
		return -1;	/* counted as a write error by libprintk */
	tc->writes++;
	return (long)len;
}

/* Async-signal-safe: write(2) and atomics only, no stdio, no locks. */
static long tagged_write_atomic(void *ctx, const char *buf, size_t len)
{
	struct tagged_console *tc = ctx;
	char line[PK_RECORD_MAX + 128];
	size_t n = len < sizeof(line) - 5 ? len : sizeof(line) - 5;
	ssize_t w;

	memcpy(line, "app! ", 5);
	memcpy(line + 5, buf, n);
	w = write(tc->fd, line, n + 5);
	if (w < 0)
		return -1;
	atomic_fetch_add_explicit(&tc->atomic_writes, 1, memory_order_relaxed);
	/* Report what of @buf was written: the tag is ours, not the caller's. */
	return w <= 5 ? 0 : (long)((size_t)w - 5);
}

static void tagged_release(void *ctx)
{
	struct tagged_console *tc = ctx;

	fprintf(tc->out, "tagged console released: %lu normal writes, %lu atomic writes\n",
		tc->writes, atomic_load_explicit(&tc->atomic_writes, memory_order_relaxed));
	fflush(tc->out);
}

static const struct pk_console_ops tagged_ops = {
	.name = "tagged",
	.write = tagged_write,
	.write_atomic = tagged_write_atomic,
	.release = tagged_release,
};

static struct tagged_console tc;

int main(void)
{
	struct pk_console_stats st;
	struct pk_console *con;
	struct pk_config cfg;
	int ret;

	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE;	/* ours is the only console */
	ret = pk_init(&cfg);
	if (ret < 0) {
		fprintf(stderr, "pk_init: %s\n", pk_strerror(ret));
		return 1;
	}

	tc.out = stdout;
	tc.fd = fileno(stdout);
	/* PK_INFO + 1: info and more urgent; debug is filtered. */
	con = pk_console_register(&tagged_ops, &tc, PK_INFO + 1);
	if (!con) {
		perror("pk_console_register");
		return 1;
	}

	pk_info("service starting\n");
	pk_debug("not printed: below the console's loglevel\n");
	pk_warn("disk 93%% full\n");
	/*
	 * Make sure the lines above are out through write() before the
	 * emergency: an emergency prints what is still pending first, with
	 * write_atomic().
	 */
	pk_flush(5000);

	/*
	 * An emergency section: records stored in it are printed at once by
	 * this thread, through write_atomic(), in every flush mode.
	 */
	pk_emergency_enter();
	pk_crit("temperature 97 C: shutting down\n");
	pk_emergency_exit();

	pk_info("service stopped\n");
	pk_flush(5000);

	if (pk_console_stats_get(con, &st) == 0)
		printf("console %s: %llu records, %llu bytes, %llu write errors\n", st.name,
		       (unsigned long long)st.records, (unsigned long long)st.bytes,
		       (unsigned long long)st.write_errors);
	/* Waits until no thread is inside write(), then calls release(). */
	ret = pk_console_unregister(con);
	return ret == 0 ? 0 : 1;
}
