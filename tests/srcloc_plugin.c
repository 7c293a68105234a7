// SPDX-License-Identifier: MIT
/*
 * srcloc_plugin - a shared object test_srcloc loads with dlopen(), logs
 * from, and unloads before it reads the records back: their call sites
 * must have been copied into the store, not pointed at.
 */
#include "printk/printk.h"

int srcloc_plugin_log(int n);

int srcloc_plugin_log(int n)
{
	pk_info("plugin packed %d\n", n);
	return pk_warn("plugin %s", "open") + pk_notice("plugin formatted %s\n", "at the call");
}
