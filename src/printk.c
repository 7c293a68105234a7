// SPDX-License-Identifier: MIT
/*
 * printk.c - the front door: levels, continuation, formatting, storing,
 * then asking the flush mode to print.  The library's life cycle
 * (pk_init, lazy init, fork, pk_shutdown) is its neighbour init.c, in the
 * same wing.  Calls only down: flush/, console/, store/, format/, core/.
 *
 * pk_vprintk() takes no lock and calls no malloc: the text is formatted by
 * stb_sprintf into a buffer on the caller's stack and stored with the
 * lock-free pk__ring_write().  All per-thread state is initial-exec TLS,
 * which a signal handler may use.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "console/consoles.h"
#include "core/futex.h"
#include "flush/flush.h"
#include "format/format.h"
#include "store/store.h"
#include "flush/panic.h"
#include "front.h"

/* The level of a message that names none (before init: the default config's). */
static int default_level(bool early)
{
	return early ? PK_WARNING : atomic_load_explicit(&pk__def_level, memory_order_relaxed);
}

/*
 * May pk_printk() go on to the configured store?  0 yes; else as
 * pk__front_ready() (init.c) says, which it asks only before the library
 * is ready.
 */
static inline int printk_ready(void)
{
	if (__builtin_expect(atomic_load_explicit(&pk__g.state, memory_order_acquire) ==
			     PK__READY, 1))
		return 0;
	return pk__front_ready();
}

static void refuse(void)
{
	if (pk__gate_enter()) {
		atomic_fetch_add_explicit(&pk__lane(pk__lanes_pick(&pk__st.lanes))->h->refused, 1,
					  memory_order_relaxed);
		pk__gate_exit();
	}
}




/*
 * Store package @pkg (@n bytes, a whole line, after a module prefix and
 * location block of @plen bytes together, as @flags says, followed by a
 * fields block of @flen bytes) as a record; then print as the mode says.
 */
static int store_package(int level, unsigned flags, const unsigned char *pkg, size_t plen, int n,
			 size_t flen)
{
	uint64_t seq;
	unsigned lane;
	int ret;

	pk__self.in_printk++;
	ret = pk__store(level, flags | PK__REC_PACKED | (flen ? PK__REC_FIELDS : 0),
			(const char *)pkg, plen + (size_t)n + flen, &lane, &seq);
	pk__self.open_valid = false;
	if (ret == 0) {
		pk__self.open_seq = seq;	/* the thread's newest, closed */
		pk__self.open_lane = lane;
		pk__self.open_gen = atomic_load_explicit(&pk__st.store_gen, memory_order_relaxed);
		pk__self.open_level = (uint8_t)level;
		pk__flush_after_store(level, lane, seq);
	}
	pk__self.in_printk--;
	return ret < 0 ? ret : n;
}

/*
 * Store package @pkg (@n bytes, an open line: pk__fmt_open_literal()) after its
 * module prefix (@mplen bytes) and location (@llen) as an OPEN record,
 * and note it as this thread's open line: pk_cont() joins it as it joins
 * one formatted at the call (pk__rec_open_unpack() makes it text then).
 */
static int store_open_package(int level, unsigned flags, const unsigned char *pkg, size_t mplen,
			      size_t llen, int n)
{
	uint64_t seq;
	unsigned lane;
	int ret;

	pk__self.in_printk++;
	ret = pk__store(level, flags | PK__REC_PACKED | PK_REC_NOEOL, (const char *)pkg,
			mplen + llen + (size_t)n, &lane, &seq);
	if (ret < 0) {
		pk__self.open_valid = false;
		pk__self.in_printk--;
		return ret;
	}
	pk__self.open_plen = (uint8_t)mplen;
	pk__self.open_llen = (uint16_t)llen;
	memcpy(pk__self.open_prefix, pkg, mplen);
	pk__self.open_valid = true;
	pk__self.open_seq = seq;
	pk__self.open_lane = lane;
	pk__self.open_gen = atomic_load_explicit(&pk__st.store_gen, memory_order_relaxed);
	pk__self.open_level = (uint8_t)level;
	pk__flush_note_open(pk__self.store_ts);
	pk__flush_after_store(level, lane, seq);
	pk__self.in_printk--;
	return n;
}

