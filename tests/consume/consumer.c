// SPDX-License-Identifier: MIT
/*
 * consumer.c - an outside program built against libprintk the way users
 * build theirs (pkg-config, find_package, add_subdirectory): it logs one
 * line to stderr and flushes.  consume.sh checks the line.
 */
#include <printk/console.h>
#include <printk/printk.h>
#include <printk/reader.h>
#include <stdio.h>

/* A module: its level macros need the shared library's pk_module_dropped(). */
PK_MODULE_REGISTER(consumer, PK_INFO);

int main(void)
{
	struct pk_config cfg;
	int ret;

	pk_config_init(&cfg);
	cfg.consoles = "stderr";
	ret = pk_init(&cfg);
	if (ret < 0) {
		fprintf(stderr, "pk_init: %s\n", pk_strerror(ret));
		return 1;
	}
	pk_printk(PK_INFO, "consumer says %d\n", 42);
	pk_debug("consumer's module drops this %d\n", 7);
	pk_info("consumer's module says %d\n", 43);
	ret = pk_flush(5000);
	pk_shutdown();
	return ret < 0;
}
