// SPDX-License-Identifier: MIT
/*
 * vsnprintf.c - the formatter behind pk_printk(): stb_sprintf, which uses
 * no malloc, no locks and no locale, so it is safe in a signal handler.
 * Its symbols are renamed pk__stbsp_* so that they cannot clash with a
 * program that links its own copy.
 */
/* Aligned accesses only: portable to strict-alignment targets, clean under UBSan. */
#define STB_SPRINTF_NOUNALIGNED
#define STB_SPRINTF_IMPLEMENTATION
#define STB_SPRINTF_DECORATE(name) pk__stbsp_##name
#include <stb/stb_sprintf.h>
