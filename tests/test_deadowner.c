// SPDX-License-Identifier: MIT
/*
 * A thread that dies holding the console lock, a console or a gate slot
 * (asynchronous cancellation: undefined for most calls under POSIX, but
 * programs do it) must not keep the rest of the process from logging.
 * In each mode, a child process cancels logging threads asynchronously at
 * seeded random points; then later records must print, pk_flush() must
 * succeed and a store switch must not find the gate busy.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/printk.h>

#include "faultcon.h"
#include "testutil.h"

#define VICTIMS	40	/* threads cancelled per child */
#define AFTER	50	/* records logged after the cancellations */

static _Atomic uint64_t after_seen;

static long count_write(void *ctx, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	(void)ctx;
	while (p < end && (p = memmem(p, (size_t)(end - p), "after-cancel ", 13)) != NULL) {
		atomic_fetch_add(&after_seen, 1);
		p += 13;
	}
	return (long)len;
}

static const struct pk_console_ops count_ops = {
	.name = "count",
	.write = count_write,
};

static void *victim_main(void *arg)
{
	char pad[200];
	unsigned long i;

	(void)arg;
	memset(pad, 'v', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	/*
	 * A bounded burst, then a spin: a holder prints the other victim's
	 * records with cancellation disabled, and must get to its end.
	 */
	for (i = 0; i < 400; i++)
		pk_printk(PK_INFO, "victim %lu %s\n", i, pad);
	for (;;)
		atomic_signal_fence(memory_order_seq_cst);
	return NULL;
}

static uint64_t rng_step(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* The child: returns its exit status (0 ok; what failed otherwise). */
static int child_run(enum pk_mode mode, uint64_t seed, const char *store2, uint64_t *dead)
{
	struct pk_flush_stats fst;
	struct pk_config cfg;
	char spec[32];
	pthread_t t[2];
	unsigned i, k;
	int ret, null = open("/dev/null", O_WRONLY);

	pk_config_init(&cfg);
	cfg.mode = mode;
	snprintf(spec, sizeof(spec), "fd:%d", null);
	cfg.consoles = spec;
	cfg.console_loglevel = 8;
	if (pk_init(&cfg) < 0 || !pk_console_register(&count_ops, NULL, -1))
		return 90;
	for (i = 0; i < VICTIMS; i++) {
		/* Two at a time, so that one is often the holder and one the waiter. */
		for (k = 0; k < 2; k++)
			pthread_create(&t[k], NULL, victim_main, NULL);
		{
			struct timespec ts = { 0, (long)(rng_step(&seed) % 3000) * 1000 };

			nanosleep(&ts, NULL);
		}
		for (k = 0; k < 2; k++) {
			pthread_cancel(t[k]);
			pthread_join(t[k], NULL);
		}
	}
	for (i = 0; i < AFTER; i++)
		pk_printk(PK_ERR, "after-cancel %u\n", i);
	ret = pk_flush(5000);
	if (pk_flush_stats_get(&fst) == 0)
		*dead = fst.dead_owners;
	if (ret) {
		fprintf(stderr, "pk_flush(5000) after the cancellations: %d\n", ret);
		return 91;
	}
	if (atomic_load(&after_seen) != AFTER) {
		fprintf(stderr, "%llu of %d later records printed\n",
			(unsigned long long)atomic_load(&after_seen), AFTER);
		return 92;
	}
	/* A store switch waits for every thread inside the gate. */
	cfg.buffer_path = store2;
	ret = pk_init(&cfg);
	if (ret == -EBUSY) {
		fprintf(stderr, "store switch after the cancellations: -EBUSY\n");
		return 93;
	}
	pk_printk(PK_ERR, "after-cancel %u\n", AFTER);
	if (pk_flush(5000) || atomic_load(&after_seen) != AFTER + 1)
		return 94;
	return 0;
}

static void run_mode(enum pk_mode mode, const char *name)
{
	const char *e = getenv("PK_TEST_SEED");
	uint64_t seed = e ? strtoull(e, NULL, 0) : 2022;
	unsigned run, runs = 6, bad = 0;
	char *store = tu_tmp_path("deadowner");
	uint64_t *dead, dead_all = 0;
	int st;

	/*
	 * A thread cancelled asynchronously inside ThreadSanitizer's runtime
	 * (its interceptors and unwinder hooks take its internal locks) leaves
	 * those locks held, and the runtime then waits for them for ever: a
	 * sanitizer limit.  The plain and ASan builds run it.
	 */
	if (tu_sanitized_thread()) {
		free(store);
		tu_skip("asynchronous cancellation inside ThreadSanitizer's runtime");
		return;
	}
	dead = mmap(NULL, sizeof(*dead), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(dead != MAP_FAILED);

	for (run = 0; run < runs; run++) {
		pid_t pid = fc_fork();

		*dead = 0;
		if (pid == 0)
			_exit(child_run(mode, seed + run * 7919, store, dead));
		assert_true(pid > 0);
		if (fc_wait(pid, 60000, &st) == -ETIMEDOUT) {
			print_message("%s run %u (seed %llu): hung\n", name, run,
				      (unsigned long long)(seed + run * 7919));
			bad++;
		} else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			print_message("%s run %u (seed %llu): status 0x%x\n", name, run,
				      (unsigned long long)(seed + run * 7919), st);
			bad++;
		}
		unlink(store);
		dead_all += *dead;
	}
	print_message("%s: %u runs of %d asynchronously cancelled loggers, %u failed; "
		      "%llu takeovers from a dead owner\n", name, runs, 2 * VICTIMS, bad,
		      (unsigned long long)dead_all);
	munmap(dead, sizeof(*dead));
	free(store);
	assert_int_equal(bad, 0);
}

static void test_cancel_handoff(void **state)
{
	(void)state;
	run_mode(PK_MODE_HANDOFF, "handoff");
}

static void test_cancel_legacy(void **state)
{
	(void)state;
	run_mode(PK_MODE_LEGACY, "legacy");
}

static void test_cancel_thread(void **state)
{
	(void)state;
	run_mode(PK_MODE_THREAD, "thread");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cancel_handoff),
		cmocka_unit_test(test_cancel_legacy),
		cmocka_unit_test(test_cancel_thread),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
