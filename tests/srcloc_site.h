/* SPDX-License-Identifier: MIT */
/*
 * srcloc_site.h - a level macro in a header, used from two translation
 * units (test_srcloc.c, srcloc_other.c): both records name this file.
 */
#ifndef SRCLOC_SITE_H
#define SRCLOC_SITE_H

#include "printk/printk.h"

enum { SRCLOC_SITE_LINE = __LINE__ + 3 };
static inline int srcloc_site_log(const char *who)
{
	return pk_notice("from the header, called by %s\n", who);
}

/* srcloc_other.c: calls srcloc_site_log("other"). */
int srcloc_other(void);

#endif /* SRCLOC_SITE_H */
