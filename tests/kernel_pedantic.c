// SPDX-License-Identifier: MIT
/*
 * kernel_pedantic.c - every macro and inline of <printk/kernel.h> and
 * <printk/warn.h>, each called with and without arguments after its
 * format.  kernel_pedantic.sh compiles it (never runs it) as C11 and as
 * C++17 with -pedantic -Wall -Wextra -Werror: the macros use GNU C, as the
 * kernel's do, but a program built with -pedantic must not get a warning
 * from them.  Valid C and C++ alike (no designated initializers, casts
 * from void *).
 */
#define KBUILD_MODNAME "kped"
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt
#define dev_fmt(fmt) "dev: " fmt

/* No <errno.h> here: <printk/kernel.h> gives ENOMEM for ERR_PTR(-ENOMEM). */
#include <string.h>

#include <printk/kernel.h>

struct ped_thing {
	int x;
};

int ped_levels(int x);
int ped_levels(int x)
{
	const char *l = KERN_EMERG KERN_ALERT KERN_CRIT KERN_ERR KERN_WARNING KERN_NOTICE
		KERN_INFO KERN_DEBUG KERN_DEFAULT KERN_CONT;
	int lv = LOGLEVEL_DEFAULT + LOGLEVEL_EMERG + LOGLEVEL_ALERT + LOGLEVEL_CRIT +
		 LOGLEVEL_ERR + LOGLEVEL_WARNING + LOGLEVEL_NOTICE + LOGLEVEL_INFO +
		 LOGLEVEL_DEBUG + KERN_SOH_ASCII;

	lv += printk_get_level(l) + (printk_skip_level(l) != l);
	if (likely(x) || unlikely(!x))
		lv++;
	lv += printk(KERN_INFO "plain\n");
	lv += printk(KERN_INFO "x %d\n", x);
	lv += printk_deferred("plain\n");
	lv += printk_deferred("x %d\n", x);
	lv += no_printk("plain\n");
	lv += no_printk("x %d\n", x);
	pr_emerg("plain\n");
	pr_emerg("x %d\n", x);
	pr_alert("plain\n");
	pr_alert("x %d\n", x);
	pr_crit("plain\n");
	pr_crit("x %d\n", x);
	pr_err("plain\n");
	pr_err("x %d\n", x);
	pr_warn("plain\n");
	pr_warn("x %d\n", x);
	pr_notice("plain\n");
	pr_notice("x %d\n", x);
	pr_info("plain");
	pr_cont("\n");
	pr_info("x %d", x);
	pr_cont(" %d\n", x);
	pr_devel("plain\n");
	pr_devel("x %d\n", x);
	pr_debug("plain\n");
	pr_debug("x %d\n", x);
	return lv;
}

static int ped_vprintk_helper(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vprintk(fmt, ap);
	va_end(ap);
	return ret;
}

int ped_vprintk(int x);
int ped_vprintk(int x)
{
	va_list *none = NULL;
	struct va_format vaf;

	vaf.fmt = "x";
	vaf.va = none;
	(void)vaf;
	return ped_vprintk_helper(KERN_INFO "x %d\n", x);
}

static void ped_func(void)
{
}

static void ped_func_arg(int x)
{
	(void)x;
}

int ped_once(int x);
int ped_once(int x)
{
	int n = 0;

	n += printk_once(KERN_INFO "plain\n");
	n += printk_once(KERN_INFO "x %d\n", x);
	n += printk_deferred_once(KERN_INFO "plain\n");
	n += printk_deferred_once(KERN_INFO "x %d\n", x);
	n += pr_emerg_once("plain\n");
	n += pr_emerg_once("x %d\n", x);
	n += pr_alert_once("plain\n");
	n += pr_alert_once("x %d\n", x);
	n += pr_crit_once("plain\n");
	n += pr_crit_once("x %d\n", x);
	n += pr_err_once("plain\n");
	n += pr_err_once("x %d\n", x);
	n += pr_warn_once("plain\n");
	n += pr_warn_once("x %d\n", x);
	n += pr_notice_once("plain\n");
	n += pr_notice_once("x %d\n", x);
	n += pr_info_once("plain\n");
	n += pr_info_once("x %d\n", x);
	n += pr_devel_once("plain\n");
	n += pr_devel_once("x %d\n", x);
	n += pr_debug_once("plain\n");
	n += pr_debug_once("x %d\n", x);
	n += DO_ONCE_LITE(ped_func);
	n += DO_ONCE_LITE(ped_func_arg, x);
	n += DO_ONCE_LITE_IF(x > 1, ped_func);
	n += DO_ONCE_LITE_IF(x > 1, ped_func_arg, x);
	return n;
}