/* Is another thread panicking?  Then this record is not stored (counted). */
static bool panic_suppressed(void)
{
	/* LMM(gate:D): seq_cst, after the gate's seq_cst increment. */
	if (__builtin_expect(atomic_load_explicit(&pk__panic_tid, memory_order_seq_cst) != 0, 0) &&
	    pk__panicking_other(pk__tid())) {
		atomic_fetch_add_explicit(&pk__lane(pk__lanes_pick(&pk__st.lanes))->h->suppressed, 1,
					  memory_order_relaxed);
		return true;
	}
	return false;
}

/*
 * The record's fields (pk_printk_fields()): @n of them at @f, and where
 * the call's verdict on them goes (-EINVAL or -EMSGSIZE for one left out).
 */
struct fields_arg {
	const struct pk_field *f;
	size_t n;
	int err;
	const struct pk_srcloc *loc;	/* the call site, or NULL */
};

/*
 * After the module prefix of @mplen bytes at @buf: the location block
 * of @loc if locations are kept, PK__REC_LOC added to *@flags.  Return:
 * the block's bytes.
 */
static size_t put_loc(char *buf, size_t mplen, const struct pk_srcloc *loc, unsigned *flags)
{
	size_t n;

	if (!loc || !atomic_load_explicit(&pk__srcloc_on, memory_order_relaxed))
		return 0;
	n = pk__loc_encode(buf + mplen, loc);
	if (n)
		*flags |= PK__REC_LOC;
	return n;
}

static int vprintk(const struct pk_module *mod, int level, const char *fmt, va_list ap, bool early,
		   struct fields_arg *fa)
{
	char mbuf[PK_RING_MOD_MAX + PK_RING_LOC_MAX + PK__TEXT_BUF + PK_RING_FIELDS_MAX];
	char *buf;
	unsigned flags = 0, fmt_flags = 0;
	bool cont = false;
	uint64_t seq;
	unsigned lane;
	size_t len, plen, mplen, llen = 0, flen;
	int n, ret, err = errno;	/* the caller's, for %m (pk_vprintk() restored it) */
	/*
	 * While another thread panics, it prints everything stored before;
	 * new records from the others would only push the panic report out
	 * of the store before a slow console reaches it (as Linux keeps
	 * non-panic CPUs out of the ring buffer).  Counted, not stored.
	 */
	if (panic_suppressed())
		return -EBUSY;

	/* A kernel format: %p takes the kernel's extensions (printk/kernel.h). */
	if (level == PK_LEVEL_KERNEL) {
		fmt_flags = PK__FMT_KERNEL;
		level = PK_LEVEL_DEFAULT;
	}
	/* Kernel-style prefixes: "\001" followed by a digit, 'c', 'd' or 'k'. */
	while (fmt[0] == '\001' && fmt[1]) {
		if (fmt[1] >= '0' && fmt[1] <= '7')
			level = fmt[1] - '0';
		else if (fmt[1] == 'c')
			level = PK_LEVEL_CONT;
		else if (fmt[1] == 'd')
			level = PK_LEVEL_DEFAULT;
		else if (fmt[1] == 'k')
			fmt_flags = PK__FMT_KERNEL;
		else
			break;
		fmt += 2;
	}
	if (level == PK_LEVEL_CONT) {
		cont = true;
		level = pk__self.open_valid ? pk__self.open_level : default_level(early);
	} else if (level < PK_EMERG || level > PK_DEBUG) {
		level = default_level(early);
	}
	if (pk__mod_drops(mod, level, cont, fmt))
		return 0;
	/*
	 * The record's module name goes first (PK__REC_MODULE).  A
	 * continuation that cannot join its line (printed meanwhile) becomes
	 * a record of that line's module, whoever's code continues it.
	 */
	if (cont && pk__self.open_valid) {
		mplen = pk__self.open_plen;
		memcpy(mbuf, pk__self.open_prefix, mplen);
	} else {
		mplen = mod ? pk__mod_prefix(mbuf, mod) : 0;
	}
	if (mplen)
		flags |= PK__REC_MODULE;
	/* Then its call site (a continuation has none: it is its line's). */
	if (!cont)
		llen = put_loc(mbuf, mplen, fa->loc, &flags);
	plen = mplen + llen;
	buf = mbuf + plen;

