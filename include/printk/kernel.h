/* SPDX-License-Identifier: MIT */
/*
 * printk/kernel.h - the Linux kernel's printk API for user space.
 *
 * Code written for the kernel compiles unchanged against this header:
 * printk(KERN_ERR "..."), pr_info(), pr_fmt, pr_debug under DEBUG,
 * printk_once and pr_*_once, printk_ratelimited and pr_*_ratelimited,
 * DEFINE_RATELIMIT_STATE with __ratelimit(), WARN()/WARN_ON()/_ONCE,
 * BUG()/BUG_ON(), dump_stack(), panic(), HZ and jiffies, the hex
 * dumps, error pointers (ERR_PTR() and the rest of err.h), and dev_*()
 * and netdev_*() over a minimal struct device and struct net_device (see
 * "device messages" below).  Every kernel name is a macro (or, for the disabled hex dumps, a
 * static inline) over the pk_ API of printk.h, ratelimit.h, hexdump.h and
 * warn.h; only this header defines kernel names, so a program that does
 * not include it keeps printk, jiffies, WARN and the rest for itself.
 *
 * Differences from the kernel, all deliberate:
 *  - HZ is 1000: a jiffy is one millisecond of CLOCK_MONOTONIC, and
 *    jiffies reads the clock (an rvalue, not a variable).
 *  - printk() returns what pk_printk() returns: the bytes stored, or a
 *    negative errno.
 *  - Plain %p in printk() and the other macros here prints the address
 *    as %px does (16 hex digits), as a kernel booted with
 *    no_hash_pointers: a process's addresses are not hidden from itself.
 *    See "Pointer extensions" below.
 *  - WARN() reports name the function by __func__ (the kernel prints %pS
 *    of the return address), the thread id as PID, and print the
 *    backtrace in libprintk's "Call trace:" format (see printk/warn.h).
 *  - BUG() prints "kernel BUG at FILE:LINE!" and panics ("Fatal exception
 *    in FUNC()"): the process ends with SIGABRT.
 *  - DUMP_PREFIX_ADDRESS prints the real address, as %px would.
 *  - The once flags are set with an atomic exchange: exactly one caller
 *    prints, even when many threads and signal handlers race.
 *
 * pr_debug() is a dynamic debug site (<printk/dyndbg.h>, included here),
 * as in a kernel with CONFIG_DYNAMIC_DEBUG: it is called as
 * PK_DYNDBG_PR_DEBUG(fmt, args...) with the raw format, as the kernel
 * calls dynamic_pr_debug(), applies pr_fmt() and decides itself; a site
 * starts enabled when DEBUG is defined, and PK_DYNDBG or
 * pk_dyndbg_query() switch it at run time.  With PK_NO_DYNAMIC_DEBUG
 * defined before the include, pr_debug() prints at KERN_DEBUG when DEBUG
 * is defined and is no_printk() when it is not, as in a kernel without
 * CONFIG_DYNAMIC_DEBUG.  With PK_MAX_LEVEL (printk.h) below 7, pr_debug()
 * is no_printk() and no site, and so is every pr_* above that level.
 *
 * Pointer extensions.  The formats of printk(), vprintk(), the pr_*
 * family (pr_debug included), WARN() and panic() are kernel formats: %p
 * followed by letters and digits is one of the kernel's vsprintf()
 * extensions, and all those letters and digits belong to it, as in the
 * kernel.  The text is Linux 6.1's for the same bytes:
 *   %pS %ps %pSR %pB  symbol+0xoff/0xsize [module] (%ps: no offset; %pB:
 *                     a return address), from the dynamic symbol tables
 *                     of the loaded objects; no [module] for the main
 *                     program; "0x..." where no symbol contains the
 *                     address (a static function, or a program linked
 *                     without -rdynamic)
 *   %ph %phC %phD %phN, %*ph   1 to 64 bytes in hex (the width counts
 *                     bytes), separated by ' ', ':', '-' or nothing
 *   %pM %pMR %pMF %pm %pmR     MAC addresses
 *   %pI4 %pi4 (h l n b: byte order), %pI6 %pi6 %pI6c (RFC 5952)
 *   %pU %pUb %pUB %pUl %pUL    UUIDs, GUIDs
 *   %pe               the name of an ERR_PTR() value ("-EINVAL", and
 *                     the kernel's own, "-EPROBE_DEFER"), a number if
 *                     it has none, the address if not one
 *   %pE[achnops]      bytes escaped as string_escape_mem() does (the
 *                     width counts bytes, 1 without one)
 *   %pV               a struct va_format, formatted in place
 *   %pa %pad %pks %pus %px %pK  as in the kernel (%pK as %px)
 * Widths and precisions on these are clamped to PK_RECORD_MAX, what a
 * record can show (the kernel clamps to bounds of its own): "%*pM" with
 * INT_MAX pads the MAC address to 1024 bytes, and %*pE reads at most
 * 1024 bytes.
 * A pointer that cannot be read prints "(null)" or "(efault)" (the
 * first page, ERR_PTR values), as the kernel's check_pointer().  The
 * formatting stays async-signal-safe: the symbols are read from the
 * loader's tables without dladdr() and its lock.
 *
 * Outside these macros %p is the C library's: pk_printk(PK_INFO, "%pS", p)
 * prints "0x55d0c0de1234S" as printf() would.  A pk_printk() format takes
 * the extensions when it starts with PK_KFMT (among the KERN_ prefixes),
 * or with the pseudo level PK_LEVEL_KERNEL, which printk() passes so that
 * a format that is not a string literal keeps them too.
 *
 * The macros use GNU C (statement expressions, __builtin_expect), as the
 * kernel does: gcc and clang, C or C++.  Each statement expression is
 * marked __extension__ and no macro needs ", ##__VA_ARGS__" (the format is
 * part of "..."), so a program built with -pedantic -Werror, as C11 or
 * C++17, gets no warning from them (tests/kernel_pedantic.c uses them all).
 * A format takes at most 63 arguments.
 */
