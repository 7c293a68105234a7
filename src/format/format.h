/* SPDX-License-Identifier: MIT */
/*
 * format.h - what format/ offers the wings above it: the printf engine
 * (vsnprintf.c) and its packages, the kernel's %p extensions (ptrext.c),
 * symbols and backtrace frames (symtab.c, symtab.h), and the renderings of
 * one record (human, kmsg, syslog, JSON, raw; format.c), shared by
 * consoles and readers.  Async-signal-safe: no malloc, no locale, no
 * stdio.  Below it only core/.
 */
#ifndef PK_FORMAT_H
#define PK_FORMAT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "printk/console.h"
#include "printk/printk.h"
#include "printk/reader.h"
#include "format/symtab.h"

/*
 * vsnprintf.c: glibc's snprintf() output, async-signal-safe (the names are
 * those of the stb_sprintf copy it replaced).  %m prints strerror(errno)
 * of errno at the call.  Return: the length C's vsnprintf would return
 * (>= @count: cut; INT_MAX at most), or -1 when the format is refused (@buf
 * is then ""): %n in any spelling (nothing is written through the
 * pointer), or positional arguments mixed with sequential ones, numbered
 * above 64, left out between others, or used as two types.
 */
int pk__stbsp_vsnprintf(char *buf, int count, const char *fmt, va_list va);
int pk__stbsp_snprintf(char *buf, int count, const char *fmt, ...);
/*
 * As pk__stbsp_vsnprintf(); with PK__FMT_KERNEL in @flags, or PK_KFMT at
 * the start of @fmt (skipped), %p takes the kernel's extensions (ptrext.c).
 */
#define PK__FMT_KERNEL	0x1u
int pk__vsnprintf_flags(char *buf, int count, const char *fmt, va_list va, unsigned flags);
/*
 * pk__vpack() - the format and its arguments as a package (vsnprintf.c,
 * "PACKAGES"), to be formatted later by pk__unpack().
 * Return: the package's length; -1 the formatter refuses the format (%n);
 * -2 it cannot be packed (positional arguments, %ls, a kernel %p
 * extension, more than @cap bytes): format it now.
 */
int pk__vpack(unsigned char *out, size_t cap, const char *fmt, va_list va, unsigned flags,
	      int err);
/*
 * pk__unpack() - format package @pkg of @len bytes (untrusted) into @buf,
 * as pk__vsnprintf_flags() would have at the call.
 * Context: async-signal-safe, no malloc.
 * Return: as vsnprintf; -1 for a package that is not valid (@buf empty).
 */
int pk__unpack(char *buf, int count, const unsigned char *pkg, size_t len);
/*
 * Call sites that pack at compile time (printk.h, "STATIC PACKAGING"):
 * what the site's format takes, worked out once, on its first call, by
 * the formatter's own conversion parser (pk__site_classify()).  Each
 * argument is one of PK__SK_*, with the precision of a %s (-1 none, -2
 * the '*' argument before it).
 */
enum { PK__SK_I32 = 1, PK__SK_U32, PK__SK_I64, PK__SK_DBL, PK__SK_LDBL, PK__SK_PTR, PK__SK_STR };
struct pk__site_class {
	uint8_t n;			/* arguments */
	uint8_t open;			/* an open line (pk__fmt_open_literal()) */
	uint16_t fmt_len;		/* the format's bytes, its newline included */
	uint8_t kind[PK_SITE_ARGS];
	int16_t prec[PK_SITE_ARGS];
};
/* 0: packable, @cl filled; -1 refused (%n); -2 formatted at the call. */
int pk__site_classify(const char *fmt, struct pk__site_class *cl);
/*
 * Does the line of format @fmt end in a character of the format itself,
 * not a newline, after its last conversion?  Then it is an open line
 * whatever the arguments: it may be stored as a package, and its text
 * ends with that character unless cut at PK_RECORD_MAX.  A format that
 * ends in a conversion ("%s", "%c") may end its line with the argument's
 * newline: formatted at the call.  A conversion here: '%', flags,
 * width, precision, length, its letter, and for %p the letters and
 * digits of a pointer extension after it.  Async-signal-safe.
 */
bool pk__fmt_open_literal(const char *fmt);
/* Do the @n arguments of signature @sig (PK_SIG_*) fit what @cl reads? */
bool pk__site_matches(const struct pk__site_class *cl, const unsigned char *sig, unsigned n);
/* The package of a call at a classified site.  Length, or -2 (too long). */
int pk__site_pack(unsigned char *out, size_t cap, const char *fmt,
		  const struct pk__site_class *cl, const unsigned char *sig,
		  const union pk_arg *args, int err);
