// SPDX-License-Identifier: MIT
/*
 * hexdump.c - the kernel's hex dump lines (printk/hexdump.h).
 *
 * A row is the bytes in hex, either one byte at a time ("40 41 42") or in
 * groups of 2, 4 or 8 bytes read as one number in the machine's byte
 * order ("41404342" for 40 41 42 43 on little-endian), optionally followed
 * by the bytes as ASCII in a fixed column.  What the kernel does when the
 * line buffer is too short is part of the contract, because callers size
 * buffers from its return value:
 *
 *  - grouped output is written a group at a time, each cut as snprintf()
 *    would cut it; the first group that does not fit whole ends the line
 *    (what fitted stays, NUL-terminated);
 *  - byte output and the ASCII column stop as soon as fewer than two
 *    bytes (the next character and the NUL) are left;
 *  - either way the return value is the length of the whole row.
 *
 * No snprintf(): everything here is async-signal-safe.
 */
#include <stdint.h>
#include <string.h>

#include "printk/hexdump.h"
#include "printk/printk.h"

static const char hex_digits[] = "0123456789abcdef";

struct line {
	char *buf;
	size_t size;	/* of buf, NUL included */
	size_t len;	/* characters written, NUL excluded */
};

/*
 * Append @s (@n characters) as snprintf(buf + len, size - len, "%s", s)
 * would.  false: it did not fit whole (what fitted is there, terminated).
 */
static bool put_cut(struct line *l, const char *s, size_t n)
{
	size_t room = l->size - l->len, m = n < room ? n : room - 1;

	memcpy(l->buf + l->len, s, m);
	l->buf[l->len + m] = '\0';
	if (n >= room)
		return false;
	l->len += n;
	return true;
}

/* Append one character if it and a NUL fit.  false: it did not fit. */
static bool put_char(struct line *l, char c)
{
	if (l->size < l->len + 2)
		return false;
	l->buf[l->len++] = c;
	return true;
}

/* Group @j of @groupsize bytes at @p, as "%s%0Nx" with a leading space after the first. */
static bool put_group(struct line *l, const unsigned char *p, int groupsize, int j)
{
	char text[1 + 16];
	uint64_t v = 0;
	size_t n = 0;
	int d;

	switch (groupsize) {
	case 8: { uint64_t x; memcpy(&x, p, 8); v = x; break; }
	case 4: { uint32_t x; memcpy(&x, p, 4); v = x; break; }
	default: { uint16_t x; memcpy(&x, p, 2); v = x; break; }
	}
	if (j)
		text[n++] = ' ';
	for (d = groupsize * 2 - 1; d >= 0; d--)
		text[n++] = hex_digits[(v >> (4 * d)) & 0xf];
	return put_cut(l, text, n);
}

static bool is_pow2(int n)
{
	return n > 0 && (n & (n - 1)) == 0;
}

int pk_hex_dump_to_buffer(const void *buf, size_t len, int rowsize, int groupsize,
			  char *linebuf, size_t linebuflen, bool ascii)
{
	const unsigned char *p = buf;
	struct line l = { linebuf, linebuflen, 0 };
	int ngroups, ascii_column, j;
	bool fits = true;

	if (rowsize != 16 && rowsize != 32)
		rowsize = 16;
	if (len > (size_t)rowsize)
		len = (size_t)rowsize;
	if (!is_pow2(groupsize) || groupsize > 8 || len % (size_t)groupsize)
		groupsize = 1;
	ngroups = (int)len / groupsize;
	ascii_column = rowsize * 2 + rowsize / groupsize + 1;

	if (!linebuflen)
		goto too_short;
	if (!len)
		goto done;
	if (groupsize > 1) {
		for (j = 0; j < ngroups; j++)
			if (!put_group(&l, p + (size_t)j * (size_t)groupsize, groupsize, j))
				goto too_short;		/* cut as snprintf() cuts */
	} else {
		for (j = 0; fits && j < (int)len; j++)
			fits = put_char(&l, hex_digits[p[j] >> 4]) &&
			       put_char(&l, hex_digits[p[j] & 0xf]) && put_char(&l, ' ');
		if (!fits)
			goto cut;
		l.len--;			/* no space after the last byte */
	}
	if (!ascii)
		goto done;
	while (fits && l.len < (size_t)ascii_column)
		fits = put_char(&l, ' ');
	for (j = 0; fits && j < (int)len; j++)
		fits = put_char(&l, p[j] >= 0x20 && p[j] < 0x7f ? (char)p[j] : '.');
	if (!fits)
		goto cut;
done:
	linebuf[l.len] = '\0';
	return (int)l.len;
cut:
	linebuf[l.len] = '\0';
too_short:
	return ascii ? ascii_column + (int)len : (groupsize * 2 + 1) * ngroups - 1;
}

void pk_print_hex_dump(int level, const char *prefix_str, int prefix_type, int rowsize,
		       int groupsize, const void *buf, size_t len, bool ascii)
{
	const unsigned char *p = buf;
	char line[PK_HEX_DUMP_LINE_MAX];
	size_t i, n;

	if (!prefix_str)
		prefix_str = "";
	if (rowsize != 16 && rowsize != 32)
		rowsize = 16;
	for (i = 0; i < len; i += (size_t)rowsize) {
		n = len - i < (size_t)rowsize ? len - i : (size_t)rowsize;
		pk_hex_dump_to_buffer(p + i, n, rowsize, groupsize, line, sizeof(line), ascii);
		switch (prefix_type) {
		case PK_DUMP_PREFIX_ADDRESS:
			pk_printk(level, "%s%0*lx: %s\n", prefix_str, (int)(2 * sizeof(void *)),
				  (unsigned long)(uintptr_t)(p + i), line);
			break;
		case PK_DUMP_PREFIX_OFFSET:
			pk_printk(level, "%s%.8lx: %s\n", prefix_str, (unsigned long)i, line);
			break;
		default:
			pk_printk(level, "%s%s\n", prefix_str, line);
			break;
		}
	}
}