#ifndef PRINTK_KERNEL_H
#define PRINTK_KERNEL_H

#include <errno.h>	/* ERR_PTR(-ENOMEM) and the like, as the kernel's headers give them */
#include <stdarg.h>
#include <stdbool.h>

/* pr_debug() is a dynamic debug site unless the program opts out. */
#ifndef PK_NO_DYNAMIC_DEBUG
#include "dyndbg.h"
#endif
#include "hexdump.h"
#include "printk.h"
#include "ratelimit.h"
#include "warn.h"

/* ---- levels (kern_levels.h) ---- */

#define KERN_SOH	PK_SOH		/* ASCII Start Of Header */
#define KERN_SOH_ASCII	'\001'
#define KERN_EMERG	KERN_SOH "0"	/* system is unusable */
#define KERN_ALERT	KERN_SOH "1"	/* action must be taken immediately */
#define KERN_CRIT	KERN_SOH "2"	/* critical conditions */
#define KERN_ERR	KERN_SOH "3"	/* error conditions */
#define KERN_WARNING	KERN_SOH "4"	/* warning conditions */
#define KERN_NOTICE	KERN_SOH "5"	/* normal but significant condition */
#define KERN_INFO	KERN_SOH "6"	/* informational */
#define KERN_DEBUG	KERN_SOH "7"	/* debug-level messages */
#define KERN_DEFAULT	""		/* the default message level */
#define KERN_CONT	KERN_SOH "c"	/* continues the line */

#define LOGLEVEL_DEFAULT	PK_LEVEL_DEFAULT
#define LOGLEVEL_EMERG		PK_EMERG
#define LOGLEVEL_ALERT		PK_ALERT
#define LOGLEVEL_CRIT		PK_CRIT
#define LOGLEVEL_ERR		PK_ERR
#define LOGLEVEL_WARNING	PK_WARNING
#define LOGLEVEL_NOTICE		PK_NOTICE
#define LOGLEVEL_INFO		PK_INFO
#define LOGLEVEL_DEBUG		PK_DEBUG

/* The level a KERN_* string names; PK_LEVEL_DEFAULT for "" or NULL. */
static inline int pk__kern_level(const char *s)
{
	if (!s || s[0] != KERN_SOH_ASCII)
		return PK_LEVEL_DEFAULT;
	if (s[1] >= '0' && s[1] <= '7')
		return s[1] - '0';
	return s[1] == 'c' ? PK_LEVEL_CONT : PK_LEVEL_DEFAULT;
}

/*
 * printk_get_level() - the level character of @buffer's KERN_* prefix.
 * Context: any thread, async-signal-safe.
 * Return: '0'-'7' or 'c' after a leading KERN_SOH, else 0.
 */
static inline int printk_get_level(const char *buffer)
{
	if (buffer[0] == KERN_SOH_ASCII && buffer[1]) {
		switch (buffer[1]) {
		case '0': case '1': case '2': case '3': case '4':
		case '5': case '6': case '7': case 'c':
			return buffer[1];
		}
	}
	return 0;
}

/*
 * printk_skip_level() - @buffer after its KERN_* prefix, if any.
 * Context: any thread, async-signal-safe.
 * Return: @buffer + 2 if it starts with a level prefix, else @buffer.
 */
static inline const char *printk_skip_level(const char *buffer)
{
	return printk_get_level(buffer) ? buffer + 2 : buffer;
}

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

/* ---- argument lists without GNU C's ", ##__VA_ARGS__" ---- */

/*
 * The macros below take their format inside "...", never as a named
 * parameter: a call with nothing after the format, pr_info("up\n"), then
 * gives "..." one argument, as ISO C99 to C17 and C++ before C++20 ask
 * (a named fmt would leave "..." empty, which -pedantic reports).
 *
 * PK__KARGS(prefix, wrap, extra, fmt, args...) is
 *	prefix wrap(fmt) EXTRA, args...
 * EXTRA being @extra without its parentheses: "()" for nothing, or
 * "(, a, b)" for arguments that go between the format and @args (the
 * dev_*() prefixes).  @wrap is pr_fmt, dev_fmt or PK__ID.  It counts its
 * arguments, up to 64 (a format and 63 arguments).
 */
#define PK__ID(x)		x
#define PK__UNPAREN(...)	__VA_ARGS__
#define PK__HAS_ARGS(...)						\
	PK__ARG_65(__VA_ARGS__, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,	\
		   1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,	\
		   1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,	\
		   1, 1, 1, 1, 1, 1, 1, 0, 0)
#define PK__ARG_65(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15,	\
		   _16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28,	\
		   _29, _30, _31, _32, _33, _34, _35, _36, _37, _38, _39, _40, _41,	\
		   _42, _43, _44, _45, _46, _47, _48, _49, _50, _51, _52, _53, _54,	\
		   _55, _56, _57, _58, _59, _60, _61, _62, _63, _64, n, ...) n
#define PK__KARGS(prefix, wrap, extra, ...) \
	PK__KARGS_(PK__HAS_ARGS(__VA_ARGS__), prefix, wrap, extra, __VA_ARGS__)
