// SPDX-License-Identifier: MIT
/* srcloc_other.c - the second translation unit of test_srcloc's header site. */
#include "srcloc_site.h"

int srcloc_other(void)
{
	return srcloc_site_log("other");
}