	/*
	 * Deferred formatting: a line (its format ends with a newline) is
	 * stored as its format and arguments, and formatted when a console
	 * prints it or a reader reads it (pk__rec_render()), and so is a line
	 * left open whose format ends in a character of its own
	 * (pk__fmt_open_literal()).  Continuations, other open lines, the
	 * early store and what cannot be packed are formatted now; those
	 * stored here are counted in `eager' (the early store's are not:
	 * they are moved into the store later).
	 */
	if (!early && __builtin_expect(pk__self.early_stored, 0)) {
		pk__early_settle(pk__self.early_seq);	/* this thread's early ones go first */
		pk__self.early_stored = false;
		errno = err;	/* the move may have changed it */
	}
	if (!early && !cont && atomic_load_explicit(&pk__defer_on, memory_order_relaxed)) {
		/*
		 * The package goes where the text would, after the module
		 * prefix: one buffer on the caller's stack (a signal
		 * handler's may be small), the text formatted over it if the
		 * package is not stored.
		 */
		unsigned char *pkg = (unsigned char *)mbuf;

		n = pk__vpack(pkg + plen, PK_RECORD_MAX, fmt, ap, fmt_flags, err);
		if (n == -1) {
			refuse();
			return -EINVAL;
		}
		if (n > 0 && pkg[plen + (size_t)n - 1] == '\n') {
			_Static_assert(sizeof(mbuf) >= PK_RING_MOD_MAX + PK_RING_LOC_MAX +
				       PK_RECORD_MAX + PK_RING_FIELDS_MAX,
				       "room for the fields after a package");
			flen = fa->n ? pk__fields_encode((char *)pkg + plen + n, fa->f, fa->n,
							 &fa->err) : 0;
			return store_package(level, flags, pkg, plen, n, flen);
		}
		if (n > 0 && !fa->n && pk__fmt_open_literal(fmt))
			return store_open_package(level, flags, pkg, mplen, llen, n);
	}

	/*
	 * The formatter refuses %n itself, in every spelling its conversion
	 * parser accepts, before it would write through the pointer.
	 */
	n = pk__vsnprintf_flags(buf, PK__TEXT_BUF, fmt, ap, fmt_flags);
	if (n < 0) {
		refuse();
		return -EINVAL;
	}
	len = pk__text_settle(buf, n, &flags);
	/*
	 * The fields block goes after the text; the record is then complete
	 * (nothing could be appended after the block): never left open.
	 */
	flen = 0;
	if (fa->n) {
		flen = pk__fields_encode(buf + len, fa->f, fa->n, &fa->err);
		flags &= ~(unsigned)PK_REC_NOEOL;
		flags |= PK__REC_FIELDS;
	}