#define PK__KARGS_(n, ...)	PK__KARGS__(n, __VA_ARGS__)
#define PK__KARGS__(n, ...)	PK__KARGS_##n(__VA_ARGS__)
#define PK__KARGS_0(prefix, wrap, extra, fmt)	prefix wrap(fmt) PK__UNPAREN extra
#define PK__KARGS_1(prefix, wrap, extra, fmt, ...) \
	prefix wrap(fmt) PK__UNPAREN extra, __VA_ARGS__
/* The first of the arguments (the format), without the others. */
#define PK__KFIRST(...)		PK__KFIRST_(__VA_ARGS__, 0)
#define PK__KFIRST_(first, ...)	first

/* ---- printk and pr_* (printk.h) ---- */

#define printk(...)	pk_printk_loc(PK__THIS_MODULE, PK_SRCLOC, PK_LEVEL_KERNEL, __VA_ARGS__)
#define vprintk(fmt, args)		pk_vprintk_mod(PK__THIS_MODULE, PK_LEVEL_KERNEL, fmt, args)

/* %pV: a format and its arguments, printed inside another format. */
struct va_format {
	const char *fmt;
	va_list *va;
};
/* pk_printk() may be called from anywhere: deferring is not needed. */
#define printk_deferred(...)	printk(__VA_ARGS__)

/* Prints nothing, evaluates nothing, yet checks the format and arguments. */
#define no_printk(...)							\
	__extension__ ({						\
		if (0)							\
			pk_printk(PK_LEVEL_DEFAULT, __VA_ARGS__);	\
		0;							\
	})

#ifndef pr_fmt
#define pr_fmt(fmt) fmt
#endif

/*
 * Levels above PK_MAX_LEVEL (printk.h) are no_printk().  Only the pr_*
 * family, whose level is in its name, is stripped: the preprocessor
 * cannot read the KERN_x prefix of a format, so printk(KERN_DEBUG ...)
 * is never stripped (the kernel keeps it in every configuration too).
 */
#define pr_emerg(...)	printk(PK__KARGS(KERN_EMERG, pr_fmt, (), __VA_ARGS__))
#define pr_alert(...) \
	PK__PICK(1, printk, no_printk)(PK__KARGS(KERN_ALERT, pr_fmt, (), __VA_ARGS__))
#define pr_crit(...) \
	PK__PICK(2, printk, no_printk)(PK__KARGS(KERN_CRIT, pr_fmt, (), __VA_ARGS__))
#define pr_err(...) \
	PK__PICK(3, printk, no_printk)(PK__KARGS(KERN_ERR, pr_fmt, (), __VA_ARGS__))
#define pr_warn(...) \
	PK__PICK(4, printk, no_printk)(PK__KARGS(KERN_WARNING, pr_fmt, (), __VA_ARGS__))
#define pr_notice(...) \
	PK__PICK(5, printk, no_printk)(PK__KARGS(KERN_NOTICE, pr_fmt, (), __VA_ARGS__))
#define pr_info(...) \
	PK__PICK(6, printk, no_printk)(PK__KARGS(KERN_INFO, pr_fmt, (), __VA_ARGS__))
/* Continues this thread's open line; no pr_fmt, as in the kernel. */
#define pr_cont(...)	printk(PK__KARGS(KERN_CONT, PK__ID, (), __VA_ARGS__))

#if defined(DEBUG) && PK__ON_7
#define pr_devel(...)	printk(PK__KARGS(KERN_DEBUG, pr_fmt, (), __VA_ARGS__))
#else
#define pr_devel(...)	no_printk(PK__KARGS(KERN_DEBUG, pr_fmt, (), __VA_ARGS__))
#endif

/* The dynamic debug hook: see the top of this file. */
#if !PK__ON_7
/* Stripped: no dynamic debug site either. */
#define pr_debug(...)	no_printk(PK__KARGS(KERN_DEBUG, pr_fmt, (), __VA_ARGS__))
#elif defined(PK_DYNDBG_PR_DEBUG)
/* PK_DYNDBG_PR_DEBUG(), its message a kernel format (the site shows @fmt). */
#define pr_debug(...)						\
	PK__DYNDBG_SITE(PK__KFIRST(__VA_ARGS__),				\
			PK_DYNDBG_PRINTK_FN(&pk__dd_site,			\
					    PK__KARGS(PK_KFMT, pr_fmt, (), __VA_ARGS__)))
#elif defined(DEBUG)
#define pr_debug(...)	printk(PK__KARGS(KERN_DEBUG, pr_fmt, (), __VA_ARGS__))
#else
#define pr_debug(...)	no_printk(PK__KARGS(KERN_DEBUG, pr_fmt, (), __VA_ARGS__))
#endif

/* ---- once (once_lite.h) ---- */

/*
 * True for the first caller that finds @condition true, at this call site,
 * in the whole process.  The flag is claimed with one atomic exchange, so
 * of any number of threads and signal handlers exactly one wins; the
 * relaxed load first keeps later calls from writing the shared line.
 * Relaxed: the flag publishes nothing but itself.
 */
#define PK__ONCE_IF(condition)						\
	__extension__ ({								\
		static int pk__once_done;				\
		bool pk__once_cond = !!(condition);			\
		pk__once_cond &&					\
		!__atomic_load_n(&pk__once_done, __ATOMIC_RELAXED) &&	\
		!__atomic_exchange_n(&pk__once_done, 1, __ATOMIC_RELAXED); \
	})