unsigned long ped_time(unsigned long j);
unsigned long ped_time(unsigned long j)
{
	unsigned long now = jiffies + HZ;

	return msecs_to_jiffies(10) + jiffies_to_msecs(j) + time_after(now, j) +
	       time_before(now, j) + time_after_eq(now, j) + time_before_eq(now, j);
}

static DEFINE_RATELIMIT_STATE(ped_rs, HZ, 10);
static struct ratelimit_state ped_rs2 = RATELIMIT_STATE_INIT(ped_rs2, HZ, 2);
static struct ratelimit_state ped_rs3 = RATELIMIT_STATE_INIT_DISABLED;
static struct ratelimit_state ped_rs4 =
	RATELIMIT_STATE_INIT_FLAGS(ped_rs4, HZ, 2, RATELIMIT_MSG_ON_RELEASE);

int ped_ratelimit(int x);
int ped_ratelimit(int x)
{
	struct ratelimit_state rs;
	int n = 0;

	ratelimit_state_init(&rs, DEFAULT_RATELIMIT_INTERVAL, DEFAULT_RATELIMIT_BURST);
	ratelimit_default_init(&rs);
	ratelimit_set_flags(&rs, RATELIMIT_MSG_ON_RELEASE);
	n += __ratelimit(&ped_rs) + ___ratelimit(&ped_rs2, "f") + __ratelimit(&ped_rs3) +
	     __ratelimit(&ped_rs4) + printk_ratelimit();
	printk_ratelimited(KERN_INFO "plain\n");
	printk_ratelimited(KERN_INFO "x %d\n", x);
	pr_emerg_ratelimited("plain\n");
	pr_emerg_ratelimited("x %d\n", x);
	pr_alert_ratelimited("plain\n");
	pr_alert_ratelimited("x %d\n", x);
	pr_crit_ratelimited("plain\n");
	pr_crit_ratelimited("x %d\n", x);
	pr_err_ratelimited("plain\n");
	pr_err_ratelimited("x %d\n", x);
	pr_warn_ratelimited("plain\n");
	pr_warn_ratelimited("x %d\n", x);
	pr_notice_ratelimited("plain\n");
	pr_notice_ratelimited("x %d\n", x);
	pr_info_ratelimited("plain\n");
	pr_info_ratelimited("x %d\n", x);
	pr_devel_ratelimited("plain\n");
	pr_devel_ratelimited("x %d\n", x);
	pr_debug_ratelimited("plain\n");
	pr_debug_ratelimited("x %d\n", x);
	ratelimit_state_exit(&rs);
	return n;
}

int ped_warn(int x);
int ped_warn(int x)
{
	int n = 0;

	n += WARN_ON(x < 0);
	n += WARN(x > 1, "plain\n");
	n += WARN(x > 1, "x %d\n", x);
	n += WARN_TAINT(x > 1, 0, "plain\n");
	n += WARN_TAINT(x > 1, 0, "x %d\n", x);
	n += WARN_ON_ONCE(x == 3);
	n += WARN_ONCE(x == 4, "plain\n");
	n += WARN_ONCE(x == 4, "x %d\n", x);
	n += WARN_TAINT_ONCE(x == 5, 0, "plain\n");
	n += WARN_TAINT_ONCE(x == 5, 0, "x %d\n", x);
	n += WARN_ON_RATELIMIT(x == 6, &ped_rs);
	n += WARN_RATELIMIT(x == 7, "plain\n");
	n += WARN_RATELIMIT(x == 7, "x %d\n", x);
	if (x == 8)
		__WARN();
	if (x == 9)
		__WARN_printf(0, "plain\n");
	if (x == 10)
		__WARN_printf(0, "x %d\n", x);
	pk_warn_report(__FILE__, __LINE__, __func__, NULL);
	pk_warn_report(__FILE__, __LINE__, __func__, PK_CUT_HERE);
	pk_warn_report(__FILE__, __LINE__, __func__, "%s", PK_END_TRACE);
	dump_stack();
	pk_dump_stack();
	(void)CUT_HERE;
	BUG_ON(x == 11);
	if (x == 12)
		BUG();
	if (x == 13)
		pk_bug(__FILE__, __LINE__, __func__);
	if (x == 14)
		panic("plain\n");
	if (x == 15)
		panic("x %d\n", x);
	return n;
}

