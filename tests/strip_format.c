// SPDX-License-Identifier: MIT
/*
 * strip_format.c - compiled, not run, by the test_strip.format_* tests: a
 * stripped call still has its format checked.  As it is, it compiles with
 * -Werror=format; with -DSTRIP_BAD=<n> call <n> gets an int for its %s and
 * the compiler must refuse it.  PK_WARNING (4) and below are stripped.
 */
#define PK_MAX_LEVEL 3
#define DEBUG
#include <printk/kernel.h>

#ifndef STRIP_BAD
#define STRIP_BAD 0
#endif
#define ARG(n)	__builtin_choose_expr(STRIP_BAD == (n), 42, "text")

void strip_format(void);
void strip_format(void)
{
	pk_warn("%s\n", ARG(1));
	pk_debug("%s\n", ARG(2));
	pk_dyndbg("%s\n", ARG(3));
	pr_info("%s\n", ARG(4));
	pr_debug("%s\n", ARG(5));
	pr_warn_once("%s\n", ARG(6));
	pr_notice_ratelimited("%s\n", ARG(7));
	pr_devel("%s\n", ARG(8));
	PK_DYNDBG_PR_DEBUG("%s\n", ARG(9));
}
