// SPDX-License-Identifier: MIT
/*
 * config.c - pk_config defaults and the PK_* environment, read like a
 * kernel command line.  A malformed variable is reported on stderr, naming
 * the value given, and ignored; it never aborts the program.  Also the
 * parsers of sizes, levels and modes that PK_CONSOLE and PK_MODULES share,
 * and the check pk_init() makes of a configuration.  In store/ because
 * PK_BUFFER_SIZE takes the ring's layout (pk__store_size_for()).
 *
 * Every PK_* variable is read with secure_getenv(): a set-user-ID or
 * set-group-ID program (or one with file capabilities) ignores them all and
 * runs on the defaults, so whoever runs it cannot point its store or its
 * file consoles at a path of their choosing (PK_BUFFER=/etc/x).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "format/format.h"
#include "store/store.h"

int pk__parse_mode(const char *s, enum pk_mode *mode)
{
	if (!strcasecmp(s, "handoff"))
		*mode = PK_MODE_HANDOFF;
	else if (!strcasecmp(s, "legacy"))
		*mode = PK_MODE_LEGACY;
	else if (!strcasecmp(s, "thread"))
		*mode = PK_MODE_THREAD;
	else
		return -EINVAL;
	return 0;
}

int pk__parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	unsigned shift;
	char *end;

	if (!*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	/* Check before shifting: 18014398509483008k would wrap to 1m. */
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: shift = 0; break;
	}
	if (*end || v > (PK_BUFFER_SIZE_MAX >> shift))
		return -EINVAL;
	v <<= shift;
	*out = (size_t)v;
	return 0;
}

/* A console loglevel: pk__level_parse() on the kernel's scale. */
int pk__parse_level(const char *s, int *level)
{
	int l = pk__level_parse(s, strlen(s), PK__LOGLEVEL);

	if (l < 0)
		return -EINVAL;
	*level = l;
	return 0;
}

/*
 * The store size whose data ring holds at least @data bytes: @data rounded
 * up to a power of two, plus its descriptors and the header.  @data is
 * from PK_BUFFER_SIZE_MIN to PK__DATA_SIZE_MAX.
 */
size_t pk__store_size_for(size_t data)
{
	unsigned l = PK_RING_MIN_DATA_LOG2;

	while (((size_t)1 << l) < data)
		l++;
	return pk__ring_region_size(l);
}

/* Decimal digits only, no sign, no space, no overflow; at most @max. */
static int parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (max - (unsigned long)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	*out = v;
	return 0;
}

static void bad_env(const char *name, const char *val, const char *want)
{
	fprintf(stderr, "libprintk: ignoring %s=\"%s\": expected %s\n", name, val, want);
}