/*
 * The class of call site @site for format @fmt taking the @n arguments of
 * signature @sig, classified on its first call (site.c); NULL: it cannot be
 * packed (the variadic path).  Async-signal-safe.
 */
const struct pk__site_class *pk__site_get(struct pk_site *site, const char *fmt,
					  const unsigned char *sig, unsigned n);
/* The kernel's struct va_format (%pV), as printk/kernel.h declares it. */
struct pk__va_format {
	const char *fmt;
	va_list *va;
};

/*
 * A record's wall-clock time: its CLOCK_MONOTONIC @ts plus @zero, the
 * CLOCK_REALTIME at monotonic zero (struct pk_store_info's
 * realtime_zero_ns for a store file).  Wrapping arithmetic: both terms may
 * come from an untrusted store file, where a signed sum could overflow.
 * pk__mono_ns() is its inverse: the monotonic timestamp a record made at
 * wall-clock @real_ns carries (pkmsg --since and --until).
 */
static inline int64_t pk__realtime_ns(uint64_t ts, int64_t zero)
{
	return (int64_t)(ts + (uint64_t)zero);
}

static inline uint64_t pk__mono_ns(int64_t real_ns, int64_t zero)
{
	return (uint64_t)real_ns - (uint64_t)zero;
}

struct pk_format_opts {
	unsigned fmt;			/* enum pk_format | PK_FMT_F_* */
	int64_t realtime_zero_ns;	/* for PK_FMT_F_REALTIME */
	uint64_t prev_ts_ns;		/* for PK_FMT_F_DELTA */
	long utc_offset_s;		/* for PK_FMT_F_CTIME and _RFC3339 */
};
#define PK_FMT_F_REALTIME	0x200u	/* human: wall-clock date instead of uptime */
#define PK_FMT_F_DELTA		0x400u	/* human: add <delta> since prev_ts_ns */
/*
 * Human only: the text of each record in its level's color, as util-linux
 * dmesg --color shows it (format.c, "Colors").  The escape sequences are
 * the renderer's own constant strings, put around the escaped text: escape
 * bytes in the text itself are still written as \x1b.  For a terminal
 * (pkmsg --color, a console's color=); never for a file, JSON or syslog.
 */
#define PK_FMT_F_COLOR		0x8000u
/*
 * Show the record's lane beside its seq, where a rendering shows the seq:
 * kmsg "prio,seq,usec,flags,lane=L;" (a comma field as the kernel's
 * caller=), JSON "lane":L after "seq", journal PRINTK_LANE=.  For readers
 * of a store of several lanes (pkmsg), where a seq counts within a lane.
 */
#define PK_FMT_F_LANE		0x10000u
/* The flags above are the renderer's own: none may take a public one's bit. */
_Static_assert(((PK_FMT_F_REALTIME | PK_FMT_F_DELTA | PK_FMT_F_COLOR | PK_FMT_F_LANE) &
		(0xffu | PK_FMT_F_TID | PK_FMT_F_LEVEL | PK_FMT_F_CTIME | PK_FMT_F_RFC3339 |
		 PK_FMT_F_LOC)) == 0, "a renderer flag shares a bit with a public PK_FMT_F_ flag");
/*
 * Every rendering but raw escapes the text (format.c, "Escaping"); the flag
 * is kept for callers that asked for it and adds nothing.
 */
#define PK_FMT_F_ESCAPE		0u
#define PK_FMT_KIND(f)		((f) & 0xffu)

/*
 * Longest rendering of one record (text, fields and call site escaped
 * at worst 6x for JSON, and each field's quotes and separators).  A
 * human rendering of a text made mostly of newlines (each one a line
 * indented to the prefix) can be longer; it is cut, still ending in '\n'.
 */
#define PK_FORMAT_MAX	((PK_RECORD_MAX + PK_FIELDS_BYTES + PK_SRCLOC_FILE_MAX + PK_SRCLOC_FUNC_MAX) * 6 + \
			 PK_FIELDS_MAX * 16 + 320)

/*
 * Render @rec into @buf (always NUL-terminated, ends with '\n').
 * Return: bytes written (truncated to @size - 1).
 */
size_t pk__format_record(char *buf, size_t size, const struct pk_record *rec,
			 const struct pk_format_opts *o);

/* "** N printk messages dropped **" in the given format. */
size_t pk__format_dropped(char *buf, size_t size, uint64_t n, unsigned fmt);
/*
 * The same for @n records lost in lane @lane of a store of several lanes:
 * "** N printk messages dropped in lane L **", JSON {"dropped":N,"lane":L},
 * journal PRINTK_LANE=L as well.
 */
size_t pk__format_dropped_lane(char *buf, size_t size, uint64_t n, unsigned fmt,
			       unsigned lane);

#endif /* PK_FORMAT_H */
