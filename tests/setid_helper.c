// SPDX-License-Identifier: MIT
/*
 * setid_helper - run by test_setid, set-user-ID or set-group-ID root (and,
 * as a control, without either bit) by an unprivileged user with PK_*
 * variables set.  It prints the configuration pk_config_init() made of its
 * environment on stdout, then logs one line through that configuration:
 * to whatever consoles and store it names.
 *
 * Linked with the static libprintk, so that it needs no libprintk.so: a
 * set-id program ignores LD_LIBRARY_PATH and an $ORIGIN rpath, and the
 * build tree may not be readable by the user who runs it.
 */
#include <stdio.h>

#include "printk/printk.h"

/*
 * Under ASan: no leak check at exit.  It stops the process's threads with
 * ptrace, which a set-id process does not allow, and a set-gid process
 * cannot read ASAN_OPTIONS (the sanitizer reads /proc/self/environ).
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

int main(void)
{
	struct pk_config cfg;
	int ret;

	pk_config_init(&cfg);
	printf("config: mode=%d loglevel=%d size=%zu budget=%u flags=%#x buffer=%s consoles=%s\n",
	       (int)cfg.mode, cfg.console_loglevel, cfg.buffer_size, cfg.print_budget_us,
	       cfg.flags, cfg.buffer_path ? cfg.buffer_path : "(none)",
	       cfg.consoles ? cfg.consoles : "(none)");
	fflush(stdout);
	ret = pk_init(&cfg);
	if (ret < 0) {
		printf("pk_init: %s\n", pk_strerror(ret));
		return 1;
	}
	pk_err("setid helper logs this line\n");
	pk_shutdown();
	return 0;
}