void ped_hexdump(const void *buf, size_t len);
void ped_hexdump(const void *buf, size_t len)
{
	char line[200];

	hex_dump_to_buffer(buf, len, 16, 1, line, sizeof(line), true);
	print_hex_dump(KERN_INFO, "p: ", DUMP_PREFIX_NONE, 16, 1, buf, len, true);
	print_hex_dump(KERN_INFO, "p: ", DUMP_PREFIX_ADDRESS, 16, 1, buf, len, false);
	print_hex_dump(KERN_INFO, "p: ", DUMP_PREFIX_OFFSET, 16, 1, buf, len, false);
	print_hex_dump_debug("p: ", DUMP_PREFIX_NONE, 16, 1, buf, len, true);
	print_hex_dump_devel("p: ", DUMP_PREFIX_NONE, 16, 1, buf, len, true);
	print_hex_dump_bytes("p: ", DUMP_PREFIX_NONE, buf, len);
}

int ped_errptr(int x);
int ped_errptr(int x)
{
	void *p = ERR_PTR(-ENOMEM);
	const void *c = ERR_CAST(p);
	long e = PTR_ERR(c);

	return (int)e + IS_ERR(p) + IS_ERR_OR_NULL(p) + PTR_ERR_OR_ZERO(c) + MAX_ERRNO +
	       IS_ERR_VALUE(x);
}

int ped_dev(int x);
int ped_dev(int x)
{
	struct device d = { "drv", "dev0", NULL };
	struct net_device n;
	const struct device *null_dev = NULL;
	int ret = 0;

	memset(&n, 0, sizeof(n));
	strcpy(n.name, "eth0");
	SET_NETDEV_DEV(&n, &d);
	ret += (int)strlen(dev_name(&d)) + (int)strlen(dev_driver_string(&d)) +
	       (int)strlen(netdev_name(&n));
	dev_printk(KERN_INFO, &d, "plain\n");
	dev_printk(KERN_INFO, &d, "x %d\n", x);
	dev_emerg(&d, "plain\n");
	dev_emerg(&d, "x %d\n", x);
	dev_alert(&d, "plain\n");
	dev_alert(&d, "x %d\n", x);
	dev_crit(&d, "plain\n");
	dev_crit(&d, "x %d\n", x);
	dev_err(&d, "plain\n");
	dev_err(&d, "x %d\n", x);
	dev_warn(&d, "plain\n");
	dev_warn(&d, "x %d\n", x);
	dev_notice(&d, "plain\n");
	dev_notice(&d, "x %d\n", x);
	dev_info(null_dev, "plain\n");
	dev_info(&d, "x %d\n", x);
	dev_dbg(&d, "plain\n");
	dev_dbg(&d, "x %d\n", x);
	dev_emerg_once(&d, "plain\n");
	dev_alert_once(&d, "x %d\n", x);
	dev_crit_once(&d, "plain\n");
	dev_err_once(&d, "x %d\n", x);
	dev_warn_once(&d, "plain\n");
	dev_warn_once(&d, "x %d\n", x);
	dev_notice_once(&d, "plain\n");
	dev_info_once(&d, "x %d\n", x);
	dev_dbg_once(&d, "plain\n");
	dev_emerg_ratelimited(&d, "plain\n");
	dev_alert_ratelimited(&d, "x %d\n", x);
	dev_crit_ratelimited(&d, "plain\n");
	dev_err_ratelimited(&d, "plain\n");
	dev_err_ratelimited(&d, "x %d\n", x);
	dev_warn_ratelimited(&d, "plain\n");
	dev_notice_ratelimited(&d, "x %d\n", x);
	dev_info_ratelimited(&d, "plain\n");
	dev_dbg_ratelimited(&d, "x %d\n", x);
	ret += dev_err_probe(&d, -ENOMEM, "plain\n");
	ret += dev_err_probe(&d, -EPROBE_DEFER, "x %d\n", x);
	netdev_printk(KERN_INFO, &n, "plain\n");
	netdev_printk(KERN_INFO, &n, "x %d\n", x);
	netdev_emerg(&n, "plain\n");
	netdev_alert(&n, "x %d\n", x);
	netdev_crit(&n, "plain\n");
	netdev_err(&n, "plain\n");
	netdev_err(&n, "x %d\n", x);
	netdev_warn(&n, "plain\n");
	netdev_notice(&n, "x %d\n", x);
	netdev_info(&n, "plain\n");
	netdev_dbg(&n, "plain\n");
	netdev_dbg(&n, "x %d\n", x);
	return ret;
}
