/* SPDX-License-Identifier: MIT */
/*
 * format.h - renderings of one record (human, kmsg, syslog, JSON, raw),
 * shared by consoles and readers.  Async-signal-safe: no malloc, no locale,
 * no stdio.
 */
#ifndef PK_FORMAT_H
#define PK_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "printk/console.h"
#include "printk/printk.h"
#include "printk/reader.h"

struct pk_format_opts {
	unsigned fmt;			/* enum pk_format | PK_FMT_F_* */
	int64_t realtime_zero_ns;	/* for PK_FMT_F_REALTIME */
	uint64_t prev_ts_ns;		/* for PK_FMT_F_DELTA */
	long utc_offset_s;		/* for PK_FMT_F_CTIME and _RFC3339 */
};
#define PK_FMT_F_REALTIME	0x200u	/* human: wall-clock date instead of uptime */
#define PK_FMT_F_DELTA		0x400u	/* human: add <delta> since prev_ts_ns */
/*
 * Every rendering but raw escapes the text (format.c, "Escaping"); the flag
 * is kept for callers that asked for it and adds nothing.
 */
#define PK_FMT_F_ESCAPE		0u
#define PK_FMT_KIND(f)		((f) & 0xffu)

/*
 * Longest rendering of one record (text escaped at worst 6x for JSON).  A
 * human rendering of a text made mostly of newlines (each one a line
 * indented to the prefix) can be longer; it is cut, still ending in '\n'.
 */
#define PK_FORMAT_MAX	(PK_RECORD_MAX * 6 + 256)

/*
 * Render @rec into @buf (always NUL-terminated, ends with '\n').
 * Return: bytes written (truncated to @size - 1).
 */
size_t pk__format_record(char *buf, size_t size, const struct pk_record *rec,
			 const struct pk_format_opts *o);

/* "** N printk messages dropped **" in the given format. */
size_t pk__format_dropped(char *buf, size_t size, uint64_t n, unsigned fmt);

#endif /* PK_FORMAT_H */
