/* SPDX-License-Identifier: MIT */
/*
 * printk/warn.h - the kernel's warning and bug reports: what WARN(),
 * BUG() and dump_stack() of <printk/kernel.h> call.
 *
 * A warning report, as Linux 6.1 prints one on x86 (each line one record,
 * all stored inside an emergency section, so that every mode prints them
 * at once from the caller):
 *
 *   ------------[ cut here ]------------                       warning
 *   <the WARN() message, if any>                               warning *
 *   WARNING: CPU: <cpu> PID: <tid> at <file>:<line> <func>     warning
 *   CPU: <cpu> PID: <tid> Comm: <thread name>                  default
 *   Call trace:                                                default
 *    #00 0x<address> <symbol>+0x<offset> [<object>]            default
 *    ...
 *   ---[ end trace 0000000000000000 ]---                       warning
 *
 * (*) a level prefix at the start of the message's format wins.  PID is
 * the thread id (the kernel's current->pid); <func> is the caller's
 * __func__ (the kernel prints %pS of the return address).  The frames
 * start at the function that called WARN() or dump_stack(), and use the
 * format of pk_panic()'s "Call trace:".
 *
 * Synchronization: every call may run from any thread or signal handler,
 * all at once; reports of different threads may interleave line by line
 * (each line is one record).
 */
#ifndef PRINTK_WARN_H
#define PRINTK_WARN_H

#include "printk.h"

#ifdef __cplusplus
extern "C" {
#endif
/* Building libprintk: what this header declares is its exported API. */
#if defined(PK_BUILDING_LIB) && defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* The kernel's cut-here and end-of-report lines. */
#define PK_CUT_HERE	"------------[ cut here ]------------\n"
#define PK_END_TRACE	"---[ end trace 0000000000000000 ]---\n"

/**
 * pk_warn_report() - print a warning report (see above) for the code at
 * @file:@line in @func.
 * @file: the source file, as __FILE__.
 * @line: the line, as __LINE__.
 * @func: the function, as __func__.
 * @fmt:  the message printed after the cut-here line; NULL for none.
 *
 * Context: any thread, async-signal-safe, emergency-safe.
 * Return: nothing.
 */
void pk_warn_report(const char *file, int line, const char *func, const char *fmt, ...)
	PK__PRINTF(4, 5);

/**
 * pk_dump_stack() - print "CPU: <cpu> PID: <tid> Comm: <name>", then
 * "Call trace:" and one line per frame from the caller of pk_dump_stack(),
 * at the default message level, inside an emergency section.
 *
 * Context: any thread, async-signal-safe, emergency-safe.
 * Return: nothing.
 */
void pk_dump_stack(void);

/**
 * pk_bug() - the kernel's BUG(): print "------------[ cut here
 * ]------------" (default level) and "kernel BUG at <file>:<line>!"
 * (PK_CRIT) inside an emergency section, then pk_panic("Fatal exception
 * in <func>()"), which prints "Kernel panic - not syncing: Fatal
 * exception in <func>()", the backtrace and everything pending, and ends
 * the process with SIGABRT.
 * @file: the source file, as __FILE__.
 * @line: the line, as __LINE__.
 * @func: the function, as __func__.
 *
 * Context: any thread or signal handler.
 * Return: does not return.
 */
PK__NORETURN void pk_bug(const char *file, int line, const char *func);

#if defined(PK_BUILDING_LIB) && defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* PRINTK_WARN_H */