/* DO_ONCE_LITE_IF(condition, func, args...): func(args...) once. */
#define DO_ONCE_LITE_IF(condition, ...)					\
	__extension__ ({						\
		bool pk__do_once = !!(condition);			\
		if (__builtin_expect(PK__ONCE_IF(pk__do_once), 0))	\
			PK__CALL(__VA_ARGS__);				\
		__builtin_expect(pk__do_once, 0);			\
	})
#define DO_ONCE_LITE(...)	DO_ONCE_LITE_IF(true, __VA_ARGS__)
/* PK__CALL(func, args...): func(args...), args possibly none. */
#define PK__CALL(...)		PK__CALL_(PK__HAS_ARGS(__VA_ARGS__), __VA_ARGS__)
#define PK__CALL_(n, ...)	PK__CALL__(n, __VA_ARGS__)
#define PK__CALL__(n, ...)	PK__CALL_##n(__VA_ARGS__)
#define PK__CALL_0(func)	func()
#define PK__CALL_1(func, ...)	func(__VA_ARGS__)

#define printk_once(...)		DO_ONCE_LITE(printk, __VA_ARGS__)
#define printk_deferred_once(...)	printk_once(__VA_ARGS__)

/* A stripped level (PK_MAX_LEVEL) is no_printk(), 0, as the kernel's pr_debug_once(). */
#define pr_emerg_once(...)	printk_once(PK__KARGS(KERN_EMERG, pr_fmt, (), __VA_ARGS__))
#define pr_alert_once(...) \
	PK__PICK(1, printk_once, no_printk)(PK__KARGS(KERN_ALERT, pr_fmt, (), __VA_ARGS__))
#define pr_crit_once(...) \
	PK__PICK(2, printk_once, no_printk)(PK__KARGS(KERN_CRIT, pr_fmt, (), __VA_ARGS__))
#define pr_err_once(...) \
	PK__PICK(3, printk_once, no_printk)(PK__KARGS(KERN_ERR, pr_fmt, (), __VA_ARGS__))
#define pr_warn_once(...) \
	PK__PICK(4, printk_once, no_printk)(PK__KARGS(KERN_WARNING, pr_fmt, (), __VA_ARGS__))
#define pr_notice_once(...) \
	PK__PICK(5, printk_once, no_printk)(PK__KARGS(KERN_NOTICE, pr_fmt, (), __VA_ARGS__))
#define pr_info_once(...) \
	PK__PICK(6, printk_once, no_printk)(PK__KARGS(KERN_INFO, pr_fmt, (), __VA_ARGS__))
#if defined(DEBUG) && PK__ON_7
#define pr_devel_once(...)	printk_once(PK__KARGS(KERN_DEBUG, pr_fmt, (), __VA_ARGS__))
#define pr_debug_once(...)	printk_once(PK__KARGS(KERN_DEBUG, pr_fmt, (), __VA_ARGS__))
#else
#define pr_devel_once(...)	no_printk(PK__KARGS(KERN_DEBUG, pr_fmt, (), __VA_ARGS__))
#define pr_debug_once(...)	no_printk(PK__KARGS(KERN_DEBUG, pr_fmt, (), __VA_ARGS__))
#endif

/* ---- time (jiffies.h) ---- */

#define HZ			PK_HZ
#define jiffies			(pk_jiffies())
#define msecs_to_jiffies(m)	((unsigned long)(m) * HZ / 1000)
#define jiffies_to_msecs(j)	((unsigned int)((j) * 1000 / HZ))
#define time_after(a, b)	((long)((unsigned long)(b) - (unsigned long)(a)) < 0)
#define time_before(a, b)	time_after(b, a)
#define time_after_eq(a, b)	((long)((unsigned long)(a) - (unsigned long)(b)) >= 0)
#define time_before_eq(a, b)	time_after_eq(b, a)

/* ---- rate limiting (ratelimit.h, ratelimit_types.h) ---- */

#define ratelimit_state			pk_ratelimit_state
#define DEFAULT_RATELIMIT_INTERVAL	PK_RATELIMIT_INTERVAL_DEFAULT
#define DEFAULT_RATELIMIT_BURST		PK_RATELIMIT_BURST_DEFAULT
#define RATELIMIT_MSG_ON_RELEASE	PK_RATELIMIT_MSG_ON_RELEASE

#define RATELIMIT_STATE_INIT_FLAGS(name, interval_init, burst_init, flags_init) \
	PK_RATELIMIT_STATE_INIT_FLAGS(interval_init, burst_init, flags_init)
#define RATELIMIT_STATE_INIT(name, interval_init, burst_init) \
	PK_RATELIMIT_STATE_INIT(interval_init, burst_init)
#define RATELIMIT_STATE_INIT_DISABLED \
	PK_RATELIMIT_STATE_INIT(0, DEFAULT_RATELIMIT_BURST)
#define DEFINE_RATELIMIT_STATE(name, interval_init, burst_init) \
	struct pk_ratelimit_state name = PK_RATELIMIT_STATE_INIT(interval_init, burst_init)

#define ___ratelimit(rs, func)		pk_ratelimit(rs, func)
#define __ratelimit(rs)			pk_ratelimit(rs, __func__)
#define ratelimit_state_init(rs, interval, burst) \
	pk_ratelimit_state_init(rs, interval, burst)
#define ratelimit_default_init(rs) \
	pk_ratelimit_state_init(rs, DEFAULT_RATELIMIT_INTERVAL, DEFAULT_RATELIMIT_BURST)
