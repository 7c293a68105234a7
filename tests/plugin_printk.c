// SPDX-License-Identifier: MIT
/*
 * A plugin that links libprintk statically, for test_flush's dlclose case:
 * the host loads it, it starts libprintk (and its threads), and the host
 * unloads it again while those threads would still be running.
 */
#include <fcntl.h>

#include "printk/console.h"
#include "printk/printk.h"

int plugin_run(int mode);

int plugin_run(int mode)
{
	struct pk_console_driver d;
	struct pk_config cfg;
	int i, fd = open("/dev/null", O_WRONLY);

	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE;
	cfg.mode = (enum pk_mode)mode;
	if (fd < 0 || pk_init(&cfg) || pk_console_fd_make(fd, &d) || !pk_console_register_driver(&d, -1))
		return -1;
	for (i = 0; i < 1000; i++)
		pk_info("from the plugin %d\n", i);
	return 0;
}
