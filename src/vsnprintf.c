// SPDX-License-Identifier: MIT
/*
 * vsnprintf.c - the formatter behind pk_printk(): stb_sprintf, which uses
 * no malloc, no locks and no locale, so it is safe in a signal handler.
 * Its symbols are renamed pk__stbsp_* so that they cannot clash with a
 * program that links its own copy.
 *
 * The copy is libprintk's own (pk_stb_sprintf.h, changes marked there),
 * because two rules belong in its conversion parser:
 *  - %n is refused in every spelling the parser accepts (stb_sprintf's own
 *    flags ' $ _, the Microsoft lengths I, I32, I64, and C's): the argument
 *    is consumed, nothing is written through it, and pk__stbsp_vsnprintf()
 *    returns -1 with an empty buffer.  pk_printk() then refuses the record.
 *  - A width or precision is clamped to the buffer's size as it is parsed,
 *    so "%*d" with INT_MAX costs what the buffer costs, not 2 GB of
 *    padding counted 512 bytes at a time.  The text written is unchanged;
 *    the length returned is then smaller than C's but still >= the
 *    buffer's size, so truncation is still seen.
 */
/* Aligned accesses only: portable to strict-alignment targets, clean under UBSan. */
#define STB_SPRINTF_NOUNALIGNED
#define STB_SPRINTF_IMPLEMENTATION
#define STB_SPRINTF_DECORATE(name) pk__stbsp_##name
#include "pk_stb_sprintf.h"