#define ratelimit_state_exit(rs)	pk_ratelimit_state_exit(rs)
#define ratelimit_set_flags(rs, f)	((void)((rs)->flags = (f)))
#define printk_ratelimit()		pk_printk_ratelimit(__func__)

#define printk_ratelimited(...)						\
	__extension__ ({						\
		static struct pk_ratelimit_state pk__rs =		\
			PK_RATELIMIT_STATE_INIT(DEFAULT_RATELIMIT_INTERVAL, \
						DEFAULT_RATELIMIT_BURST); \
		if (pk_ratelimit(&pk__rs, __func__))			\
			printk(__VA_ARGS__);				\
	})

#define pr_emerg_ratelimited(...) \
	printk_ratelimited(PK__KARGS(KERN_EMERG, pr_fmt, (), __VA_ARGS__))
#define pr_alert_ratelimited(...) \
	PK__PICK(1, printk_ratelimited, no_printk)(PK__KARGS(KERN_ALERT, pr_fmt, (), __VA_ARGS__))
#define pr_crit_ratelimited(...) \
	PK__PICK(2, printk_ratelimited, no_printk)(PK__KARGS(KERN_CRIT, pr_fmt, (), __VA_ARGS__))
#define pr_err_ratelimited(...) \
	PK__PICK(3, printk_ratelimited, no_printk)(PK__KARGS(KERN_ERR, pr_fmt, (), __VA_ARGS__))
#define pr_warn_ratelimited(...) \
	PK__PICK(4, printk_ratelimited, no_printk)(PK__KARGS(KERN_WARNING, pr_fmt, (), __VA_ARGS__))
#define pr_notice_ratelimited(...) \
	PK__PICK(5, printk_ratelimited, no_printk)(PK__KARGS(KERN_NOTICE, pr_fmt, (), __VA_ARGS__))
#define pr_info_ratelimited(...) \
	PK__PICK(6, printk_ratelimited, no_printk)(PK__KARGS(KERN_INFO, pr_fmt, (), __VA_ARGS__))
#if defined(DEBUG) && PK__ON_7
#define pr_devel_ratelimited(...) \
	printk_ratelimited(PK__KARGS(KERN_DEBUG, pr_fmt, (), __VA_ARGS__))
#define pr_debug_ratelimited(...) \
	printk_ratelimited(PK__KARGS(KERN_DEBUG, pr_fmt, (), __VA_ARGS__))
#else
#define pr_devel_ratelimited(...) \
	no_printk(PK__KARGS(KERN_DEBUG, pr_fmt, (), __VA_ARGS__))
#define pr_debug_ratelimited(...) \
	no_printk(PK__KARGS(KERN_DEBUG, pr_fmt, (), __VA_ARGS__))
#endif

/* ---- warnings and bugs (asm-generic/bug.h) ---- */

#define CUT_HERE	PK_CUT_HERE

#define __WARN()	pk_warn_report(__FILE__, __LINE__, __func__, NULL)
/* The message is a kernel format: its first argument is a string literal. */
#define __WARN_printf(taint, ...) \
	pk_warn_report(__FILE__, __LINE__, __func__, PK__KARGS(PK_KFMT, PK__ID, (), __VA_ARGS__))

/* Each returns the condition (0 or 1); a true one prints a report. */
#define WARN_ON(condition)						\
	__extension__ ({								\
		int pk__warn_on = !!(condition);			\
		if (__builtin_expect(pk__warn_on, 0))			\
			__WARN();					\
		__builtin_expect(pk__warn_on, 0);			\
	})
#define WARN(condition, ...)						\
	__extension__ ({								\
		int pk__warn = !!(condition);				\
		if (__builtin_expect(pk__warn, 0))			\
			__WARN_printf(0, __VA_ARGS__);			\
		__builtin_expect(pk__warn, 0);				\
	})
#define WARN_TAINT(condition, taint, ...)	WARN(condition, __VA_ARGS__)
/* Only the first true condition at the call site prints. */
#define WARN_ON_ONCE(condition)		DO_ONCE_LITE_IF(condition, WARN_ON, 1)
#define WARN_ONCE(condition, ...)	DO_ONCE_LITE_IF(condition, WARN, 1, __VA_ARGS__)
#define WARN_TAINT_ONCE(condition, taint, ...) \
	DO_ONCE_LITE_IF(condition, WARN, 1, __VA_ARGS__)

#define WARN_ON_RATELIMIT(condition, state)				\
	__extension__ ({								\
		bool pk__rl_cond = !!(condition);			\
		WARN_ON(pk__rl_cond && __ratelimit(state));		\
		pk__rl_cond;						\
	})
#define WARN_RATELIMIT(condition, ...)					\
	__extension__ ({								\
		static struct pk_ratelimit_state pk__wrs =		\
			PK_RATELIMIT_STATE_INIT(DEFAULT_RATELIMIT_INTERVAL, \
						DEFAULT_RATELIMIT_BURST); \
		int pk__rtn = !!(condition);				\
		if (__builtin_expect(pk__rtn && pk_ratelimit(&pk__wrs, __func__), 0)) \
			WARN(pk__rtn, __VA_ARGS__);			\
		pk__rtn;						\
	})

#define BUG()			pk_bug(__FILE__, __LINE__, __func__)
#define BUG_ON(condition)						\
	do {								\
		if (__builtin_expect(!!(condition), 0))			\
			BUG();						\
	} while (0)

#define dump_stack()		pk_dump_stack()
#define panic(...)		pk_panic(PK__KARGS(PK_KFMT, PK__ID, (), __VA_ARGS__))

