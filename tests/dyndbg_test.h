/* SPDX-License-Identifier: MIT */
/* What test_dyndbg.c, dyndbg_other.c and dyndbg_plugin.c share. */
#ifndef PK_DYNDBG_TEST_H
#define PK_DYNDBG_TEST_H

/* dyndbg_other.c: sites of module "other"; each sets its line first. */
extern int other_line_delta, other_line_epsilon, other_line_zeta;
void other_delta(int n);
void other_epsilon(const char *s);
void other_zeta(int n);		/* PK_DYNDBG_PR_DEBUG with pr_fmt "%s: " fmt, __func__ */

/* dyndbg_plugin.c (libdyndbg_plugin.so, dlopen()ed): one site. */
typedef int dyndbg_plugin_fn(int n);	/* runs the site, returns its line */

#endif
