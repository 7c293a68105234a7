// SPDX-License-Identifier: MIT
/* module_other.c - the second file of test_module's module "netio". */
#include "printk/printk.h"

#include "module_test.h"

PK_MODULE_DECLARE(netio);

int other_info(int n)
{
	return pk_info("other info %d\n", n);
}

int other_debug(int n, int *counter)
{
	return pk_debug("other debug %d %d\n", n, ++*counter);
}

int other_cont(const char *s)
{
	return pk_cont("%s", s);
}