	if (early) {
		uint64_t eseq = PK__NO_SEQ;

		ret = pk__early_store(level, flags | (cont ? PK_REC_CONT : 0), mbuf,
				      plen + len + flen, &eseq);
		if (eseq != PK__NO_SEQ) {
			pk__self.early_seq = eseq;
			pk__self.early_stored = true;
		}
		/*
		 * The library may have become ready since we looked, and moved
		 * the early records before ours arrived: move it ourselves,
		 * inside the gate, which keeps a store switch from copying and
		 * releasing the store while we write into it (pk__gate_enter()
		 * lets us in only when the library is ready).
		 */
		if (pk__gate_enter()) {
			if (pk__early_migrate())
				pk__flush_kick();
			pk__gate_exit();
		}
		return ret < 0 ? ret : (int)len;
	}
	pk__self.in_printk++;
	if (cont && !flen && pk__self.open_valid &&
	    pk__self.open_gen == atomic_load_explicit(&pk__st.store_gen, memory_order_relaxed)) {
		uint64_t open_seq = pk__self.open_seq;
		unsigned depth = pk__self.wdepth;

		lane = pk__self.open_lane;
		/* In progress while extended: see pk__store(). */
		if (depth < PK__ARRAY_SIZE(pk__self.wseq)) {
			*(volatile unsigned *)&pk__self.wlane[depth] = lane;
			*(volatile uint64_t *)&pk__self.wseq[depth] = open_seq;
		}
		*(volatile unsigned *)&pk__self.wdepth = depth + 1;
		ret = pk__ring_extend_x(pk__lane(lane), open_seq, buf, (uint32_t)len,
					(flags & PK_REC_NOEOL) != 0,
					PK_RECORD_MAX + pk__self.open_plen + pk__self.open_llen,
					pk__rec_open_unpack);	/* a package made text first */
		*(volatile unsigned *)&pk__self.wdepth = depth;
		if (ret == 0) {
			seq = open_seq;
			/*
			 * Still open: note it again.  The watcher may have
			 * taken the last note and tried to finalise the record
			 * while this extension held it (a no-op then).
			 */
			if (flags & PK_REC_NOEOL)
				pk__flush_note_open(0);
			goto stored;
		}
	}
	if (cont && !len && !flen) {
		/*
		 * An empty continuation ("\n" or "") whose record was finalised
		 * already (printed: its line is ended) or never existed: it
		 * would only make an empty line.  Nothing to store.
		 */
		pk__self.open_valid = false;
		pk__self.in_printk--;
		return 0;
	}
	if (cont)
		flags |= PK_REC_CONT;
	ret = pk__store(level, flags, mbuf, plen + len + flen, &lane, &seq);
	if (ret < 0) {
		pk__self.open_valid = false;
		pk__self.in_printk--;
		return ret;
	}
	if (flags & PK_REC_NOEOL) {
		/* A new open line: its module, for continuations (joining or not). */
		pk__self.open_plen = (uint8_t)mplen;
		pk__self.open_llen = (uint16_t)llen;
		memcpy(pk__self.open_prefix, mbuf, mplen);
	}
	if (flags & PK_REC_NOEOL)
		pk__flush_note_open(pk__self.store_ts);	/* the time its store read */
stored:
	/* Formatted at the call (not deferred), and stored. */
	atomic_fetch_add_explicit(&pk__lane(lane)->h->eager, 1, memory_order_relaxed);
	pk__self.open_valid = (flags & PK_REC_NOEOL) != 0;
	pk__self.open_seq = seq;
	pk__self.open_lane = lane;
	pk__self.open_gen = atomic_load_explicit(&pk__st.store_gen, memory_order_relaxed);
	pk__self.open_level = (uint8_t)level;
	pk__flush_after_store(level, lane, seq);
	pk__self.in_printk--;
	return (int)len;
}

int pk_vprintk(int level, const char *fmt, va_list ap)
{
	return pk_vprintk_mod(NULL, level, fmt, ap);
}

static int vprintk_gated(const struct pk_module *mod, int level, const char *fmt, va_list ap,
			 struct fields_arg *fa);

int pk_vprintk_mod(const struct pk_module *mod, int level, const char *fmt, va_list ap)
{
	struct fields_arg fa = { NULL, 0, 0, NULL };

	return vprintk_gated(mod, level, fmt, ap, &fa);
}

int pk_vprintk_loc(const struct pk_module *mod, const struct pk_srcloc *loc, int level,
		   const char *fmt, va_list ap)
{
	struct fields_arg fa = { NULL, 0, 0, loc };

	return vprintk_gated(mod, level, fmt, ap, &fa);
}

int pk_printk_loc(const struct pk_module *mod, const struct pk_srcloc *loc, int level,
		  const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = pk_vprintk_loc(mod, loc, level, fmt, ap);
	va_end(ap);
	return ret;
}

static int vprintk_fields_loc(const struct pk_srcloc *loc, int level,
			      const struct pk_field *fields, size_t n, const char *fmt, va_list ap)
{
	struct fields_arg fa = { fields, n, 0, loc };
	int ret = vprintk_gated(NULL, level, fmt, ap, &fa);

	/* Stored, but a field was left out: say which kind of wrong. */
	return ret >= 0 && fa.err ? fa.err : ret;
}

int pk_vprintk_fields(int level, const struct pk_field *fields, size_t n, const char *fmt,
		      va_list ap)
{
	return vprintk_fields_loc(NULL, level, fields, n, fmt, ap);
}

int pk_printk_fields_loc(const struct pk_srcloc *loc, int level, const struct pk_field *fields,
			 size_t n, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vprintk_fields_loc(loc, level, fields, n, fmt, ap);
	va_end(ap);
	return ret;
}

