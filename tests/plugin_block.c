// SPDX-License-Identifier: MIT
/*
 * plugin_block.c - a shared object whose constructor never returns: while
 * a thread dlopen()s it, the dynamic loader's lock stays held.  test_panic
 * crashes another thread meanwhile; a crash handler that asked the loader
 * for anything (dladdr()) would wait for ever.  PK_TEST_BLOCK_FDS="R W":
 * the constructor writes a byte to W, then reads R, which never comes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void hold_loader_lock(void)
{
	const char *fds = getenv("PK_TEST_BLOCK_FDS");
	int r, w;
	char c = 1;

	if (!fds || sscanf(fds, "%d %d", &r, &w) != 2)
		return;
	if (write(w, &c, 1) != 1)
		return;
	while (read(r, &c, 1) != 0)
		;
	pause();
}