/* ---- error pointers (err.h) ---- */

/*
 * A pointer that carries a negative errno, -MAX_ERRNO to -1, in the last
 * page of the address space, where no object lives: %pe prints its name
 * ("-ENOMEM"; see "Pointer extensions" above).  In C++ the void * of
 * ERR_PTR() needs a cast to another pointer type, as any void * does.
 */
#define MAX_ERRNO	4095
#define IS_ERR_VALUE(x)	unlikely((uintptr_t)(x) >= (uintptr_t)-MAX_ERRNO)

static inline __attribute__((__warn_unused_result__)) void *ERR_PTR(long error)
{
	return (void *)(intptr_t)error;
}

static inline __attribute__((__warn_unused_result__)) long PTR_ERR(const void *ptr)
{
	return (long)(intptr_t)ptr;
}

static inline __attribute__((__warn_unused_result__)) bool IS_ERR(const void *ptr)
{
	return IS_ERR_VALUE(ptr);
}

static inline __attribute__((__warn_unused_result__)) bool IS_ERR_OR_NULL(const void *ptr)
{
	return unlikely(!ptr) || IS_ERR_VALUE(ptr);
}

/* An error pointer of one type as another: the const goes, as in the kernel. */
static inline __attribute__((__warn_unused_result__)) void *ERR_CAST(const void *ptr)
{
	return (void *)(uintptr_t)ptr;
}

/* The errno an error pointer carries; 0 for any other pointer, NULL included. */
static inline __attribute__((__warn_unused_result__)) int PTR_ERR_OR_ZERO(const void *ptr)
{
	return IS_ERR(ptr) ? (int)PTR_ERR(ptr) : 0;
}

/* ---- device messages (dev_printk.h, net_debug.h, net/core/dev.c) ---- */

#ifndef PK_NO_DEV_PRINTK
/*
 * What dev_*() and netdev_*() print of a device: not the kernel's struct
 * device, only what its messages name.  Give each field (designated
 * initializers, or assignments as before device_register()):
 *   struct device pdev = { .driver_name = "e1000e", .init_name = "0000:00:19.0" };
 * A program with a struct device or net_device of its own defines
 * PK_NO_DEV_PRINTK before the include and gets none of this section.
 */
struct device {
	const char *driver_name;	/* dev_driver_string(); NULL: "" */
	const char *init_name;		/* dev_name(); NULL: "" */
	struct device *parent;		/* a net_device's device: SET_NETDEV_DEV() */
};

struct net_device {
	char name[16];			/* IFNAMSIZ: "eth0"; "" or a '%': unnamed */
	struct device dev;		/* dev.parent names the driver, as in the kernel */
};

static inline const char *dev_name(const struct device *dev)
{
	return dev->init_name ? dev->init_name : "";
}

static inline const char *dev_driver_string(const struct device *dev)
{
	return dev->driver_name ? dev->driver_name : "";
}

/* As the kernel's: a name not yet given, or still a template ("eth%d"). */
static inline const char *netdev_name(const struct net_device *dev)
{
	const char *p;

	for (p = dev->name; *p && p < dev->name + sizeof(dev->name); p++)
		if (*p == '%')
			return "(unnamed net_device)";
	return dev->name[0] ? dev->name : "(unnamed net_device)";
}

#define SET_NETDEV_DEV(net, pdev)	((net)->dev.parent = (pdev))

#ifndef dev_fmt
#define dev_fmt(fmt) fmt
#endif

/* The kernel's driver-internal "probe again later" errno. */
#ifndef EPROBE_DEFER
#define EPROBE_DEFER	517
#endif

/*
 * "DRIVER DEVICE: message", as the kernel's __dev_printk() prints it
 * ("%s %s: "); "(NULL device *): message" for a NULL device.  A device
 * without a driver name prints "DEVICE: message" (the kernel would print
 * its bus or class name there).  @dev is evaluated once.
 */
#define PK__DEV_ARGS(d)							\
	(d) ? dev_driver_string(d) : "(NULL device *)",			\
	(d) && *dev_driver_string(d) ? " " : "", (d) ? dev_name(d) : ""
#define PK__DEV_PRINTK(print, level, wrap, dev, ...)			\
	__extension__ ({						\
		const struct device *pk__dev = (dev);			\
		(void)print(PK__KARGS(level "%s%s%s: ", wrap,		\
				      (, PK__DEV_ARGS(pk__dev)), __VA_ARGS__)); \
	})

#define dev_printk(level, dev, ...)	PK__DEV_PRINTK(printk, level, dev_fmt, dev, __VA_ARGS__)
#define dev_emerg(dev, ...)	PK__DEV_PRINTK(printk, KERN_EMERG, dev_fmt, dev, __VA_ARGS__)
#define dev_alert(dev, ...) \
	PK__DEV_PRINTK(PK__PICK(1, printk, no_printk), KERN_ALERT, dev_fmt, dev, __VA_ARGS__)
#define dev_crit(dev, ...) \
	PK__DEV_PRINTK(PK__PICK(2, printk, no_printk), KERN_CRIT, dev_fmt, dev, __VA_ARGS__)
#define dev_err(dev, ...) \
	PK__DEV_PRINTK(PK__PICK(3, printk, no_printk), KERN_ERR, dev_fmt, dev, __VA_ARGS__)
#define dev_warn(dev, ...) \
	PK__DEV_PRINTK(PK__PICK(4, printk, no_printk), KERN_WARNING, dev_fmt, dev, __VA_ARGS__)
