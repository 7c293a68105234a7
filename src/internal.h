/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the formatter and the console grammar offer, until
 * they have headers of their own.  Not installed.
 */
#ifndef PK_INTERNAL_H
#define PK_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "printk/printk.h"
#include "format/format.h"
#include "store/store.h"


/*
 * console_spec.c: PK_CONSOLE at init.  As pk_console_register_spec(), but
 * if entries were given and none could be used, stderr is registered
 * instead, with one warning.  Return: consoles registered, or -EINVAL.
 */
int pk__console_register_env(const char *spec);
/*
 * The same grammar parsed only (fuzzing, tests): nothing is opened,
 * resolved, registered or said.  Return: the entries that would be made
 * (with their options), *@nbad the entries refused; -EINVAL for NULL.
 */
int pk__console_spec_check(const char *spec, int *nbad);

#endif /* PK_INTERNAL_H */
