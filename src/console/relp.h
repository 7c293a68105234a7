/* SPDX-License-Identifier: MIT */
/*
 * relp.h - the RELP transport of pk_console_rfc5424_make() (relp.c).
 */
#ifndef PK_CONSOLE_RELP_H
#define PK_CONSOLE_RELP_H

#include "printk/console.h"

/*
 * Make a PK_SYSLOG_RELP driver; @o was checked by the caller (facility,
 * flags).  Loads librelp.so.0 the first time (relp.c, LIBRELP).
 * Return: as pk_console_rfc5424_make(); -EPROTONOSUPPORT when the library
 * was built without RELP or librelp cannot be loaded (said on stderr).
 */
int pk__relp_make(const struct pk_rfc5424_opts *o, struct pk_console_driver *out);

/* The library make() loads, "librelp.so.0"; set by tests before a make(). */
extern const char *pk__relp_soname;
/* Tests: called by a load with its lock held (a fork() then); NULL: none. */
extern void (*pk__relp_load_hook)(void);

#endif /* PK_CONSOLE_RELP_H */