#define dev_notice(dev, ...) \
	PK__DEV_PRINTK(PK__PICK(5, printk, no_printk), KERN_NOTICE, dev_fmt, dev, __VA_ARGS__)
#define dev_info(dev, ...) \
	PK__DEV_PRINTK(PK__PICK(6, printk, no_printk), KERN_INFO, dev_fmt, dev, __VA_ARGS__)

/*
 * dev_dbg() as pr_debug(): a dynamic debug site showing the raw format,
 * or, with PK_NO_DYNAMIC_DEBUG, printed under DEBUG only; stripped, it
 * evaluates nothing.
 */
#if PK__ON_7 && defined(PK_DYNDBG_PR_DEBUG)
#define PK__DEV_DBG(wrap, dev, ...)					\
	__extension__ ({						\
		const struct device *pk__dev = (dev);			\
		PK__DYNDBG_SITE(PK__KFIRST(__VA_ARGS__),		\
				PK_DYNDBG_PRINTK_FN(&pk__dd_site,	\
						    PK__KARGS(PK_KFMT "%s%s%s: ", wrap, \
							      (, PK__DEV_ARGS(pk__dev)), \
							      __VA_ARGS__))); \
	})
#elif PK__ON_7 && defined(DEBUG)
#define PK__DEV_DBG(wrap, dev, ...)	PK__DEV_PRINTK(printk, KERN_DEBUG, wrap, dev, __VA_ARGS__)
#else
#define PK__DEV_DBG(wrap, dev, ...)					\
	__extension__ ({						\
		if (0)							\
			PK__DEV_PRINTK(printk, KERN_DEBUG, wrap, dev, __VA_ARGS__); \
	})
#endif
#define dev_dbg(dev, ...)	PK__DEV_DBG(dev_fmt, dev, __VA_ARGS__)

/* Only the first call at the call site prints. */
#define dev_level_once(dev_level, dev, ...)	((void)DO_ONCE_LITE(dev_level, dev, __VA_ARGS__))
#define dev_emerg_once(dev, ...)	dev_level_once(dev_emerg, dev, __VA_ARGS__)
#define dev_alert_once(dev, ...)	dev_level_once(dev_alert, dev, __VA_ARGS__)
#define dev_crit_once(dev, ...)		dev_level_once(dev_crit, dev, __VA_ARGS__)
#define dev_err_once(dev, ...)		dev_level_once(dev_err, dev, __VA_ARGS__)
#define dev_warn_once(dev, ...)		dev_level_once(dev_warn, dev, __VA_ARGS__)
#define dev_notice_once(dev, ...)	dev_level_once(dev_notice, dev, __VA_ARGS__)
#define dev_info_once(dev, ...)		dev_level_once(dev_info, dev, __VA_ARGS__)
#define dev_dbg_once(dev, ...)		dev_level_once(dev_dbg, dev, __VA_ARGS__)

/* At most DEFAULT_RATELIMIT_BURST in DEFAULT_RATELIMIT_INTERVAL, per call site. */
#define dev_level_ratelimited(dev_level, dev, ...)			\
	__extension__ ({						\
		static struct pk_ratelimit_state pk__rs =		\
			PK_RATELIMIT_STATE_INIT(DEFAULT_RATELIMIT_INTERVAL, \
						DEFAULT_RATELIMIT_BURST); \
		if (pk_ratelimit(&pk__rs, __func__))			\
			dev_level(dev, __VA_ARGS__);			\
	})
#define dev_emerg_ratelimited(dev, ...)	dev_level_ratelimited(dev_emerg, dev, __VA_ARGS__)
#define dev_alert_ratelimited(dev, ...)	dev_level_ratelimited(dev_alert, dev, __VA_ARGS__)
#define dev_crit_ratelimited(dev, ...)	dev_level_ratelimited(dev_crit, dev, __VA_ARGS__)
#define dev_err_ratelimited(dev, ...)	dev_level_ratelimited(dev_err, dev, __VA_ARGS__)
#define dev_warn_ratelimited(dev, ...)	dev_level_ratelimited(dev_warn, dev, __VA_ARGS__)
#define dev_notice_ratelimited(dev, ...) dev_level_ratelimited(dev_notice, dev, __VA_ARGS__)
#define dev_info_ratelimited(dev, ...)	dev_level_ratelimited(dev_info, dev, __VA_ARGS__)
#define dev_dbg_ratelimited(dev, ...)	dev_level_ratelimited(dev_dbg, dev, __VA_ARGS__)

/*
 * dev_err_probe(dev, err, fmt, ...) - as Linux 6.1's: "error %pe: " and the
 * message, with dev_err(), or with dev_dbg() for -EPROBE_DEFER (a probe
 * that will be retried is no error).  dev_fmt() is not applied: the
 * kernel's is a function.  Evaluates to @err (an int).
 */
#define dev_err_probe(dev, err, ...)					\
	__extension__ ({						\
		const struct device *pk__pdev = (dev);			\
		int pk__perr = (err);					\
		if (pk__perr == -EPROBE_DEFER)				\
			PK__DEV_DBG(PK__ID, pk__pdev,			\
				    PK__KARGS("error %pe: ", PK__ID,	\
					      (, ERR_PTR(pk__perr)), __VA_ARGS__)); \
		else							\
			PK__DEV_PRINTK(PK__PICK(3, printk, no_printk), KERN_ERR, PK__ID, \
				       pk__pdev, PK__KARGS("error %pe: ", PK__ID, \
							   (, ERR_PTR(pk__perr)), \
							   __VA_ARGS__)); \
		pk__perr;						\
	})

