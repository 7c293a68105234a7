/* SPDX-License-Identifier: MIT */
/*
 * printk/hexdump.h - hex dumps whose lines equal the Linux kernel's
 * hex_dump_to_buffer() and print_hex_dump() for the same arguments.
 *
 * Synchronization: every call may run concurrently with any other; the
 * caller's buffers are its own business.
 */
#ifndef PRINTK_HEXDUMP_H
#define PRINTK_HEXDUMP_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Building libprintk: what this header declares is its exported API. */
#if defined(PK_BUILDING_LIB) && defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* What each line of pk_print_hex_dump() starts with, after the prefix string. */
enum pk_dump_prefix {
	PK_DUMP_PREFIX_NONE,	/* nothing */
	PK_DUMP_PREFIX_ADDRESS,	/* the row's address, as the kernel's %px: "%016lx: " */
	PK_DUMP_PREFIX_OFFSET,	/* the row's offset in the buffer: "%08x: " */
};

/*
 * Longest line pk_hex_dump_to_buffer() makes (rowsize 32, groupsize 1,
 * ascii), with its NUL: the kernel's 32 * 3 + 2 + 32 + 1.
 */
#define PK_HEX_DUMP_LINE_MAX	131

/**
 * pk_hex_dump_to_buffer() - one row of @buf as "hex ASCII" text.
 * @buf:        the bytes.
 * @len:        how many; more than @rowsize are cut to @rowsize.
 * @rowsize:    16 or 32 (anything else means 16).
 * @groupsize:  1, 2, 4 or 8 bytes per group, printed as one number in the
 *              machine's byte order (anything else, or a @len it does not
 *              divide, means 1).
 * @linebuf:    where the text goes; always NUL-terminated unless
 *              @linebuflen is 0.
 * @linebuflen: its size, NUL included.
 * @ascii:      append the bytes as ASCII ('.' for what is not printable
 *              ASCII), starting in the column after rowsize*2 +
 *              rowsize/groupsize characters.
 *
 * The text and the return value are the kernel's, byte for byte, for the
 * same arguments, including what is left in @linebuf when it is too short.
 *
 * Context: any thread, async-signal-safe.
 * Return: the length of the text without its NUL.  If @linebuf was too
 * short: the length the kernel computes for the whole row (ascii:
 * rowsize*2 + rowsize/groupsize + 1 + @len; else (groupsize*2 + 1) *
 * groups - 1), which is at least @linebuflen.
 */
int pk_hex_dump_to_buffer(const void *buf, size_t len, int rowsize, int groupsize,
			  char *linebuf, size_t linebuflen, bool ascii);

/**
 * pk_print_hex_dump() - print @buf as rows of pk_hex_dump_to_buffer(),
 * one record each, "<prefix_str><address or offset: >row".
 * @level:       PK_EMERG..PK_DEBUG or PK_LEVEL_DEFAULT.
 * @prefix_str:  printed at the start of every row (NULL: nothing).
 * @prefix_type: an enum pk_dump_prefix.  PK_DUMP_PREFIX_ADDRESS prints the
 *               row's real address as the kernel's %px does (16 hex
 *               digits on 64-bit), not hashed as the kernel's %p.
 * @rowsize, @groupsize, @ascii: as for pk_hex_dump_to_buffer().
 * @buf, @len:   the bytes; @len 0 prints nothing.
 *
 * Context: any thread, async-signal-safe (as pk_printk()).
 * Return: nothing (each row's pk_printk() result is not reported).
 */
void pk_print_hex_dump(int level, const char *prefix_str, int prefix_type, int rowsize,
		       int groupsize, const void *buf, size_t len, bool ascii);

#if defined(PK_BUILDING_LIB) && defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* PRINTK_HEXDUMP_H */
