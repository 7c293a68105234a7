// SPDX-License-Identifier: MIT
/*
 * stbsp.c - pkbench's own copy of stb_sprintf, built as libprintk builds
 * its copy (aligned accesses only), for the latency table's "format only"
 * reference row: what formatting the message costs before anything is
 * stored.
 */
#define STB_SPRINTF_NOUNALIGNED
#define STB_SPRINTF_IMPLEMENTATION
#define STB_SPRINTF_DECORATE(name) pkb_stbsp_##name
#include <stb/stb_sprintf.h>
