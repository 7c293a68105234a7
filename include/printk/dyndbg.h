/* SPDX-License-Identifier: MIT */
/*
 * libprintk dynamic debug - debug messages that are compiled in, cost one
 * predictable branch while off, and are switched on at run time with the
 * Linux kernel's dynamic debug query grammar.
 *
 *	#define PK_MODNAME "netio"		(optional, before the include)
 *	#include <printk/dyndbg.h>
 *	pk_dyndbg("parsed %d headers\n", n);
 *
 *	PK_DYNDBG='file net.c +p; func parse_* +pf' ./prog
 *	pk_dyndbg_query("module netio line 10-20 +pl");
 *
 * Call sites.  Every pk_dyndbg() (and, through PK_DYNDBG_PR_DEBUG,
 * kernel.h's pr_debug()) defines a static struct pk_dyndbg_site in the
 * linker section "pk_dyndbg" of the object (executable or shared object)
 * it is compiled into.  The linker bounds each object's section with
 * __start_pk_dyndbg and __stop_pk_dyndbg; those symbols are local to the
 * object, so the library cannot see an application's or a plugin's sites
 * by itself.  This header therefore puts a constructor into every
 * translation unit that includes it: it hands the object's own range (weak,
 * hidden references: its own section, or nothing) to
 * pk_dyndbg_register_sites(), and a destructor takes it back at exit or
 * dlclose().  The library keeps the ranges in a fixed table
 * (PK_DYNDBG_MAX_OBJECTS), one entry per object however many of its
 * translation units register it.
 *
 * The disabled path is a relaxed load of the site's flags byte, a test and
 * a branch marked unlikely: nothing is called.  Flags are changed with
 * atomic byte stores, so sites may run while queries change them.
 *
 * Module: the module of the site's file (printk.h MODULES:
 * PK_MODULE_REGISTER() or PK_MODULE_DECLARE()), the name the site's
 * records carry; else PK_MODNAME, else KBUILD_MODNAME, if defined before
 * the include (a string literal); otherwise the name of the object the
 * site is in (the executable's or shared object's file name, less any
 * ".so" suffix and version, e.g. "myprog" or "libnetio").  The query
 * keyword "module", PK_DYNDBG_LIST and the 'm' prefix all use this one
 * name, filled in at registration.
 *
 * Levels: an enabled site stores its record at PK_DEBUG whatever its
 * module's level, as the kernel prints an enabled pr_debug() at
 * KERN_DEBUG: the site's own switch is the more specific one.  What still
 * applies is each console's loglevel: the default (7) prints up to
 * PK_INFO, so the record is stored (pkmsg, readers) but shown on a
 * console only at loglevel 8 (PK_LOGLEVEL=8, or the console's own level).
 *
 * Default flags: PK_DYNDBG_DEFAULT_FLAGS if defined, else PK_DYNDBG_PRINT
 * if DEBUG is defined (as in the kernel), else none.
 *
 * Synchronization table:
 *
 *   pk_dyndbg() / pr_debug() sites    any thread, signal handlers, all at once,
 *                                     concurrently with everything below
 *   pk_dyndbg_query / _exec           any thread (not a signal handler);
 *                                     serialized with each other, with
 *                                     listing and with registration
 *   pk_dyndbg_list / _list_cb         any thread (not a signal handler)
 *   register / unregister             object constructors and destructors
 */
#ifndef PRINTK_DYNDBG_H
#define PRINTK_DYNDBG_H

#include <stdarg.h>
#include <stddef.h>

#include "printk.h"	/* PK_MAX_LEVEL */

