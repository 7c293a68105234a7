// SPDX-License-Identifier: MIT
/*
 * strip_tu.c - a translation unit built with PK_MAX_LEVEL at PK_WARNING
 * (4), as a program built with -DPK_MAX_LEVEL=4 is.  DEBUG is defined, so
 * that without stripping pr_debug() and friends would print and register
 * dynamic debug sites.  The format of every call that must be stripped
 * contains "strip-gone"; test_strip.c looks for that text in its own
 * executable, in the store and on the console, and for dynamic debug
 * sites of this file.  Every argument of a stripped call has a side
 * effect that must not happen.
 */
#define PK_MAX_LEVEL 4
#define DEBUG
#define pr_fmt(fmt) "strip: " fmt

#include <printk/kernel.h>

#include "strip_tu.h"

#if PK__ON_5 || !PK__ON_4
#error "PK_MAX_LEVEL 4 must keep PK_WARNING and strip PK_NOTICE"
#endif

void strip_calls(struct strip_counts *c)
{
	/* Kept: PK_WARNING and above, one line each. */
	pk_emerg("strip-kept pk_emerg %d\n", c->kept++);
	pk_alert("strip-kept pk_alert %d\n", c->kept++);
	pk_crit("strip-kept pk_crit %d\n", c->kept++);
	pk_err("strip-kept pk_err %d\n", c->kept++);
	pk_warn("strip-kept pk_warn %d\n", c->kept++);
	pr_emerg("strip-kept pr_emerg %d\n", c->kept++);
	pr_alert("strip-kept pr_alert %d\n", c->kept++);
	pr_crit("strip-kept pr_crit %d\n", c->kept++);
	pr_err("strip-kept pr_err %d\n", c->kept++);
	pr_warn("strip-kept pr_warn %d\n", c->kept++);
	pr_err_once("strip-kept pr_err_once %d\n", c->kept++);
	pr_warn_once("strip-kept pr_warn_once %d\n", c->kept++);
	pr_crit_once("strip-kept pr_crit_once %d\n", c->kept++);
	pr_err_ratelimited("strip-kept pr_err_ratelimited %d\n", c->kept++);
	pr_warn_ratelimited("strip-kept pr_warn_ratelimited %d\n", c->kept++);
	pr_alert_ratelimited("strip-kept pr_alert_ratelimited %d\n", c->kept++);

	/* Stripped: PK_NOTICE and below. */
	pk_notice("strip-gone pk_notice %d\n", c->gone++);
	pk_info("strip-gone pk_info %d\n", c->gone++);
	pk_debug("strip-gone pk_debug %d\n", c->gone++);
	pk_dyndbg("strip-gone pk_dyndbg %d\n", c->gone++);
	PK_DYNDBG_PR_DEBUG("strip-gone PK_DYNDBG_PR_DEBUG %d\n", c->gone++);
	pr_notice("strip-gone pr_notice %d\n", c->gone++);
	pr_info("strip-gone pr_info %d\n", c->gone++);
	pr_devel("strip-gone pr_devel %d\n", c->gone++);
	pr_debug("strip-gone pr_debug %d\n", c->gone++);
	pr_notice_once("strip-gone pr_notice_once %d\n", c->gone++);
	pr_info_once("strip-gone pr_info_once %d\n", c->gone++);
	pr_devel_once("strip-gone pr_devel_once %d\n", c->gone++);
	pr_debug_once("strip-gone pr_debug_once %d\n", c->gone++);
	pr_notice_ratelimited("strip-gone pr_notice_ratelimited %d\n", c->gone++);
	pr_info_ratelimited("strip-gone pr_info_ratelimited %d\n", c->gone++);
	pr_devel_ratelimited("strip-gone pr_devel_ratelimited %d\n", c->gone++);
	pr_debug_ratelimited("strip-gone pr_debug_ratelimited %d\n", c->gone++);

	/* Still int expressions, 0 (the kernel's no_printk()), arguments unevaluated. */
	c->sum += pk_info("strip-gone pk_info value %d\n", c->gone++);
	c->sum += pk_debug("strip-gone pk_debug value %d\n", c->gone++);
	c->sum += pr_info("strip-gone pr_info value %d\n", c->gone++);
	c->sum += pr_debug_once("strip-gone pr_debug_once value %d\n", c->gone++);
	c->sum += pr_info_once("strip-gone pr_info_once value %d\n", c->gone++);
	c->sum += pr_notice_ratelimited("strip-gone pr_notice_ratelimited value %d\n", c->gone++);
}

void strip_in_statements(struct strip_counts *c, int x)
{
	int i;

	/* Wherever the unstripped call is a statement, the stripped one is too. */
	if (x)
		pr_info("strip-gone if %d\n", c->gone++);
	else
		pr_debug("strip-gone else %d\n", c->gone++);
	if (x)
		pk_dyndbg("strip-gone dyndbg if %d\n", c->gone++);
	else
		pk_info("strip-gone pk_info else %d\n", c->gone++);
	for (i = 0; i < 3; i++)
		pr_notice_once("strip-gone loop %d\n", c->gone++);
	while (x-- > 0)
		pr_debug_ratelimited("strip-gone while %d\n", c->gone++);
	switch (x) {
	case 0:
		pk_debug("strip-gone case %d\n", c->gone++);
		break;
	default:
		pr_devel("strip-gone default %d\n", c->gone++);
	}
	/* As the operand of a comma, ?: and a cast. */
	c->sum += (pr_info("strip-gone comma %d\n", c->gone++), 0);
	c->sum += x ? pk_info("strip-gone cond %d\n", c->gone++) : 0;
	(void)pk_notice("strip-gone cast %d\n", c->gone++);
}

int strip_never_stripped(int *count)
{
	int ret = 0;

	/* A level that is a value: never stripped, it is the function. */
	ret += pk_printk(PK_INFO, "strip-kept pk_printk info %d\n", (*count)++) > 0;
	/* The level is inside the format, which the preprocessor cannot read. */
	ret += printk(KERN_DEBUG "strip-kept printk debug %d\n", (*count)++) > 0;
	/* Warnings are reports, never stripped. */
	ret += WARN(1, "strip-kept warn %d\n", (*count)++);
	return ret;
}
