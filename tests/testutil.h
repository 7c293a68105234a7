/* SPDX-License-Identifier: MIT */
#ifndef PK_TESTUTIL_H
#define PK_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

/* Seconds a stress phase runs: PK_TEST_SECONDS, else @dflt (halved under sanitizers). */
double tu_seconds(double dflt);
/* Built with ThreadSanitizer?  With AddressSanitizer? */
int tu_sanitized_thread(void);
int tu_sanitized_address(void);
/* Monotonic nanoseconds. */
uint64_t tu_now_ns(void);
/* A small self-check: FNV-1a over @len bytes. */
uint32_t tu_sum(const void *p, size_t len);
/* Build a self-validating text "w=<w> c=<c> pad=<...> sum=<hex>" into @buf; returns length. */
size_t tu_make_text(char *buf, size_t size, unsigned w, uint64_t c, size_t pad);
/* Parse and verify such a text; 0 if intact (fills @w, @c), -1 if not. */
int tu_check_text(const char *text, size_t len, unsigned *w, uint64_t *c);
/* Fresh temporary path under TMPDIR for @tag; caller frees. */
char *tu_tmp_path(const char *tag);
/* Whole file as a NUL-terminated string (caller frees), or NULL. */
char *tu_read_file(const char *path, size_t *len);

/*
 * A console that keeps what it is given, for tests: the text, and for each
 * write the thread that made it.  @delay_us: each write takes this long
 * (a slow line).  @hook: called at the start of each write.
 */
#include <pthread.h>
#include "printk/console.h"
struct tu_capture {
	pthread_mutex_t lock;
	char *buf;
	size_t len, cap;
	uint32_t *tids;
	size_t writes, tcap;
	unsigned delay_us;
	void (*hook)(struct tu_capture *cap);
};
extern const struct pk_console_ops tu_capture_ops;
struct tu_capture *tu_capture_new(unsigned delay_us);
/* Copy of the text so far (caller frees). */
char *tu_capture_text(struct tu_capture *cap);
void tu_capture_free(struct tu_capture *cap);
/* Number of lines in @s containing @needle. */
size_t tu_count(const char *s, const char *needle);

/*
 * TU_CHECK: an assertion for threads other than the test's own (cmocka's
 * assert_* must run on the thread that runs the test).  Aborts loudly.
 */
#define TU_CHECK(cond)                                                                  \
	do {                                                                            \
		if (!(cond)) {                                                          \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                        \
		}                                                                       \
	} while (0)

#endif
