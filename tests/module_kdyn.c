// SPDX-License-Identifier: MIT
/*
 * module_kdyn.c - kernel-style code of module "netio" with pr_debug() a
 * dynamic debug site, enabled from the start (DEBUG).
 */
#define DEBUG
#include <printk/kernel.h>

#include "module_test.h"

PK_MODULE_DECLARE(netio);

int kdyn_info(int n)
{
	return pr_info("kdyn info %d\n", n);
}

void kdyn_debug(int n)
{
	pr_debug("kdyn debug %d\n", n);
}
