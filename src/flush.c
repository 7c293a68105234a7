// SPDX-License-Identifier: MIT
/*
 * flush.c - flush modes.  No consoles exist yet: storing is all there is.
 */
#include "flush.h"
#include "internal.h"

int pk__flush_init(const struct pk_config *cfg)
{
	(void)cfg;
	return 0;
}

void pk__flush_after_store(int level, uint64_t seq)
{
	(void)level;
	(void)seq;
}

void pk__flush_shutdown(void)
{
}

void pk__flush_atfork_child(void)
{
}

int pk_flush(int timeout_ms)
{
	(void)timeout_ms;
	return 0;
}
