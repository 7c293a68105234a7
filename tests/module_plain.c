// SPDX-License-Identifier: MIT
/* module_plain.c - a file of test_module in no module: its records carry none. */
#include "printk/printk.h"

#include "module_test.h"

int plain_info(int n)
{
	return pk_info("plain info %d\n", n);
}

int plain_debug(int n, int *counter)
{
	return pk_debug("plain debug %d %d\n", n, ++*counter);
}

int plain_open(int n)
{
	return pk_info("plain open %d", n);
}

int plain_cont(const char *s)
{
	return pk_cont("%s", s);
}
