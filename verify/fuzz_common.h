/* SPDX-License-Identifier: MIT */
/*
 * fuzz_common.h - what the libFuzzer targets of verify/ share.
 */
#ifndef PK_FUZZ_COMMON_H
#define PK_FUZZ_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A finding: say what, then abort() (libFuzzer keeps the input). */
#define FUZZ_FAIL(...) do {						\
	fprintf(stderr, "%s: ", __FILE__);				\
	fprintf(stderr, __VA_ARGS__);					\
	fputc('\n', stderr);						\
	abort();							\
} while (0)

/*
 * The input as a C string in a heap block of exactly its length plus the
 * NUL (ASan sees a read past the end), cut at its first NUL.  Free it.
 */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t n = nul ? (size_t)(nul - data) : size;
	char *s = malloc(n + 1);

	if (!s)
		abort();
	memcpy(s, data, n);
	s[n] = '\0';
	return s;
}

#endif
