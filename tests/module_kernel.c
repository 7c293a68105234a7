// SPDX-License-Identifier: MIT
/*
 * module_kernel.c - kernel-style code of module "netio": <printk/kernel.h>
 * with DEBUG and without dynamic debug, so pr_debug() is printk(KERN_DEBUG).
 */
#define DEBUG
#define PK_NO_DYNAMIC_DEBUG
#include <printk/kernel.h>

#include "module_test.h"

PK_MODULE_DECLARE(netio);

int kern_info(int n)
{
	return pr_info("kern info %d\n", n);
}

int kern_debug(int n)
{
	return pr_debug("kern debug %d\n", n);
}

int kern_printk_default(int n)
{
	return printk("kern default %d\n", n);
}

int kern_open(int n)
{
	return pr_info("kern open %d", n);
}

int kern_cont(const char *s)
{
	return pr_cont("%s", s);
}