void pk_config_init(struct pk_config *cfg)
{
	const char *v;
	size_t sz;
	int lvl;
	enum pk_mode mode;

	memset(cfg, 0, sizeof(*cfg));
	cfg->buffer_size = PK_BUFFER_SIZE_DEFAULT;
	cfg->mode = PK_MODE_HANDOFF;
	cfg->console_loglevel = PK__LOGLEVEL_DEFAULT;	/* print everything but debug */
	cfg->default_level = PK_WARNING;
	cfg->facility = 1;		/* LOG_USER >> 3 */
	/*
	 * Handoff: a caller prints at most this long when no other caller
	 * comes to take over, then the rescue thread goes on (the last caller
	 * of a burst would otherwise print the whole backlog).  See
	 * docs/guide/flush-modes.md.
	 */
	cfg->print_budget_us = PK_PRINT_BUDGET_DEFAULT_US;

	if ((v = secure_getenv("PK_MODE")) && *v) {
		if (pk__parse_mode(v, &mode) == 0)
			cfg->mode = mode;
		else
			bad_env("PK_MODE", v, "handoff, legacy or thread");
	}
	if ((v = secure_getenv("PK_LOGLEVEL")) && *v) {
		if (pk__parse_level(v, &lvl) == 0)
			cfg->console_loglevel = lvl ? lvl : PK_CFG_ZERO;	/* 0: silent */
		else
			bad_env("PK_LOGLEVEL", v, PK__LOGLEVEL_WANT);
	}
	if ((v = secure_getenv("PK_CONSOLE")))
		cfg->consoles = v;
	if ((v = secure_getenv("PK_BUFFER")) && *v)
		cfg->buffer_path = v;
	if ((v = secure_getenv("PK_BUFFER_SIZE")) && *v) {
		if (pk__parse_size(v, &sz) == 0 && sz >= PK_BUFFER_SIZE_MIN &&
		    sz <= PK__DATA_SIZE_MAX)
			cfg->buffer_size = pk__store_size_for(sz);
		else
			bad_env("PK_BUFFER_SIZE", v, "a data ring size from 16k to 512m");
	}
	if ((v = secure_getenv("PK_LANES")) && *v) {
		unsigned long n;

		if (parse_ulong(v, PK_LANES_MAX, &n) == 0 && n >= 1)
			cfg->lanes = (unsigned)n;
		else
			bad_env("PK_LANES", v, "a number of lanes from 1 to 64");
	}
	if ((v = secure_getenv("PK_BUFFER_CLEAR")) && *v && strcmp(v, "0"))
		cfg->flags |= PK_CFG_BUFFER_CLEAR;
	if ((v = secure_getenv("PK_EAGER")) && *v && strcmp(v, "0"))
		cfg->flags |= PK_CFG_EAGER;
	if ((v = secure_getenv("PK_CRASH_HANDLER")) && *v && strcmp(v, "0"))
		cfg->flags |= PK_CFG_CRASH_HANDLER;
	if ((v = secure_getenv("PK_SRCLOC")) && *v) {
		if (!strcmp(v, "0"))
			cfg->flags |= PK_CFG_NO_SRCLOC;
		else if (!strcmp(v, "1"))
			cfg->flags &= ~PK_CFG_NO_SRCLOC;
		else
			bad_env("PK_SRCLOC", v, "0 (records keep no call site) or 1 (they do)");
	}
	if ((v = secure_getenv("PK_GATE")) && !strcmp(v, "counters"))
		cfg->flags |= PK_CFG_GATE_COUNTERS;
	if ((v = secure_getenv("PK_BUDGET_US")) && *v) {
		unsigned long b;

		if (parse_ulong(v, 60000000ul, &b))
			bad_env("PK_BUDGET_US", v, "microseconds from 0 (unbounded) to 60000000");
		else
			cfg->print_budget_us = b ? (unsigned)b : PK_PRINT_BUDGET_UNBOUNDED;
	}
}

bool pk__env_loglevel_set(void)
{
	const char *v = secure_getenv("PK_LOGLEVEL");
	int l;

	return v && *v && pk__parse_level(v, &l) == 0;
}

/*
 * Zero is the default in every field (so that { 0 } is the defaults);
 * PK_CFG_ZERO, where 0 is a value of its own, asks for that value.
 */
int pk__config_check(const struct pk_config *c)
{
	if (c->buffer_size && (c->buffer_size < PK_BUFFER_SIZE_MIN ||
			       c->buffer_size > PK_BUFFER_SIZE_MAX))
		return -EINVAL;
	if (c->mode != PK_MODE_HANDOFF && c->mode != PK_MODE_LEGACY && c->mode != PK_MODE_THREAD)
		return -EINVAL;
	if (c->console_loglevel < PK_CFG_ZERO || c->console_loglevel > 8)
		return -EINVAL;
	if (c->default_level < PK_CFG_ZERO || c->default_level > PK_DEBUG)
		return -EINVAL;
	if (c->facility < PK_CFG_ZERO || c->facility > 23)
		return -EINVAL;
	if (c->lanes > PK_LANES_MAX)
		return -EINVAL;
	return 0;
}

/* The defaults pk_config_init() starts from, field by field. */
void pk__config_resolve(struct pk_config *c)
{
	if (!c->buffer_size)
		c->buffer_size = PK_BUFFER_SIZE_DEFAULT;
	if (!c->console_loglevel)
		c->console_loglevel = PK__LOGLEVEL_DEFAULT;	/* print everything but debug */
	else if (c->console_loglevel == PK_CFG_ZERO)
		c->console_loglevel = 0;	/* print nothing */
	if (!c->print_budget_us)
		c->print_budget_us = PK_PRINT_BUDGET_DEFAULT_US;
	else if (c->print_budget_us == PK_PRINT_BUDGET_UNBOUNDED)
		c->print_budget_us = 0;		/* unbounded, as Linux 4.16 */
	if (!c->default_level)
		c->default_level = PK_WARNING;
	else if (c->default_level == PK_CFG_ZERO)
		c->default_level = PK_EMERG;
	if (!c->facility)
		c->facility = 1;		/* LOG_USER >> 3 */
	else if (c->facility == PK_CFG_ZERO)
		c->facility = 0;		/* LOG_KERN */
}