int pk_printk_fields(int level, const struct pk_field *fields, size_t n, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = pk_vprintk_fields(level, fields, n, fmt, ap);
	va_end(ap);
	return ret;
}

static int vprintk_gated(const struct pk_module *mod, int level, const char *fmt, va_list ap,
			 struct fields_arg *fa)
{
	int err = errno;	/* %m prints the caller's errno, whatever init does */
	uint64_t until = 0;
	bool gated;
	int ret;

	if (!fmt) {
		refuse();
		return -EINVAL;
	}
	ret = printk_ready();
	if (ret < 0 && ret != -EINPROGRESS)
		return ret;
	/*
	 * pk_init() changing the store: wait for it if this caller can
	 * (switch_wait()); else the early store takes the record meanwhile.
	 */
	gated = ret == 0 && pk__gate_enter();
	while (!gated && pk__switch_wait(&until, pk__early_init_safe_here))
		gated = pk__gate_enter();
	errno = err;
	ret = vprintk(mod, level, fmt, ap, !gated, fa);
	if (gated)
		pk__gate_exit();
	errno = err;
	return ret;
}

int pk_printk_site(struct pk_site *site, int level, const char *fmt, const unsigned char *sig,
		   unsigned n, const union pk_arg *args)
{
	return pk_printk_site_mod(NULL, site, level, fmt, sig, n, args);
}

int pk_printk_site_mod(const struct pk_module *mod, struct pk_site *site, int level,
		       const char *fmt, const unsigned char *sig, unsigned n,
		       const union pk_arg *args)
{
	return pk_printk_site_loc(mod, NULL, site, level, fmt, sig, n, args);
}

int pk_printk_site_loc(const struct pk_module *mod, const struct pk_srcloc *loc,
		       struct pk_site *site, int level, const char *fmt, const unsigned char *sig,
		       unsigned n, const union pk_arg *args)
{
	unsigned char pkg[PK_RING_TEXT_MAX];
	const struct pk__site_class *cl = pk__site_get(site, fmt, sig, n);
	int err = errno, len, ret;
	unsigned flags = 0;
	size_t plen, mplen, llen;

	/* A level pk_printk() must read, or no deferring: the variadic path. */
	if (!cl || level < PK_EMERG || level > PK_DEBUG ||
	    !atomic_load_explicit(&pk__defer_on, memory_order_relaxed))
		return PK_SITE_VARIADIC;
	/* Not set up (pk_printk() initialises), or pk_init() changing the store. */
	if (!pk__gate_enter())
		return PK_SITE_VARIADIC;
	if (panic_suppressed()) {
		ret = -EBUSY;
		goto out;
	}
	if (pk__mod_drops(mod, level, false, fmt)) {
		ret = 0;
		goto out;
	}
	mplen = mod ? pk__mod_prefix((char *)pkg, mod) : 0;
	if (mplen)
		flags |= PK__REC_MODULE;
	llen = put_loc((char *)pkg, mplen, loc, &flags);
	plen = mplen + llen;
	_Static_assert(sizeof(pkg) >= PK_RING_MOD_MAX + PK_RING_LOC_MAX + PK_RECORD_MAX,
		       "room for a package after the prefix and location");
	len = pk__site_pack(pkg + plen, PK_RECORD_MAX, fmt, cl, sig, args, err);
	if (len < 0) {
		ret = PK_SITE_VARIADIC;	/* longer than a record: formatted at the call */
		goto out;
	}
	if (__builtin_expect(pk__self.early_stored, 0)) {
		pk__early_settle(pk__self.early_seq);	/* this thread's early ones go first */
		pk__self.early_stored = false;
	}
	if (cl->open)
		ret = store_open_package(level, flags, pkg, mplen, llen, len);
	else
		ret = store_package(level, flags, pkg, plen, len, 0);
out:
	pk__gate_exit();
	errno = err;
	return ret;
}

int pk_printk(int level, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = pk_vprintk(level, fmt, ap);
	va_end(ap);
	return ret;
}

int pk_printk_mod(const struct pk_module *mod, int level, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = pk_vprintk_mod(mod, level, fmt, ap);
	va_end(ap);
	return ret;
}
