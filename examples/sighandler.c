// SPDX-License-Identifier: MIT
/*
 * sighandler.c - logging from signal handlers.
 *
 *   ./printk_sighandler [TICKS]
 *
 * A periodic timer (SIGALRM) logs a progress line from its handler while
 * the main loop logs each unit of work; halfway through the program sends
 * itself SIGUSR1, whose handler logs a status line, as a daemon does when
 * an operator asks it for its state (kill -USR1 PID).
 *
 * pk_printk() is async-signal-safe: it formats without malloc and stores
 * without a lock.  The handler often interrupts the main thread inside
 * pk_printk() itself, even while that thread holds the console: the
 * handler's record is then stored, and printed by the interrupted call
 * when it resumes.  With printf() or syslog() the same program could
 * deadlock on stdio's or syslog's lock, or corrupt the buffer.
 */
#include <printk/printk.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

/* Shared with the handlers: lock-free atomics are async-signal-safe. */
static atomic_int units;
static atomic_int ticks;

static void on_alarm(int sig)
{
	int n = atomic_fetch_add_explicit(&ticks, 1, memory_order_relaxed) + 1;

	(void)sig;
	pk_info("tick %d: %d units done\n", n,
		atomic_load_explicit(&units, memory_order_relaxed));
}

static void on_usr1(int sig)
{
	pk_notice("SIGUSR1: status: %d units done, %d ticks\n",
		  atomic_load_explicit(&units, memory_order_relaxed),
		  atomic_load_explicit(&ticks, memory_order_relaxed));
	(void)sig;
}

/* One unit of work: a little computing, then a line about it. */
static void work(int u)
{
	unsigned long sum = 0;
	int i;

	for (i = 0; i < 20000; i++)
		sum = sum * 31 + (unsigned long)(i ^ u);
	pk_info("unit %d done, checksum %04lx\n", u, sum & 0xffffu);
}

int main(int argc, char **argv)
{
	int want = argc > 1 ? atoi(argv[1]) : 10;
	struct itimerval every_2ms = { { 0, 2000 }, { 0, 2000 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa;
	int u, sent = 0;

	if (want < 2 || want > 10000) {
		fprintf(stderr, "usage: %s [TICKS (2-10000)]\n", argv[0]);
		return 2;
	}
	/*
	 * Set up before the first signal: a handler's pk_printk() before
	 * pk_init() is stored in the early store and printed after init, but
	 * the handler cannot initialise the library itself.
	 */
	if (pk_init(NULL) < 0)
		return 1;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	if (setitimer(ITIMER_REAL, &every_2ms, NULL) < 0) {
		perror("setitimer");
		return 1;
	}

	/* Work until the timer has fired @want times (at most 100000 units). */
	for (u = 1; atomic_load_explicit(&ticks, memory_order_relaxed) < want; u++) {
		if (u > 100000) {
			pk_err("the timer stopped firing after %d ticks\n",
			       atomic_load_explicit(&ticks, memory_order_relaxed));
			return 1;
		}
		work(u);
		atomic_store_explicit(&units, u, memory_order_relaxed);
		if (!sent && atomic_load_explicit(&ticks, memory_order_relaxed) >= want / 2) {
			kill(getpid(), SIGUSR1);	/* as an operator would */
			sent = 1;
		}
	}
	setitimer(ITIMER_REAL, &off, NULL);

	pk_notice("done: %d units, %d ticks\n", atomic_load_explicit(&units, memory_order_relaxed),
		  atomic_load_explicit(&ticks, memory_order_relaxed));
	return pk_flush(5000) == 0 ? 0 : 1;
}
