// SPDX-License-Identifier: MIT
/*
 * consumer_noinit.c - an outside program that never calls the front door
 * (no pk_init(), no pk_printk()): it registers a console, opens a reader
 * and flushes, which must start the library as they do in the shared one.
 * Linked against libprintk.a alone, it once got -ENODEV from each, because
 * the archive member that starts the library (init.c) was not linked.
 * consume.sh checks its exit status and its line.
 */
#include <printk/console.h>
#include <printk/printk.h>
#include <printk/reader.h>
#include <stdio.h>

int main(void)
{
	struct pk_reader *r;
	int ret;

	ret = pk_console_register_spec("stdout");
	if (ret < 1) {
		fprintf(stderr, "pk_console_register_spec: %d (%s)\n", ret, pk_strerror(ret));
		return 1;
	}
	r = pk_reader_open();
	if (!r) {
		perror("pk_reader_open");
		return 1;
	}
	pk_reader_close(r);
	ret = pk_flush(5000);
	if (ret < 0) {
		fprintf(stderr, "pk_flush: %s\n", pk_strerror(ret));
		return 1;
	}
	printf("consumer_noinit: ok\n");
	return 0;
}
