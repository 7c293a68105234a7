// SPDX-License-Identifier: MIT
/*
 * srcloc_cxx.cpp - level macros called from C++ (test_srcloc): the
 * records carry this file's call sites as C's do.
 */
#include "printk/kernel.h"
#include "printk/printk.h"

extern "C" unsigned srcloc_cxx_line;
unsigned srcloc_cxx_line;

extern "C" int srcloc_cxx_log(void);
int srcloc_cxx_log(void)
{
	srcloc_cxx_line = __LINE__ + 1;
	if (pk_info("from C++ %d\n", 1) <= 0)
		return -1;
	return pr_warn("from C++ %d\n", 2);
}
