// SPDX-License-Identifier: MIT
/*
 * Signal stress: a SIGALRM handler firing every 20 us calls pk_printk while
 * the main thread loops in pk_printk.  The handler interrupts pk_printk at
 * every possible point, including between reserving and committing a
 * record.  Nothing may hang and every record must be intact.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "printk/printk.h"
#include "printk/reader.h"
#include "testutil.h"

static const char pad[] = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			  "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
static volatile sig_atomic_t sig_count;
static volatile sig_atomic_t sig_failed;

static uint32_t key(uint64_t c, unsigned who)
{
	return (uint32_t)((c + who) * 2654435761u);
}

static int padlen(uint64_t c)
{
	return (int)(c % 100);
}

static void on_alarm(int sig)
{
	uint64_t c = (uint64_t)sig_count;
	int saved = errno;

	(void)sig;
	if (pk_printk(PK_NOTICE, "sig c=%llu k=%08x pad=%.*s\n", (unsigned long long)c,
		      key(c, 1), padlen(c), pad) < 0)
		sig_failed = 1;
	sig_count = sig_count + 1;
	errno = saved;
}

static int check(const char *text, uint64_t *c, unsigned *who)
{
	char w[8];
	unsigned long long cc;
	unsigned k;
	int off = 0;

	if (sscanf(text, "%7s c=%llu k=%08x pad=%n", w, &cc, &k, &off) != 3 || !off)
		return -1;
	*who = !strcmp(w, "sig");
	if (!*who && strcmp(w, "main"))
		return -1;
	if (k != key(cc, *who))
		return -1;
	if (strlen(text + off) != (size_t)padlen(cc) || strncmp(text + off, pad, (size_t)padlen(cc)))
		return -1;
	*c = cc;
	return 0;
}

static void test_signal_storm(void **state)
{
	struct pk_config cfg;
	/*
	 * Every 20 us.  ThreadSanitizer defers and wraps each signal and cannot
	 * keep up with that rate (the main thread starves); there, 500 us.
	 * Under AddressSanitizer on a loaded machine a handler's pk_printk()
	 * can take longer than 20 us: the next signal is then due as it
	 * returns, the main thread (and its reader) starved, and the
	 * handler's records overran the store (a CI run: main stored 2524,
	 * the handler 48260, 7879 overwritten before the reader came back);
	 * there, 200 us.
	 */
	long us = tu_sanitized_thread() ? 500 : tu_sanitized_address() ? 200 : 20;
	struct itimerval it = { { 0, us }, { 0, us } };
	struct sigaction sa;
	struct pk_reader *r;
	struct pk_record rec;
	uint64_t c, main_c = 0, read = 0, next[64] = { 0 }, last[2] = { 0, 0 }, gaps = 0;
	uint64_t t0, dur = (uint64_t)(tu_seconds(3.0) * 1e9);
	unsigned who;
	int had[2] = { 0, 0 };

	(void)state;
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.buffer_size = 4 << 20;
	assert_int_equal(pk_init(&cfg), 0);
	r = pk_reader_open();
	assert_non_null(r);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);

	t0 = tu_now_ns();
	while (tu_now_ns() - t0 < dur) {
		assert_true(pk_printk(PK_INFO, "main c=%llu k=%08x pad=%.*s\n",
				      (unsigned long long)main_c, key(main_c, 0), padlen(main_c), pad) > 0);
		main_c++;
		/* Read concurrently (same thread, between calls) to check as we go. */
		while (pk_reader_next(r, &rec) == 1) {
			assert_int_equal(check(rec.text, &c, &who), 0);
			/* Seqs count within a lane. */
			assert_true(rec.lane < 64 && rec.seq >= next[rec.lane]);
			gaps += rec.seq - next[rec.lane];
			next[rec.lane] = rec.seq + 1;
			if (had[who])
				assert_true(c > last[who]);
			had[who] = 1;
			last[who] = c;
			read++;
		}
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	while (pk_reader_next(r, &rec) == 1) {
		assert_int_equal(check(rec.text, &c, &who), 0);
		assert_true(rec.lane < 64 && rec.seq >= next[rec.lane]);
		gaps += rec.seq - next[rec.lane];
		next[rec.lane] = rec.seq + 1;
		read++;
	}
	print_message("main stored %llu, handler fired %d times, read %llu, lost %llu\n",
		      (unsigned long long)main_c, (int)sig_count, (unsigned long long)read,
		      (unsigned long long)gaps);
	assert_false(sig_failed);
	assert_true(sig_count > (us == 20 ? 1000 : 100));
	assert_int_equal(read + gaps, main_c + (uint64_t)sig_count);
	assert_int_equal(gaps, 0);	/* the reader kept up: nothing was overwritten */
	pk_reader_close(r);
	pk_shutdown();
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signal_storm),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
