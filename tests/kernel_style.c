// SPDX-License-Identifier: MIT
/*
 * kernel_style.c - a small "driver" written as kernel code is, against
 * <printk/kernel.h> alone: levels and pr_fmt, continuation lines, debug
 * messages, once and rate-limited messages, WARN/BUG, dump_stack() and hex
 * dumps.  test_kernel.c calls its functions and compares what reaches the
 * console with the kernel's formats.
 *
 * DEBUG is defined, as a driver built with -DDEBUG has it: pr_debug(),
 * pr_devel() and print_hex_dump_bytes() print.
 */
#define KBUILD_MODNAME "kstyle"
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt
#define DEBUG

#include <printk/kernel.h>

#include "kernel_style.h"

static DEFINE_RATELIMIT_STATE(kst_rs, HZ / 2, 3);
static struct ratelimit_state kst_release_rs;

/* Lines of the WARN/BUG calls below, for the test to compare with. */
int kst_warn_line, kst_warn_on_line, kst_bug_line;

int kst_levels(const char *ifname, int speed)
{
	int ret = 0;

	pr_emerg("emerg %d\n", 0);
	pr_alert("alert %d\n", 1);
	pr_crit("crit %d\n", 2);
	pr_err("err %d\n", 3);
	pr_warn("warn %d\n", 4);
	pr_notice("notice %d\n", 5);
	pr_info("info %d\n", 6);
	pr_debug("debug %d\n", 7);
	pr_devel("devel %d\n", 7);
	pr_info("%s: link", ifname);
	pr_cont(" up");
	pr_cont(" at %d Mb/s\n", speed);
	ret = printk(KERN_ERR "raw printk without pr_fmt\n");
	printk("no level given\n");
	printk(KERN_DEFAULT "KERN_DEFAULT given\n");
	no_printk(KERN_INFO "never printed %d\n", 1);
	return ret;
}

void kst_once(int i)
{
	pr_info_once("probe %d: firmware is old\n", i);
}

int kst_once_return(void)
{
	return printk_once(KERN_NOTICE "printk_once\n");
}

int kst_burst(int n)
{
	int i, passed = 0;

	for (i = 0; i < n; i++) {
		if (__ratelimit(&kst_rs)) {
			pr_info("event %d\n", i);
			passed++;
		}
	}
	return passed;
}

bool kst_burst_window_over(void)
{
	return kst_rs.begin && time_after(jiffies, kst_rs.begin + kst_rs.interval);
}

void kst_ratelimited(int n)
{
	int i;

	for (i = 0; i < n; i++)
		pr_warn_ratelimited("rx overrun %d\n", i);
}

void kst_release_init(void)
{
	ratelimit_state_init(&kst_release_rs, 60 * HZ, 2);
	ratelimit_set_flags(&kst_release_rs, RATELIMIT_MSG_ON_RELEASE);
}

int kst_release_use(int n)
{
	int i, passed = 0;

	for (i = 0; i < n; i++)
		passed += __ratelimit(&kst_release_rs);
	return passed;
}

void kst_release_exit(void)
{
	ratelimit_state_exit(&kst_release_rs);
}

int kst_check_range(int v)
{
	kst_warn_line = __LINE__ + 1;
	if (WARN(v > 3, "value %d out of range\n", v))
		return -22;
	return 0;
}

int kst_check_sign(int v)
{
	kst_warn_on_line = __LINE__ + 1;
	return WARN_ON(v < 0);
}

int kst_warn_on_once(int v)
{
	return WARN_ON_ONCE(v == 42);
}

int kst_warn_once(int v)
{
	return WARN_ONCE(v == 43, "v is %d\n", v);
}

void kst_dump(void)
{
	dump_stack();
	pr_info("stack dumped\n");
}

void kst_bug_check(int v)
{
	kst_bug_line = __LINE__ + 1;
	BUG_ON(v == 13);
}

void kst_hexdump(const void *buf, size_t len)
{
	print_hex_dump(KERN_INFO, "kstyle: ", DUMP_PREFIX_OFFSET, 16, 1, buf, len, true);
	print_hex_dump(KERN_NOTICE, "", DUMP_PREFIX_ADDRESS, 32, 4, buf, len, true);
	print_hex_dump(KERN_ERR, "raw ", DUMP_PREFIX_NONE, 16, 2, buf, len, false);
	print_hex_dump_bytes("bytes: ", DUMP_PREFIX_NONE, buf, len);
}

int kst_hexline(const void *buf, size_t len, int rowsize, int groupsize, char *line,
		size_t linelen, bool ascii)
{
	return hex_dump_to_buffer(buf, len, rowsize, groupsize, line, linelen, ascii);
}

/* Called from threads and signal handlers at once. */
static DEFINE_RATELIMIT_STATE(kst_sig_rs, 60 * HZ, 5);

void kst_sig_once(void)
{
	printk_once(KERN_INFO "once from anywhere\n");
}

int kst_sig_ratelimit(void)
{
	return __ratelimit(&kst_sig_rs);
}
