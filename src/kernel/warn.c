// SPDX-License-Identifier: MIT
/*
 * warn.c - the kernel's WARN(), BUG() and dump_stack() reports
 * (printk/warn.h).
 *
 * Each report line is one record, stored inside an emergency section so
 * that every flush mode prints it from the caller before the call
 * returns.  The backtrace uses backtrace() and symtab.c, as pk_panic()
 * does, and prints frames in its format.  backtrace() loads libgcc on its
 * first call, which is not async-signal-safe: a constructor makes that
 * first call when the library is loaded, so that a report from a signal
 * handler only walks the stack.
 */
#include <execinfo.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>

#include "format/format.h"
#include "store/store.h"
#include "format/symtab.h"
#include "printk/printk.h"
#include "printk/warn.h"

#define STACK_MAX	64

__attribute__((constructor)) static void warm_backtrace(void)
{
	void *frames[2];

	backtrace(frames, 2);
}

static int cpu(void)
{
	int c = sched_getcpu();

	return c < 0 ? 0 : c;
}

static void print_task_info(int level)
{
	char comm[16 + 1];

	memset(comm, 0, sizeof(comm));
	if (prctl(PR_GET_NAME, comm, 0, 0, 0) < 0)
		comm[0] = '?';
	pk_printk(level, "CPU: %d PID: %u Comm: %s\n", cpu(), pk__tid(), comm);
}

/*
 * "Call trace:" and the frames from the one that returns to @from (the
 * caller of the public entry point) outward; all of them if @from is not
 * among them.  noinline: the frames above @from must be real frames.
 */
__attribute__((noinline)) static void print_trace(int level, void *from)
{
	void *frames[STACK_MAX];
	char line[256];
	int i, first = 0, n = backtrace(frames, STACK_MAX);

	for (i = 0; i < n; i++) {
		if (frames[i] == from) {
			first = i;
			break;
		}
	}
	pk_printk(level, "Call trace:\n");
	for (i = first; i < n; i++) {
		pk__sym_frame(line, sizeof(line), i - first, (uintptr_t)frames[i]);
		pk_printk(level, "%s\n", line);
	}
}

__attribute__((noinline)) void pk_warn_report(const char *file, int line, const char *func,
					      const char *fmt, ...)
{
	void *from = __builtin_return_address(0);
	va_list ap;

	pk_emergency_enter();
	pk_printk(PK_WARNING, PK_CUT_HERE);
	if (fmt) {
		va_start(ap, fmt);
		pk_vprintk(PK_WARNING, fmt, ap);
		va_end(ap);
	}
	pk_printk(PK_WARNING, "WARNING: CPU: %d PID: %u at %s:%d %s\n", cpu(), pk__tid(),
		  file ? file : "?", line, func ? func : "?");
	print_task_info(PK_LEVEL_DEFAULT);
	print_trace(PK_LEVEL_DEFAULT, from);
	pk_printk(PK_WARNING, PK_END_TRACE);
	pk_emergency_exit();
}

__attribute__((noinline)) void pk_dump_stack(void)
{
	void *from = __builtin_return_address(0);

	pk_emergency_enter();
	print_task_info(PK_LEVEL_DEFAULT);
	print_trace(PK_LEVEL_DEFAULT, from);
	pk_emergency_exit();
}

_Noreturn void pk_bug(const char *file, int line, const char *func)
{
	pk_emergency_enter();
	pk_printk(PK_LEVEL_DEFAULT, PK_CUT_HERE);
	pk_printk(PK_CRIT, "kernel BUG at %s:%d!\n", file ? file : "?", line);
	pk_panic("Fatal exception in %s()", func ? func : "?");
}
