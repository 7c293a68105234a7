// SPDX-License-Identifier: MIT
/*
 * The library's own threads carry names of their own, so that ps -L, top
 * -H, gdb's "info threads" and /proc/PID/task/TID/comm tell them from the
 * application's threads (without a name each showed the program's name):
 * thread mode's printers are pk-printer/N (N the console's slot), the
 * rescue thread of handoff and legacy mode pk-rescue, a console's name
 * resolver pk-resolve.  Read from /proc/self/task/, as a user would.
 */
#include <dirent.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "console/consoles.h"
#include "console/resolve.h"
#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

/* The comm of every thread of this process, one per line. */
static void task_names(char *buf, size_t size)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	size_t len = 0;

	buf[0] = '\0';
	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[300], comm[32];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;	/* the thread has exited since */
		if (fgets(comm, sizeof(comm), f) && len + strlen(comm) < size) {
			memcpy(buf + len, comm, strlen(comm) + 1);
			len += strlen(comm);
		}
		fclose(f);
	}
	closedir(d);
}

/*
 * Wait up to 5 s until a thread is named @name: a thread names itself as
 * it starts, which may come after the call that started it returned.
 */
static void expect_thread(const char *name)
{
	char names[8192], line[32];
	int i;

	/* "\nNAME\n" in "\n" + the list: a whole line, not a part of one. */
	snprintf(line, sizeof(line), "\n%s\n", name);
	for (i = 0; i < 500; i++) {
		names[0] = '\n';
		task_names(names + 1, sizeof(names) - 1);
		if (strstr(names, line))
			return;
		usleep(10000);
	}
	print_message("threads:\n%s", names + 1);
	fail_msg("no thread named '%s'", name);
}

static void init_mode(enum pk_mode mode)
{
	struct pk_config cfg;

	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.mode = mode;
	cfg.buffer_size = 64 << 10;
	assert_int_equal(pk_init(&cfg), 0);
}

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	return 0;
}

static void test_printer_names(void **state)
{
	struct tu_capture *a = tu_capture_new(0), *b = tu_capture_new(0);
	struct pk_console *ca, *cb;
	char name[16];

	(void)state;
	init_mode(PK_MODE_THREAD);
	ca = pk_console_register(&tu_capture_ops, a, -1);
	cb = pk_console_register(&tu_capture_ops, b, -1);
	assert_non_null(ca);
	assert_non_null(cb);
	pk_info("named\n");
	assert_int_equal(pk_flush(5000), 0);
	snprintf(name, sizeof(name), "pk-printer/%d", ca->slot);
	expect_thread(name);
	snprintf(name, sizeof(name), "pk-printer/%d", cb->slot);
	expect_thread(name);
	pk_console_unregister(ca);
	pk_console_unregister(cb);
	tu_capture_free(a);
	tu_capture_free(b);
}

static void test_rescue_name(void **state)
{
	(void)state;
	init_mode(PK_MODE_HANDOFF);
	pk_info("named\n");
	expect_thread("pk-rescue");
}

static void test_resolver_name(void **state)
{
	struct pk__resolver *r;

	(void)state;
	/* .invalid never resolves (RFC 6761): the resolver keeps trying. */
	assert_int_equal(pk__resolve_start(&r, "pk-thread-name.invalid", 514, SOCK_DGRAM), 0);
	expect_thread("pk-resolve");
	pk__resolve_release(r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_printer_names, teardown),
		cmocka_unit_test_teardown(test_rescue_name, teardown),
		cmocka_unit_test(test_resolver_name),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
