/* SPDX-License-Identifier: MIT */
/*
 * kernel_style.h - what kernel_style.c (kernel-style code) offers the
 * test that runs it.
 */
#ifndef PK_TEST_KERNEL_STYLE_H
#define PK_TEST_KERNEL_STYLE_H

#include <stdbool.h>
#include <stddef.h>

extern int kst_warn_line, kst_warn_on_line, kst_bug_line;

int kst_levels(const char *ifname, int speed);
void kst_once(int i);
int kst_once_return(void);
int kst_burst(int n);
bool kst_burst_window_over(void);
void kst_ratelimited(int n);
void kst_release_init(void);
int kst_release_use(int n);
void kst_release_exit(void);
int kst_check_range(int v);
int kst_check_sign(int v);
int kst_warn_on_once(int v);
int kst_warn_once(int v);
void kst_dump(void);
void kst_bug_check(int v);
void kst_hexdump(const void *buf, size_t len);
int kst_hexline(const void *buf, size_t len, int rowsize, int groupsize, char *line,
		size_t linelen, bool ascii);
void kst_sig_once(void);
int kst_sig_ratelimit(void);
int kst_err_ptr(long err, long *back, bool *is_err, bool *is_err_or_null, int *or_zero);
int kst_probe(int err);
void kst_dev_messages(int n);
void kst_netdev_messages(void);

#endif
