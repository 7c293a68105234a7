/* SPDX-License-Identifier: MIT */
/*
 * flush.h - the flush modes: who writes stored records to the consoles.
 */
#ifndef PK_FLUSH_H
#define PK_FLUSH_H

#include <stdint.h>

#include "printk/printk.h"

/* Set the flush mode up: register consoles from cfg->consoles, start threads. */
int pk__flush_init(const struct pk_config *cfg);
/* After pk_printk stored record @seq of @level: print it as the mode says. */
void pk__flush_after_store(int level, uint64_t seq);
/* Flush everything, stop printer threads, unregister consoles. */
void pk__flush_shutdown(void);
/* In the child after fork(): reset locks and threads that did not survive. */
void pk__flush_atfork_child(void);

#endif /* PK_FLUSH_H */
