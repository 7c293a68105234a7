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

/* ---- error pointers, dev_* and netdev_* ---- */

#include <errno.h>

static struct device kst_pdev = { .driver_name = "e1000e", .init_name = "0000:00:19.0" };
static struct device kst_nodrv = { .init_name = "platform-7" };
static struct net_device kst_ndev = { .name = "eth0" };
static struct net_device kst_lone = { .name = "lo0" };
static struct net_device kst_tmpl = { .name = "eth%d" };

/* A resource that fails to map with @err (0: maps). */
static void *kst_map(int err)
{
	return err ? ERR_PTR(err) : (void *)&kst_pdev;
}

int kst_err_ptr(long err, long *back, bool *is_err, bool *is_err_or_null, int *or_zero)
{
	void *p = err ? ERR_PTR(err) : NULL;
	const void *c = ERR_CAST(p);

	*back = PTR_ERR(c);
	*is_err = IS_ERR(p);
	*is_err_or_null = IS_ERR_OR_NULL(p);
	*or_zero = PTR_ERR_OR_ZERO(p);
	return IS_ERR(&kst_pdev) + IS_ERR_OR_NULL(&kst_pdev) + PTR_ERR_OR_ZERO(&kst_pdev);
}

int kst_probe(int err)
{
	void *base = kst_map(err);

	if (IS_ERR(base))
		return dev_err_probe(&kst_pdev, PTR_ERR(base), "cannot map BAR %d\n", 0);
	dev_info(&kst_pdev, "mapped\n");
	return 0;
}

void kst_dev_messages(int n)
{
	int i;

	dev_emerg(&kst_pdev, "emerg %d\n", 0);
	dev_alert(&kst_pdev, "alert\n");
	dev_crit(&kst_pdev, "crit\n");
	dev_err(&kst_pdev, "err %pe\n", ERR_PTR(-ETIMEDOUT));
	dev_warn(&kst_pdev, "warn\n");
	dev_notice(&kst_pdev, "notice\n");
	dev_info(&kst_pdev, "info\n");
	dev_dbg(&kst_pdev, "dbg %d\n", 7);
	dev_printk(KERN_INFO, &kst_nodrv, "no driver\n");
	dev_info(NULL, "no device\n");
	for (i = 0; i < n; i++) {
		dev_warn_once(&kst_pdev, "once %d\n", i);
		dev_err_ratelimited(&kst_pdev, "overrun %d\n", i);
	}
}

void kst_netdev_messages(void)
{
	SET_NETDEV_DEV(&kst_ndev, &kst_pdev);
	netdev_emerg(&kst_ndev, "emerg\n");
	netdev_alert(&kst_ndev, "alert\n");
	netdev_crit(&kst_ndev, "crit\n");
	netdev_err(&kst_ndev, "err %d\n", 3);
	netdev_warn(&kst_ndev, "warn\n");
	netdev_notice(&kst_ndev, "notice\n");
	netdev_info(&kst_ndev, "NIC Link is Up %d Mbps\n", 1000);
	netdev_dbg(&kst_ndev, "dbg\n");
	netdev_info(&kst_lone, "no parent\n");
	netdev_info(&kst_tmpl, "not named yet\n");
	netdev_err(NULL, "no device\n");
}
