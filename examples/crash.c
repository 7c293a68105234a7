// SPDX-License-Identifier: MIT
/*
 * crash.c - the crash handler: a worker process dereferences NULL, and
 * its last words are printed before it dies.
 *
 *   ./printk_crash            a supervisor forks a worker that crashes,
 *                             then reports how the worker died
 *   ./printk_crash --direct   crash in this process (exit status 139,
 *                             and a core dump where core dumps are on)
 *
 * pk_crash_handler_install() (or PK_CFG_CRASH_HANDLER, or
 * PK_CRASH_HANDLER=1 in the environment) catches SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE and SIGABRT.  The handler stores the signal, the fault address,
 * the thread and a backtrace, prints everything still pending to every
 * console, then re-raises the signal with its default action: the process
 * dies of the same signal, with a core dump if the system keeps them.
 *
 * The handler survives fork(): the child inherits it.  Function names in
 * the backtrace come from dladdr(), so they appear for functions the
 * program exports (this example is linked with -rdynamic, CMake's
 * ENABLE_EXPORTS); others show as "?+offset", which addr2line resolves.
 */
#include <printk/printk.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct config {
	const char *listen;
	int port;
};

/* No configuration was loaded: the bug this example is about. */
static struct config *volatile current_config;

/*
 * Not static, so that the backtrace can name it.  no_sanitize("null"): in
 * a sanitizer build, UBSan would stop at the NULL access itself, before
 * the fault this example is about.
 */
__attribute__((noinline, no_sanitize("null"))) int load_config_port(void);

__attribute__((noinline, no_sanitize("null"))) int load_config_port(void)
{
	struct config *c = current_config;

	pk_info("worker %d: reading the listening port\n", (int)getpid());
	return c->port;		/* NULL->port: SIGSEGV at a small address */
}

static int worker(void)
{
	pk_info("worker %d: started\n", (int)getpid());
	pk_info("worker %d: port %d\n", (int)getpid(), load_config_port());
	return 0;
}

int main(int argc, char **argv)
{
	struct pk_config cfg;
	int status, ret;
	pid_t pid;

	pk_config_init(&cfg);
	if (pk_init(&cfg) < 0)
		return 1;
	ret = pk_crash_handler_install();
	if (ret < 0) {
		fprintf(stderr, "pk_crash_handler_install: %s\n", pk_strerror(ret));
		return 1;
	}

	if (argc > 1 && !strcmp(argv[1], "--direct"))
		return worker();	/* never returns: dies of SIGSEGV */

	pk_info("supervisor: starting a worker\n");
	/*
	 * Unlike stdio, nothing to flush first: the child prints only what
	 * it logs itself, the parent what was stored before the fork.
	 */
	pid = fork();
	if (pid < 0) {
		pk_err("supervisor: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0)
		_exit(worker());

	if (waitpid(pid, &status, 0) < 0)
		return 1;
	if (WIFSIGNALED(status)) {
		pk_err("supervisor: worker %d killed by signal %d (%s)%s\n", (int)pid,
		       WTERMSIG(status), strsignal(WTERMSIG(status)),
		       WCOREDUMP(status) ? ", core dumped" : "");
	} else {
		pk_notice("supervisor: worker %d exited with status %d\n", (int)pid,
			  WEXITSTATUS(status));
	}
	pk_flush(5000);
	/* Success for this example: the worker died of the crash it has. */
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV ? 0 : 1;
}
