/* SPDX-License-Identifier: MIT */
/*
 * front.h - what the front door's two files share: the settings that
 * init.c (pk_init()) writes and every pk_printk() in printk.c reads, and
 * the slow path of its readiness check.  Private to the front wing.
 */
#ifndef PK_FRONT_H
#define PK_FRONT_H

#include <stdbool.h>

#include "core/core.h"

/*
 * pk_config.default_level, !PK_CFG_EAGER and !PK_CFG_NO_SRCLOC as the
 * last pk_init() set them.  Written under init.c's init_lock, read relaxed
 * by every call: a call that races a pk_init() uses the old or the new
 * setting, either of which was the configuration at some moment of it.
 */
extern _Atomic int pk__def_level;
extern _Atomic bool pk__defer_on;
extern _Atomic bool pk__srcloc_on;

/*
 * May pk_printk() go on to the configured store, the library not being
 * READY when it looked?  0 yes (initialised now, by this call or another
 * thread); -EINPROGRESS no, use the early store (another thread is
 * initialising, this one is initialising already, or this may be a signal
 * handler, where initialising is not safe); another negative errno:
 * initialising failed.
 */
int pk__front_ready(void);

#endif
