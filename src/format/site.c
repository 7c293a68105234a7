// SPDX-License-Identifier: MIT
/*
 * site.c - call sites that pack at compile time (printk.h, "STATIC
 * PACKAGING"): each site's format classified once, on its first call, by
 * the printf engine's own conversion parser (pk__site_classify()).
 */
#include <stdatomic.h>
#include <stdbool.h>

#include "format/format.h"

/*
 * CALL SITES (pk_printk_site(), printk.h "STATIC PACKAGING")
 *
 * A site's state word: NEW (zero, as the static storage starts), BUSY
 * while one thread classifies its format, then PACKED or VARIADIC for
 * good.
 *   site:A  the classifying thread writes fmt and cl, then stores the
 *           state with release; a caller loads it with acquire and reads
 *           fmt and cl only when it saw PACKED: it sees them whole.
 *           The state only ever leaves NEW through the CAS, so one thread
 *           writes them, once.  A caller that finds BUSY (another thread,
 *           or a signal handler interrupting the classifier on its own
 *           thread) takes the variadic path this once.
 */
enum { SITE_NEW = 0, SITE_BUSY, SITE_PACKED, SITE_VARIADIC };

struct site {
	_Atomic unsigned state;
	const char *fmt;
	struct pk__site_class cl;
};
_Static_assert(sizeof(struct site) <= sizeof(struct pk_site), "struct pk_site holds a site");
_Static_assert(_Alignof(struct site) <= _Alignof(struct pk_site), "struct pk_site's alignment");

static bool classify_site(struct site *s, const char *fmt, const unsigned char *sig, unsigned n)
{
	unsigned want = SITE_NEW;
	bool ok;

	/* Relaxed: the CAS only elects the writer; site:A publishes. */
	if (!atomic_compare_exchange_strong_explicit(&s->state, &want, SITE_BUSY,
						     memory_order_relaxed, memory_order_relaxed))
		return false;
	s->fmt = fmt;
	ok = n <= PK_SITE_ARGS && pk__site_classify(fmt, &s->cl) == 0 &&
	     pk__site_matches(&s->cl, sig, n);
	/* LMM(site:A) */
	atomic_store_explicit(&s->state, ok ? SITE_PACKED : SITE_VARIADIC, memory_order_release);
	return ok;
}

const struct pk__site_class *pk__site_get(struct pk_site *site, const char *fmt,
				       const unsigned char *sig, unsigned n)
{
	struct site *s = (struct site *)site;
	/* LMM(site:A) */
	unsigned st = atomic_load_explicit(&s->state, memory_order_acquire);

	if (__builtin_expect(st != SITE_PACKED, 0) &&
	    (st != SITE_NEW || !classify_site(s, fmt, sig, n)))
		return NULL;
	/* Another format at the same site (not a literal after all). */
	return s->fmt == fmt ? &s->cl : NULL;
}
