// SPDX-License-Identifier: MIT
/*
 * dyndbg_plugin.c - a shared object with a dynamic debug site, loaded by
 * test_dyndbg with dlopen(): its section is registered by its own
 * constructor, under its own module name (libdyndbg_plugin), and
 * forgotten at dlclose().  libprintk itself is the test program's.
 */
#include "printk/dyndbg.h"

#include "dyndbg_test.h"

int dyndbg_plugin_run(int n);

int dyndbg_plugin_run(int n)
{
	int line = __LINE__; pk_dyndbg("plugin %d\n", n);

	return line;
}