/*
 * netdev_*(): "DRIVER DEVICE IFNAME: message" when the interface has a
 * parent device (SET_NETDEV_DEV()), else "IFNAME: message";
 * "(NULL net_device): message" for NULL, as the kernel's
 * __netdev_printk().  The kernel's registration state after IFNAME ("
 * (unregistering)") is left out: these devices are always registered.
 */
#define PK__NETDEV_ARGS(n)						\
	(n) && (n)->dev.parent ? dev_driver_string((n)->dev.parent) : "",	\
	(n) && (n)->dev.parent ? " " : "",				\
	(n) && (n)->dev.parent ? dev_name((n)->dev.parent) : "",	\
	(n) && (n)->dev.parent ? " " : "",				\
	(n) ? netdev_name(n) : "(NULL net_device)"
#define PK__NETDEV_PRINTK(print, level, dev, ...)			\
	__extension__ ({						\
		const struct net_device *pk__ndev = (dev);		\
		(void)print(PK__KARGS(level "%s%s%s%s%s: ", PK__ID,	\
				      (, PK__NETDEV_ARGS(pk__ndev)), __VA_ARGS__)); \
	})

#define netdev_printk(level, dev, ...)	PK__NETDEV_PRINTK(printk, level, dev, __VA_ARGS__)
#define netdev_emerg(dev, ...)	PK__NETDEV_PRINTK(printk, KERN_EMERG, dev, __VA_ARGS__)
#define netdev_alert(dev, ...) \
	PK__NETDEV_PRINTK(PK__PICK(1, printk, no_printk), KERN_ALERT, dev, __VA_ARGS__)
#define netdev_crit(dev, ...) \
	PK__NETDEV_PRINTK(PK__PICK(2, printk, no_printk), KERN_CRIT, dev, __VA_ARGS__)
#define netdev_err(dev, ...) \
	PK__NETDEV_PRINTK(PK__PICK(3, printk, no_printk), KERN_ERR, dev, __VA_ARGS__)
#define netdev_warn(dev, ...) \
	PK__NETDEV_PRINTK(PK__PICK(4, printk, no_printk), KERN_WARNING, dev, __VA_ARGS__)
#define netdev_notice(dev, ...) \
	PK__NETDEV_PRINTK(PK__PICK(5, printk, no_printk), KERN_NOTICE, dev, __VA_ARGS__)
#define netdev_info(dev, ...) \
	PK__NETDEV_PRINTK(PK__PICK(6, printk, no_printk), KERN_INFO, dev, __VA_ARGS__)
/* Printed under DEBUG (and PK_MAX_LEVEL 7), as without CONFIG_DYNAMIC_DEBUG. */
#if PK__ON_7 && defined(DEBUG)
#define netdev_dbg(dev, ...)	PK__NETDEV_PRINTK(printk, KERN_DEBUG, dev, __VA_ARGS__)
#else
#define netdev_dbg(dev, ...)						\
	__extension__ ({						\
		if (0)							\
			PK__NETDEV_PRINTK(printk, KERN_DEBUG, dev, __VA_ARGS__); \
	})
#endif
#endif /* PK_NO_DEV_PRINTK */

/* ---- hex dumps (printk.h, lib/hexdump.c) ---- */

#define DUMP_PREFIX_NONE	PK_DUMP_PREFIX_NONE
#define DUMP_PREFIX_ADDRESS	PK_DUMP_PREFIX_ADDRESS
#define DUMP_PREFIX_OFFSET	PK_DUMP_PREFIX_OFFSET

#define hex_dump_to_buffer	pk_hex_dump_to_buffer
#define print_hex_dump(level, prefix_str, prefix_type, rowsize, groupsize, buf, len, ascii) \
	pk_print_hex_dump(pk__kern_level(level), prefix_str, prefix_type, rowsize,	\
			  groupsize, buf, len, ascii)

#if defined(DEBUG) && PK__ON_7
#define print_hex_dump_debug(prefix_str, prefix_type, rowsize, groupsize, buf, len, ascii) \
	print_hex_dump(KERN_DEBUG, prefix_str, prefix_type, rowsize, groupsize, buf, len, ascii)
#define print_hex_dump_devel(prefix_str, prefix_type, rowsize, groupsize, buf, len, ascii) \
	print_hex_dump(KERN_DEBUG, prefix_str, prefix_type, rowsize, groupsize, buf, len, ascii)
#else
/*
 * Without DEBUG, as in a kernel without dynamic debug, or with KERN_DEBUG
 * stripped by PK_MAX_LEVEL: nothing.
 */
static inline void print_hex_dump_debug(const char *prefix_str, int prefix_type, int rowsize,
					int groupsize, const void *buf, size_t len, bool ascii)
{
	(void)prefix_str; (void)prefix_type; (void)rowsize; (void)groupsize;
	(void)buf; (void)len; (void)ascii;
}
static inline void print_hex_dump_devel(const char *prefix_str, int prefix_type, int rowsize,
					int groupsize, const void *buf, size_t len, bool ascii)
{
	print_hex_dump_debug(prefix_str, prefix_type, rowsize, groupsize, buf, len, ascii);
}
#endif
/* 16 bytes a row, single bytes, ASCII, at KERN_DEBUG: print_hex_dump_debug(). */
#define print_hex_dump_bytes(prefix_str, prefix_type, buf, len) \
	print_hex_dump_debug(prefix_str, prefix_type, 16, 1, buf, len, true)

#endif /* PRINTK_KERNEL_H */
