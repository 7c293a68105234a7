/* SPDX-License-Identifier: MIT */
/*
 * What test_module.c and its other translation units share.  test_module.c
 * registers module "netio" (PK_MODULE_REGISTER); the others:
 *   module_other.c   PK_MODULE_DECLARE(netio): netio's second file
 *   module_plain.c   no module at all
 *   module_kernel.c  <printk/kernel.h> (DEBUG, PK_NO_DYNAMIC_DEBUG) in netio
 *   module_kdyn.c    <printk/kernel.h> (DEBUG, dynamic debug) in netio
 * Each function returns what its printing call returned.
 */
#ifndef PK_MODULE_TEST_H
#define PK_MODULE_TEST_H

/* module_other.c: pk_info/pk_debug/pk_cont in netio; *counter incremented in the arguments. */
int other_info(int n);
int other_debug(int n, int *counter);
int other_cont(const char *s);

/* module_plain.c: the same calls outside any module. */
int plain_info(int n);
int plain_debug(int n, int *counter);
int plain_cont(const char *s);

/* module_kernel.c: printk() and pr_* of <printk/kernel.h> in netio. */
int kern_info(int n);
int kern_debug(int n);
int kern_printk_default(int n);	/* printk() with no KERN_ level */
int kern_cont(const char *s);
int kern_open(int n);
int plain_open(int n);

/* module_kdyn.c: pr_debug() as a dynamic debug site (DEBUG: enabled). */
int kdyn_info(int n);
void kdyn_debug(int n);

#endif
