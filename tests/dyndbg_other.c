// SPDX-License-Identifier: MIT
/*
 * dyndbg_other.c - a second translation unit of test_dyndbg: its sites
 * are in the same object (and section) as test_dyndbg.c's, under a module
 * name of its own (PK_MODNAME), and its constructor registers the same
 * range again.
 */
#define PK_MODNAME "other"
#include "printk/dyndbg.h"

#include "dyndbg_test.h"

int other_line_delta;

void other_delta(int n)
{
	other_line_delta = __LINE__; pk_dyndbg("delta %d\n", n);
}

int other_line_epsilon;

void other_epsilon(const char *s)
{
	other_line_epsilon = __LINE__; pk_dyndbg("epsilon %s\n", s);
}

/*
 * The hook <printk/kernel.h> expands pr_debug(fmt, ...) to: the site shows
 * the raw format, the message is printed with pr_fmt(fmt), and a pr_fmt
 * that adds arguments of its own works too.
 */
#define pr_fmt(fmt) "%s: " fmt, __func__

int other_line_zeta;

void other_zeta(int n)
{
	other_line_zeta = __LINE__; PK_DYNDBG_PR_DEBUG("zeta %d\n", n);
}