#ifdef __cplusplus
extern "C" {
#endif
#if defined(PK_BUILDING_LIB) && defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* Site flags, the kernel's _DPRINTK_FLAGS_* ('p', 'm', 'f', 'l', 't'). */
#define PK_DYNDBG_PRINT		0x01u	/* p: print the message */
#define PK_DYNDBG_MODNAME	0x02u	/* m: prefix "module:" */
#define PK_DYNDBG_FUNCNAME	0x04u	/* f: prefix "function:" */
#define PK_DYNDBG_LINENO	0x08u	/* l: prefix "line:" */
#define PK_DYNDBG_TID		0x10u	/* t: prefix "[tid] " */

/* Objects (executable, shared objects) with sites that can be registered. */
#define PK_DYNDBG_MAX_OBJECTS	64

/*
 * One call site.  Lives in the "pk_dyndbg" section; the library treats
 * each object's section as an array of these.  flags is read and written
 * only with atomic byte accesses (__atomic builtins: this header is also
 * C++, which has no _Atomic); modname is PK_MODNAME's (or NULL) until
 * registration names the site's module, then written once with a release
 * store.  module returns the module of the site's file (NULL for none);
 * registration calls it, once.
 */
struct pk_dyndbg_site {
	const char *modname;
	const char *function;
	const char *filename;
	const char *format;
	unsigned int lineno;
	unsigned char flags;
	unsigned char reserved[3];
	const struct pk_module *(*module)(void);
} __attribute__((aligned(8)));

/**
 * pk_dyndbg_printk() - print a message for an enabled site: the prefixes
 * its flags ask for ("[tid] module:function:line: "), then @fmt, at
 * PK_DEBUG, through pk_vprintk().
 * @site: the call site (its flags are read once, here).
 * @fmt:  printf-style format.
 * Called by the site macros after they saw PK_DYNDBG_PRINT set; it does
 * not test PK_DYNDBG_PRINT itself.
 * Context: as pk_printk(): any thread, async-signal-safe.
 * Return: as pk_printk(); -EINVAL also for a NULL @site.
 */
int pk_dyndbg_printk(const struct pk_dyndbg_site *site, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * pk_dyndbg_vprintk() - pk_dyndbg_printk() with a va_list.
 * @site: the call site.
 * @fmt:  printf-style format.
 * @ap:   the arguments.
 * Context: any thread, async-signal-safe.
 * Return: as pk_dyndbg_printk().
 */
int pk_dyndbg_vprintk(const struct pk_dyndbg_site *site, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/**
 * pk_dyndbg_printk_mod() - pk_dyndbg_printk() for a site in module @mod
 * (printk.h MODULES): the message carries @mod's name, and is stored at
 * PK_DEBUG whatever @mod's level (the site was enabled: the more specific
 * switch wins; consoles still filter by their loglevel).  The site macros
 * call it with their file's module.
 * @mod:  a module, or NULL (then this is pk_dyndbg_printk()).
 * @site: the call site.
 * @fmt:  printf-style format.
 * Context: any thread, async-signal-safe.
 * Return: as pk_printk(); -EINVAL also for a NULL @site.
 */
int pk_dyndbg_printk_mod(const struct pk_module *mod, const struct pk_dyndbg_site *site,
			 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/**
 * pk_dyndbg_vprintk_mod() - pk_dyndbg_printk_mod() with a va_list.
 * @mod:  a module, or NULL.
 * @site: the call site.
 * @fmt:  printf-style format.
 * @ap:   the arguments.
 * Context: any thread, async-signal-safe.
 * Return: as pk_dyndbg_printk_mod().
 */
int pk_dyndbg_vprintk_mod(const struct pk_module *mod, const struct pk_dyndbg_site *site,
			  const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/**
 * pk_dyndbg_query() - apply dynamic debug queries to the registered sites.
 * @query: one or more queries separated by ';' or newlines, each
 *         "[keyword value]... flags", the kernel's grammar:
 *         func NAME, file NAME (full path, or any tail of it after a '/';
 *         "file NAME:FUNC" and "file NAME:LINES" also), module NAME,
 *         format STRING (substring; '^' anchors it at the start; quoted
 *         with "" or '', \t \n \\ \" and octal escapes), line N, line N-M,
 *         line N-, line -M.  Names take the wildcards * and ?.  flags:
 *         '+', '-' or '=' followed by any of p m f l t (or _ for none).
 *         A '#' starts a comment.
 *
 * Queries run in order; a malformed one is reported (pk_printk at PK_ERR,
 * "dyndbg: <reason>") and skipped, the others still apply.  A query that
 * matches no site is not an error, but is warned about on stderr, as the
 * library's other configuration warnings are:
 * "libprintk: dyndbg: query \"module nosuch +p\" matches no site (no site
 * has module \"nosuch\")" (the part in parentheses when no registered
 * site has the module asked for).
 * Context: any thread, not from a signal handler.
 * Return: the number of sites the queries matched (as the kernel counts:
 * a site already in the requested state counts; 0 if none matched), or
 * -EINVAL if a query was malformed or @query is NULL.
 */
int pk_dyndbg_query(const char *query);

/**
 * pk_dyndbg_exec() - pk_dyndbg_query() that logs nothing: the reason each
 * query was refused goes to @err, "; "-separated in order (@errlen bytes,
 * NUL-terminated; may be NULL), e.g. "unknown keyword \"fil\" (query ...)",
 * and is "" when none was.  A query that matches no site is not refused:
 * it is said by a return of 0 (or, among several queries, by nothing),
 * and it is the caller's to report; pk_dyndbg_query() warns about it on
 * stderr.
 * @query:  as for pk_dyndbg_query().
 * @err:    where the reason goes, or NULL.
 * @errlen: its size.
 * Context: any thread, not from a signal handler.
 * Return: as pk_dyndbg_query().
 */
int pk_dyndbg_exec(const char *query, char *err, size_t errlen);

/**
 * pk_dyndbg_list() - write every registered site to @fd, as the kernel's
 * /proc/dynamic_debug/control shows them: first the line
 * "# filename:lineno [module]function flags format", then per site
 * "file:line [module]function =flags \"format\"" (flags "_" for none;
 * tab, CR and newline in the format escaped as \t \r \n).
 * @fd: an open file descriptor, written with write(2).
 * Context: any thread, not from a signal handler.
 * Return: the number of sites written, or a negative errno from write().
 */
int pk_dyndbg_list(int fd);

/**
 * pk_dyndbg_list_cb() - call @cb once per registered site with its line
 * (as pk_dyndbg_list() writes it, '\n' included, NUL-terminated, no
 * header).  @cb returns 0 to go on, anything else to stop.  It runs with
 * the registry locked: it must not call pk_dyndbg functions, dlopen() or
 * dlclose(), or fork().
 * @cb:  called per site with @ctx, the site and its line.
 * @ctx: passed to @cb.
 * Context: any thread, not from a signal handler.
 * Return: the number of sites passed to @cb, or what @cb returned to stop;
 * -EINVAL for a NULL @cb; -ENOMEM.
 */
int pk_dyndbg_list_cb(int (*cb)(void *ctx, const struct pk_dyndbg_site *site,
				const char *line, size_t len),
		      void *ctx);

/**
 * pk_dyndbg_register_sites() - register the sites [@start, @stop) of one
 * object; called by the constructor this header emits.
 * @start: the object's first site (__start_pk_dyndbg).
 * @stop:  the end of its sites (__stop_pk_dyndbg).  A range already
 * registered is counted once more.  The first registration of an object
 * names the sites' modules, applies PK_DYNDBG to them and, with
 * PK_DYNDBG_LIST=1, lists them on stderr.  A PK_DYNDBG query that matched
 * no site of the objects registered so far is warned about on stderr when
 * the executable's own sites register (or at exit, if it has none).
 * Context: constructors (any thread, not from a signal handler).
 * Return: 0; -EINVAL for a bad range; -ENOSPC if PK_DYNDBG_MAX_OBJECTS
 * objects are registered (the sites then stay at their default flags).
 */
int pk_dyndbg_register_sites(struct pk_dyndbg_site *start, struct pk_dyndbg_site *stop);

/**
 * pk_dyndbg_unregister_sites() - undo one pk_dyndbg_register_sites();
 * the last one forgets the object (before dlclose() unmaps it).
 * @start: the range's first site, as registered.
 * @stop:  the end of the range, as registered.
 * Context: destructors (any thread, not from a signal handler).
 * Return: 0, or -ENOENT if that range is not registered.
 */
int pk_dyndbg_unregister_sites(struct pk_dyndbg_site *start, struct pk_dyndbg_site *stop);

/* ---- the call-site macros ---------------------------------------------- */

#if defined(PK_MODNAME)
#define PK__DYNDBG_MODNAME	PK_MODNAME
#elif defined(KBUILD_MODNAME)
#define PK__DYNDBG_MODNAME	KBUILD_MODNAME
#else
#define PK__DYNDBG_MODNAME	0
#endif

/*
 * PK__DYNDBG_MODULE: a constant a site's initializer takes that returns,
 * when called, the module of the site's file.  C: a function reading the
 * file's pk__this_module, which PK_MODULE_REGISTER() or
 * PK_MODULE_DECLARE() may complete after this header (a tentative
 * definition: the function reads its final value).  C++ resolves
 * PK__THIS_MODULE where it is written, so the site macro defines its own
 * (PK__DYNDBG_MODULE_CXX) where the site is.
 */
#if defined(PK_NO_MODULES)
#define PK__DYNDBG_MODULE		0
#define PK__DYNDBG_MODULE_CXX
#elif defined(__cplusplus)
#define PK__DYNDBG_MODULE		&pk__dd_mod::get
#define PK__DYNDBG_MODULE_CXX                                                          \
	struct pk__dd_mod {                                                             \
		static const struct pk_module *get() { return PK__THIS_MODULE; }       \
	};
#else
static inline const struct pk_module *pk__dyndbg_this_module(void)
{
	return pk__this_module;
}
#define PK__DYNDBG_MODULE		pk__dyndbg_this_module
#define PK__DYNDBG_MODULE_CXX
#endif

#if defined(PK_DYNDBG_DEFAULT_FLAGS)
#define PK__DYNDBG_FLAGS	(PK_DYNDBG_DEFAULT_FLAGS)
#elif defined(DEBUG)
#define PK__DYNDBG_FLAGS	PK_DYNDBG_PRINT
#else
#define PK__DYNDBG_FLAGS	0
#endif

/*
 * The function an enabled site calls (a test or a wrapper may replace it
 * with a function taking pk_dyndbg_printk()'s arguments).  By default the
 * message goes out with the module of the site's file (printk.h MODULES),
 * carrying its name, whatever its level.
 */
#ifndef PK_DYNDBG_PRINTK_FN
#define PK_DYNDBG_PRINTK_FN(site, ...)	pk_dyndbg_printk_mod(PK__THIS_MODULE, site, __VA_ARGS__)
#endif

/* Is @site enabled?  One relaxed byte load; pairs with nothing (a gate). */
#define PK_DYNDBG_ENABLED(site)                                                         \
	__builtin_expect(__atomic_load_n(&(site)->flags, __ATOMIC_RELAXED) & PK_DYNDBG_PRINT, 0)

/*
 * PK__DYNDBG_SITE(fmt, call): a site whose descriptor shows @fmt and that
 * runs @call (with pk__dd_site in scope) when enabled.
 */
#define PK__DYNDBG_SITE(fmt, call)                                                      \
	do {                                                                            \
		PK__DYNDBG_MODULE_CXX                                                   \
		static struct pk_dyndbg_site pk__dd_site                                \
			__attribute__((section("pk_dyndbg"), used, aligned(8))) = {     \
			PK__DYNDBG_MODNAME, __func__, __FILE__, fmt, __LINE__,          \
			PK__DYNDBG_FLAGS, { 0, 0, 0 }, PK__DYNDBG_MODULE };              \
		if (PK_DYNDBG_ENABLED(&pk__dd_site))                                    \
			call;                                                           \
	} while (0)

#define PK__DYNDBG_FIRST(fmt, ...)	fmt

/**
 * pk_dyndbg(fmt, ...) - a dynamic debug message: pk_debug() that is off
 * until a query (or PK_DYNDBG) enables its site.  @fmt must be a string
 * literal.
 */
#define pk_dyndbg(...)	PK__PICK(7, PK__DYNDBG, PK__DYNDBG_STRIPPED)(__VA_ARGS__)
#define PK__DYNDBG(...)                                                                 \
	PK__DYNDBG_SITE(PK__DYNDBG_FIRST(__VA_ARGS__, ""),                              \
			PK_DYNDBG_PRINTK_FN(&pk__dd_site, __VA_ARGS__))
/* PK_DEBUG stripped by PK_MAX_LEVEL (printk.h): no site, the format still checked. */
#define PK__DYNDBG_STRIPPED(...)	PK__STRIPPED(PK_DEBUG, __VA_ARGS__)

/*
 * The hook <printk/kernel.h> uses for pr_debug(fmt, ...): call it with the
 * raw format, as the kernel's dynamic_pr_debug() does; the site shows
 * @fmt and the message is printed with pr_fmt(fmt).  kernel.h must define
 * pr_fmt before expanding it.
 */
#if PK__ON_7
#define PK_DYNDBG_PR_DEBUG(fmt, ...)                                                    \
	PK__DYNDBG_SITE(fmt, PK_DYNDBG_PRINTK_FN(&pk__dd_site, pr_fmt(fmt), ##__VA_ARGS__))
#else
/* PK_DEBUG stripped by PK_MAX_LEVEL: no site, nothing evaluated, the format checked. */
#define PK_DYNDBG_PR_DEBUG(fmt, ...)	PK__STRIPPED(PK_DEBUG, pr_fmt(fmt), ##__VA_ARGS__)
#endif

/*
 * Registration of this object's sites, once per translation unit that
 * includes this header (the library counts them per object).  The
 * references are weak and hidden: they name this object's own section,
 * and are null in an object that has no sites.
 */
#if !defined(PK_BUILDING_LIB) && !defined(PK_DYNDBG_NO_REGISTER)
extern struct pk_dyndbg_site __start_pk_dyndbg[] __attribute__((weak, visibility("hidden")));
extern struct pk_dyndbg_site __stop_pk_dyndbg[] __attribute__((weak, visibility("hidden")));

__attribute__((constructor)) static void pk__dyndbg_register_object(void)
{
	if (__start_pk_dyndbg)
		pk_dyndbg_register_sites(__start_pk_dyndbg, __stop_pk_dyndbg);
}

__attribute__((destructor)) static void pk__dyndbg_unregister_object(void)
{
	if (__start_pk_dyndbg)
		pk_dyndbg_unregister_sites(__start_pk_dyndbg, __stop_pk_dyndbg);
}
#endif

#if defined(PK_BUILDING_LIB) && defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif

#endif /* PRINTK_DYNDBG_H */
