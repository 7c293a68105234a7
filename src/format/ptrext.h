/* SPDX-License-Identifier: MIT */
/*
 * ptrext.h - the kernel's %p extensions (ptrext.c), for the formatter.
 */
#ifndef PK_PTREXT_H
#define PK_PTREXT_H

#include <stdbool.h>
#include <stddef.h>

/* The conversion's flags, as the kernel's printf_spec holds them. */
#define PK__KF_LEFT	0x01u	/* '-' */
#define PK__KF_ZERO	0x02u	/* '0' */
#define PK__KF_PLUS	0x04u	/* '+' */
#define PK__KF_SPACE	0x08u	/* ' ' */
#define PK__KF_ALT	0x10u	/* '#' */

struct pk__kspec {
	unsigned fl;
	int width;	/* -1: none given (the kernel's default) */
	int prec;	/* -1: none */
};

/*
 * Widths and precisions above this (PK_RECORD_MAX) are taken as this
 * much: what a record can show.  The text then agrees with the clamped
 * width, and its cost is bounded (an INT_MAX width would pad for seconds).
 */
#define PK__KFIELD_MAX	1024

/* Where the text goes: @put(@sink, bytes, count), which counts past the end. */
struct pk__kout {
	void (*put)(void *sink, const char *p, size_t n);
	void *sink;
};

/*
 * pk__ptrext() - one kernel %p conversion: @ext is the format after the
 * 'p' ("S", "I6c", "h" ..., or anything else for a plain %p), @ptr the
 * argument.  Every letter and digit after the 'p' belongs to the
 * conversion, as in the kernel.  @ks's width and precision are clamped
 * to PK__KFIELD_MAX.
 *
 * Context: any thread, async-signal-safe (no lock, no allocation).
 * Return: the number of characters of @ext it took.
 */
size_t pk__ptrext(const struct pk__kout *o, const char *ext, const void *ptr,
		  const struct pk__kspec *ks);

#endif /* PK_PTREXT_H */
