/* SPDX-License-Identifier: MIT */
/*
 * relp.h - the RELP transport of pk_console_rfc5424_make() (relp.c).
 */
#ifndef PK_CONSOLE_RELP_H
#define PK_CONSOLE_RELP_H

#include "printk/console.h"

/*
 * Make a PK_SYSLOG_RELP driver; @o was checked by the caller (facility,
 * flags).  Return: as pk_console_rfc5424_make(); -EPROTONOSUPPORT when the
 * library was built without librelp.
 */
int pk__relp_make(const struct pk_rfc5424_opts *o, struct pk_console_driver *out);

#endif /* PK_CONSOLE_RELP_H */
