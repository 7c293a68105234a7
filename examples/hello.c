// SPDX-License-Identifier: MIT
/*
 * hello.c - libprintk in a few lines: log from threads and from a signal
 * handler, continue a line, and crash with everything still printed.
 *
 *   PK_MODE=thread PK_CONSOLE=stderr,file:/tmp/hello.log ./printk_hello
 *   ./printk_hello crash   (the crash handler prints the backtrace)
 */
#include <printk/printk.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void on_usr1(int sig)
{
	pk_warn("signal %d arrived; logging from the handler is fine\n", sig);
}

static void *worker(void *arg)
{
	int i;

	for (i = 0; i < 3; i++)
		pk_info("worker %ld: step %d\n", (long)arg, i);
	return NULL;
}

int main(int argc, char **argv)
{
	struct pk_config cfg;
	pthread_t t[2];
	long i;

	pk_config_init(&cfg);		/* defaults, then PK_* from the environment */
	cfg.flags |= PK_CFG_CRASH_HANDLER;
	if (pk_init(&cfg) < 0)
		return 1;

	signal(SIGUSR1, on_usr1);
	pk_info("Probing devices");
	pk_cont(" ... 2 found\n");	/* one record: "Probing devices ... 2 found" */
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	raise(SIGUSR1);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);

	if (argc > 1 && !strcmp(argv[1], "crash")) {
		pk_err("about to dereference NULL\n");
		*(volatile int *)(uintptr_t)argc = 0;	/* SIGSEGV: reported, then core */
	}
	pk_flush(1000);
	return 0;			/* anything still pending is printed at exit */
}
